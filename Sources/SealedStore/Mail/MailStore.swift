import Foundation
import GRDB
import RampartCore

/// Typed access to the mail tables of a ``SealedStore``.
///
/// Trust-model row: **database (messages, attachments, contacts, labels) — critical**. Every
/// method needs the MainKey (``SealedStoreError/locked(_:)`` otherwise) and returns only values
/// that authenticated (``SealedStoreError/tampered(table:column:primaryKey:reason:)`` otherwise).
public struct MailStore: Sendable {
    let store: SealedStore

    // MARK: Messages

    /// Inserts or replaces a message, its label links and its blind-index tokens, in one transaction.
    public func insert(message: MailMessage) throws {
        try insert(messages: [message])
    }

    /// Inserts or replaces messages in one transaction (all or none).
    public func insert(messages: [MailMessage]) throws {
        try store.mutate([.columns, .index]) { db, keys, state in
            let sealer = try keys.columns()
            let index = keys.blindIndex()
            for message in messages {
                try MailStore.save(message, in: db, sealer: sealer, index: index, state: state)
            }
        }
    }

    /// The tables a sync fills from the server (a re-sync clears and refills them).
    static let syncedTables = [MailMessage.table.name, StoreState.linkTable, Conversation.table.name,
                               AttachmentMetadata.table.name, MailLabel.table.name, EventCursor.table.name]

    static func save(_ message: MailMessage, in db: Database, sealer: RowSealer, index: BlindIndex,
                     state: StateTransaction) throws {
        guard !message.id.isEmpty else { throw SealedStoreError.invalidInput("a message needs an id") }
        guard !message.labelIDs.contains(where: { $0.contains(",") || $0.isEmpty }) else {
            throw SealedStoreError.invalidInput("label ids must be non-empty and contain no comma")
        }
        let previous = try SealedRows.existing(MailMessage.table, key: [message.id.databaseValue], in: db)
        if let previous { try removeLinks(rowid: previous.rowid, in: db, state: state) }
        let rowid = try SealedRows.save(message, in: db, sealer: sealer, state: state, lookedUp: .some(previous))
        try link(message, rowid: rowid, in: db, index: index, state: state)
    }

    static func link(_ message: MailMessage, rowid: Int64, in db: Database, index: BlindIndex,
                     state: StateTransaction) throws {
        let labelStatement = try db.cachedStatement(
            sql: "INSERT OR IGNORE INTO message_labels (label_id, time, message_rowid) VALUES (?, ?, ?)")
        for label in Set(message.labelIDs) {
            try labelStatement.execute(arguments: [label, message.time, rowid])
        }
        try reindex(message, rowid: rowid, in: db, index: index)
    }

    static func reindex(_ message: MailMessage, rowid: Int64, in db: Database, index: BlindIndex) throws {
        let tokenStatement = try db.cachedStatement(
            sql: "INSERT OR IGNORE INTO search_tokens (token, message_rowid) VALUES (?, ?)")
        for token in index.tokens(for: message) {
            try tokenStatement.execute(arguments: [token, rowid])
        }
    }

    /// Removes a message's label links and search tokens.
    static func removeLinks(rowid: Int64, in db: Database, state: StateTransaction) throws {
        try db.cachedStatement(sql: "DELETE FROM message_labels WHERE message_rowid = ?").execute(arguments: [rowid])
        try db.cachedStatement(sql: "DELETE FROM search_tokens WHERE message_rowid = ?").execute(arguments: [rowid])
    }

    /// The message with this id.
    /// - Throws: ``SealedStoreError/notFound(kind:id:)``, `tampered`, `locked`.
    public func message(id: String) throws -> MailMessage {
        try store.read(checking: [MailMessage.table.name]) { db, keys in
            guard let message = try SealedRows.fetchOne(MailMessage.self, key: [id.databaseValue], in: db,
                                                        sealer: try keys.columns()) else {
                throw SealedStoreError.notFound(kind: "message", id: id)
            }
            return message
        }
    }

    /// The newest messages with `label`, newest first. `before` (Unix seconds) pages back.
    /// Each row is authenticated as a whole, and must carry the label and the time its label
    /// link lists it under (a link edited on disk is `tampered`).
    public func messages(label: String, limit: Int, before: Int64? = nil) throws -> [MailMessage] {
        guard limit >= 0 else { throw SealedStoreError.invalidInput("limit must not be negative") }
        return try store.read(checking: [MailMessage.table.name, StoreState.linkTable]) { db, keys in
            let sealer = try keys.columns()
            let linkTime = MailMessage.table.allColumns.count
            let cursor = try Row.fetchCursor(db.cachedStatement(sql: MailStore.labelPageSQL),
                                             arguments: [label, before ?? Int64.max, limit])
            var result: [MailMessage] = []
            result.reserveCapacity(min(limit, 1_000))
            while let row = try cursor.next() {
                let message = try SealedRows.decode(row, as: MailMessage.self, sealer: sealer)
                guard message.time == (row[linkTime] as Int64?), message.labelIDs.contains(label) else {
                    throw SealedStoreError.tampered(table: StoreState.linkTable, column: "*", primaryKey: message.id,
                                                    reason: .rowSetChanged)
                }
                result.append(message)
            }
            return result
        }
    }

    static let labelPageSQL = """
        SELECT \(MailMessage.table.allColumns.map { "m.\($0)" }.joined(separator: ", ")), l.time AS link_time
        FROM message_labels l JOIN messages m ON m.rowid = l.message_rowid
        WHERE l.label_id = ? AND l.time < ? ORDER BY l.time DESC, l.message_rowid DESC LIMIT ?
        """

    /// The messages of a conversation, oldest first.
    public func messages(conversation: String) throws -> [MailMessage] {
        try store.read(checking: [MailMessage.table.name]) { db, keys in
            try SealedRows.fetchAll(MailMessage.self, in: db, sealer: try keys.columns(),
                                    where: "conversation_id = ?", arguments: [conversation], orderBy: "time, rowid")
        }
    }

    /// Changes the flags of a message (read/unread, starred): the row is opened, checked and
    /// sealed again with the new flags under a new version.
    public func setFlags(_ flags: MessageFlags, messageID: String) throws {
        try store.mutate { db, keys, state in
            let sealer = try keys.columns()
            guard var message = try SealedRows.fetchOne(MailMessage.self, key: [messageID.databaseValue], in: db,
                                                        sealer: sealer) else {
                throw SealedStoreError.notFound(kind: "message", id: messageID)
            }
            message.flags = flags
            try SealedRows.save(message, in: db, sealer: sealer, state: state)
        }
    }

    /// Deletes a message with its label links and index tokens. Returns whether it existed.
    @discardableResult
    public func deleteMessage(id: String) throws -> Bool {
        try store.mutate([]) { db, _, state in
            guard let rowid = try Int64.fetchOne(db, sql: "SELECT rowid FROM messages WHERE id = ?", arguments: [id])
            else { return false }
            try MailStore.removeLinks(rowid: rowid, in: db, state: state)
            return try SealedRows.delete(MailMessage.self, key: [id.databaseValue], in: db, state: state)
        }
    }

    /// The number of stored messages.
    public func messageCount() throws -> Int {
        try store.read([], checking: [MailMessage.table.name]) { db, _ in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM messages") ?? 0
        }
    }

    // MARK: Re-sync

    /// Whether the synced mail tables must be downloaded again: a read found a row edited on
    /// disk, or a table's row set is not the authenticated one (rows deleted, inserted or
    /// replaced by older copies).
    ///
    /// Trust-model row: **database — modified (critical)**: a sync that finds this calls
    /// ``discardForResync()`` and downloads everything again, so deleted messages come back.
    public func needsResync() throws -> Bool {
        if try store.read([], { db, _ in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM technical WHERE name = 'needs_resync')") ?? false
        }) { return true }
        do {
            try store.read([], checking: MailStore.syncedTables) { _, _ in }
            return false
        } catch let error as SealedStoreError {
            if case .tampered = error { return true }
            throw error
        }
    }

    /// Empties the synced mail tables (messages, label links, search tokens, conversations,
    /// attachments, labels, event cursor) and their digests, so the next sync downloads
    /// everything from the start. Accounts, contacts, drive data and settings are kept.
    public func discardForResync() throws {
        try store.mutate([]) { db, _, state in
            for table in MailStore.syncedTables {
                try db.execute(sql: "DELETE FROM \(table)")
                state.reset(table)
            }
            try db.execute(sql: "DELETE FROM search_tokens")
            try db.execute(sql: "DELETE FROM technical WHERE name = 'needs_resync'")
        }
        store.forgetChecks(MailStore.syncedTables)
    }

    // MARK: Search

    /// Message ids matching `query`, newest first, found through the blind index: no message is
    /// decrypted, except to confirm prefixes longer than the indexed prefix length.
    public func search(_ query: MailSearchQuery) throws -> [String] {
        guard query.limit >= 0 else { throw SealedStoreError.invalidInput("limit must not be negative") }
        return try store.read([.columns, .index], checking: [MailMessage.table.name]) { db, keys in
            let index = keys.blindIndex()
            var groups: [[Data]] = []
            let words = query.words.flatMap { BlindIndex.words(in: $0) }
            // Words that normalize to nothing (punctuation, single letters) match nothing, rather
            // than silently widening the query to every message.
            if !query.words.isEmpty && words.isEmpty { return [] }
            for word in words {
                groups.append([index.token(.word, word)])
            }
            var longPrefix: String?
            if let prefix = query.prefix {
                let words = BlindIndex.words(in: prefix)
                guard words.count == 1, let word = words.first else {
                    throw SealedStoreError.invalidInput("a prefix is one word of at least 2 letters or digits")
                }
                let indexed = String(word.prefix(BlindIndex.maximumPrefixLength))
                groups.append([index.token(.word, word), index.token(.prefix, indexed)])
                if word.count > BlindIndex.maximumPrefixLength { longPrefix = word }
            }
            if let sender = query.sender {
                groups.append([index.token(.senderAddress, sender.lowercased())])
            }
            var conditions: [String] = []
            var arguments: [(any DatabaseValueConvertible)?] = []
            if !groups.isEmpty {
                let subqueries = groups.map { group in
                    "SELECT message_rowid FROM search_tokens WHERE token IN ("
                        + Array(repeating: "?", count: group.count).joined(separator: ",") + ")"
                }
                conditions.append("rowid IN (\(subqueries.joined(separator: " INTERSECT ")))")
                arguments += groups.flatMap { $0 } as [Data]
            }
            if let after = query.after { conditions.append("time >= ?"); arguments.append(after) }
            if let before = query.before { conditions.append("time < ?"); arguments.append(before) }
            let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            if let longPrefix {
                // Over-approximated by the indexed prefix: confirm on the decrypted headline.
                let candidates = try SealedRows.fetchAll(MailMessage.self, in: db, sealer: try keys.columns(),
                                                         where: conditions.joined(separator: " AND "),
                                                         arguments: StatementArguments(arguments),
                                                         orderBy: "time DESC, rowid DESC")
                return candidates.filter { message in
                    (BlindIndex.words(in: message.subject) + BlindIndex.words(in: message.sender.name)
                        + BlindIndex.words(in: message.sender.address) + BlindIndex.words(in: message.body))
                        .contains { $0.hasPrefix(longPrefix) }
                }.prefix(query.limit).map(\.id)
            }
            if groups.count == 1, let group = groups.first,
               try MailStore.isFrequent(group, in: db, threshold: MailStore.frequentTermThreshold) {
                // A frequent term: walk messages newest first and stop at `limit` matches, instead
                // of collecting and sorting every match.
                let placeholders = Array(repeating: "?", count: group.count).joined(separator: ",")
                var scanConditions = ["EXISTS (SELECT 1 FROM search_tokens t WHERE t.token IN (\(placeholders)) "
                    + "AND t.message_rowid = messages.rowid)"]
                var scanArguments: [(any DatabaseValueConvertible)?] = group
                if let after = query.after { scanConditions.append("time >= ?"); scanArguments.append(after) }
                if let before = query.before { scanConditions.append("time < ?"); scanArguments.append(before) }
                scanArguments.append(query.limit)
                return try String.fetchAll(
                    db.cachedStatement(sql: "SELECT id FROM messages INDEXED BY messages_by_time WHERE "
                        + scanConditions.joined(separator: " AND ") + " ORDER BY time DESC, rowid DESC LIMIT ?"),
                    arguments: StatementArguments(scanArguments))
            }
            arguments.append(query.limit)
            return try String.fetchAll(
                db.cachedStatement(sql: "SELECT id FROM messages \(whereClause) ORDER BY time DESC, rowid DESC LIMIT ?"),
                arguments: StatementArguments(arguments))
        }
    }

    /// Above this many messages for one term, a search walks messages by time instead.
    static let frequentTermThreshold = 2_000

    static func isFrequent(_ tokens: [Data], in db: Database, threshold: Int) throws -> Bool {
        let placeholders = Array(repeating: "?", count: tokens.count).joined(separator: ",")
        let count = try Int.fetchOne(
            db.cachedStatement(sql: "SELECT COUNT(*) FROM (SELECT 1 FROM search_tokens WHERE token IN (\(placeholders)) LIMIT ?)"),
            arguments: StatementArguments(tokens + [threshold] as [any DatabaseValueConvertible])) ?? 0
        return count >= threshold
    }

    // MARK: Other records

    public func save(account: AccountRecord) throws { try saveRecord(account) }
    public func account(id: String) throws -> AccountRecord { try record(id: id, kind: "account") }

    public func save(conversation: Conversation) throws { try saveRecord(conversation) }
    public func conversation(id: String) throws -> Conversation { try record(id: id, kind: "conversation") }
    /// Conversations, newest first.
    public func conversations(limit: Int) throws -> [Conversation] {
        try all(orderBy: "time DESC", limit: limit)
    }

    public func save(attachment: AttachmentMetadata) throws { try saveRecord(attachment) }
    public func attachment(id: String) throws -> AttachmentMetadata { try record(id: id, kind: "attachment") }
    public func attachments(messageID: String) throws -> [AttachmentMetadata] {
        try all(where: "message_id = ?", [messageID], orderBy: "rowid")
    }

    public func save(contact: Contact) throws { try saveRecord(contact) }
    public func contact(id: String) throws -> Contact { try record(id: id, kind: "contact") }
    public func contacts() throws -> [Contact] { try all() }

    public func save(label: MailLabel) throws { try saveRecord(label) }
    public func label(id: String) throws -> MailLabel { try record(id: id, kind: "label") }
    public func labels() throws -> [MailLabel] { try all(orderBy: "sort_order") }

    /// Stores the server event cursor (the point up to which events were applied).
    public func setEventCursor(_ cursor: String) throws { try saveRecord(EventCursor(cursor: cursor)) }
    /// The stored event cursor, nil before the first sync.
    public func eventCursor() throws -> String? {
        try store.read(checking: [EventCursor.table.name]) { db, keys in
            try SealedRows.fetchOne(EventCursor.self, key: [Int64(1).databaseValue], in: db,
                                    sealer: try keys.columns())?.cursor
        }
    }

    private func saveRecord<R: SealedRecord>(_ record: R) throws {
        try store.mutate { db, keys, state in try SealedRows.save(record, in: db, sealer: try keys.columns(), state: state) }
    }

    private func record<R: SealedRecord>(id: String, kind: String) throws -> R {
        try store.read(checking: [R.table.name]) { db, keys in
            guard let found = try SealedRows.fetchOne(R.self, key: [id.databaseValue], in: db,
                                                      sealer: try keys.columns()) else {
                throw SealedStoreError.notFound(kind: kind, id: id)
            }
            return found
        }
    }

    private func all<R: SealedRecord>(where condition: String = "", _ arguments: StatementArguments = [],
                                      orderBy: String = "", limit: Int? = nil) throws -> [R] {
        try store.read(checking: [R.table.name]) { db, keys in
            try SealedRows.fetchAll(R.self, in: db, sealer: try keys.columns(), where: condition,
                                    arguments: arguments, orderBy: orderBy, limit: limit)
        }
    }
}

extension MailStore {
    /// The statements that index the `messages` table (by time, by conversation) and make its
    /// label links (`message_labels`, one row per label, message and time), as the store's
    /// schema has them. A baseline that measures the same work without sealing
    /// (`rampart-dev bench store`) makes the same ones.
    public static let messageIndexesSQL = """
        CREATE INDEX messages_by_time ON messages (time);
        CREATE INDEX messages_by_conversation ON messages (conversation_id, time);
        CREATE TABLE message_labels (label_id TEXT NOT NULL, time INTEGER NOT NULL,
            message_rowid INTEGER NOT NULL, PRIMARY KEY (label_id, time, message_rowid)) WITHOUT ROWID;
        CREATE INDEX message_labels_by_message ON message_labels (message_rowid);

        """
}

/// A search over the blind index. All given criteria must match.
public struct MailSearchQuery: Sendable, Hashable {
    /// Whole words (each is normalized: lower-cased, diacritics removed).
    public var words: [String]
    /// The beginning of a word of the subject or sender (at least 2 characters).
    public var prefix: String?
    /// The exact sender address.
    public var sender: String?
    /// Unix seconds, inclusive.
    public var after: Int64?
    /// Unix seconds, exclusive.
    public var before: Int64?
    public var limit: Int

    public init(words: [String] = [], prefix: String? = nil, sender: String? = nil, after: Int64? = nil,
                before: Int64? = nil, limit: Int = 50) {
        self.words = words
        self.prefix = prefix
        self.sender = sender
        self.after = after
        self.before = before
        self.limit = limit
    }
}
