import Foundation
import GRDB

extension MailStore {
    /// The number of unread messages under each label that has any, counted in one statement
    /// over the clear columns: nothing is decrypted, and the count is exact however many
    /// messages a label holds. A label without unread messages is absent.
    ///
    /// Trust-model row **database (mail, drive) — critical**: only metadata that is clear by
    /// design is read (`messages.flags`, kept clear for unread counts, and the label links
    /// derived from `label_ids`; see *Which columns are sealed*), after the row sets of the
    /// messages and their links are checked: a message deleted, inserted or replayed on disk,
    /// or a link added or removed alone, is `tampered`. The row-set digest does not cover
    /// `flags`, so a flag edited alone on disk changes a count (it shows no content); that
    /// message is `tampered` as soon as it is opened or listed.
    ///
    /// The partial index `messages_unread` holds only unread messages, so the statement walks
    /// those and their links, not every message.
    /// - Throws: `locked`, `tampered` (`rowSetChanged`).
    public func unreadCounts() throws -> [String: Int] {
        try store.read([], checking: [MailMessage.table.name, StoreState.linkTable]) { db, _ in
            let rows = try Row.fetchCursor(db.cachedStatement(sql: MailStore.unreadCountsSQL))
            var counts: [String: Int] = [:]
            while let row = try rows.next() { counts[row[0]] = row[1] }
            return counts
        }
    }

    /// The number of messages under `label` (with `unreadOnly`, of its unread ones), exact and
    /// counted over the clear columns like ``unreadCounts()`` (same trust-model row, same checks).
    /// - Throws: `locked`, `tampered` (`rowSetChanged`).
    public func count(label: String, unreadOnly: Bool = false) throws -> Int {
        try store.read([], checking: [MailMessage.table.name, StoreState.linkTable]) { db, _ in
            try Int.fetchOne(db.cachedStatement(sql: unreadOnly ? MailStore.labelUnreadCountSQL : MailStore.labelCountSQL),
                             arguments: [label]) ?? 0
        }
    }

    /// The test for an unread message, as the partial index `messages_unread` states it (a query
    /// uses that index only when its condition has the same term).
    static let unreadCondition = "flags & \(MessageFlags.unread.rawValue) != 0"

    /// The partial index of unread messages (added by the `v4-unread-index` migration).
    static let unreadIndexSQL = "CREATE INDEX messages_unread ON messages (flags) WHERE \(unreadCondition);"

    static let unreadCountsSQL = """
        SELECT l.label_id, COUNT(*) FROM messages m INDEXED BY messages_unread
        JOIN message_labels l ON l.message_rowid = m.rowid
        WHERE m.\(unreadCondition) GROUP BY l.label_id
        """

    static let labelCountSQL = "SELECT COUNT(*) FROM message_labels WHERE label_id = ?"

    static let labelUnreadCountSQL = """
        SELECT COUNT(*) FROM message_labels l JOIN messages m ON m.rowid = l.message_rowid
        WHERE l.label_id = ? AND m.\(unreadCondition)
        """
}
