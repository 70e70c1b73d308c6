import Foundation
import GRDB
import RampartCore
import Testing
@testable import SealedStore

/// A rollback anchor kept in memory (in the app: a keychain item).
final class MemoryAnchor: StoreRollbackAnchor, @unchecked Sendable {
    private let lock = NSLock()
    private var record: Data?
    func load() throws -> Data? { lock.withLock { record } }
    func save(_ record: Data) throws { lock.withLock { self.record = record } }
}

/// The authenticated row sets and epoch: rollback of the whole store, re-sync after a deletion,
/// the state row itself, and the refusal of databases of the older column layout.
///
/// Trust-model rows: **database — modified (critical)**; **device storage (low)** — rollback.
@Suite struct RowSetTests {
    func copyFiles(_ fixture: StoreFixture, to folder: URL) throws {
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.copyItem(at: fixture.files.directory(for: fixture.session.userID), to: folder)
    }

    func restoreFiles(_ fixture: StoreFixture, from folder: URL) throws {
        let directory = fixture.files.directory(for: fixture.session.userID)
        try FileManager.default.removeItem(at: directory)
        try FileManager.default.copyItem(at: folder, to: directory)
    }

    @Test func anOlderCopyOfTheWholeStoreIsCaughtByTheAnchorAndOnlyByIt() throws {
        let fixture = try StoreFixture()
        let anchor = MemoryAnchor()
        fixture.store.close()
        var store = try SealedStore(files: fixture.files, keys: fixture.session, anchor: anchor)
        try store.mail.insert(message: sampleMessage(1))
        store.close()
        let backup = fixture.root.appendingPathComponent("backup", isDirectory: true)
        try copyFiles(fixture, to: backup)
        store = try SealedStore(files: fixture.files, keys: fixture.session, anchor: anchor)
        try store.mail.deleteMessage(id: "msg-1")
        try store.mail.insert(message: sampleMessage(2))
        store.close()
        try restoreFiles(fixture, from: backup)
        // The whole older copy is consistent in itself: only the anchor, kept elsewhere, knows better.
        expectTampered { try SealedStore(files: fixture.files, keys: fixture.session, anchor: anchor) }
        let withoutAnchor = try SealedStore(files: fixture.files, keys: fixture.session)
        defer { withoutAnchor.close() }
        #expect(try withoutAnchor.mail.message(id: "msg-1").id == "msg-1")
    }

    @Test func anAnchorOfAnotherKeyIsReplacedNotTrusted() throws {
        let fixture = try StoreFixture()
        let anchor = MemoryAnchor()
        try anchor.save(Data(repeating: 0xFF, count: 40))
        fixture.store.close()
        let store = try SealedStore(files: fixture.files, keys: fixture.session, anchor: anchor)
        defer { store.close() }
        try store.mail.insert(message: sampleMessage(1))
        #expect(try anchor.load() != Data(repeating: 0xFF, count: 40))
    }

    @Test func aDeletedMessageMarksTheStoreForResyncAndTheResyncStartsOver() throws {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(messages: [sampleMessage(1), sampleMessage(2), sampleMessage(3)])
        try fixture.store.mail.setEventCursor("42")
        try fixture.store.setPrivacySettings(PrivacySettings(autoLoadRemoteContent: false, stripImageMetadata: true,
                                                             trustedSenders: ["a@b.example"], autolock: .never))
        #expect(try fixture.store.mail.needsResync() == false)
        try fixture.tamper { db in try db.execute(sql: "DELETE FROM messages WHERE id = 'msg-2'") }
        #expect(try fixture.store.mail.needsResync())
        try fixture.store.mail.discardForResync()
        #expect(try fixture.store.mail.needsResync() == false)
        #expect(try fixture.store.mail.eventCursor() == nil)
        #expect(try fixture.store.mail.messageCount() == 0)
        // The sync downloads everything again; the settings were kept.
        try fixture.store.mail.insert(messages: [sampleMessage(1), sampleMessage(2), sampleMessage(3)])
        #expect(try fixture.store.mail.messages(label: "inbox", limit: 10).map(\.id) == ["msg-3", "msg-2", "msg-1"])
        #expect(try fixture.store.privacySettings().settings.trustedSenders == ["a@b.example"])
        try fixture.reopen()
        #expect(try fixture.store.mail.message(id: "msg-2") == sampleMessage(2))
    }

    @Test func anEditedRowFoundByAReadMarksTheStoreForResync() throws {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(messages: [sampleMessage(1), sampleMessage(2)])
        try fixture.tamper { db in try db.execute(sql: "UPDATE messages SET flags = 0 WHERE id = 'msg-2'") }
        // The row set is intact: only reading the row finds the edit, and remembers it.
        #expect(try fixture.store.mail.needsResync() == false)
        expectTampered { try fixture.store.mail.message(id: "msg-2") }
        #expect(try fixture.store.mail.needsResync())
        try fixture.store.mail.discardForResync()
        #expect(try fixture.store.mail.needsResync() == false)
    }

    @Test func aDeletedOrEditedStateIsTampered() throws {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(message: sampleMessage(1))
        let saved = try fixture.store.currentPool!.read { db in try Row.fetchOne(db, sql: "SELECT * FROM store_state")! }
        try fixture.tamper { db in try db.execute(sql: "DELETE FROM store_state") }
        expectTampered { try fixture.store.mail.message(id: "msg-1") }
        expectTampered { try fixture.store.mail.insert(message: sampleMessage(2)) }
        try fixture.tamper { db in
            try db.execute(sql: "INSERT INTO store_state (id, epoch, tables, mac) VALUES (1, ?, ?, ?)",
                           arguments: [(saved["epoch"] as Int64) + 5, saved["tables"] as Data, saved["mac"] as Data])
        }
        // The epoch column is informative only; the MAC covers the epoch inside `tables`.
        #expect(try fixture.store.mail.message(id: "msg-1") == sampleMessage(1))
        try fixture.tamper { db in
            var tables = saved["tables"] as Data
            tables[tables.startIndex + 7] ^= 1
            try db.execute(sql: "UPDATE store_state SET tables = ?", arguments: [tables])
        }
        expectTampered { try fixture.store.mail.message(id: "msg-1") }
    }

    @Test func savingTheSettingsAgainRepairsAReplayedSet() throws {
        let fixture = try StoreFixture()
        var risky = PrivacySettings.safeDefaults
        risky.autoLoadRemoteContent = true
        try fixture.store.setPrivacySettings(risky)
        let saved = try fixture.store.currentPool!.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM settings WHERE name = 'autoLoadRemoteContent'")!
        }
        try fixture.store.setPrivacySettings(.safeDefaults)
        try fixture.tamper { db in
            try db.execute(sql: "UPDATE settings SET value = ?, version = ?, mac = ? WHERE name = 'autoLoadRemoteContent'",
                           arguments: [saved["value"] as String, saved["version"] as Int64, saved["mac"] as Data])
        }
        let readout = try fixture.store.privacySettings()
        #expect(readout.settings == .safeDefaults)
        #expect(readout.warnings.count == 5 && readout.warnings.allSatisfy { $0.reason == .rolledBack })
        try fixture.store.setPrivacySettings(.safeDefaults)
        #expect(try fixture.store.privacySettings().warnings.isEmpty)
    }

    @Test func aDatabaseOfTheColumnLayoutIsRefusedWithAResyncMessage() throws {
        let fixture = try StoreFixture()
        fixture.store.close()
        let path = fixture.databasePath
        try FileManager.default.removeItem(atPath: path)
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                INSERT INTO grdb_migrations VALUES ('v1-core'), ('v1-mail'), ('v1-drive');
                """)
        }
        try queue.close()
        #expect(throws: SealedStoreError.outdatedStore("alice")) {
            try SealedStore(files: fixture.files, keys: fixture.session)
        }
        #expect(SealedStoreError.outdatedStore("alice").info.message.contains("log in again"))
    }
}
