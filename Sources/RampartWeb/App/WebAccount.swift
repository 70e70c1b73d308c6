import FileVault
import Foundation
import Keymaker
import RampartAgent
import RampartClient
import RampartCore
import RampartRuntime

/// The account `rampart web` serves: a client of the agent, like every command.
///
/// Trust-model row **device memory (moderate)**: the web process never unwraps the MainKey
/// itself. The unlock form hands the PIN to the agent (started if needed); the account is then
/// opened through the composition root (role `ProcessRole.web`) with the agent's key, and
/// closed — the process's copy of the key wiped — as soon as the agent says it is locked
/// (`rampart lock`, autolock, a wipe). Every page asks ``state()`` first, and the pages' own
/// script asks it every 250 ms, so an open page shows the unlock form within a second of a lock.
public final class WebAccount: @unchecked Sendable {
    /// Whether the account can be used now.
    public enum State: String, Sendable, Codable {
        case unlocked
        case locked
        /// There is no MainKey for this user on this machine (log in with `rampart login` first).
        case noAccount
    }

    public let options: RuntimeOptions
    public let userID: UserID
    /// The executable the agent is started with when the unlock form finds none running.
    let executable: URL
    private let lock = NSLock()
    private var session: AccountSession?

    public init(options: RuntimeOptions, executable: URL = AgentHost.currentExecutable) throws {
        self.options = options
        userID = try options.userID()
        self.executable = executable
    }

    var agent: AgentClient? {
        guard let location = try? options.agentLocation() else { return nil }
        let client = AgentClient(location: location)
        return client.isRunning() ? client : nil
    }

    /// Asks the agent; closes the opened account when it is locked.
    public func state() -> State {
        guard let agent, let status = try? agent.status(user: userID) else {
            close()
            return hasMainKey() ? .locked : .noAccount
        }
        if status.unlocked { return .unlocked }
        close()
        return status.hasMainKey ? .locked : .noAccount
    }

    private func hasMainKey() -> Bool {
        guard let keys = try? AccountKeys(options, role: .web) else { return false }
        return (try? keys.keymaker.hasMainKey()) ?? false
    }

    /// Whether unlocking asks for a PIN (the strongest active protector decides).
    public func unlockNeedsPIN() -> Bool {
        guard let keys = try? AccountKeys(options, role: .web) else { return true }
        return (try? keys.keymaker.unlockNeedsPIN()) ?? true
    }

    /// Unlocks in the agent (started when none runs) with `pin` (nil when no PIN is needed).
    /// - Throws: `AgentError.wrongPIN(attemptsLeft:)`, `AgentError.wiped(_:)`, …
    public func unlock(pin: SecretBytes?) throws {
        let client = try AgentHost.ensureRunning(options, idleExit: nil, executable: executable)
        try client.unlock(user: userID, credential: pin.map { .pin($0) } ?? .none)
    }

    /// Locks the account in the agent (every process using it locks too).
    public func lockNow() {
        close()
        try? agent?.lock(user: userID)
    }

    /// Records activity for the agent's autolock timer (a page the person asked for).
    public func touch() {
        try? agent?.touch(user: userID)
    }

    /// Runs `body` with the opened account (opened on first use after an unlock).
    /// - Throws: `LockedError` when the agent holds no key.
    public func withSession<R>(_ body: (AccountSession) async throws -> R) async throws -> R {
        guard state() == .unlocked else { throw LockedError(userID: userID) }
        let opened: AccountSession = try lock.withLock {
            if let session { return session }
            let fresh = try AccountSession(options, role: .web)
            guard fresh.agentKeys != nil else {
                fresh.finish()
                throw LockedError(userID: userID)
            }
            session = fresh
            return fresh
        }
        return try await body(opened)
    }

    /// Closes the opened account (its copy of the MainKey is wiped).
    public func close() {
        let previous = lock.withLock { () -> AccountSession? in
            defer { session = nil }
            return session
        }
        previous?.finish()
    }
}

/// The web process's preview session per account (created on first use, ended with the process).
private final class ScratchAreas: @unchecked Sendable {
    static let shared = ScratchAreas()
    private let lock = NSLock()
    private var areas: [String: PreviewArea] = [:]

    func area(root: URL) throws -> PreviewArea {
        try lock.withLock {
            if let area = areas[root.path] { return area }
            let area = try PreviewArea(root: root)
            areas[root.path] = area
            return area
        }
    }
}

extension AccountSession {
    /// A fresh 0700 folder in this process's preview session of the account (see `PreviewArea`).
    func webScratchFolder() throws -> URL {
        let root = Vault.previewsFolder(root: Vault.defaultRoot(environment: environment), user: userID)
        let folder = try ScratchAreas.shared.area(root: root).sessionFolder.appendingPathComponent("web-" + UUID().uuidString, isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        return folder
    }
}
