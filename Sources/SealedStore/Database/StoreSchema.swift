import Foundation
import GRDB

/// The tables of the sealed store and their GRDB migrations.
///
/// Column choices (which stay clear and why) are listed in `docs/modules/SealedStore.md`.
/// Sealed columns are BLOBs holding a ``Sealed`` envelope; every table keeps an implicit rowid,
/// which key rotation walks in order.
enum StoreSchema {
    /// Every table with sealed columns, in the order key rotation walks them.
    static let sealedTables: [SealedTable] = [
        AccountRecord.table, MailMessage.table, Conversation.table, AttachmentMetadata.table,
        Contact.table, MailLabel.table, EventCursor.table,
        DriveVolume.table, DriveShare.table, DriveNode.table, DriveRevision.table, DriveBlock.table,
        DriveThumbnail.table, DriveShareURL.table,
    ]

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-core") { db in
            try db.execute(sql: """
                CREATE TABLE technical (name TEXT PRIMARY KEY, value) ;
                INSERT INTO technical (name, value) VALUES ('cache_schema_version', 1);
                CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL, mac BLOB NOT NULL);
                CREATE TABLE key_rotation (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    from_version TEXT NOT NULL, to_version TEXT NOT NULL,
                    table_index INTEGER NOT NULL, last_rowid INTEGER NOT NULL,
                    rows_done INTEGER NOT NULL);
                """)
        }
        migrator.registerMigration("v1-mail") { db in
            try db.execute(sql: """
                CREATE TABLE accounts (id TEXT PRIMARY KEY NOT NULL,
                    username BLOB NOT NULL, display_name BLOB NOT NULL, addresses BLOB NOT NULL);
                CREATE TABLE messages (id TEXT PRIMARY KEY NOT NULL, conversation_id TEXT NOT NULL,
                    time INTEGER NOT NULL, size INTEGER NOT NULL, flags INTEGER NOT NULL, label_ids TEXT NOT NULL,
                    subject BLOB NOT NULL, sender BLOB NOT NULL, recipients BLOB NOT NULL, body BLOB NOT NULL);
                CREATE INDEX messages_by_time ON messages (time);
                CREATE INDEX messages_by_conversation ON messages (conversation_id, time);
                CREATE TABLE message_labels (label_id TEXT NOT NULL, time INTEGER NOT NULL,
                    message_rowid INTEGER NOT NULL, PRIMARY KEY (label_id, time, message_rowid)) WITHOUT ROWID;
                CREATE INDEX message_labels_by_message ON message_labels (message_rowid);
                CREATE TABLE search_tokens (token BLOB NOT NULL, message_rowid INTEGER NOT NULL,
                    PRIMARY KEY (token, message_rowid)) WITHOUT ROWID;
                CREATE INDEX search_tokens_by_message ON search_tokens (message_rowid);
                CREATE TABLE conversations (id TEXT PRIMARY KEY NOT NULL, time INTEGER NOT NULL,
                    message_count INTEGER NOT NULL, unread_count INTEGER NOT NULL, label_ids TEXT NOT NULL,
                    subject BLOB NOT NULL, senders BLOB NOT NULL);
                CREATE INDEX conversations_by_time ON conversations (time);
                CREATE TABLE attachments (id TEXT PRIMARY KEY NOT NULL, message_id TEXT NOT NULL,
                    size INTEGER NOT NULL, name BLOB NOT NULL, mime_type BLOB NOT NULL, key_packets BLOB NOT NULL);
                CREATE INDEX attachments_by_message ON attachments (message_id);
                CREATE TABLE contacts (id TEXT PRIMARY KEY NOT NULL, modified INTEGER NOT NULL,
                    name BLOB NOT NULL, emails BLOB NOT NULL, card BLOB NOT NULL);
                CREATE TABLE labels (id TEXT PRIMARY KEY NOT NULL, kind INTEGER NOT NULL, sort_order INTEGER NOT NULL,
                    name BLOB NOT NULL, color BLOB NOT NULL);
                CREATE TABLE event_cursor (id INTEGER PRIMARY KEY CHECK (id = 1), cursor BLOB NOT NULL);
                """)
        }
        migrator.registerMigration("v1-drive") { db in
            try db.execute(sql: """
                CREATE TABLE volumes (id TEXT PRIMARY KEY NOT NULL, state INTEGER NOT NULL,
                    used_space INTEGER NOT NULL, root_share_id TEXT NOT NULL);
                CREATE TABLE shares (id TEXT PRIMARY KEY NOT NULL, volume_id TEXT NOT NULL, kind INTEGER NOT NULL,
                    root_node_id TEXT NOT NULL, creator BLOB NOT NULL, key_material BLOB NOT NULL);
                CREATE TABLE nodes (id TEXT PRIMARY KEY NOT NULL, share_id TEXT NOT NULL, parent_id TEXT,
                    kind INTEGER NOT NULL, state INTEGER NOT NULL, size INTEGER NOT NULL, modified INTEGER NOT NULL,
                    name BLOB NOT NULL, mime_type BLOB NOT NULL, key_material BLOB NOT NULL);
                CREATE INDEX nodes_by_parent ON nodes (parent_id, modified);
                CREATE TABLE revisions (id TEXT PRIMARY KEY NOT NULL, node_id TEXT NOT NULL, state INTEGER NOT NULL,
                    size INTEGER NOT NULL, created INTEGER NOT NULL, manifest_signature BLOB NOT NULL);
                CREATE INDEX revisions_by_node ON revisions (node_id, created);
                CREATE TABLE blocks (revision_id TEXT NOT NULL, block_index INTEGER NOT NULL, size INTEGER NOT NULL,
                    hash BLOB NOT NULL, local_url BLOB NOT NULL, PRIMARY KEY (revision_id, block_index));
                CREATE TABLE thumbnails (revision_id TEXT NOT NULL, kind INTEGER NOT NULL, size INTEGER NOT NULL,
                    hash BLOB NOT NULL, local_url BLOB NOT NULL, PRIMARY KEY (revision_id, kind));
                CREATE TABLE share_urls (id TEXT PRIMARY KEY NOT NULL, share_id TEXT NOT NULL,
                    expiration INTEGER, permissions INTEGER NOT NULL, url BLOB NOT NULL, password BLOB NOT NULL);
                CREATE INDEX share_urls_by_share ON share_urls (share_id);
                """)
        }
        return migrator
    }
}

/// A table with sealed columns: its primary-key columns (bound into the associated data), its
/// clear columns and its sealed columns.
struct SealedTable: Sendable {
    let name: String
    let keyColumns: [String]
    let clearColumns: [String]
    let sealedColumns: [String]

    var allColumns: [String] { keyColumns + clearColumns + sealedColumns }

    func location(column: String, key: [String]) -> SealedLocation {
        SealedLocation(table: name, column: column, primaryKey: key)
    }

    /// The primary-key parts of a row, as strings for the associated data.
    func keyStrings(of row: Row) -> [String] {
        keyColumns.map { column in
            let value: DatabaseValue = row[column]
            switch value.storage {
            case .string(let string): return string
            case .int64(let int): return String(int)
            case .double(let double): return String(double)
            case .blob(let data): return data.base64EncodedString()
            case .null: return ""
            }
        }
    }
}

/// A record of a table with sealed columns.
protocol SealedRecord: Sendable {
    static var table: SealedTable { get }
    /// Values of `table.keyColumns`, in order.
    var keyValues: [DatabaseValue] { get }
    /// Values of `table.clearColumns`, in order.
    var clearValues: [DatabaseValue] { get }
    /// Plaintexts of `table.sealedColumns`, in order.
    var sealedPlaintexts: [[UInt8]] { get }
    /// Rebuilds a record from a row (key and clear columns) and the opened sealed columns.
    init(row: Row, opened: [Data]) throws
}

extension SealedRecord {
    var keyStrings: [String] {
        keyValues.map { value in
            switch value.storage {
            case .string(let string): string
            case .int64(let int): String(int)
            case .double(let double): String(double)
            case .blob(let data): data.base64EncodedString()
            case .null: ""
            }
        }
    }
}

/// Generic statements over ``SealedRecord`` tables.
enum SealedRows {
    static func insertSQL(_ table: SealedTable, replace: Bool = true) -> String {
        let columns = table.allColumns
        return "INSERT \(replace ? "OR REPLACE " : "")INTO \(table.name) (\(columns.joined(separator: ", "))) VALUES ("
            + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
    }

    static func selectSQL(_ table: SealedTable) -> String {
        "SELECT \(table.allColumns.joined(separator: ", ")) FROM \(table.name)"
    }

    /// Seals the record's sealed columns and writes the row (insert or replace).
    static func save<R: SealedRecord>(_ record: R, in db: Database, sealer: ColumnSealer) throws {
        let table = R.table
        let key = record.keyStrings
        guard !key.contains(where: \.isEmpty) else {
            throw SealedStoreError.invalidInput("\(table.name) needs a non-empty primary key")
        }
        var arguments: [DatabaseValue] = record.keyValues + record.clearValues
        for (column, plaintext) in zip(table.sealedColumns, record.sealedPlaintexts) {
            arguments.append(try sealer.seal(bytes: plaintext, at: table.location(column: column, key: key)).databaseValue)
        }
        try db.cachedStatement(sql: insertSQL(table)).execute(arguments: StatementArguments(arguments))
    }

    /// Opens the sealed columns of a fetched row and rebuilds the record.
    static func decode<R: SealedRecord>(_ row: Row, as type: R.Type, sealer: ColumnSealer) throws -> R {
        let table = R.table
        let key = table.keyStrings(of: row)
        var opened: [Data] = []
        opened.reserveCapacity(table.sealedColumns.count)
        // Rows are selected with `table.allColumns` in order: sealed columns come last.
        let firstSealed = table.keyColumns.count + table.clearColumns.count
        guard row.count == table.allColumns.count else { preconditionFailure("row selected without allColumns") }
        for (offset, column) in table.sealedColumns.enumerated() {
            let location = table.location(column: column, key: key)
            let stored: Data?
            do {
                stored = try row.decode(Data?.self, atIndex: firstSealed + offset)
            } catch {
                throw SealedStoreError.tampered(table: table.name, column: column,
                                                primaryKey: location.primaryKeyDescription, reason: .malformedContent)
            }
            guard let envelope = stored else {
                throw SealedStoreError.tampered(table: table.name, column: column,
                                                primaryKey: location.primaryKeyDescription, reason: .missingValue)
            }
            opened.append(try sealer.open(envelope: envelope, at: location))
        }
        do {
            return try R(row: row, opened: opened)
        } catch let error as SealedStoreError {
            throw error
        } catch {
            throw SealedStoreError.tampered(table: table.name, column: table.sealedColumns.joined(separator: ","),
                                            primaryKey: key.joined(separator: "/"), reason: .malformedContent)
        }
    }

    static func fetchAll<R: SealedRecord>(_ type: R.Type, in db: Database, sealer: ColumnSealer,
                                          where condition: String = "", arguments: StatementArguments = [],
                                          orderBy: String = "", limit: Int? = nil) throws -> [R] {
        var sql = selectSQL(R.table)
        if !condition.isEmpty { sql += " WHERE \(condition)" }
        if !orderBy.isEmpty { sql += " ORDER BY \(orderBy)" }
        if let limit { sql += " LIMIT \(max(0, limit))" }
        let cursor = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: arguments)
        var result: [R] = []
        while let row = try cursor.next() {
            result.append(try decode(row, as: R.self, sealer: sealer))
        }
        return result
    }

    static func fetchOne<R: SealedRecord>(_ type: R.Type, key: [DatabaseValue], in db: Database,
                                          sealer: ColumnSealer) throws -> R? {
        let condition = R.table.keyColumns.map { "\($0) = ?" }.joined(separator: " AND ")
        return try fetchAll(R.self, in: db, sealer: sealer, where: condition,
                            arguments: StatementArguments(key), limit: 1).first
    }

    static func delete<R: SealedRecord>(_ type: R.Type, key: [DatabaseValue], in db: Database) throws -> Bool {
        let condition = R.table.keyColumns.map { "\($0) = ?" }.joined(separator: " AND ")
        try db.execute(sql: "DELETE FROM \(R.table.name) WHERE \(condition)", arguments: StatementArguments(key))
        return db.changesCount > 0
    }
}

/// Helpers to read record fields from opened plaintexts.
extension Array where Element == Data {
    func string(_ index: Int) throws -> String { try String(sealedBytes: self[index]) }
    func strings(_ index: Int) throws -> [String] { try [String](sealedBytes: self[index]) }
    func data(_ index: Int) -> Data { self[index] }
}
