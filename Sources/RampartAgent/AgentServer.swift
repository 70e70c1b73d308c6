import Foundation
import Keychain
import Keymaker
import RampartCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The agent: holds the unlocked MainKeys of one Rampart home in memory and hands them to the
/// `rampart` processes of the same user, like `ssh-agent` holds SSH keys.
///
/// Trust-model row: **device memory (moderate)** — "keep secrets in memory only while unlocked;
/// wipe them on lock". One `Keymaker` per user does the unwrapping, counting of wrong PINs,
/// the wipe after too many, and autolock; this type adds:
/// - a Unix socket in a 0700 folder owned by this uid (``AgentLocation``), and a check of every
///   connection's peer uid (`SO_PEERCRED`): another uid (root included) gets a refusal and the
///   connection is closed before any request is read;
/// - a thread that runs every user's autolock check every ``Options/autolockCheckInterval``, so a
///   timed-out key is zeroized even when nobody asks for it;
/// - no core dumps and no `ptrace` attach by same-uid processes (`PR_SET_DUMPABLE` = 0);
/// - locks (zeroizes) every key on ``stop()``, and a user's key as soon as a request finds that
///   a logout in another process erased the user's keychain items;
/// - optional exit after ``Options/idleExit`` seconds with every user locked and no request;
/// - exit, every key zeroized, once its socket is gone or replaced (its home folder deleted):
///   no client could reach it, nor lock it.
///
/// Also trust-model row **keychain (low)**: the agent reads only the wrapped MainKey from the
/// keychain; the PIN comes over the socket and is zeroized when the unlock returns.
public final class AgentServer: @unchecked Sendable {
    /// The names of the agent's threads, as `ps -L`, `top -H` and a debugger show them. Each is at
    /// most 15 bytes: Linux refuses longer thread names. Each thread names itself once it runs,
    /// with `ThreadName.setCurrent(_:)` (RampartCore), not Foundation's racy `Thread.name`.
    static let acceptThreadName = "agent-accept"
    static let autolockThreadName = "agent-autolock"
    static let connectionThreadName = "agent-conn"

    /// Tunables.
    public struct Options: Sendable {
        /// How often the autolock of every user is checked.
        public var autolockCheckInterval: TimeInterval
        /// Exit after this many seconds with every user locked and no request (nil: never).
        public var idleExit: TimeInterval?
        /// Send/receive timeout of a connection, so a stalled peer cannot hold a thread.
        public var connectionTimeoutSeconds: Int
        /// Connections served at once; more wait in the listen backlog.
        public var maxConcurrentConnections: Int

        public init(autolockCheckInterval: TimeInterval = 1, idleExit: TimeInterval? = nil,
                    connectionTimeoutSeconds: Int = 10, maxConcurrentConnections: Int = 8) {
            self.autolockCheckInterval = autolockCheckInterval
            self.idleExit = idleExit
            self.connectionTimeoutSeconds = connectionTimeoutSeconds
            self.maxConcurrentConnections = maxConcurrentConnections
        }
    }

    /// Makes the Keymaker of a user (default: the user container's `Keymaker`).
    public typealias KeymakerFactory = @Sendable (UserContainer) -> Keymaker

    /// Makes the container of a user (the process's composition root gives it; default: a
    /// `UserContainer` of `global`).
    public typealias UserFactory = @Sendable (UserID) -> UserContainer

    /// Runs after a user's key was locked or wiped in the agent (explicit lock, autolock, stop,
    /// logout seen by the agent): the runtime erases the user's cleartext previews there.
    public typealias LockHook = @Sendable (UserID) -> Void

    /// Work the agent hands each unlocked user: called right after an unlock and on every
    /// autolock check while the user stays unlocked. The job decides whether it is due (and
    /// returns at once; long work runs elsewhere). The runtime's key log self-audit is one; the
    /// agent itself knows nothing of what a job does.
    public protocol UnlockedJob: Sendable {
        /// `user` is unlocked now; its container's MainKey provider is the agent's Keymaker.
        func userIsUnlocked(_ user: UserContainer)
    }

    public let location: AgentLocation
    public let options: Options
    private let global: GlobalContainer
    private let makeKeymaker: KeymakerFactory
    private let makeUser: UserFactory
    private let onLock: LockHook?
    private let jobs: [any UnlockedJob]
    private var lockObservers: [UserID: ObserverToken] = [:]
    private let ownUID = Int64(geteuid())

    private let lock = NSCondition()
    private var users: [UserID: UserContainer] = [:]
    private var listeningSocket: Int32 = -1
    private var running = false
    private var stopped = false
    private var activeConnections = 0
    private var lastRequest = Date()
    private var refusedPeers = 0
    private var agentLock: HeldFileLock?
    /// The device and inode of the socket this agent bound, to tell it from a file put at its
    /// path later (see ``socketIsStillOurs()``).
    private var boundSocket: (device: UInt64, inode: UInt64)?

    /// - Parameters:
    ///   - global: the app-wide container of the home folder (its keychain and wipe registry —
    ///     register every store's wipe there, so a wipe after too many wrong PINs erases them).
    ///   - makeUser: how to make a user's container (the composition root's, so the agent's
    ///     users are assembled like every other process's); default: a plain one of `global`.
    ///   - makeKeymaker: how to make a user's Keymaker (tests choose `maxFailedAttempts`).
    ///   - onLock: run after each lock or wipe of a user's key (see ``LockHook``).
    ///   - jobs: work for each unlocked user (see ``UnlockedJob``).
    ///   - location: where the socket lives (`<home>/agent/agent.sock`).
    ///   - options: limits and timings (autolock check interval, idle exit, connections).
    public init(location: AgentLocation, global: GlobalContainer, options: Options = Options(),
                makeUser: UserFactory? = nil,
                makeKeymaker: @escaping KeymakerFactory = { $0.keymaker }, onLock: LockHook? = nil,
                jobs: [any UnlockedJob] = []) {
        self.location = location
        self.global = global
        self.options = options
        self.makeUser = makeUser ?? { [global] in UserContainer(userID: $0, global: global) }
        self.makeKeymaker = makeKeymaker
        self.onLock = onLock
        self.jobs = jobs
    }

    deinit {
        stop()
    }

    /// How many connections were refused for their peer uid (for tests and `agent status`).
    public var refusedPeerCount: Int { lock.withLock { refusedPeers } }

    /// Prepares the socket folder, binds the socket and starts serving in background threads.
    /// - Throws: ``AgentError/alreadyRunning(socketPath:)`` when another agent answers,
    ///   ``AgentError/socketFolderUnsafe(path:reason:)``, ``AgentError/socketPathTooLong(path:length:limit:)``.
    public func start() throws {
        ProcessHardening.disableCoreDumps()
        signal(SIGPIPE, SIG_IGN)
        try location.prepareDirectory()
        let path = location.socketURL.path
        // One agent per home: whoever holds the agent lock serves; the others stop here, before
        // touching the socket (so they can never unlink the socket of the agent that serves).
        let held: HeldFileLock
        do {
            guard let taken = try ExclusiveFileLock(url: location.agentLockURL).tryHolding() else {
                throw AgentError.alreadyRunning(socketPath: path)
            }
            held = taken
        } catch let error as AgentError {
            throw error
        } catch {
            throw AgentError.socketFolderUnsafe(path: location.agentLockURL.path, reason: String(describing: error))
        }
        if AgentClient(location: location).isRunning() {
            held.release()
            throw AgentError.alreadyRunning(socketPath: path)
        }
        // Holding the lock, a socket file is left over from an agent that died: replace it.
        var info = stat()
        if lstat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFSOCK else {
                throw AgentError.socketFolderUnsafe(path: path, reason: "a non-socket file sits where the socket goes")
            }
            unlink(path)
        }
        let fd: Int32
        do {
            fd = try UnixSocket.listen(path: path, backlog: 128)
        } catch {
            held.release()
            throw error
        }
        var bound = stat()
        let identity = lstat(path, &bound) == 0 ? (device: UInt64(bound.st_dev), inode: UInt64(bound.st_ino)) : nil
        lock.withLock {
            agentLock = held
            boundSocket = identity
            listeningSocket = fd
            running = true
            stopped = false
            lastRequest = Date()
        }
        // Each thread names itself once it runs: on Linux a name set before `start()` never
        // reaches the thread.
        let acceptThread = Thread { [self] in
            ThreadName.setCurrent(Self.acceptThreadName)
            acceptLoop(fd)
        }
        acceptThread.start()
        let autolockThread = Thread { [self] in
            ThreadName.setCurrent(Self.autolockThreadName)
            autolockLoop()
        }
        autolockThread.start()
    }

    /// Blocks until the agent stops (a `stop` request, ``stop()``, or idle exit).
    public func waitUntilStopped() {
        lock.withLock {
            while !stopped { lock.wait() }
        }
    }

    /// Whether the agent is serving (false from the moment ``stop()`` begins).
    public var isRunning: Bool { lock.withLock { running } }

    /// Whether ``stop()`` has finished: socket removed, every key zeroized.
    public var hasStopped: Bool { lock.withLock { stopped } }

    /// Locks (zeroizes) every user's MainKey, closes and removes the socket, and wakes
    /// ``waitUntilStopped()``. Idempotent.
    public func stop() {
        let (fd, containers) = lock.withLock { () -> (Int32, [UserContainer]) in
            let fd = listeningSocket
            listeningSocket = -1
            running = false
            return (fd, Array(users.values))
        }
        for container in containers { container.keymaker.lock(reason: .userRequest) }
        if fd >= 0 {
            close(fd)
            // Only our own socket: if the home was removed and made again, the path may be
            // another agent's by now.
            if socketIsStillOurs() { unlink(location.socketURL.path) }
        }
        lock.withLock {
            // Released only after the socket is gone: the next agent starts on a clean folder.
            agentLock?.release()
            agentLock = nil
            stopped = true
            lock.broadcast()
        }
    }

    // MARK: Users

    private func container(for user: UserID) -> UserContainer {
        lock.withLock {
            if let existing = users[user] { return existing }
            let container = makeContainer(user)
            users[user] = container
            return container
        }
    }

    /// Called with `lock` held.
    private func makeContainer(_ user: UserID) -> UserContainer {
        let container = makeUser(user)
        let keymaker = makeKeymaker(container)
        container.override(.keymaker, with: keymaker)
        if let onLock {
            lockObservers[user]?.cancel()
            lockObservers[user] = keymaker.observeLifecycle { event in
                switch event {
                case .locked(let who, _), .wiped(let who, _): onLock(who)
                default: break
                }
            }
        }
        return container
    }

    /// The Keymaker an unlock goes to. A locked Keymaker holds no secret; it is replaced by a
    /// fresh one so that state changed by other processes since (the autolock policy, a new
    /// MainKey after a wipe and a new login) is read again from the keychain.
    private func keymakerForUnlock(_ user: UserID) -> Keymaker {
        lock.withLock {
            if let existing = users[user], existing.keymaker.isUnlocked { return existing.keymaker }
            let container = makeContainer(user)
            users[user] = container
            return container.keymaker
        }
    }

    /// The MainKey the agent holds for `user` (tests check it is zeroized on lock).
    func heldKey(_ user: UserID) -> MainKey? {
        let container = lock.withLock { users[user] }
        return try? container?.keymaker.currentMainKey()
    }

    /// Every user's autolock, checked now (the autolock thread calls this periodically).
    func enforceAutolock() {
        let containers = lock.withLock { Array(users.values) }
        for container in containers { container.keymaker.checkAutolock() }
        runJobs(containers)
    }

    /// Hands every unlocked user in `containers` to each ``UnlockedJob``.
    private func runJobs(_ containers: [UserContainer]) {
        guard !jobs.isEmpty else { return }
        for container in containers where container.keymaker.isUnlocked {
            for job in jobs { job.userIsUnlocked(container) }
        }
    }

    // MARK: Threads

    private func acceptLoop(_ listening: Int32) {
        while isRunning {
            var poller = pollfd(fd: listening, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 200)
            guard isRunning, poller.revents & Int16(POLLNVAL) == 0 else { break }
            guard ready > 0 else { continue }
            // At most maxConcurrentConnections at once: further clients wait in the listen
            // backlog until a worker is free (queued, never reset).
            let free = lock.withLock { () -> Bool in
                while running, activeConnections >= options.maxConcurrentConnections {
                    _ = lock.wait(until: Date().addingTimeInterval(0.2))
                }
                return running
            }
            guard free else { break }
            let fd = accept(listening, nil, nil)
            guard fd >= 0 else { continue }
            lock.withLock { activeConnections += 1 }
            let worker = Thread { [self] in
                ThreadName.setCurrent(Self.connectionThreadName)
                defer {
                    lock.withLock {
                        activeConnections -= 1
                        lock.broadcast()
                    }
                }
                serve(connection: fd)
            }
            worker.start()
        }
    }

    private func autolockLoop() {
        while true {
            let done = lock.withLock { () -> Bool in
                if !stopped { _ = lock.wait(until: Date().addingTimeInterval(options.autolockCheckInterval)) }
                return stopped
            }
            if done { return }
            enforceAutolock()
            if let idle = options.idleExit, shouldExitIdle(after: idle) { stop() }
            // No client can reach an agent whose socket is gone (its home was deleted, or the
            // socket removed or replaced): it stops, which zeroizes every key it holds, instead
            // of keeping them in memory with nobody to lock them (trust-model row: device memory).
            else if !socketIsStillOurs() { stop() }
        }
    }

    /// Whether the socket file at the agent's path is still the one it bound.
    private func socketIsStillOurs() -> Bool {
        guard let bound = lock.withLock({ boundSocket }) else { return true }
        var info = stat()
        guard lstat(location.socketURL.path, &info) == 0 else { return false }
        return UInt64(info.st_dev) == bound.device && UInt64(info.st_ino) == bound.inode
    }

    private func shouldExitIdle(after seconds: TimeInterval) -> Bool {
        let (containers, last, busy) = lock.withLock { (Array(users.values), lastRequest, activeConnections) }
        guard busy == 0, Date().timeIntervalSince(last) >= seconds else { return false }
        return containers.allSatisfy { !$0.keymaker.isUnlocked }
    }

    // MARK: One connection

    /// Serves one accepted connection: checks the peer uid first, then answers requests until
    /// the peer closes. Closes `fd`.
    func serve(connection fd: Int32) {
        defer { close(fd) }
        UnixSocket.setTimeouts(fd, seconds: options.connectionTimeoutSeconds)
        guard let peer = UnixSocket.peerUID(fd), Self.isPeerAllowed(peerUID: peer, ownUID: ownUID) else {
            let peer = UnixSocket.peerUID(fd) ?? -1
            lock.withLock { refusedPeers += 1 }
            let refusal = AgentError.peerRefused(peerUID: peer, expectedUID: ownUID)
            try? AgentWire.write(fd, header: AgentResponse.failure(WireError(refusal, user: nil)))
            return
        }
        while isRunning {
            let frame: AgentWire.Frame
            do {
                guard let received = try AgentWire.read(fd) else { return }
                frame = received
            } catch {
                try? AgentWire.write(fd, header: AgentResponse.failure(WireError(error, user: nil)))
                return
            }
            lock.withLock { lastRequest = Date() }
            let request: AgentRequest
            do {
                request = try AgentWire.decode(AgentRequest.self, frame)
            } catch {
                frame.secret?.wipe()
                try? AgentWire.write(fd, header: AgentResponse.failure(WireError(error, user: nil)))
                return
            }
            let stopAfter = handle(request, secret: frame.secret, fd: fd)
            frame.secret?.wipe()
            // An unlock that raced a stop must not leave a key behind.
            if !isRunning, let user = request.user { container(for: user).keymaker.lock(reason: .userRequest) }
            lock.withLock { lastRequest = Date() }
            if stopAfter {
                stop()
                return
            }
        }
    }

    /// The peer rule: only the agent's own uid. Root is refused too: root can read the agent's
    /// memory anyway, but nothing in Rampart runs as root on purpose, so a root peer is a mistake.
    static func isPeerAllowed(peerUID: Int64, ownUID: Int64) -> Bool {
        peerUID == ownUID
    }

    /// Answers one request. Returns whether the agent must stop afterwards.
    private func handle(_ request: AgentRequest, secret: SecretBytes?, fd: Int32) -> Bool {
        do {
            switch request.op {
            case .ping:
                try AgentWire.write(fd, header: AgentResponse.success())
            case .stop:
                try? AgentWire.write(fd, header: AgentResponse.success())
                return true
            case .unlock:
                let user = try requireUser(request)
                let keymaker = keymakerForUnlock(user)
                let credential: UnlockCredential = secret.map { .pin($0) } ?? .none
                do {
                    try keymaker.unlock(credential)
                } catch {
                    try AgentWire.write(fd, header: AgentResponse.failure(WireError(error, user: user)))
                    return false
                }
                try AgentWire.write(fd, header: AgentResponse.success(AgentStatus(try keymaker.status())))
                runJobs([container(for: user)])
            case .lock:
                let user = try requireUser(request)
                container(for: user).keymaker.lock(reason: .userRequest)
                try AgentWire.write(fd, header: AgentResponse.success(AgentStatus(try container(for: user).keymaker.status())))
            case .status:
                let user = try requireUser(request)
                let keymaker = container(for: user).keymaker
                _ = try lockIfLoggedOut(keymaker)
                try AgentWire.write(fd, header: AgentResponse.success(AgentStatus(try keymaker.status())))
            case .touch:
                let user = try requireUser(request)
                let keymaker = container(for: user).keymaker
                if try lockIfLoggedOut(keymaker) { throw KeymakerError.noMainKey }
                keymaker.userActivity()
                guard keymaker.isUnlocked else { throw LockedError(userID: user) }
                try AgentWire.write(fd, header: AgentResponse.success(AgentStatus(try keymaker.status())))
            case .mainKey:
                let user = try requireUser(request)
                let keymaker = container(for: user).keymaker
                if try lockIfLoggedOut(keymaker) { throw KeymakerError.noMainKey }
                let key = try keymaker.currentMainKey()
                // The key is copied straight from the MainKey's buffer into the frame buffer.
                let copy = try key.withUnsafeKeyBytes { SecretBytes(copying: $0) }
                defer { copy.wipe() }
                try AgentWire.write(fd, header: AgentResponse.success(), secret: copy)
            }
        } catch {
            try? AgentWire.write(fd, header: AgentResponse.failure(WireError(error, user: request.user)))
        }
        return false
    }

    /// A logout (or wipe) in another process erased the user's keychain items while the agent
    /// still holds the key: lock it now. Returns whether the user has no MainKey any more.
    private func lockIfLoggedOut(_ keymaker: Keymaker) throws -> Bool {
        guard try !keymaker.hasMainKey() else { return false }
        if keymaker.isUnlocked { keymaker.lock(reason: .logout) }
        return true
    }

    private func requireUser(_ request: AgentRequest) throws -> UserID {
        guard let user = request.user else { throw AgentError.protocolViolation("the request names no user") }
        return user
    }
}
