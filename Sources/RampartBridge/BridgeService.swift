import Foundation
import IMAPServer
import RampartAgent
import RampartClient
import RampartCore
import RampartRuntime
import SMTPServer

/// What a running bridge publishes in `<home>/bridge/<user>/bridge.json` (0600): where it
/// listens and its process id. No secret: the password and certificate stay in the sealed store.
public struct BridgeStatus: Codable, Sendable, Equatable {
    /// The IMAP port.
    public var imapPort: Int
    /// The SMTP submission port.
    public var smtpPort: Int
    /// The bridge's process id (for `rampart bridge stop`).
    public var pid: Int32
}

/// Why the bridge cannot start or answer.
public enum BridgeError: Error, RampartError, Equatable {
    /// The agent does not hold the account's key unlocked.
    case needsAgent(UserID)
    /// No bridge runs for this account.
    case notRunning(UserID)
    /// Listening failed even on a free port.
    case cannotListen(String)

    /// A stable identifier (`bridge.…`).
    public var code: String {
        switch self {
        case .needsAgent: "bridge.needsAgent"
        case .notRunning: "bridge.notRunning"
        case .cannotListen: "bridge.cannotListen"
        }
    }

    /// Locked (exit 3), not found (6) or bad input (2).
    public var kind: RampartErrorKind {
        switch self {
        case .needsAgent: .locked
        case .notRunning: .notFound
        case .cannotListen: .badInput
        }
    }

    /// What to do.
    public var description: String {
        switch self {
        case .needsAgent(let user):
            "The bridge uses the key the agent holds, so that rampart lock and autolock reach it: run rampart unlock for \(user) first."
        case .notRunning(let user): "No bridge is running for \(user) (rampart bridge start)."
        case .cannotListen(let why): "The bridge cannot listen: \(why)"
        }
    }
}

/// `rampart bridge`: IMAP and SMTP on 127.0.0.1 for the mail programs of this machine, over the
/// account opened through the composition root (role `ProcessRole.bridge`).
///
/// Trust-model rows **transport (low)** (loopback only, STARTTLS with the device's certificate,
/// plain text accepted only because the listener is loopback), **bridge password (moderate)**,
/// **local TLS certificate (low)** and **device memory (moderate)** (the key is the agent's:
/// `rampart lock` and autolock lock the bridge too; see ``BridgeAccount``).
public final class BridgeService: @unchecked Sendable {
    /// The ports tried first.
    public static let defaultIMAPPort = 1143
    /// See ``defaultIMAPPort``.
    public static let defaultSMTPPort = 1025
    /// How often the server's event stream is read (new mail reaches IDLE within about this).
    public static let pollInterval: Duration = .milliseconds(700)

    /// The account opened through the composition root (role `ProcessRole.bridge`).
    public let session: AccountSession
    /// The account as mail programs see it.
    public let account: BridgeAccount
    /// The device's password and certificate.
    public let credentials: BridgeCredentials
    let imap: IMAPServer
    let smtp: SMTPServer
    let folder: URL
    private var poller: Task<Void, Never>?
    private let log: @Sendable (String) -> Void

    /// The folder of the account's bridge files (`bridge.json`, `certificate.pem`, `bridge.log`).
    public static func folder(home: URL, user: UserID) -> URL {
        home.appendingPathComponent("bridge").appendingPathComponent(user.rawValue)
    }

    /// The published status of a running bridge, nil when none runs (a stale file is ignored).
    public static func status(home: URL, user: UserID) -> BridgeStatus? {
        let file = folder(home: home, user: user).appendingPathComponent("bridge.json")
        guard let data = FileManager.default.contents(atPath: file.path),
              let status = try? JSONDecoder().decode(BridgeStatus.self, from: data), kill(status.pid, 0) == 0 else { return nil }
        return status
    }

    /// Opens the account (the agent must hold its key), loads or makes the credentials, and
    /// starts both listeners (a taken port is replaced by a free one, said in the log).
    public init(options: RuntimeOptions, imapPort: Int = defaultIMAPPort, smtpPort: Int = defaultSMTPPort) async throws {
        let session = try AccountSession(options, role: .bridge)
        guard let agentKeys = session.agentKeys, agentKeys.isUnlocked else {
            session.finish()
            throw BridgeError.needsAgent(session.userID)
        }
        self.session = session
        folder = Self.folder(home: session.environment.homeDirectory, user: session.userID)
        try PrivateFiles.ensurePrivateDirectory(folder)
        let logFile = folder.appendingPathComponent("bridge.log")
        let logLock = NSLock()
        self.log = { line in
            let stamped = "\(ISO8601DateFormatter().string(from: Date())) \(line)\n"
            FileHandle.standardError.write(Data(stamped.utf8))
            logLock.withLock {
                if !FileManager.default.fileExists(atPath: logFile.path) { FileManager.default.createFile(atPath: logFile.path, contents: nil, attributes: [.posixPermissions: 0o600]) }
                if let handle = try? FileHandle(forWritingTo: logFile) { handle.seekToEndOfFile(); handle.write(Data(stamped.utf8)); try? handle.close() }
            }
        }
        let record = try session.account.session()
        let api = try session.account.api()
        account = BridgeAccount(account: session.account, api: api, session: record,
                                isUnlocked: { agentKeys.isUnlocked }, log: self.log)
        credentials = try BridgeCredentials.loadOrCreate(in: try session.account.store())
        try PrivateFiles.writeAtomically(Data(credentials.certificatePEM.utf8), to: folder.appendingPathComponent("certificate.pem"))
        let tls = try credentials.tlsContext()
        let login = BridgeLogin(account: account, username: record.username, password: credentials.password)
        imap = try await Self.listen("IMAP", port: imapPort, log: self.log) { port in
            let server = IMAPServer(configuration: IMAPServerConfiguration(port: port, tls: tls, plaintextOnLoopback: true, threads: 2),
                                    backend: BridgeIMAPBackend(login: login))
            try await server.start()
            return (server, server.port)
        }
        smtp = try await Self.listen("SMTP", port: smtpPort, log: self.log) { port in
            let server = SMTPServer(configuration: SMTPServerConfiguration(port: port, tls: tls, plaintextOnLoopback: true),
                                    backend: BridgeSubmissionBackend(login: login))
            try await server.start()
            return (server, server.port)
        }
    }

    /// Binds `port`, or a free one when it is taken.
    static func listen<S>(_ what: String, port: Int, log: @Sendable (String) -> Void,
                          _ start: (Int) async throws -> (S, Int)) async throws -> S {
        do {
            return try await start(port).0
        } catch {
            guard port != 0 else { throw BridgeError.cannotListen("\(what): \(error)") }
            do {
                let (server, bound) = try await start(0)
                log("\(what) port \(port) is taken; \(what) listens on 127.0.0.1:\(bound) instead")
                return server
            } catch {
                throw BridgeError.cannotListen("\(what): \(error)")
            }
        }
    }

    /// The bound ports.
    public var status: BridgeStatus { BridgeStatus(imapPort: imap.port, smtpPort: smtp.port, pid: getpid()) }

    /// Brings the account up to date once (labels the bridge needs, new mail copied), publishes
    /// `bridge.json`, then keeps polling the server's event stream.
    public func run() async throws {
        await account.tick()
        try await account.ensureLabels()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try PrivateFiles.writeAtomically(try encoder.encode(status), to: folder.appendingPathComponent("bridge.json"))
        log("IMAP on 127.0.0.1:\(imap.port), SMTP on 127.0.0.1:\(smtp.port) (STARTTLS; certificate SHA-256 \(credentials.certificateSHA256))")
        let account = self.account
        poller = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.pollInterval)
                await account.tick()
            }
        }
    }

    /// Stops polling, closes both listeners and the account (the agent keeps its key).
    public func stop() async {
        poller?.cancel()
        try? await imap.stop()
        try? await smtp.stop()
        try? FileManager.default.removeItem(at: folder.appendingPathComponent("bridge.json"))
        session.finish()
    }
}
