import Foundation
import RampartAPI
import RampartServer
import RampartServerPostgres
import RampartTestSupport
import Testing

/// PostgreSQL restarted while four writers commit: a cluster of the test's own
/// (scripts/services/postgres.sh with a private folder), stopped (`pg_ctl stop -m fast`, which
/// ends every connection) and started again in the middle of the load.
@Suite struct PostgresRestartTests {
    /// Writers that lose their connection get `connectionLost` (nothing else), no batch is ever
    /// half-written (each transaction writes 10 rows: every batch in the table has exactly 10),
    /// every acknowledged batch is there, and the same storage object goes on after the restart
    /// with no reopening (it reconnects by itself).
    @Test func writersLoseTheirConnectionCleanlyAndReconnectAfterARestart() async throws {
        guard TestEngine.allUnderTest.contains(.postgresql) else { return }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-pg-restart-\(UUID().uuidString)")
        let script = BuiltExecutable.packageRoot.appendingPathComponent("scripts/services/postgres.sh").path
        let bash = CLITool(path: URL(fileURLWithPath: "/bin/bash"), environment: ["RAMPART_POSTGRES_DIR": folder.path])
        let started = try await bash.run(["-c", "source '\(script)' >/dev/null 2>&1; printf '%s' \"$RAMPART_POSTGRES_URL\""])
        defer {
            _ = try? bash.run([script, "stop", folder.path])
            // As root the cluster lives in the /tmp folder the state folder's `home` names.
            if let home = try? String(contentsOf: folder.appendingPathComponent("home"), encoding: .utf8) {
                try? FileManager.default.removeItem(atPath: home.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            try? FileManager.default.removeItem(at: folder)
        }
        let url = try PostgresURL(try #require(started.lines.first, "the private PostgreSQL did not start: \(started.stderr)"))
        let storage = try PostgresStorage(url: url)
        defer { storage.close() }
        try storage.write { db in try db.execute(sql: "CREATE TABLE IF NOT EXISTS batches (batch TEXT NOT NULL, part INTEGER NOT NULL)") }

        let results = ResultLog()
        let deadline = Date().addingTimeInterval(120)
        let writers = (0..<4).map { writer in
            Thread {
                var index = 0
                while !results.stopping && Date() < deadline {
                    index += 1
                    let batch = "w\(writer)-\(index)"
                    do {
                        try storage.write { db in
                            for part in 0..<10 {
                                try db.execute(sql: "INSERT INTO batches (batch, part) VALUES (?, ?)", arguments: [batch, part])
                            }
                        }
                        results.add(acknowledged: batch)
                    } catch StorageError.connectionLost {
                        results.add(lost: batch)
                        Thread.sleep(forTimeInterval: 0.05)
                    } catch {
                        results.add(other: "\(error)")
                    }
                }
                results.finished()
            }
        }
        writers.forEach { $0.start() }
        // Counted, not timed: a test process's sleeps can wake late on a loaded machine.
        while results.acknowledged.count < 20 && Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        let acknowledgedBefore = results.acknowledged.count
        let restarted = try await bash.run(["-c", "bash '\(script)' stop '\(folder.path)' && source '\(script)' >/dev/null 2>&1 && echo restarted"])
        #expect(restarted.lines.last == "restarted", "\(restarted.stderr)")
        let afterRestart = results.acknowledged.count
        while results.acknowledged.count < afterRestart + 20 && Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        results.stop()
        while results.finishedCount < 4 { try await Task.sleep(for: .milliseconds(100)) }

        #expect(results.other.isEmpty, "\(results.other.prefix(3))")
        #expect(acknowledgedBefore > 0)
        #expect(results.acknowledged.count >= afterRestart + 20, "no write after the restart")
        let counts = try storage.read { db in
            try StorageRow.fetchAll(db, sql: "SELECT batch, COUNT(*) AS n FROM batches GROUP BY batch")
        }
        let stored = Dictionary(uniqueKeysWithValues: counts.map { ($0["batch"] as String, $0["n"] as Int) })
        #expect(stored.values.allSatisfy { $0 == 10 }, "a half-written batch")
        #expect(Set(results.acknowledged).isSubset(of: Set(stored.keys)), "an acknowledged batch is missing")
        print("postgres restart: \(results.acknowledged.count) batches acknowledged (\(acknowledgedBefore) before the restart), "
              + "\(results.lost.count) lost their connection, \(stored.count) stored, all of 10 rows")
    }
}

private final class ResultLog: @unchecked Sendable {
    private let lock = NSLock()
    private var _acknowledged: [String] = []
    private var _lost: [String] = []
    private var _other: [String] = []
    private var _finished = 0
    private var _stopping = false

    func stop() { lock.withLock { _stopping = true } }
    var stopping: Bool { lock.withLock { _stopping } }

    func add(acknowledged batch: String) { lock.withLock { _acknowledged.append(batch) } }
    func add(lost batch: String) { lock.withLock { _lost.append(batch) } }
    func add(other error: String) { lock.withLock { _other.append(error) } }
    func finished() { lock.withLock { _finished += 1 } }
    var acknowledged: [String] { lock.withLock { _acknowledged } }
    var lost: [String] { lock.withLock { _lost } }
    var other: [String] { lock.withLock { _other } }
    var finishedCount: Int { lock.withLock { _finished } }
}

/// The whole server on PostgreSQL while every connection of its database is ended again and
/// again (what a restart or a network cut does to it): each request is answered 200, or 503 with
/// `Retry-After: 1` (never 500), and exactly the acknowledged changes are stored (one event each).
@Suite struct PostgresConnectionCutTests {
    @Test func requestsInFlightAreAnsweredOKOr503AndOnlyAcknowledgedChangesAreStored() async throws {
        guard TestEngine.current == .postgresql else { return }
        try await TestBackend.with { backend in
            let login = try await backend.login(DemoAccounts.demo)
            let list = try await backend.call(MessageListResponse.self, .GET, APIRoute.messages, token: login.accessToken)
            let id = try #require(list.messages.first?.id)
            let before = try await backend.call(EventsResponse.self, .GET, APIRoute.events, token: login.accessToken).cursor
            let url = try PostgresURL(try TestEngine.databaseURL(folder: backend.folder))
            let killing = KillSwitch()
            let killer = Thread {
                guard let admin = try? PostgresStorage(url: url, maximumConnections: 1) else { return }
                defer { admin.close() }
                while !killing.stopped {
                    _ = try? admin.withSession { db in
                        try db.fetchAll(sql: """
                            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                            WHERE datname = current_database() AND pid <> pg_backend_pid()
                            """, arguments: [])
                    }
                    Thread.sleep(forTimeInterval: 0.005)
                }
            }
            killer.start()
            var ok = 0, unavailable = 0, other: [UInt] = []
            for index in 0..<120 {
                let response = try await backend.send(.POST, APIRoute.markRead(id) + (index % 2 == 0 ? "?unread=1" : ""), token: login.accessToken)
                switch response.status.code {
                case 200: ok += 1
                case 503:
                    unavailable += 1
                    #expect(response.headers.first(name: "Retry-After") == "1")
                    #expect(TestBackend.errorBody(response)?.error.code == "server.unavailable")
                default: other.append(response.status.code)
                }
            }
            killing.stop()
            while !killer.isFinished { try await Task.sleep(for: .milliseconds(20)) }
            #expect(other.isEmpty, "\(other)")
            #expect(ok > 0)
            let events = try await backend.call(EventsResponse.self, .GET, APIRoute.events + "?since=\(before)", token: login.accessToken)
            #expect(events.events.count == ok, "stored \(events.events.count) changes, acknowledged \(ok)")
            print("connection cuts: \(ok) answered 200, \(unavailable) answered 503 + Retry-After, \(events.events.count) stored")
        }
    }
}

private final class KillSwitch: @unchecked Sendable {
    private let lock = NSLock()
    private var _stopped = false
    func stop() { lock.withLock { _stopped = true } }
    var stopped: Bool { lock.withLock { _stopped } }
}
