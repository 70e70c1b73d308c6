import Foundation
import GRDB
import RampartCore
import Testing
@testable import SealedStore

/// The database tamper matrix: an attacker with the disk alone (not the MainKey) edits, swaps,
/// replays, deletes or inserts rows of the sealed store. Each case must come back as `tampered`
/// (or, for privacy settings, as the safe default with a warning) — never as data.
///
/// Trust-model rows: **database — modified (critical: can mislead the user)**; **settings —
/// modified (high)**; **device storage (low)**.
@Suite struct TamperMatrixTests {
    /// The column holding a message's sealed content (the whole-row envelope).
    static func sealedColumn(_ db: Database) throws -> String {
        try db.columns(in: "messages").contains { $0.name == "sealed" } ? "sealed" : "body"
    }

    /// Every column of a row, with its rowid, as an attacker copying it out of the file would.
    static func copyRow(_ db: Database, table: String, where condition: String) throws -> Row {
        try #require(try Row.fetchOne(db, sql: "SELECT rowid AS rowid, * FROM \(table) WHERE \(condition)"))
    }

    /// Puts a copied row back (replacing whatever has its key now).
    static func putBack(_ row: Row, into table: String, in db: Database) throws {
        let columns = Array(row.columnNames)
        try db.execute(sql: "INSERT OR REPLACE INTO \(table) (\(columns.joined(separator: ", "))) VALUES ("
                           + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")",
                       arguments: StatementArguments(Array(row.databaseValues)))
    }

    @Test func swappedBody() throws {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(messages: [sampleMessage(1), sampleMessage(2)])
        try fixture.tamper { db in
            let column = try Self.sealedColumn(db)
            let one = try Data.fetchOne(db, sql: "SELECT \(column) FROM messages WHERE id = 'msg-1'")!
            let two = try Data.fetchOne(db, sql: "SELECT \(column) FROM messages WHERE id = 'msg-2'")!
            try db.execute(sql: "UPDATE messages SET \(column) = ? WHERE id = 'msg-1'", arguments: [two])
            try db.execute(sql: "UPDATE messages SET \(column) = ? WHERE id = 'msg-2'", arguments: [one])
        }
        expectTampered { try fixture.store.mail.message(id: "msg-1") }
        expectTampered { try fixture.store.mail.messages(label: "inbox", limit: 10) }
    }

    @Test func flippedBit() throws {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(message: sampleMessage(1))
        try fixture.tamper { db in
            let column = try Self.sealedColumn(db)
            var value = try Data.fetchOne(db, sql: "SELECT \(column) FROM messages WHERE id = 'msg-1'")!
            value[value.startIndex + value.count - 20] ^= 0x01
            try db.execute(sql: "UPDATE messages SET \(column) = ? WHERE id = 'msg-1'", arguments: [value])
        }
        expectTampered { try fixture.store.mail.message(id: "msg-1") }
    }

    /// Edits of a message's time or labels, in its row and its label list alike (the SQL, and the
    /// label whose list shows the message afterwards): the message and that list both fail.
    @Test(arguments: [
        // A day later.
        (["UPDATE messages SET time = time + 86400 WHERE id = 'msg-1'", "UPDATE message_labels SET time = time + 86400"], "inbox"),
        // Moved from the inbox to the trash.
        (["UPDATE messages SET label_ids = 'trash,all' WHERE id = 'msg-1'",
          "UPDATE message_labels SET label_id = 'trash' WHERE label_id = 'inbox'"], "trash"),
    ])
    func editedTimeOrLabels(_ statements: [String], label: String) throws {
        let fixture = try StoreFixture.tampered(holding: [sampleMessage(1)], statements)
        expectTampered { try fixture.store.mail.message(id: "msg-1") }
        expectTampered { try fixture.store.mail.messages(label: label, limit: 10) }
    }

    @Test func editedFlags() throws {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(message: sampleMessage(2))   // unread
        try fixture.tamper { db in
            try db.execute(sql: "UPDATE messages SET flags = ? WHERE id = 'msg-2'", arguments: [MessageFlags.starred.rawValue])
        }
        expectTampered { try fixture.store.mail.message(id: "msg-2") }
        expectTampered { try fixture.store.mail.messages(conversation: sampleMessage(2).conversationID) }
    }

    @Test func labelLinkAloneAddedOrRemoved() throws {
        // Only the label list changes (the message rows stay as they were).
        let fixture = try StoreFixture.tampered(holding: [sampleMessage(1), sampleMessage(2)], [
            "INSERT INTO message_labels (label_id, time, message_rowid) SELECT 'trash', time, message_rowid FROM message_labels WHERE label_id = 'inbox'",
            "DELETE FROM message_labels WHERE label_id = 'all' AND time = (SELECT MIN(time) FROM message_labels)",
        ])
        expectTampered { try fixture.store.mail.messages(label: "trash", limit: 10) }
        expectTampered { try fixture.store.mail.messages(label: "all", limit: 10) }
    }

    @Test func deletedRow() throws {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(messages: [sampleMessage(1), sampleMessage(2), sampleMessage(3)])
        try fixture.tamper { db in
            let rowid = try Int64.fetchOne(db, sql: "SELECT rowid FROM messages WHERE id = 'msg-2'")!
            try db.execute(sql: "DELETE FROM message_labels WHERE message_rowid = ?", arguments: [rowid])
            try db.execute(sql: "DELETE FROM messages WHERE id = 'msg-2'")
        }
        expectTampered { try fixture.store.mail.messages(label: "inbox", limit: 10) }
        expectTampered { try fixture.store.mail.message(id: "msg-1") }
    }

    @Test func insertedRow() throws {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(messages: [sampleMessage(1), sampleMessage(2)])
        var saved: Row?
        try fixture.tamper { db in saved = try Self.copyRow(db, table: "messages", where: "id = 'msg-2'") }
        try fixture.store.mail.deleteMessage(id: "msg-2")
        // The deleted message's old (valid) row is put back.
        try fixture.tamper { db in try Self.putBack(try #require(saved), into: "messages", in: db) }
        expectTampered { try fixture.store.mail.message(id: "msg-2") }
        expectTampered { try fixture.store.mail.message(id: "msg-1") }
    }

    @Test func replayedOlderRow() throws {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(message: sampleMessage(2))   // unread
        var saved: Row?
        try fixture.tamper { db in saved = try Self.copyRow(db, table: "messages", where: "id = 'msg-2'") }
        try fixture.store.mail.setFlags([.starred], messageID: "msg-2")
        #expect(try fixture.store.mail.message(id: "msg-2").flags == [.starred])
        try fixture.tamper { db in try Self.putBack(try #require(saved), into: "messages", in: db) }
        expectTampered { try fixture.store.mail.message(id: "msg-2") }
    }

    @Test func editedSetting() throws {
        let fixture = try StoreFixture()
        try fixture.store.setPrivacySettings(.safeDefaults)
        try fixture.tamper { db in
            try db.execute(sql: "UPDATE settings SET value = 'true' WHERE name = 'autoLoadRemoteContent'")
        }
        let readout = try fixture.store.privacySettings()
        #expect(readout.settings.autoLoadRemoteContent == false)
        #expect(readout.warnings.contains { $0.setting == "autoLoadRemoteContent" })
    }

    @Test func replayedSetting() throws {
        let fixture = try StoreFixture()
        var risky = PrivacySettings.safeDefaults
        risky.autoLoadRemoteContent = true
        try fixture.store.setPrivacySettings(risky)
        var saved: Row?
        try fixture.tamper { db in saved = try Self.copyRow(db, table: "settings", where: "name = 'autoLoadRemoteContent'") }
        // The user turns remote content off; the attacker puts the older, authentic "on" back.
        try fixture.store.setPrivacySettings(.safeDefaults)
        try fixture.tamper { db in try Self.putBack(try #require(saved), into: "settings", in: db) }
        let readout = try fixture.store.privacySettings()
        #expect(readout.settings.autoLoadRemoteContent == false)
        #expect(readout.warnings.contains { $0.setting == "autoLoadRemoteContent" })
    }

    @Test func editedRowOfATableWithoutSealedContent() throws {
        let fixture = try StoreFixture()
        try fixture.store.drive.insert(volume: DriveVolume(id: "v1", state: 1, usedSpace: 10, rootShareID: "s1"))
        try fixture.tamper { db in try db.execute(sql: "UPDATE volumes SET used_space = 0 WHERE id = 'v1'") }
        expectTampered { try fixture.store.drive.volume(id: "v1") }
    }
}
