import Foundation
import Hummingbird
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import RampartAPI
import RampartCore
import ServiceLifecycle

/// How an embedded backend runs.
///
/// Trust-model row **transport (network), low trust**: the server only ever binds 127.0.0.1.
public struct EmbeddedServerConfiguration: Sendable {
    /// The data folder (0700): `backend.sqlite`, `tls/`, `push/`, `server.json`, `server.log`.
    public var dataDirectory: URL
    /// The TCP port on 127.0.0.1; 0 picks a free one (written to `server.json`).
    public var port: Int
    /// Creates the demo accounts and mailboxes when the database has no account yet.
    public var seedDemo: Bool
    /// The clock for token lifetimes and message times (tests give a `ManualClock`).
    public var clock: any RampartClock
    /// Lifetime of an access token (default 1 hour).
    public var accessTokenLifetime: TimeInterval
    /// Lifetime of a refresh token (default 30 days).
    public var refreshTokenLifetime: TimeInterval
    /// Also write the log to standard error (the `rampart server start` command does).
    public var logToStandardError: Bool
    /// Opens the server's storage; `nil` (the default) is SQLite in `<data>/backend.sqlite`.
    /// `rampart server start --database postgresql://…` gives PostgreSQL's (`RampartServerPostgres`).
    public var storage: ServerStorageOpener? = nil
    /// Threads of the server's own for its request handling; `nil` (the default) uses the
    /// process's shared Swift concurrency pool. Set it when the server shares a process with code
    /// that blocks that pool (a test process waiting for child processes, for instance): the
    /// server then keeps answering. Needs macOS 15 / iOS 18 on Apple platforms (ignored before).
    public var threads: Int?
    /// Who may sign up (closed by default: invitation codes only) and the domain of new addresses.
    public var signup: SignupPolicy
    /// The abuse limits; `nil` (the default) reads them from the environment (``ServerLimits/fromEnvironment(_:)``).
    public var limits: ServerLimits?
    /// The key log's witnesses (cosignature verifier keys, `name+hash+base64`, as
    /// `rampart server witness --print-key` prints them), besides those of the data folder's
    /// `keylog-witnesses` file (one a line): heads are served to clients once one of them
    /// cosigned, and `server.json` pins them. None: heads carry the log's signature only.
    public var witnessKeys: [String]
    /// Where this process writes its description (port, pins, pid); `nil` (the default) is
    /// `<data>/server.json`. Several processes on one data folder each need a file of their own.
    public var infoFile: URL?
    /// `HOST:PORT` destinations on this machine or network the remote-content proxy may fetch
    /// from (a probe server in tests and labs); empty by default: public addresses only.
    public var proxyAllowLocal: [String]

    public init(dataDirectory: URL, port: Int = 0, seedDemo: Bool = true, clock: any RampartClock = SystemClock(),
                accessTokenLifetime: TimeInterval = 3600, refreshTokenLifetime: TimeInterval = 30 * 86_400,
                logToStandardError: Bool = false, threads: Int? = nil, signup: SignupPolicy = SignupPolicy(),
                limits: ServerLimits? = nil, witnessKeys: [String] = [], proxyAllowLocal: [String] = []) {
        self.dataDirectory = dataDirectory; self.port = port; self.seedDemo = seedDemo; self.clock = clock
        self.accessTokenLifetime = accessTokenLifetime; self.refreshTokenLifetime = refreshTokenLifetime
        self.logToStandardError = logToStandardError; self.threads = threads; self.signup = signup; self.limits = limits
        self.witnessKeys = witnessKeys
        self.proxyAllowLocal = proxyAllowLocal
    }
}

/// The embedded local backend of the reference client: Hummingbird 2 over TLS on 127.0.0.1, with
/// its own CA and pins, zero-access storage in SQLite, Web Push delivery to per-session inboxes.
///
/// Trust-model rows: **transport (network), low trust** (TLS with a generated certificate whose
/// SPKI pins are published in `server.json`), **database (critical)** and **the user's private and
/// public keys** (the server stores only sealed bodies and the sealed private key), **push payload
/// key** (RFC 8291 payloads to per-session keys), **inbox (incoming mail), low trust** (the demo
/// mailbox carries hostile mail).
///
/// ```swift
/// let server = try await EmbeddedServer.start(dataDirectory: folder)
/// print(server.port, server.pins)
/// try await server.stop()
/// ```
public enum EmbeddedServer {
    /// The file, in the data folder, that says where a running server listens.
    public static let infoFileName = "server.json"

    /// Starts a backend on `port` (0 = any free port) with its data in `dataDirectory`.
    public static func start(dataDirectory: URL, port: Int = 0) async throws -> RunningServer {
        try await start(configuration: EmbeddedServerConfiguration(dataDirectory: dataDirectory, port: port))
    }

    /// Starts a backend; returns once it accepts connections and `server.json` is written.
    /// - Throws: ``ServerError/startFailed(_:)`` (data folder, certificate, database or port).
    public static func start(configuration: EmbeddedServerConfiguration) async throws -> RunningServer {
        guard (0...65_535).contains(configuration.port) else { throw ServerError.startFailed("the port \(configuration.port) is out of range") }
        let data = configuration.dataDirectory.standardizedFileURL
        do { try PrivateFiles.ensurePrivateDirectory(data) } catch {
            throw ServerError.startFailed("the data folder \(data.path) cannot be used (\(error))")
        }
        let logger = ServerLogHandler.logger(file: data.appendingPathComponent("server.log"),
                                             toStandardError: configuration.logToStandardError)
        // Processes started on one data folder share its keys: one creates them, the others load them.
        let startLock = try SharedDataFolder.holdStartLock(data)
        defer { startLock.release() }
        // Certificate dates follow the real time (clients check them against it), not the injected clock.
        let identity = try ServerIdentity.loadOrCreate(in: data.appendingPathComponent("tls", isDirectory: true), now: Date())
        // The SRP modulus key lives with the TLS identity; its fingerprint is pinned like the TLS keys.
        let srp = try SRPAuthority.loadOrCreate(in: data.appendingPathComponent("tls", isDirectory: true))
        let store = try BackendStore.open(data, with: configuration.storage)
        let pushDirectory = data.appendingPathComponent("push", isDirectory: true)
        do { try PrivateFiles.ensurePrivateDirectory(pushDirectory) } catch {
            throw ServerError.startFailed("the push folder \(pushDirectory.path) cannot be used (\(error))")
        }
        let accounts = Accounts(store: store, clock: configuration.clock, accessTokenLifetime: configuration.accessTokenLifetime,
                                refreshTokenLifetime: configuration.refreshTokenLifetime)
        let push = PushDelivery(store: store, directory: pushDirectory, logger: logger)
        var mailbox = Mailbox(store: store, push: push, clock: configuration.clock)
        let outbox = Outbox(root: data.appendingPathComponent(Outbox.folderName, isDirectory: true))
        do { try outbox.prepare() } catch { throw ServerError.startFailed("the outbox cannot be created (\(error))") }
        mailbox.outbox = outbox
        let drive = DriveStorage(store: store, clock: configuration.clock)

        if configuration.seedDemo, try store.read({ db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM users") ?? 0 }) == 0 {
            try DemoSeed.seed(accounts: accounts, mailbox: mailbox, now: configuration.clock.now, group: srp.group)
            logger.info("demo mailboxes created", metadata: ["accounts": "\(DemoAccounts.all.count)"])
        }

        let keyLog = try KeyLog.open(store: store, tlsFolder: data.appendingPathComponent("tls", isDirectory: true),
                                     domain: configuration.signup.domain,
                                     witnesses: configuration.witnessKeys + KeyLog.witnessKeys(dataDirectory: data),
                                     now: Int64(configuration.clock.now.timeIntervalSince1970))
        startLock.release()
        let limits = configuration.limits ?? .fromEnvironment()
        var backend = Backend(accounts: accounts, mailbox: mailbox, drive: drive, push: push, logger: logger, srp: srp,
                              limits: limits, clock: configuration.clock)
        backend.keyLog = keyLog
        do {
            backend.remoteFetcher = RemoteFetcher(destinations: try RemoteFetchDestinations(allowingLocal: configuration.proxyAllowLocal))
        } catch {
            throw ServerError.startFailed(error.description)
        }
        backend.signup = configuration.signup
        let router = APIRouter.build(backend)
        let tlsConfiguration: TLSConfiguration
        do { tlsConfiguration = try identity.tlsConfiguration() } catch {
            throw ServerError.startFailed("the TLS configuration cannot be made (\(error))")
        }
        let bound = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router, server: try .tls(.http1(), tlsConfiguration: tlsConfiguration),
            configuration: .init(address: .hostname("127.0.0.1", port: configuration.port), serverName: "rampart"),
            onServerRunning: { channel in
                bound.continuation.yield(channel.localAddress?.port ?? 0)
                bound.continuation.finish()
            },
            logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let run: @Sendable () async -> (any Error)? = {
            defer { bound.continuation.finish() }
            do { try await group.run(); return nil } catch { return error }
        }
        let task: Task<(any Error)?, Never>
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *), let threads = configuration.threads {
            let executor = ServerThreads(count: threads, name: "rampart-srv")
            task = Task(executorPreference: executor) {
                defer { executor.shutdown() }
                return await run()
            }
        } else {
            task = Task { await run() }
        }
        var iterator = bound.stream.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            task.cancel()
            let error = await task.value
            throw ServerError.startFailed("cannot listen on 127.0.0.1:\(configuration.port) (\(error.map { "\($0)" } ?? "no port"))")
        }
        let info = ServerInfo(port: port, pins: try identity.pins, certificatePEM: try identity.caPEM,
                              pid: ProcessInfo.processInfo.processIdentifier, host: ServerIdentity.hostName,
                              pushDirectory: pushDirectory.path, outbox: outbox.root.path,
                              modulusKeyFingerprint: srp.modulusKeyFingerprint, modulusPublicKey: srp.modulusPublicKey,
                              keyLog: keyLog.pins)
        let infoURL = configuration.infoFile ?? data.appendingPathComponent(infoFileName)
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try PrivateFiles.writeAtomically(try encoder.encode(info), to: infoURL)
        } catch {
            task.cancel()
            _ = await task.value
            throw ServerError.startFailed("cannot write \(infoURL.path) (\(error))")
        }
        logger.info("listening", metadata: ["port": "\(port)", "pins": "\(info.pins.joined(separator: ","))"])
        return RunningServer(info: info, dataDirectory: data, infoFile: infoURL, group: group, task: task, logger: logger)
    }

    /// Reads the `server.json` a running server wrote in `dataDirectory`.
    /// - Throws: ``ServerError/notFound(_:)`` when there is none (no server running there).
    public static func info(dataDirectory: URL) throws -> ServerInfo {
        try info(file: dataDirectory.appendingPathComponent(infoFileName))
    }

    /// Reads a server description a running server wrote (``EmbeddedServerConfiguration/infoFile``).
    /// - Throws: ``ServerError/notFound(_:)`` when there is none.
    public static func info(file url: URL) throws -> ServerInfo {
        guard let data = try? Data(contentsOf: url) else { throw ServerError.notFound("A running server's \(url.path)") }
        do { return try JSONDecoder().decode(ServerInfo.self, from: data) } catch {
            throw ServerError.startFailed("\(url.path) is not a server description (\(error))")
        }
    }
}

/// A backend started with ``EmbeddedServer/start(configuration:)``.
///
/// Trust-model row **transport (network), low trust**: ``pins`` and ``info`` are what a client
/// pins and trusts.
public final class RunningServer: Sendable {
    /// What `server.json` holds: port, pins, CA certificate, pid, push folder.
    public let info: ServerInfo
    /// The data folder.
    public let dataDirectory: URL
    /// Where ``info`` was written (`server.json`, or ``EmbeddedServerConfiguration/infoFile``).
    public let infoFile: URL
    let group: ServiceGroup
    let task: Task<(any Error)?, Never>
    let logger: Logger

    init(info: ServerInfo, dataDirectory: URL, infoFile: URL, group: ServiceGroup, task: Task<(any Error)?, Never>, logger: Logger) {
        self.info = info; self.dataDirectory = dataDirectory; self.infoFile = infoFile; self.group = group; self.task = task
        self.logger = logger
    }

    /// The bound port on 127.0.0.1.
    public var port: Int { info.port }
    /// The SPKI pins (base64 SHA-256): the served key's, then the backup key's.
    public var pins: [String] { info.pins }
    /// `https://localhost:<port>`.
    public var baseURL: URL { info.baseURL }

    /// Stops accepting connections, lets requests in flight finish (graceful shutdown), waits for
    /// the server to end and removes `server.json`.
    public func stop() async {
        try? FileManager.default.removeItem(at: infoFile)
        await group.triggerGracefulShutdown()
        _ = await task.value
        logger.info("stopped")
    }

    /// Waits until the server stops (by ``stop()`` or a failure); returns the failure, if any.
    public func waitUntilStopped() async -> (any Error)? {
        await task.value
    }
}
