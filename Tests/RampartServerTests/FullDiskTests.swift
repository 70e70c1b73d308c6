import Foundation
import RampartServer
import RampartServerPostgres
import RampartTestSupport
import Testing

/// The server's database on a full disk: a 2 MiB tmpfs (mounted by the test; root only, as CI
/// runs) filled by transactions of 10 rows each — SQLite's file on it, or a PostgreSQL tablespace
/// on it holding the table (the cluster's write-ahead log stays on its own disk).
@Suite struct FullDiskTests {
    /// The write that finds the disk full fails as a storage error and leaves nothing of itself;
    /// every acknowledged batch is whole (10 rows), and the database still reads.
    @Test func aFullDiskFailsTheWriteAndLeavesNothingHalfWritten() async throws {
        guard getuid() == 0 else { return }   // mounting needs root (CI and the services run as root)
        try await Self.onTmpfs(owner: nil) { mount in
            let storage = try SQLiteStorage(url: mount.appendingPathComponent("backend.sqlite"))
            defer { storage.close() }
            _ = try storage.write { db in try db.execute(sql: "CREATE TABLE parts (batch INTEGER NOT NULL, part INTEGER NOT NULL, data BLOB NOT NULL)") }
            try Self.fillAndCheck(storage, engine: "SQLite")
        }
    }

    /// The same on PostgreSQL: the table (and its TOAST table) in a tablespace on the 2 MiB tmpfs
    /// (owned by the cluster's `postgres` user). The insert that cannot extend its file fails
    /// (SQLSTATE 53100, disk full) and rolls its whole transaction back; every acknowledged batch
    /// is whole, and the same storage goes on writing elsewhere.
    @Test func aFullTablespaceOnPostgreSQLFailsTheWriteAndLeavesNothingHalfWritten() async throws {
        guard getuid() == 0, TestEngine.allUnderTest.contains(.postgresql) else { return }
        guard let owner = getpwnam("postgres")?.pointee else {
            Issue.record("no postgres user: PostgreSQL is not installed (scripts/deps/postgres.apt)")
            return
        }
        try await Self.onTmpfs(owner: (owner.pw_uid, owner.pw_gid)) { mount in
            try TestEngine.postgresql.withStorage { storage in
                let postgres = try #require(storage as? PostgresStorage)
                let tablespace = "rampart_full_\(getpid())"
                // CREATE and DROP TABLESPACE run outside a transaction.
                _ = try postgres.withSession { db in try db.execute(sql: "CREATE TABLESPACE \(tablespace) LOCATION '\(mount.path)'") }
                defer {
                    _ = try? postgres.write { db in try db.execute(sql: "DROP TABLE IF EXISTS parts") }
                    _ = try? postgres.withSession { db in try db.execute(sql: "DROP TABLESPACE IF EXISTS \(tablespace)") }
                }
                _ = try storage.write { db in
                    try db.execute(sql: "CREATE TABLE parts (batch INTEGER NOT NULL, part INTEGER NOT NULL, data BLOB NOT NULL) TABLESPACE \(tablespace)")
                }
                let error = try Self.fillAndCheck(storage, engine: "PostgreSQL")
                #expect("\(error)".contains("53100"), "\(error)")
                _ = try storage.write { db in try db.execute(sql: "CREATE TABLE afterwards (n INTEGER NOT NULL); INSERT INTO afterwards (n) VALUES (1)") }
                #expect(try storage.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM afterwards") } == 1)
            }
        }
    }

    /// Runs `body` on a thread of its own with a fresh 2 MiB tmpfs (owned by `owner`, 0700, when given).
    static func onTmpfs(owner: (uid_t, gid_t)?, _ body: @escaping @Sendable (URL) throws -> Void) async throws {
        try await onThreadOfItsOwn(named: "full-disk") {
            let mount = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-full-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: mount, withIntermediateDirectories: true)
            let options = "size=2m" + (owner.map { ",uid=\($0.0),gid=\($0.1),mode=0700" } ?? "")
            let mounted = try CLITool(path: URL(fileURLWithPath: "/bin/mount")).run(["-t", "tmpfs", "-o", options, "tmpfs", mount.path])
            try #require(mounted.status == 0, "mount: \(mounted.stderr)")
            defer {
                _ = try? CLITool(path: URL(fileURLWithPath: "/bin/umount")).run([mount.path])
                try? FileManager.default.removeItem(at: mount)
            }
            try body(mount)
        }
    }

    /// Writes batches of 10 random 8 KiB rows into `parts` until a write fails; checks that the
    /// failure is a storage error and that exactly the acknowledged batches are stored, whole.
    /// Returns the failure.
    @discardableResult
    static func fillAndCheck(_ storage: any ServerStorage, engine: String) throws -> any Error {
        var acknowledged = 0
        var failure: (any Error)?
        var generator = SystemRandomNumberGenerator()
        for batch in 0..<200 {
            do {
                try storage.write { db in
                    for part in 0..<10 {
                        let data = Data((0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) })
                        try db.execute(sql: "INSERT INTO parts (batch, part, data) VALUES (?, ?, ?)", arguments: [batch, part, data])
                    }
                }
                acknowledged += 1
            } catch {
                failure = error
                break
            }
        }
        let error = try #require(failure, "2 MiB never filled")
        #expect(error is StorageError, "\(error)")
        let counts = try storage.read { db in
            try StorageRow.fetchAll(db, sql: "SELECT batch, COUNT(*) AS n FROM parts GROUP BY batch ORDER BY batch")
        }
        #expect(counts.count == acknowledged)
        #expect(counts.allSatisfy { ($0["n"] as Int) == 10 }, "a half-written batch")
        print("full disk (\(engine)): \(acknowledged) batches of 10 acknowledged and whole, then \(error)")
        return error
    }
}
