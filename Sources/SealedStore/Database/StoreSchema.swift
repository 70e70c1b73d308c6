import Foundation
import GRDB

/// The tables of the sealed store and their GRDB migrations.
///
/// Column choices (which stay clear and why) are listed in the module's DocC article *Which columns are sealed* (`SealedColumns.md`).
/// Sealed columns are BLOBs holding a ``Sealed`` envelope; every table keeps an implicit rowid,
/// which key rotation walks in order.
enum StoreSchema {
    /// Every table whose rows are sealed and authenticated, in the order key rotation walks them.
    static let sealedTables: [SealedTable] = [
        AccountRecord.table, MailMessage.table, Conversation.table, AttachmentMetadata.table,
        Contact.table, MailLabel.table, EventCursor.table,
        DriveVolume.table, DriveShare.table, DriveNode.table, DriveRevision.table, DriveBlock.table,
        DriveThumbnail.table, DriveShareURL.table, DeviceItem.table,
    ]

    /// The first migration of the layout before whole-row authentication (one envelope per
    /// column, clear columns unauthenticated). A database that has it is refused
    /// (``SealedStoreError/outdatedStore(schema:)``): its clear columns were never authenticated,
    /// so nothing in it can be vouched for; a fresh copy comes from the server.
    static let columnLayoutMigration = "v1-core"

    /// A table's CREATE statement: key and clear columns as declared, then `version` and `sealed`,
    /// and a covering index of (key, version) for the row-set check.
    private static func create(_ table: SealedTable, columns: String, primaryKey: String? = nil) -> String {
        let key = primaryKey.map { ", PRIMARY KEY (\($0))" } ?? ""
        return """
            CREATE TABLE \(table.name) (\(columns), version INTEGER NOT NULL, sealed BLOB NOT NULL\(key));
            CREATE INDEX \(table.name)_versions ON \(table.name) (\((table.keyColumns + ["version"] + table.digestColumns).joined(separator: ", ")));
            """
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v2-core") { db in
            try db.execute(sql: """
                CREATE TABLE technical (name TEXT PRIMARY KEY, value) ;
                INSERT INTO technical (name, value) VALUES ('cache_schema_version', 2);
                CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL, version INTEGER NOT NULL, mac BLOB NOT NULL);
                CREATE TABLE store_state (id INTEGER PRIMARY KEY CHECK (id = 1), epoch INTEGER NOT NULL,
                    tables BLOB NOT NULL, mac BLOB NOT NULL);
                CREATE TABLE key_rotation (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    from_version TEXT NOT NULL, to_version TEXT NOT NULL,
                    table_index INTEGER NOT NULL, last_rowid INTEGER NOT NULL,
                    rows_done INTEGER NOT NULL);
                """)
        }
        migrator.registerMigration("v2-mail") { db in
            try db.execute(sql: create(AccountRecord.table, columns: "id TEXT PRIMARY KEY NOT NULL")
                + create(MailMessage.table, columns: """
                    id TEXT PRIMARY KEY NOT NULL, conversation_id TEXT NOT NULL,
                    time INTEGER NOT NULL, size INTEGER NOT NULL, flags INTEGER NOT NULL, label_ids TEXT NOT NULL
                    """)
                + MailStore.messageIndexesSQL + """
                CREATE TABLE search_tokens (token BLOB NOT NULL, message_rowid INTEGER NOT NULL,
                    PRIMARY KEY (token, message_rowid)) WITHOUT ROWID;
                CREATE INDEX search_tokens_by_message ON search_tokens (message_rowid);
                """
                + create(Conversation.table, columns: """
                    id TEXT PRIMARY KEY NOT NULL, time INTEGER NOT NULL,
                    message_count INTEGER NOT NULL, unread_count INTEGER NOT NULL, label_ids TEXT NOT NULL
                    """)
                + "CREATE INDEX conversations_by_time ON conversations (time);"
                + create(AttachmentMetadata.table, columns: "id TEXT PRIMARY KEY NOT NULL, message_id TEXT NOT NULL, size INTEGER NOT NULL")
                + "CREATE INDEX attachments_by_message ON attachments (message_id);"
                + create(Contact.table, columns: "id TEXT PRIMARY KEY NOT NULL, modified INTEGER NOT NULL")
                + create(MailLabel.table, columns: "id TEXT PRIMARY KEY NOT NULL, kind INTEGER NOT NULL, sort_order INTEGER NOT NULL")
                + create(EventCursor.table, columns: "id INTEGER PRIMARY KEY CHECK (id = 1)"))
        }
        migrator.registerMigration("v2-drive") { db in
            try db.execute(sql: create(DriveVolume.table, columns: """
                    id TEXT PRIMARY KEY NOT NULL, state INTEGER NOT NULL,
                    used_space INTEGER NOT NULL, root_share_id TEXT NOT NULL
                    """)
                + create(DriveShare.table, columns: "id TEXT PRIMARY KEY NOT NULL, volume_id TEXT NOT NULL, kind INTEGER NOT NULL, root_node_id TEXT NOT NULL")
                + create(DriveNode.table, columns: """
                    id TEXT PRIMARY KEY NOT NULL, share_id TEXT NOT NULL, parent_id TEXT,
                    kind INTEGER NOT NULL, state INTEGER NOT NULL, size INTEGER NOT NULL, modified INTEGER NOT NULL
                    """)
                + "CREATE INDEX nodes_by_parent ON nodes (parent_id, modified);"
                + create(DriveRevision.table, columns: "id TEXT PRIMARY KEY NOT NULL, node_id TEXT NOT NULL, state INTEGER NOT NULL, size INTEGER NOT NULL, created INTEGER NOT NULL")
                + "CREATE INDEX revisions_by_node ON revisions (node_id, created);"
                + create(DriveBlock.table, columns: "revision_id TEXT NOT NULL, block_index INTEGER NOT NULL, size INTEGER NOT NULL",
                         primaryKey: "revision_id, block_index")
                + create(DriveThumbnail.table, columns: "revision_id TEXT NOT NULL, kind INTEGER NOT NULL, size INTEGER NOT NULL",
                         primaryKey: "revision_id, kind")
                + create(DriveShareURL.table, columns: "id TEXT PRIMARY KEY NOT NULL, share_id TEXT NOT NULL, expiration INTEGER, permissions INTEGER NOT NULL")
                + "CREATE INDEX share_urls_by_share ON share_urls (share_id);")
        }
        migrator.registerMigration("v3-device-items") { db in
            try db.execute(sql: create(DeviceItem.table, columns: "kind TEXT NOT NULL, id TEXT NOT NULL, size INTEGER NOT NULL",
                                       primaryKey: "kind, id"))
        }
        migrator.registerMigration("v4-unread-index") { db in
            // Unread counts per label walk only the unread messages (the rows' clear flags).
            try db.execute(sql: MailStore.unreadIndexSQL)
        }
        return migrator
    }
}

/// A table of sealed rows: its primary-key columns and clear columns (both bound into the row's
/// associated data), and the names of the fields sealed together in its `sealed` column.
struct SealedTable: Sendable {
    let name: String
    let keyColumns: [String]
    let clearColumns: [String]
    /// The fields inside the row envelope, in order (names only: they share one `sealed` column).
    let sealedColumns: [String]
    /// Clear columns also bound into the row-set digest element (messages: `time` and
    /// `label_ids`, from which the label links are derived and checked).
    let digestColumns: [String]
    /// Where each digest column sits among the clear columns.
    let digestIndices: [Int]
    /// The stored columns, in the order every select reads them: key, clear, `version`, `sealed`.
    let allColumns: [String]
    /// Statements built once per table (not per call).
    let selectSQL: String, selectByKeySQL: String, insertSQL: String, updateSQL: String, existingSQL: String

    init(name: String, keyColumns: [String], clearColumns: [String], sealedColumns: [String],
         digestColumns: [String] = []) {
        self.name = name
        self.keyColumns = keyColumns
        self.clearColumns = clearColumns
        self.sealedColumns = sealedColumns
        self.digestColumns = digestColumns
        digestIndices = digestColumns.map { column in clearColumns.firstIndex(of: column)! }
        let all = keyColumns + clearColumns + ["version", "sealed"]
        allColumns = all
        let keyCondition = keyColumns.map { "\($0) = ?" }.joined(separator: " AND ")
        selectSQL = "SELECT \(all.joined(separator: ", ")) FROM \(name)"
        selectByKeySQL = selectSQL + " WHERE \(keyCondition) LIMIT 1"
        insertSQL = "INSERT OR REPLACE INTO \(name) (\(all.joined(separator: ", "))) VALUES ("
            + Array(repeating: "?", count: all.count).joined(separator: ", ") + ")"
        updateSQL = "UPDATE \(name) SET "
            + (clearColumns + ["version", "sealed"]).map { "\($0) = ?" }.joined(separator: ", ") + " WHERE rowid = ?"
        existingSQL = "SELECT \((["rowid", "version"] + digestColumns).joined(separator: ", ")) FROM \(name) WHERE \(keyCondition)"
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
    var keyStrings: [String] { keyValues.map(SealedRows.keyString) }
}

/// Generic statements over ``SealedRecord`` tables.
enum SealedRows {
    static func keyCondition(_ table: SealedTable) -> String {
        table.keyColumns.map { "\($0) = ?" }.joined(separator: " AND ")
    }

    /// What the digest knows of a stored row: its rowid, version and digest columns.
    typealias Stored = (rowid: Int64, version: DatabaseValue, extra: [DatabaseValue])

    /// The rowid, version and digest columns of the row with this key, if any.
    static func existing(_ table: SealedTable, key: [DatabaseValue], in db: Database) throws -> Stored? {
        guard let row = try Row.fetchOne(
            db.cachedStatement(sql: table.existingSQL),
            arguments: StatementArguments(key)) else { return nil }
        return (row[0], row[1], (0..<table.digestColumns.count).map { row[2 + $0] as DatabaseValue })
    }

    /// Takes a row out of the table's digest (before it is replaced or deleted).
    static func forget(_ table: SealedTable, key: [DatabaseValue], stored: Stored, state: StateTransaction) throws {
        guard case .int64(let number) = stored.version.storage else {
            throw SealedStoreError.tampered(table: table.name, column: "version",
                                            primaryKey: describe(key), reason: .malformedContent)
        }
        state.removeRow(table: table.name, key: key, version: number, rowid: stored.rowid, extra: stored.extra)
    }

    /// Seals the record as one row envelope (its clear columns and key in the associated data),
    /// writes it (insert or replace) under the transaction's version and updates the table's
    /// digest. Returns the row's rowid.
    @discardableResult
    static func save<R: SealedRecord>(_ record: R, in db: Database, sealer: RowSealer, state: StateTransaction,
                                      lookedUp: Stored?? = nil) throws -> Int64 {
        let table = R.table
        let key = record.keyValues
        guard !record.keyStrings.contains(where: \.isEmpty) else {
            throw SealedStoreError.invalidInput("\(table.name) needs a non-empty primary key")
        }
        let previous = try lookedUp ?? existing(table, key: key, in: db)
        if let previous { try forget(table, key: key, stored: previous, state: state) }
        let clear = record.clearValues
        let version = state.version
        let envelope = try sealer.seal(fields: record.sealedPlaintexts,
                                       associatedData: sealer.associatedData(table: table.name, version: version,
                                                                            key: key, clear: clear))
        let rowid: Int64
        if let previous {
            // Updated in place: the rowid (which label links and search tokens name) stays.
            var arguments = clear
            arguments.append(version.databaseValue)
            arguments.append(envelope.databaseValue)
            arguments.append(previous.rowid.databaseValue)
            try db.cachedStatement(sql: table.updateSQL).execute(arguments: StatementArguments(arguments))
            rowid = previous.rowid
        } else {
            var arguments = key + clear
            arguments.append(version.databaseValue)
            arguments.append(envelope.databaseValue)
            try db.cachedStatement(sql: table.insertSQL).execute(arguments: StatementArguments(arguments))
            rowid = db.lastInsertedRowID
        }
        state.addRow(table: table.name, key: key, version: version, rowid: rowid, extra: table.digestIndices.map { clear[$0] })
        return rowid
    }


    static func describe(_ key: some Collection<DatabaseValue>) -> String {
        key.map(keyString).joined(separator: "/")
    }

    /// A key column's value as text: a string as it is, a number in decimal, a blob in base64,
    /// NULL as the empty string.
    static func keyString(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .string(let string): string
        case .int64(let int): String(int)
        case .double(let double): String(double)
        case .blob(let data): data.base64EncodedString()
        case .null: ""
        }
    }

    /// Authenticates a fetched row as a whole (key, clear columns, version and sealed fields in
    /// one AEAD check) and rebuilds the record. The row starts with `table.allColumns`.
    static func decode<R: SealedRecord>(_ row: Row, as type: R.Type, sealer: RowSealer) throws -> R {
        let table = R.table
        let columnCount = table.allColumns.count
        guard row.count >= columnCount else { preconditionFailure("row selected without allColumns") }
        var values: [DatabaseValue] = []
        values.reserveCapacity(columnCount)
        for index in 0..<columnCount { values.append(row[index]) }
        let base = 0
        let keyEnd = table.keyColumns.count
        let clearEnd = keyEnd + table.clearColumns.count
        func tampered(_ reason: TamperReason, _ column: String = "sealed") -> SealedStoreError {
            .tampered(table: table.name, column: column, primaryKey: describe(values[base..<keyEnd]), reason: reason)
        }
        guard case .int64(let version) = values[clearEnd].storage else { throw tampered(.malformedContent, "version") }
        guard case .blob(let envelope) = values[clearEnd + 1].storage else {
            throw tampered(values[clearEnd + 1].isNull ? .missingValue : .malformedContent)
        }
        let associatedData = sealer.associatedData(table: table.name, version: version, key: values[base..<keyEnd],
                                                   clear: values[keyEnd..<clearEnd])
        let opened: [Data]
        do throws(TamperReason) {
            opened = try sealer.open(envelope: envelope, associatedData: associatedData,
                                     fieldCount: table.sealedColumns.count)
        } catch {
            throw tampered(error)
        }
        do {
            return try R(row: row, opened: opened)
        } catch let error as SealedStoreError {
            throw error
        } catch {
            throw tampered(.malformedContent)
        }
    }

    static func fetchAll<R: SealedRecord>(_ type: R.Type, in db: Database, sealer: RowSealer,
                                          where condition: String = "", arguments: StatementArguments = [],
                                          orderBy: String = "", limit: Int? = nil) throws -> [R] {
        var sql = R.table.selectSQL
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
                                          sealer: RowSealer) throws -> R? {
        let cursor = try Row.fetchCursor(db.cachedStatement(sql: R.table.selectByKeySQL), arguments: StatementArguments(key))
        return try cursor.next().map { try decode($0, as: R.self, sealer: sealer) }
    }

    static func delete<R: SealedRecord>(_ type: R.Type, key: [DatabaseValue], in db: Database,
                                        state: StateTransaction) throws -> Bool {
        guard let previous = try existing(R.table, key: key, in: db) else { return false }
        try forget(R.table, key: key, stored: previous, state: state)
        try db.execute(sql: "DELETE FROM \(R.table.name) WHERE rowid = ?", arguments: [previous.rowid])
        return true
    }
}

/// Helpers to read record fields from opened plaintexts.
extension Array where Element == Data {
    func string(_ index: Int) throws -> String { try String(sealedBytes: self[index]) }
    func strings(_ index: Int) throws -> [String] { try [String](sealedBytes: self[index]) }
    func data(_ index: Int) -> Data { self[index] }
}
