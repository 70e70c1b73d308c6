import Foundation
import GRDB
import RampartCore
import Testing
@testable import SealedStore

/// Exact per-label counts over the clear flags and label links (``MailStore/unreadCounts()``,
/// ``MailStore/count(label:unreadOnly:)``).
@Suite struct UnreadCountTests {
    /// 1,200 messages in the inbox (every one also under "all"): every twelfth one read, every
    /// fifth one also under "work".
    static func mailbox() -> [MailMessage] {
        (0..<1_200).map { number in
            var message = sampleMessage(number)
            message.flags = number.isMultiple(of: 12) ? [.starred] : [.unread]
            if number.isMultiple(of: 5) { message.labelIDs.append("work") }
            return message
        }
    }

    /// What the counts must be, computed from the messages themselves.
    static func expectedUnread(_ messages: [MailMessage]) -> [String: Int] {
        var counts: [String: Int] = [:]
        for message in messages where message.flags.contains(.unread) {
            for label in Set(message.labelIDs) { counts[label, default: 0] += 1 }
        }
        return counts
    }

    @Test func countsPastAThousandMessagesInALabelAreExact() throws {
        let fixture = try StoreFixture()
        let mail = fixture.store.mail
        var messages = Self.mailbox()
        try mail.insert(messages: messages)
        #expect(try mail.unreadCounts() == ["inbox": 1_100, "all": 1_100, "work": 220])

        // One unread message deleted, one moved out of the inbox, one marked read (in "work"
        // too), and one read message marked unread again.
        try mail.deleteMessage(id: "msg-1")
        messages.removeAll { $0.id == "msg-1" }
        var moved = try mail.message(id: "msg-7")
        moved.labelIDs = ["archive", "all"]
        try mail.insert(message: moved)
        messages[messages.firstIndex { $0.id == "msg-7" }!] = moved
        try mail.setFlags([], messageID: "msg-5")
        messages[messages.firstIndex { $0.id == "msg-5" }!].flags = []
        try mail.setFlags([.unread], messageID: "msg-24")
        messages[messages.firstIndex { $0.id == "msg-24" }!].flags = [.unread]

        let counts = try mail.unreadCounts()
        #expect(counts == ["inbox": 1_098, "all": 1_099, "work": 219, "archive": 1])
        #expect(counts == Self.expectedUnread(messages))
        #expect(try mail.count(label: "inbox") == 1_198)
        #expect(try mail.count(label: "inbox", unreadOnly: true) == 1_098)
        #expect(try mail.count(label: "work") == 240)
        #expect(try mail.count(label: "work", unreadOnly: true) == 219)
        #expect(try mail.count(label: "archive", unreadOnly: true) == 1)
        #expect(try mail.count(label: "none") == 0)
        // Counting the first 1,000 opened messages, as the mailbox page did, stops short.
        let firstThousand = try mail.messages(label: "inbox", limit: 1_000).filter { $0.flags.contains(.unread) }.count
        #expect(firstThousand < counts["inbox"]!)
    }

    @Test func theCountsWalkOnlyUnreadMessagesThroughTheirIndex() throws {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(messages: Self.mailbox().prefix(30).map { $0 })
        let plans = try fixture.store.currentPool!.read { db in
            try [MailStore.unreadCountsSQL, MailStore.labelCountSQL, MailStore.labelUnreadCountSQL].map { sql in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: sql.contains("?") ? ["inbox"] : [])
                    .map { $0["detail"] as String }.joined(separator: "; ")
            }
        }
        #expect(plans[0].contains("messages_unread"), "\(plans[0])")
        #expect(plans[1].contains("SEARCH") && !plans[1].contains("SCAN"), "\(plans[1])")
        #expect(!plans[2].contains("SCAN"), "\(plans[2])")
    }

    @Test func aStoreFromBeforeTheIndexGetsItWhenOpened() throws {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(messages: Self.mailbox().prefix(24).map { $0 })
        try fixture.tamper { db in
            try db.execute(sql: "DROP INDEX messages_unread; DELETE FROM grdb_migrations WHERE identifier = 'v4-unread-index'")
        }
        #expect(try fixture.store.mail.unreadCounts() == ["inbox": 22, "all": 22, "work": 4])
    }

    @Test func countsCheckTheRowSetsAndReadNoSealedColumn() throws {
        // A message deleted on disk: the counts refuse, as the listing does.
        let deleted = try StoreFixture.tampered(holding: Self.mailbox().prefix(10).map { $0 },
                                                ["DELETE FROM messages WHERE id = 'msg-3'"])
        expectTampered { try deleted.store.mail.unreadCounts() }
        expectTampered { try deleted.store.mail.count(label: "inbox") }
        // A label link added alone on disk.
        let linked = try StoreFixture.tampered(holding: Self.mailbox().prefix(10).map { $0 }, [
            "INSERT INTO message_labels (label_id, time, message_rowid) SELECT 'secret', time, rowid FROM messages WHERE id = 'msg-3'"])
        expectTampered { try linked.store.mail.unreadCounts() }
        // The flags alone edited on disk are not in the row-set digest: the count shows the edit
        // (no content), and the message is tampered once opened.
        let flagged = try StoreFixture.tampered(holding: Self.mailbox().prefix(10).map { $0 },
                                                ["UPDATE messages SET flags = 0 WHERE id = 'msg-3'"])
        #expect(try flagged.store.mail.unreadCounts()["inbox"] == 8)
        expectTampered { try flagged.store.mail.message(id: "msg-3") }
        // Locked: no count.
        let fixture = try StoreFixture()
        fixture.session.lock(reason: .userRequest)
        expectLocked { try fixture.store.mail.unreadCounts() }
    }
}
