import Foundation
import GRDB
import RampartCore
import Testing
@testable import SealedStore

@Suite struct MailStoreTests {
    @Test func messagesRoundTripThroughTheSealedStore() throws {
        let fixture = try StoreFixture()
        let messages = (0..<20).map { sampleMessage($0, label: $0 < 10 ? "inbox" : "archive") }
        try fixture.store.mail.insert(messages: messages)
        #expect(try fixture.store.mail.message(id: "msg-7") == messages[7])
        let inbox = try fixture.store.mail.messages(label: "inbox", limit: 5)
        #expect(inbox.map(\.id) == ["msg-9", "msg-8", "msg-7", "msg-6", "msg-5"])
        let older = try fixture.store.mail.messages(label: "inbox", limit: 100, before: inbox.last!.time)
        #expect(older.map(\.id) == ["msg-4", "msg-3", "msg-2", "msg-1", "msg-0"])
        #expect(try fixture.store.mail.messages(label: "all", limit: 100).count == 20)
        #expect(try fixture.store.mail.messages(conversation: "conv-1").map(\.id) == ["msg-3", "msg-4", "msg-5"])
        #expect(try fixture.store.mail.messageCount() == 20)
    }

    @Test func replacingAMessageUpdatesLabelsAndIndex() throws {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(message: sampleMessage(1, label: "inbox", body: "pineapple"))
        try fixture.store.mail.insert(message: sampleMessage(1, label: "trash", body: "grapefruit"))
        #expect(try fixture.store.mail.messages(label: "inbox", limit: 10).isEmpty)
        #expect(try fixture.store.mail.messages(label: "trash", limit: 10).map(\.id) == ["msg-1"])
        #expect(try fixture.store.mail.search(MailSearchQuery(words: ["pineapple"])).isEmpty)
        #expect(try fixture.store.mail.search(MailSearchQuery(words: ["grapefruit"])) == ["msg-1"])
    }

    @Test func missingMessageIsNotFound() throws {
        let fixture = try StoreFixture()
        #expect(throws: SealedStoreError.notFound(kind: "message", id: "nope")) {
            try fixture.store.mail.message(id: "nope")
        }
        #expect(throws: SealedStoreError.self) { try fixture.store.mail.insert(message: sampleMessage(1, label: "a,b")) }
        #expect(throws: SealedStoreError.self) { try fixture.store.mail.messages(label: "inbox", limit: -1) }
    }

    @Test func deletingAMessageRemovesItsLinksAndTokens() throws {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(messages: [sampleMessage(1, body: "zebra"), sampleMessage(2, body: "zebra")])
        #expect(try fixture.store.mail.deleteMessage(id: "msg-1"))
        #expect(try !fixture.store.mail.deleteMessage(id: "msg-1"))
        #expect(try fixture.store.mail.search(MailSearchQuery(words: ["zebra"])) == ["msg-2"])
        let orphans = try fixture.store.currentPool!.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM search_tokens WHERE message_rowid NOT IN (SELECT rowid FROM messages)")
        }
        #expect(orphans == 0)
    }

    @Test func flagsChangeWithoutTouchingSealedColumns() throws {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(message: sampleMessage(2))
        try fixture.store.mail.setFlags([.starred, .replied], messageID: "msg-2")
        #expect(try fixture.store.mail.message(id: "msg-2").flags == [.starred, .replied])
        #expect(throws: SealedStoreError.notFound(kind: "message", id: "x")) { try fixture.store.mail.setFlags([], messageID: "x") }
    }

    @Test func otherMailRecordsRoundTrip() throws {
        let fixture = try StoreFixture()
        let mail = fixture.store.mail
        let account = AccountRecord(id: "u1", username: "alice.smith", displayName: "Alice Smith", addresses: ["alice@example.org"])
        try mail.save(account: account)
        #expect(try mail.account(id: "u1") == account)
        let conversation = Conversation(id: "c1", time: 5, messageCount: 2, unreadCount: 1, labelIDs: ["inbox"],
                                        subject: "Hi", senders: [MailAddress(name: "B", address: "b@x.org")])
        try mail.save(conversation: conversation)
        #expect(try mail.conversations(limit: 10) == [conversation])
        let attachment = AttachmentMetadata(id: "a1", messageID: "msg-1", size: 10, name: "cv.pdf", mimeType: "application/pdf", keyPackets: Data([9, 9]))
        try mail.save(attachment: attachment)
        #expect(try mail.attachments(messageID: "msg-1") == [attachment])
        let contact = Contact(id: "k1", modified: 1, name: "Carol", emails: ["carol@x.org"], card: "BEGIN:VCARD")
        try mail.save(contact: contact)
        #expect(try mail.contact(id: "k1") == contact)
        let label = MailLabel(id: "l1", kind: 1, sortOrder: 0, name: "Therapy", color: "#ff0000")
        try mail.save(label: label)
        #expect(try mail.labels() == [label])
        #expect(try mail.eventCursor() == nil)
        try mail.setEventCursor("event-42")
        #expect(try mail.eventCursor() == "event-42")
        let date = Date(timeIntervalSince1970: 1_750_000_000)
        try fixture.store.recordFirstLogin(date)
        try fixture.store.recordFirstLogin(Date(timeIntervalSince1970: 1_800_000_000))
        #expect(try fixture.store.technicalData() == TechnicalData(firstLogin: date, cacheSchemaVersion: 2))
    }

    @Test func driveRecordsRoundTrip() throws {
        let fixture = try StoreFixture()
        let drive = fixture.store.drive
        try drive.insert(volume: DriveVolume(id: "v1", state: 1, usedSpace: 100, rootShareID: "s1"))
        try drive.insert(share: DriveShare(id: "s1", volumeID: "v1", kind: 1, rootNodeID: "root", creator: "alice@x.org", keyMaterial: Data([1])))
        let root = DriveNode(id: "root", shareID: "s1", parentID: nil, kind: 1, state: 1, size: 0, modified: 1, name: "My files", mimeType: "inode/directory", keyMaterial: Data([2]))
        let file = DriveNode(id: "n1", shareID: "s1", parentID: "root", kind: 2, state: 1, size: 3, modified: 2, name: "passport.jpg", mimeType: "image/jpeg", keyMaterial: Data([3]))
        try drive.insert(nodes: [root, file])
        #expect(try drive.node(id: "n1") == file)
        #expect(try drive.children(of: "root") == [file])
        let revision = DriveRevision(id: "r1", nodeID: "n1", state: 1, size: 3, created: 5, manifestSignature: Data([4]))
        try drive.insert(revision: revision)
        #expect(try drive.revisions(nodeID: "n1") == [revision])
        let blocks = (0..<3).map { DriveBlock(revisionID: "r1", index: $0, size: 1, hash: Data([UInt8($0)]), localURL: "file:///cache/r1/\($0)") }
        try drive.insert(blocks: blocks.reversed())
        #expect(try drive.blocks(revisionID: "r1") == blocks)
        #expect(try drive.block(revisionID: "r1", index: 2) == blocks[2])
        let thumbnail = DriveThumbnail(revisionID: "r1", kind: 1, size: 1, hash: Data([7]), localURL: "file:///t")
        try drive.insert(thumbnail: thumbnail)
        #expect(try drive.thumbnails(revisionID: "r1") == [thumbnail])
        let link = DriveShareURL(id: "u1", shareID: "s1", expiration: nil, permissions: 4, url: "https://drive.example/urls/X#k", password: "pw")
        try drive.insert(shareURL: link)
        #expect(try drive.shareURLs(shareID: "s1") == [link])
        #expect(try drive.volume(id: "v1").usedSpace == 100)
        #expect(try drive.share(id: "s1").creator == "alice@x.org")
        #expect(try drive.deleteNode(id: "n1"))
        #expect(throws: SealedStoreError.notFound(kind: "node", id: "n1")) { try drive.node(id: "n1") }
    }
}
