import Foundation
import RampartServer
import RampartServerPostgres
import RampartTestSupport
import Testing

/// The storage seam on both engines: values, unique violations, rollbacks, migrations, and (on
/// PostgreSQL) a connection lost in the middle of a transaction.
@Suite struct StorageEngineTests {
    @Test(arguments: TestEngine.allUnderTest)
    func valuesOfEveryTypeComeBackAsStored(engine: TestEngine) async throws {
        try await engine.withStorageOffThePool { storage in
            try storage.write { db in
                try db.execute(sql: "CREATE TABLE kinds (id INTEGER PRIMARY KEY NOT NULL, i INTEGER, r REAL, t TEXT, b BLOB)")
            }
            let blob = Data([0, 1, 2, 0xFF, 0, 0x27, 0x3F])   // NUL bytes, a quote and a '?'
            try storage.write { db in
                try db.execute(sql: "INSERT INTO kinds (id, i, r, t, b) VALUES (?, ?, ?, ?, ?)",
                               arguments: [1, Int64.max, 0.125, "é ' ? ;", blob])
                try db.execute(sql: "INSERT INTO kinds (id, i, r, t, b) VALUES (?, ?, ?, ?, ?)", arguments: [2, nil, nil, nil, Data()])
            }
            let rows = try storage.read { db in try StorageRow.fetchAll(db, sql: "SELECT * FROM kinds ORDER BY id") }
            #expect(rows.count == 2)
            #expect(rows[0]["i"] as Int64 == Int64.max)
            #expect(rows[0]["r"] as Double == 0.125)
            #expect(rows[0]["t"] as String == "é ' ? ;")
            #expect(rows[0].data("b") == blob)
            #expect((rows[1]["i"] as Int64?) == nil && (rows[1]["t"] as String?) == nil)
            #expect(rows[1].data("b").isEmpty)
            let count = try storage.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM kinds WHERE t = ?", arguments: ["é ' ? ;"]) }
            #expect(count == 1)
            let exists = try storage.read { db in try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM kinds WHERE id = ?)", arguments: [2]) }
            #expect(exists == true)
        }
    }

    @Test(arguments: TestEngine.allUnderTest)
    func aDuplicateKeyIsAUniqueViolationAndTheTransactionLeavesNothing(engine: TestEngine) async throws {
        try await engine.withStorageOffThePool { storage in
            try storage.write { db in try db.execute(sql: "CREATE TABLE names (name TEXT PRIMARY KEY NOT NULL, n INTEGER NOT NULL)") }
            try storage.write { db in try db.execute(sql: "INSERT INTO names (name, n) VALUES (?, ?)", arguments: ["a", 1]) }
            #expect(throws: StorageError.self) {
                try storage.write { db in
                    try db.execute(sql: "INSERT INTO names (name, n) VALUES (?, ?)", arguments: ["b", 2])
                    do {
                        try db.execute(sql: "INSERT INTO names (name, n) VALUES (?, ?)", arguments: ["a", 3])
                        Issue.record("a duplicate key was accepted")
                    } catch StorageError.uniqueViolation {
                        throw StorageError.uniqueViolation("seen")
                    }
                }
            }
            // 'b' was written in the same transaction: rolled back with it.
            let names = try storage.read { db in try String.fetchAll(db, sql: "SELECT name FROM names ORDER BY name") }
            #expect(names == ["a"])
            // INSERT OR IGNORE changes nothing and fails nothing; changesCount says so.
            let changed = try storage.write { db in
                try db.execute(sql: "INSERT OR IGNORE INTO names (name, n) VALUES (?, ?)", arguments: ["a", 9])
                return db.changesCount
            }
            #expect(changed == 0)
            let updated = try storage.write { db in try db.execute(sql: "UPDATE names SET n = n + 1 WHERE name = ? COLLATE NOCASE", arguments: ["A"]) }
            #expect(updated == 1)
        }
    }

    @Test(arguments: TestEngine.allUnderTest)
    func migrationsRunOnceEachInOrder(engine: TestEngine) async throws {
        try await engine.withStorageOffThePool { storage in
            let migrations = [
                StorageMigration("one") { db in try db.execute(sql: "CREATE TABLE log (id INTEGER PRIMARY KEY AUTOINCREMENT, step TEXT NOT NULL)") },
                StorageMigration("two") { db in try db.execute(sql: "INSERT INTO log (step) VALUES ('two')") },
            ]
            try storage.migrate(migrations)
            try storage.migrate(migrations)
            try storage.migrate(migrations + [StorageMigration("three") { db in try db.execute(sql: "INSERT INTO log (step) VALUES ('three')") }])
            let steps = try storage.read { db in try String.fetchAll(db, sql: "SELECT step FROM log ORDER BY id") }
            #expect(steps == ["two", "three"])
            #expect(try storage.read { db in try db.tableExists("log") })
            #expect(try !storage.read { db in try db.tableExists("nothing") })
        }
    }

    /// A connection dropped in the middle of a transaction (its backend ended by another session,
    /// as a PostgreSQL restart or a network cut ends it): the transaction fails as retryable, none
    /// of its rows are stored (counted), and the next transaction runs on a new connection.
    @Test func aConnectionDroppedMidTransactionLeavesNothingHalfWritten() async throws {
        guard let engine = TestEngine.allUnderTest.first(where: { $0 == .postgresql }) else { return }
        try await engine.withStorageOffThePool { storage in
            try storage.write { db in try db.execute(sql: "CREATE TABLE parts (id INTEGER PRIMARY KEY NOT NULL, body BLOB NOT NULL)") }
            let pg = try #require(storage as? PostgresStorage)
            let killer = try PostgresStorage(url: pg.url, maximumConnections: 1)
            defer { killer.close() }
            var thrown: (any Error)?
            do {
                try storage.write { db in
                    for id in 0..<50 {
                        try db.execute(sql: "INSERT INTO parts (id, body) VALUES (?, ?)", arguments: [id, Data(repeating: 7, count: 1000)])
                    }
                    let pid = try Int.fetchOne(db, sql: "SELECT pg_backend_pid()") ?? 0
                    try killer.withSession { other in
                        _ = try other.fetchAll(sql: "SELECT pg_terminate_backend(?::integer)", arguments: [pid])
                    }
                    for id in 50..<100 {
                        try db.execute(sql: "INSERT INTO parts (id, body) VALUES (?, ?)", arguments: [id, Data(repeating: 7, count: 1000)])
                    }
                }
            } catch {
                thrown = error
            }
            guard case StorageError.connectionLost? = thrown as? StorageError else {
                Issue.record("expected connectionLost, got \(String(describing: thrown))")
                return
            }
            let count = try storage.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM parts") }
            #expect(count == 0)
            try storage.write { db in try db.execute(sql: "INSERT INTO parts (id, body) VALUES (?, ?)", arguments: [1, Data([1])]) }
            #expect(try storage.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM parts") } == 1)
        }
    }

    @Test func theURLsPasswordIsNeverShown() async throws {
        try await onThreadOfItsOwn { try Self.urlChecks() }
    }

    static func urlChecks() throws {
        let url = try PostgresURL("postgresql://rampart:s3cr%40t-pw@/rampart?host=/tmp/sock&port=5433")
        #expect(url.redacted == "postgresql://rampart:***@/rampart?host=/tmp/sock")
        #expect(!"\(url)".contains("s3cr"))
        #expect(url.address == .unixSocket(path: "/tmp/sock/.s.PGSQL.5433"))
        let tcp = try PostgresURL("postgresql://app:pw@db.example:6543/mail?sslmode=require")
        #expect(tcp.address == .tcp(host: "db.example", port: 6543) && tcp.tls == .require && tcp.database == "mail")
        #expect(try PostgresURL("postgresql://app@127.0.0.1/mail").tls == .disable)
        for bad in ["mysql://a@b/c", "postgresql://a@b", "postgresql:///c", "postgresql://a:pw@h/d?sslmode=maybe"] {
            #expect(throws: PostgresStorageError.self) { try PostgresURL(bad) }
        }
        // A wrong password fails at start, and the error does not carry it.
        if let base = ProcessInfo.processInfo.environment["RAMPART_POSTGRES_URL"] {
            let wrong = base.replacingOccurrences(of: #"://rampart:[^@]*@"#, with: "://rampart:wrong-Pa55word@", options: .regularExpression)
            do {
                _ = try PostgresStorage(url: try PostgresURL(wrong))
                Issue.record("a wrong password was accepted")
            } catch {
                #expect(!"\(error)".contains("wrong-Pa55word"))
            }
        }
    }
}
