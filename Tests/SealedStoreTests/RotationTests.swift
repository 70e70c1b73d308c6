import Foundation
import GRDB
import RampartCore
import Testing
@testable import SealedStore

@Suite struct KeyRotationTests {
    func populate(_ store: SealedStore, count: Int) throws -> [MailMessage] {
        let messages = (0..<count).map { sampleMessage($0, body: "body \($0) kiwi") }
        try store.mail.insert(messages: messages)
        try store.mail.save(contact: Contact(id: "k", modified: 1, name: "Carol", emails: ["c@x.org"], card: "v"))
        try store.drive.insert(block: DriveBlock(revisionID: "r", index: 0, size: 1, hash: Data([1]), localURL: "file:///b"))
        try store.setPrivacySettings(PrivacySettings(autoLoadRemoteContent: true, stripImageMetadata: true,
                                                     trustedSenders: [], autolock: .never))
        return messages
    }

    @Test func rotationReSealsEverythingUnderTheNewKeyWithoutLoss() throws {
        let fixture = try StoreFixture()
        let messages = try populate(fixture.store, count: 40)
        let newKey = MainKey.generate()
        let report = try fixture.store.rotateKeys(from: fixture.key, to: newKey, batchSize: 7)
        #expect(report.finished)
        #expect(report.rowsResealed == 40 + 1 + 1)
        #expect(try fixture.store.pendingRotation() == nil)
        // Old key: nothing opens any more.
        expectTampered { try fixture.store.mail.message(id: "msg-3") }
        fixture.session.unlock(with: newKey)
        #expect(try fixture.store.mail.messages(label: "all", limit: 100).count == 40)
        #expect(try fixture.store.mail.message(id: "msg-3") == messages[3])
        #expect(try fixture.store.mail.search(MailSearchQuery(words: ["kiwi"], limit: 100)).count == 40)
        #expect(try fixture.store.mail.contact(id: "k").name == "Carol")
        let settings = try fixture.store.privacySettings()
        #expect(settings.warnings.isEmpty)
        #expect(settings.settings.autoLoadRemoteContent == true)
    }

    @Test func interruptedRotationResumesAfterReopenWithoutLoss() throws {
        let fixture = try StoreFixture()
        let messages = try populate(fixture.store, count: 30)
        let newKey = MainKey.generate()
        let partial = try fixture.store.rotateKeys(from: fixture.key, to: newKey, batchSize: 4, maximumBatches: 3)
        #expect(!partial.finished)
        #expect(partial.rowsResealed == 12)
        let pending = try #require(try fixture.store.pendingRotation())
        #expect(pending.table == "messages")
        #expect(pending.rowsDone == 12)
        // Another pair of keys cannot start while this rotation is pending.
        #expect(throws: SealedStoreError.self) { try fixture.store.rotateKeys(from: fixture.key, to: .generate()) }
        // "Crash": close and reopen, then resume with the same keys.
        try fixture.reopen()
        let rest = try fixture.store.rotateKeys(from: fixture.key, to: newKey, batchSize: 4)
        #expect(rest.finished)
        #expect(rest.rowsResealed == 30 + 2 - 12)
        fixture.session.unlock(with: newKey)
        for message in messages { #expect(try fixture.store.mail.message(id: message.id) == message) }
        #expect(try fixture.store.privacySettings().warnings.isEmpty)
    }

    @Test func rotationRefusesToLaunderTamperedValues() throws {
        let fixture = try StoreFixture()
        _ = try populate(fixture.store, count: 3)
        try fixture.tamper { db in try db.execute(sql: "UPDATE messages SET sealed = (SELECT sealed FROM messages WHERE id = 'msg-0') WHERE id = 'msg-1'") }
        expectTampered { try fixture.store.rotateKeys(from: fixture.key, to: .generate()) }
    }
}
