import Foundation
import GRDB
import RampartCore
import Testing
@testable import SealedStore

@Suite struct LockTests {
    @Test func everyReadAndWriteIsRefusedWhileLocked() throws {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(message: sampleMessage(1))
        let bytes = try fixture.keyBytes()
        fixture.session.lock(reason: .userRequest)
        let store = fixture.store
        expectLocked { try store.mail.message(id: "msg-1") }
        expectLocked { try store.mail.messages(label: "inbox", limit: 1) }
        expectLocked { try store.mail.insert(message: sampleMessage(2)) }
        expectLocked { try store.mail.deleteMessage(id: "msg-1") }
        expectLocked { try store.mail.setFlags([], messageID: "msg-1") }
        expectLocked { try store.mail.search(MailSearchQuery(words: ["report"])) }
        expectLocked { try store.mail.search(MailSearchQuery(after: 0)) }
        expectLocked { try store.mail.messageCount() }
        expectLocked { try store.drive.node(id: "x") }
        expectLocked { try store.privacySettings() }
        expectLocked { try store.setPrivacySettings(.safeDefaults) }
        expectLocked { try store.technicalData() }
        expectLocked { try store.rotateKeys(from: .generate(), to: .generate()) }
        #expect(store.isOpen)
        // Unlocking again (same key) gives access back.
        fixture.session.unlock(with: try MainKey(adopting: SecretBytes(copying: bytes)))
        #expect(try store.mail.message(id: "msg-1") == sampleMessage(1))
    }

    @Test func openingWhileLockedIsRefused() throws {
        let session = MainKeySession(userID: "carol")
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-locked-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        expectLocked { try SealedStore(files: StoreFiles(root: root), keys: session) }
    }

    @Test func keyWipedBehindTheSessionsBackIsTreatedAsLocked() throws {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(message: sampleMessage(1))
        // A component holding the MainKey object sees it wiped (as on a lock racing a call).
        try fixture.session.currentMainKey().wipe()
        let store = fixture.store
        expectLocked { try store.mail.insert(messages: (2..<50).map { sampleMessage($0) }) }
        expectLocked { try store.mail.message(id: "msg-1") }
    }

    @Test func lockEventKeepsTheStoreOpenButUnusable() throws {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(message: sampleMessage(1))
        fixture.session.lock(reason: .autolockTimeout)
        #expect(fixture.store.isOpen)
        let store = fixture.store
        expectLocked { try store.mail.message(id: "msg-1") }
    }
}

extension StoreFixture {
    /// A copy of the fixture key's bytes (to simulate unlocking again with the same key).
    func keyBytes() throws -> [UInt8] {
        try key.withUnsafeKeyBytes { Array($0) }
    }
}
