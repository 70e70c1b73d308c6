import Foundation
import RampartServer
import RampartTestSupport
import Testing

/// The server's SQLite database on a full disk: a 2 MiB tmpfs (mounted by the test; root only, as
/// CI runs) filled by transactions of 10 rows each.
@Suite struct FullDiskTests {
    /// The write that finds the disk full fails as a storage error and leaves nothing of itself;
    /// every acknowledged batch is whole (10 rows), and the database still reads.
    @Test func aFullDiskFailsTheWriteAndLeavesNothingHalfWritten() async throws {
        guard getuid() == 0 else { return }   // mounting needs root (CI and the services run as root)
        try await onThreadOfItsOwn(named: "full-disk") {
            let mount = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-full-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: mount, withIntermediateDirectories: true)
            let mountTool = CLITool(path: URL(fileURLWithPath: "/bin/mount"))
            let mounted = try mountTool.run(["-t", "tmpfs", "-o", "size=2m", "tmpfs", mount.path])
            try #require(mounted.status == 0, "mount: \(mounted.stderr)")
            defer {
                _ = try? CLITool(path: URL(fileURLWithPath: "/bin/umount")).run([mount.path])
                try? FileManager.default.removeItem(at: mount)
            }
            let storage = try SQLiteStorage(url: mount.appendingPathComponent("backend.sqlite"))
            defer { storage.close() }
            try storage.write { db in try db.execute(sql: "CREATE TABLE parts (batch INTEGER NOT NULL, part INTEGER NOT NULL, data BLOB NOT NULL)") }
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
            print("full disk: \(acknowledged) batches of 10 acknowledged and whole, then \(error)")
        }
    }
}
