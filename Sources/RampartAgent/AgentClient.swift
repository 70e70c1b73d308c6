import CRampartAgentShims
import Foundation
import Keymaker
import RampartCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `rampart` side of the agent: one connection per call, each checked both ways.
///
/// Trust-model row: **device memory (moderate)** — before anything is sent, the client checks
/// that the socket folder is private to this uid and that the process at the other end runs as
/// this uid (`SO_PEERCRED`), so a PIN is never handed to an agent of another user.
public struct AgentClient: Sendable {
    public let location: AgentLocation

    public init(location: AgentLocation) {
        self.location = location
    }

    /// Whether an agent answers on the socket.
    public func isRunning() -> Bool {
        (try? exchange(AgentRequest(op: .ping, user: nil))) != nil
    }

    /// Unwraps `user`'s MainKey in the agent (the PIN is zeroized by the caller's `SecretBytes`
    /// when released; its copy in the frame buffer is zeroized when the call returns).
    /// - Throws: ``AgentError/wrongPIN(attemptsLeft:)``, ``AgentError/wiped(_:)``,
    ///   ``AgentError/pinRequired``, ``AgentError/noMainKey(_:)``, ``AgentError/notRunning(socketPath:)``.
    @discardableResult
    public func unlock(user: UserID, credential: UnlockCredential) throws -> AgentStatus {
        let secret: SecretBytes?
        switch credential {
        case .none: secret = nil
        case .pin(let pin): secret = pin
        }
        return try requireStatus(try exchange(AgentRequest(op: .unlock, user: user), secret: secret))
    }

    /// Zeroizes `user`'s MainKey in the agent.
    public func lock(user: UserID) throws {
        _ = try exchange(AgentRequest(op: .lock, user: user))
    }

    /// `user`'s state in the agent.
    public func status(user: UserID) throws -> AgentStatus {
        try requireStatus(try exchange(AgentRequest(op: .status, user: user)))
    }

    /// A copy of `user`'s MainKey, in this process's memory until the returned key is wiped or
    /// released. - Throws: ``AgentError/locked(_:)`` while locked.
    public func mainKey(user: UserID) throws -> MainKey {
        let (_, secret) = try exchangeWithSecret(AgentRequest(op: .mainKey, user: user))
        guard let secret else { throw AgentError.protocolViolation("the agent answered a key request without a key") }
        return try MainKey(adopting: secret)
    }

    /// Records user activity: restarts `user`'s autolock timer. - Throws: ``AgentError/locked(_:)``.
    public func touch(user: UserID) throws {
        _ = try exchange(AgentRequest(op: .touch, user: user))
    }

    /// Stops the agent (it zeroizes every key first).
    public func stop() throws {
        _ = try exchange(AgentRequest(op: .stop, user: nil))
    }

    /// Returns a client of a running agent, starting one first when none answers: runs
    /// `executable agent start --foreground --home <home> <extraArguments>` detached (own session,
    /// standard input from /dev/null, output to ``AgentLocation/logURL``) and waits for its socket.
    ///
    /// Race-free across processes: checking for an agent and starting one happen under the
    /// exclusive ``AgentLocation/startLockURL`` lock, so of many clients starting at once one
    /// starts the agent and the others wait for it and connect to it; and the agent itself
    /// serves only while it holds ``AgentLocation/agentLockURL`` (one agent per home).
    /// - Throws: ``AgentError/startFailed(_:)``, ``AgentError/socketFolderUnsafe(path:reason:)``.
    public static func ensureRunning(executable: URL, location: AgentLocation, extraArguments: [String]) throws -> AgentClient {
        let client = AgentClient(location: location)
        if client.isRunning() { return client }
        try location.prepareDirectory()
        let startLock = ExclusiveFileLock(url: location.startLockURL)
        do {
            return try startLock.withLock {
                if client.isRunning() { return client }
                return try startHoldingStartLock(executable: executable, location: location, extraArguments: extraArguments)
            }
        } catch let error as AgentError {
            throw error
        } catch {
            throw AgentError.startFailed("cannot take the start lock \(location.startLockURL.path): \(error)")
        }
    }

    private static func startHoldingStartLock(executable: URL, location: AgentLocation, extraArguments: [String]) throws -> AgentClient {
        let client = AgentClient(location: location)
        let arguments = [executable.path, "agent", "start", "--foreground", "--home", location.homeDirectory.path] + extraArguments
        var pid: pid_t = 0
        let cArguments = arguments.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        let code = rampart_agent_spawn_detached(executable.path, cArguments, location.logURL.path, &pid)
        guard code == 0 else {
            throw AgentError.startFailed("cannot run \(executable.path): \(String(cString: strerror(code)))")
        }
        let deadline = Date().addingTimeInterval(20)
        var exited = false
        while Date() < deadline {
            if client.isRunning() { return client }
            var status: Int32 = 0
            if !exited, rampart_agent_child_exited(pid, &status) == 1 {
                exited = true
                // An agent started without this lock (`agent start --foreground` by hand) may
                // hold the agent lock and be about to listen: wait for it while it holds it.
                if (try? ExclusiveFileLock(url: location.agentLockURL).tryHolding()).flatMap({ $0 }) != nil {
                    let log = (try? String(contentsOf: location.logURL, encoding: .utf8))?
                        .split(separator: "\n").last.map(String.init) ?? "no message"
                    throw AgentError.startFailed("it exited at once (\(log))")
                }
            }
            usleep(25_000)
        }
        throw AgentError.startFailed("no answer on \(location.socketURL.path) after 20 seconds; see \(location.logURL.path)")
    }

    // MARK: Exchange

    private func requireStatus(_ response: AgentResponse) throws -> AgentStatus {
        guard let status = response.status else { throw AgentError.protocolViolation("the agent's answer has no status") }
        return status
    }

    private func exchange(_ request: AgentRequest, secret: SecretBytes? = nil) throws -> AgentResponse {
        let (response, extra) = try exchangeWithSecret(request, secret: secret)
        extra?.wipe()
        return response
    }

    private func exchangeWithSecret(_ request: AgentRequest, secret: SecretBytes? = nil) throws -> (AgentResponse, SecretBytes?) {
        try location.checkSocketPathLength()
        let path = location.socketURL.path
        // A missing folder means no agent; an unsafe one is refused before connecting.
        var info = stat()
        if lstat(location.directoryURL.path, &info) != 0 { throw AgentError.notRunning(socketPath: path) }
        try location.checkDirectory()
        let fd = try UnixSocket.connect(path: path)
        defer { close(fd) }
        UnixSocket.setTimeouts(fd, seconds: 60)
        let own = Int64(geteuid())
        guard let peer = UnixSocket.peerUID(fd), AgentServer.isPeerAllowed(peerUID: peer, ownUID: own) else {
            throw AgentError.peerRefused(peerUID: UnixSocket.peerUID(fd) ?? -1, expectedUID: own)
        }
        try AgentWire.write(fd, header: request, secret: secret)
        guard let frame = try AgentWire.read(fd) else {
            throw AgentError.protocolViolation("the agent closed the connection without answering")
        }
        let response = try AgentWire.decode(AgentResponse.self, frame)
        guard response.ok else {
            frame.secret?.wipe()
            throw (response.error ?? WireError(AgentError.protocolViolation("a failure without an error"), user: request.user)).agentError
        }
        return (response, frame.secret)
    }
}

/// A `MainKeyProvider` whose key comes from the agent: what the `rampart` commands use so the
/// user types the PIN once per autolock period, not once per command.
///
/// Trust-model row: **device memory (moderate)**. Handing the key to a process of the same uid
/// is acceptable under that row: the row's attacker is "a kernel compromise or a modified
/// binary", and a process running as the same uid can already do what that attacker does — read
/// the agent's memory (`/proc/PID/mem` needs ptrace rights, which `PR_SET_DUMPABLE` = 0 takes
/// from same-uid processes, but the same uid can replace the `rampart` binary or the shell's
/// PATH and wait for the user's next PIN), so refusing it the key would protect nothing. What
/// the agent does ensure: no *other* uid gets it (folder 0700 + `SO_PEERCRED` on both ends), no
/// copy outlives a lock for long (this provider asks the agent again every
/// ``revalidationInterval`` and wipes its copy once the agent says locked), and the copy is
/// zeroized when the provider is closed or released (``close()``, `deinit`); a process that
/// exits without that leaves pages the kernel clears before reusing them.
public final class AgentMainKeyProvider: MainKeyProvider, @unchecked Sendable {
    public let userID: UserID
    public let client: AgentClient
    /// How long a copy is used before the agent is asked again whether it is still unlocked.
    public let revalidationInterval: TimeInterval
    private let lock = NSLock()
    private var copy: MainKey?
    private var confirmedAt = Date.distantPast
    private let broadcaster = LifecycleBroadcaster()

    public init(client: AgentClient, userID: UserID, revalidationInterval: TimeInterval = 1) {
        self.client = client
        self.userID = userID
        self.revalidationInterval = revalidationInterval
    }

    deinit {
        copy?.wipe()
    }

    public var isUnlocked: Bool {
        (try? currentMainKey()) != nil
    }

    /// The MainKey: this process's copy while the agent confirms it is unlocked with the same key.
    /// - Throws: `LockedError` once the agent is locked (the copy is wiped first),
    ///   ``AgentError`` when the agent cannot be reached.
    public func currentMainKey() throws -> MainKey {
        let (cached, fresh) = lock.withLock { (copy, Date().timeIntervalSince(confirmedAt) < revalidationInterval) }
        if let cached, !cached.isWiped, fresh { return cached }
        do {
            if let cached, !cached.isWiped {
                let status = try client.status(user: userID)
                if status.unlocked, status.keyFingerprint == cached.fingerprint {
                    lock.withLock { confirmedAt = Date() }
                    return cached
                }
                dropCopy(reason: .autolockTimeout)
                if !status.unlocked { throw LockedError(userID: userID) }
            }
            let key = try client.mainKey(user: userID)
            lock.withLock {
                copy = key
                confirmedAt = Date()
            }
            broadcaster.publish(.unlocked(userID))
            return key
        } catch AgentError.locked {
            throw LockedError(userID: userID)
        }
    }

    /// Wipes this process's copy (the agent keeps its own) and publishes a lock event.
    public func close() {
        dropCopy(reason: .userRequest)
    }

    private func dropCopy(reason: LockReason) {
        let previous = lock.withLock { () -> MainKey? in
            defer { copy = nil; confirmedAt = .distantPast }
            return copy
        }
        guard let previous else { return }
        previous.wipe()
        broadcaster.publish(.locked(userID, reason: reason))
    }

    public func observeLifecycle(_ handler: @escaping @Sendable (KeyLifecycleEvent) -> Void) -> ObserverToken {
        broadcaster.observe(handler)
    }

    public func lifecycleEvents() -> AsyncStream<KeyLifecycleEvent> {
        broadcaster.stream()
    }
}
