import Foundation
import GRDB
import RampartCore
import Testing
@testable import SealedStore

/// An attacker with the disk (but not the MainKey) edits the database file.
@Suite struct TamperTests {
    @Test func swappedBodiesAreRejected() throws {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(messages: [sampleMessage(1), sampleMessage(2)])
        try fixture.tamper { db in
            let one = try Data.fetchOne(db, sql: "SELECT sealed FROM messages WHERE id = 'msg-1'")!
            let two = try Data.fetchOne(db, sql: "SELECT sealed FROM messages WHERE id = 'msg-2'")!
            try db.execute(sql: "UPDATE messages SET sealed = ? WHERE id = 'msg-1'", arguments: [two])
            try db.execute(sql: "UPDATE messages SET sealed = ? WHERE id = 'msg-2'", arguments: [one])
        }
        expectTampered { try fixture.store.mail.message(id: "msg-1") }
        expectTampered { try fixture.store.mail.message(id: "msg-2") }
        expectTampered { try fixture.store.mail.messages(label: "inbox", limit: 10) }
    }

    @Test func envelopeMovedToAnotherTableIsRejected() throws {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(message: sampleMessage(1))
        try fixture.store.mail.save(contact: Contact(id: "msg-1", modified: 1, name: "Carol", emails: [], card: "v"))
        try fixture.tamper { db in
            try db.execute(sql: "UPDATE contacts SET sealed = (SELECT sealed FROM messages WHERE id = 'msg-1'), version = (SELECT version FROM messages WHERE id = 'msg-1')")
        }
        expectTampered { try fixture.store.mail.contact(id: "msg-1") }
    }

    @Test func renamedRowIdIsRejected() throws {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(message: sampleMessage(1))
        try fixture.tamper { db in try db.execute(sql: "UPDATE messages SET id = 'msg-999' WHERE id = 'msg-1'") }
        expectTampered { try fixture.store.mail.message(id: "msg-999") }
    }

    @Test func flippedByteIsRejected() throws {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(message: sampleMessage(1))
        try fixture.tamper { db in
            var sealed = try Data.fetchOne(db, sql: "SELECT sealed FROM messages WHERE id = 'msg-1'")!
            sealed[sealed.startIndex + 30] ^= 0x80
            try db.execute(sql: "UPDATE messages SET sealed = ? WHERE id = 'msg-1'", arguments: [sealed])
        }
        expectTampered { try fixture.store.mail.message(id: "msg-1") }
    }

    @Test func truncatedOrNulledValueIsRejected() throws {
        let fixture = try StoreFixture.tampered(holding: [sampleMessage(1), sampleMessage(2)], [
            "UPDATE messages SET sealed = substr(sealed, 1, length(sealed) - 1) WHERE id = 'msg-1'",
            "UPDATE messages SET sealed = x'' WHERE id = 'msg-2'",
        ])
        expectTampered { try fixture.store.mail.message(id: "msg-1") }
        expectTampered { try fixture.store.mail.message(id: "msg-2") }
    }

    @Test func rowMovedToAnotherUserIsRejectedEvenUnderTheSameMainKey() throws {
        let key = MainKey.generate()
        let alice = try StoreFixture(user: "alice", key: key)
        // Bob's store under the very same MainKey: only the user id in the associated data differs.
        let bobSession = MainKeySession(userID: "bob")
        bobSession.unlock(with: key)
        let bob = try SealedStore(files: alice.files, keys: bobSession)
        try alice.store.mail.insert(message: sampleMessage(1, body: "alice's secret"))
        try bob.mail.insert(message: sampleMessage(1, body: "bob's mail"))
        bob.close()
        alice.store.close()
        let aliceRow = try DatabaseQueue(path: alice.databasePath).read { db in
            try Row.fetchOne(db, sql: "SELECT version, sealed FROM messages WHERE id = 'msg-1'")!
        }
        let bobQueue = try DatabaseQueue(path: alice.files.databaseURL(for: "bob").path)
        try bobQueue.write { db in
            try db.execute(sql: "UPDATE messages SET version = ?, sealed = ? WHERE id = 'msg-1'",
                           arguments: [aliceRow["version"] as Int64, aliceRow["sealed"] as Data])
        }
        try bobQueue.close()
        let reopened = try SealedStore(files: alice.files, keys: bobSession)
        defer { reopened.close() }
        expectTampered { try reopened.mail.message(id: "msg-1") }
    }

    @Test func tamperedDriveBlockIsRejected() throws {
        let fixture = try StoreFixture()
        try fixture.store.drive.insert(blocks: (0..<2).map {
            DriveBlock(revisionID: "r", index: $0, size: 1, hash: Data([UInt8($0)]), localURL: "file:///b\($0)")
        })
        try fixture.tamper { db in
            try db.execute(sql: "UPDATE blocks SET sealed = (SELECT sealed FROM blocks WHERE block_index = 1) WHERE block_index = 0")
        }
        expectTampered { try fixture.store.drive.block(revisionID: "r", index: 0) }
        #expect(try fixture.store.drive.block(revisionID: "r", index: 1).localURL == "file:///b1")
    }

    @Test func wrongTypesWrittenIntoColumnsAreRejectedNotCrashing() throws {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(messages: [sampleMessage(1), sampleMessage(2)])
        try fixture.store.setPrivacySettings(.safeDefaults)
        try fixture.tamper { db in
            // SQLite columns accept any type: an attacker can put text where numbers or blobs belong.
            try db.execute(sql: "UPDATE messages SET time = 'yesterday' WHERE id = 'msg-1'")
            try db.execute(sql: "UPDATE messages SET sealed = 'plain text body' WHERE id = 'msg-2'")
            try db.execute(sql: "UPDATE settings SET mac = 42 WHERE name = 'stripImageMetadata'")
        }
        // Clear columns are in the row's associated data: text where an integer belongs is
        // `tampered`, and nothing crashes.
        expectTampered { try fixture.store.mail.message(id: "msg-1") }
        expectTampered { try fixture.store.mail.message(id: "msg-2") }
        let readout = try fixture.store.privacySettings()
        #expect(readout.settings == .safeDefaults)
        #expect(readout.warnings.map(\.setting) == ["stripImageMetadata"])
    }
}
