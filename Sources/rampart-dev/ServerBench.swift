import ArgumentParser
import Crypto
import Foundation
import MailboxCrypto
import OpenPGP
import RampartAPI
import RampartCLIKit
import RampartClient
import RampartCore

#if canImport(Glibc)
import Glibc
#endif

/// `rampart-dev bench server`: simulated clients (SRP login, sync, send with an attachment, drive
/// upload, push registration) against `rampart server start` processes, setup by setup in one
/// run: requests/s and p50/p99 per request kind, the time of a full sync as one mailbox grows,
/// and, with several processes, one of them killed with SIGKILL under load and every
/// acknowledged message and block checked afterwards (count and SHA-256).
struct ServerBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "server",
        abstract: "Load-test rampart server setups with simulated clients (requests/s, p50/p99 per kind, sync time by mailbox size).",
        discussion: """
        Setups (--setups, comma-separated): sqlite (one process, SQLite), sqlite-3 (three processes on one \
        SQLite data folder), postgresql and postgresql-3 (one and three processes on --database, default \
        $RAMPART_POSTGRES_URL; skipped when none is given). Accounts are created by sign-up over HTTPS \
        (keys made on the client, as a device does); the mailboxes are filled over HTTPS too, by sends to up to \
        100 recipients each (one transaction per send: the server's own path, no rows written around it). \
        Seeded bodies are sealed once to a throw-away key: the server cannot tell, and nothing reads them.
        """)

    @Option(help: "Accounts to create (the issue's size: 1000).") var accounts = 1_000
    @Option(help: "Messages spread over the accounts (the issue's size: 100000).") var messages = 100_000
    @Option(help: "Simulated clients running at once.") var clients = 16
    @Option(help: "Seconds of load per setup.") var seconds = 30.0
    @Option(help: "Mailbox sizes for the sync-time table (comma-separated).") var curve = "1000,10000,100000"
    @Option(help: "Setups to run (comma-separated): sqlite, sqlite-3, postgresql, postgresql-3.") var setups = "sqlite,sqlite-3,postgresql,postgresql-3"
    @Option(help: "PostgreSQL URL for the postgresql setups (default: $RAMPART_POSTGRES_URL).") var database: String?
    @Flag(help: "A smoke-test size: 20 accounts, 2000 messages, 8 clients, 8 s, curve 200,2000.") var quick = false
    @Flag(name: .customLong("no-kill"), help: "Do not kill a process of the multi-process setups under load.") var noKill = false
    @Flag(help: "Keep the work folder (its path is printed).") var keep = false

    func run() async throws {
        try await reportingErrors {
            var size = BenchSize(accounts: accounts, messages: messages, clients: clients, seconds: seconds,
                                 curve: curve.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) })
            if quick { size = BenchSize(accounts: 20, messages: 2_000, clients: 8, seconds: 8, curve: [200, 2_000]) }
            let work = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-bench-server-\(getpid())")
            try PrivateFiles.ensurePrivateDirectory(work)
            defer { if !keep { try? FileManager.default.removeItem(at: work) } else { print("work folder: \(work.path)") } }
            #if DEBUG
            print("warning: debug build; build with -c release for the figures that count")
            #endif
            print("rampart bench server — \(size.accounts) accounts, \(size.messages) messages, \(size.clients) clients × \(Int(size.seconds)) s per setup")
            let url = database ?? ProcessInfo.processInfo.environment["RAMPART_POSTGRES_URL"]
            var tables: [String] = []
            var failed: [String] = []
            for name in setups.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
                guard let setup = BenchSetup(name: name, database: url) else {
                    print("\(name): skipped (\(name.hasPrefix("postgresql") ? "no --database or RAMPART_POSTGRES_URL" : "unknown setup"))")
                    continue
                }
                let folder = work.appendingPathComponent(name)
                try PrivateFiles.ensurePrivateDirectory(folder)
                do {
                    tables.append(contentsOf: try await ServerBenchRun(setup: setup, size: size, work: folder, kill: !noKill).run())
                } catch {
                    print("\(name): FAILED: \(error)")
                    tables.append("| \(name) | FAILED: \(error) |")
                    failed.append(name)
                }
            }
            print("\nmarkdown:\n" + tables.joined(separator: "\n"))
            // The other setups' tables are printed; the run still fails, so a script sees it.
            if !failed.isEmpty { throw AgentHostPaths.Failed(description: "setups that failed: \(failed.joined(separator: ", "))") }
        }
    }
}

/// The size of a bench run.
struct BenchSize {
    var accounts, messages, clients: Int
    var seconds: Double
    var curve: [Int]
}

/// One setup: the engine and how many processes.
struct BenchSetup {
    var name: String
    var processes: Int
    /// PostgreSQL URL, nil for SQLite in the data folder.
    var database: String?

    init?(name: String, database: String?) {
        self.name = name
        switch name {
        case "sqlite": processes = 1
        case "sqlite-3": processes = 3
        case "postgresql", "postgresql-3":
            guard let database, !database.isEmpty else { return nil }
            processes = name == "postgresql" ? 1 : 3
            self.database = database
        default: return nil
        }
    }
}

/// Latencies per request kind, errors, and what the server acknowledged.
final class BenchRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var timings: [String: Timing] = [:]
    private var errors: [String: Int] = [:]
    private var errorSamples: [String] = []
    private var cutByKill: [String: Int] = [:]
    /// Set when a process was killed: a request whose connection fails from then on was cut by
    /// the kill (unacknowledged, never re-sent), counted apart from errors.
    var killed: Bool {
        get { lock.withLock { killedFlag } }
        set { lock.withLock { killedFlag = newValue } }
    }
    private var killedFlag = false
    /// Acknowledged sends: submission id → SHA-256 of the sealed body sent.
    private(set) var sentBodies: [String: (sender: Int, digest: String)] = [:]
    /// Acknowledged drive blocks: block id → (account, SHA-256).
    private(set) var blocks: [String: (account: Int, digest: String)] = [:]

    func time<T>(_ kind: String, _ body: () async throws -> T) async throws -> T {
        let start = ContinuousClock.now
        do {
            let value = try await body()
            let elapsed = (ContinuousClock.now - start).inSeconds * 1000
            lock.withLock { timings[kind, default: Timing()].samples.append(elapsed) }
            return value
        } catch {
            lock.withLock {
                if killedFlag, case ClientError.transport = error {
                    cutByKill[kind, default: 0] += 1
                    return
                }
                errors[kind, default: 0] += 1
                if errorSamples.count < 5 { errorSamples.append("\(kind): \(error)") }
            }
            throw error
        }
    }

    func acknowledgedSend(_ id: String, sender: Int, digest: String) { lock.withLock { sentBodies[id] = (sender, digest) } }
    func acknowledgedBlock(_ id: String, account: Int, digest: String) { lock.withLock { blocks[id] = (account, digest) } }

    var snapshot: (timings: [String: Timing], errors: [String: Int], samples: [String], cut: [String: Int]) {
        lock.withLock { (timings, errors, errorSamples, cutByKill) }
    }
}

func sha256Hex(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }
