import Foundation
import RampartCore
import RampartTestSupport
import Testing
@testable import RampartServer

/// The sealed store as the trust model's row **database — modified (critical: can mislead the
/// user)** asks, through the command line: a message row deleted or edited in the SQLite file
/// by someone with the disk is exit 7 (`tampered`), never silently used, and `rampart sync`
/// downloads the mail again so the deleted message comes back.
@Suite("Sealed store tampered on disk (rampart CLI)", .serialized)
struct StoreTamperCLITests {
    /// Runs SQL on the user's store with the `sqlite3` tool, as an attacker with the disk would.
    func sqlite(_ database: URL, _ sql: String) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [database.path, sql]
        try await process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "sqlite3 \(sql)")
    }

    func storeFile(under home: URL) throws -> URL {
        let enumerator = FileManager.default.enumerator(at: home, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            if url.lastPathComponent == "store.sqlite" { return url }
        }
        throw SealedStoreFileMissing()
    }

    struct SealedStoreFileMissing: Error {}

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3")))
    func aDeletedMessageIsExit7UntilSyncBringsItBackAndAnEditedOneIsExit7() async throws {
        let world = try EndToEndWorld()
        let server = try await world.startServer()
        defer { server.stopInBackground() }
        let info = world.serverData.appendingPathComponent(EmbeddedServer.infoFileName).path
        let login = try await world.login(DemoAccounts.demo, user: "demo", serverInfo: info)
        #expect(login.status == 0, "\(login.stderr)")
        let sync = try await world.rampart(["sync", "--user", "demo"])
        #expect(sync.status == 0, "\(sync.stderr)")
        let inbox = try await world.rampart(["list", "--user", "demo"])
        #expect(inbox.status == 0, "\(inbox.stderr)")
        let planningID = try #require(messageID(in: inbox.stdout, subject: "Quarterly planning notes"))
        let database = try storeFile(under: world.home)

        // Deleted: the row and its label links, as a careful attacker would.
        try await sqlite(database, """
            DELETE FROM message_labels WHERE message_rowid = (SELECT rowid FROM messages WHERE id = '\(planningID)');
            DELETE FROM messages WHERE id = '\(planningID)';
            """)
        let listed = try await world.rampart(["list", "--user", "demo"])
        #expect(listed.status == 7, "\(listed.stdout)\(listed.stderr)")
        let resync = try await world.rampart(["sync", "--user", "demo"])
        #expect(resync.status == 0, "\(resync.stderr)")
        let back = try await world.rampart(["list", "--user", "demo"])
        #expect(back.status == 0, "\(back.stderr)")
        #expect(back.stdout.contains(planningID))

        // Edited flags (marked read behind the user's back).
        try await sqlite(database, "UPDATE messages SET flags = flags + 256 WHERE id = '\(planningID)';")
        let read = try await world.rampart(["read", planningID, "--user", "demo"])
        #expect(read.status == 7, "\(read.stdout)\(read.stderr)")
        #expect(read.stderr.contains("modified outside Rampart"))
        #expect(!read.stdout.contains("Quarterly planning notes"))
    }
}
