import Foundation
import GRDB

/// One value a program on this device keeps for itself and the server never has: the bridge's
/// UID maps, its password and certificate key, its copies of message bytes. Grouped by `kind`,
/// named by `id`; the value is sealed, `size` stays clear (the byte count of what the value
/// stands for, e.g. a message's RFC822.SIZE, so that listings need not open every row).
///
/// Trust-model row **database (critical)**: the value is sealed under the MainKey like every
/// message column; the row set is authenticated, so an item deleted, added or replaced by an older
/// copy on disk is found (``SealedStoreError/tampered(table:column:primaryKey:reason:)``).
struct DeviceItem: Sendable, Hashable, SealedRecord {
    var kind: String
    var id: String
    var size: Int64
    var value: Data

    static let table = SealedTable(name: "device_items", keyColumns: ["kind", "id"], clearColumns: ["size"],
                                   sealedColumns: ["value"])
    var keyValues: [DatabaseValue] { [kind.databaseValue, id.databaseValue] }
    var clearValues: [DatabaseValue] { [size.databaseValue] }
    var sealedPlaintexts: [[UInt8]] { [value.sealedBytes] }
    init(kind: String, id: String, size: Int64, value: Data) { self.kind = kind; self.id = id; self.size = size; self.value = value }
    init(row: Row, opened: [Data]) throws {
        self.init(kind: try row.decode(forColumn: "kind"), id: try row.decode(forColumn: "id"), size: try row.decode(forColumn: "size"),
                  value: opened.data(0))
    }
}

/// Typed access to the device's own sealed items (``SealedStore/deviceItems``): values a local
/// program (the IMAP/SMTP bridge) keeps beside the synced mail. They are not part of a re-sync:
/// ``MailStore/discardForResync()`` keeps them, so what a program numbered stays numbered.
///
/// Trust-model row **database (critical)**: values sealed, row set authenticated; every method
/// needs the MainKey (``SealedStoreError/locked(_:)`` otherwise).
public struct DeviceItemStore: Sendable {
    let store: SealedStore

    /// One item's value, nil when there is none.
    public func value(kind: String, id: String) throws -> Data? {
        try store.read(checking: [DeviceItem.table.name]) { db, keys in
            try SealedRows.fetchOne(DeviceItem.self, key: [kind.databaseValue, id.databaseValue], in: db,
                                    sealer: try keys.columns())?.value
        }
    }

    /// Stores items (insert or replace) in one transaction: all or none.
    /// - Parameter items: kind, id, clear size and the value to seal.
    public func save(_ items: [(kind: String, id: String, size: Int64, value: Data)]) throws {
        guard !items.isEmpty else { return }
        guard !items.contains(where: { $0.kind.isEmpty || $0.id.isEmpty }) else {
            throw SealedStoreError.invalidInput("a device item needs a kind and an id")
        }
        try store.mutate { db, keys, state in
            let sealer = try keys.columns()
            for item in items {
                try SealedRows.save(DeviceItem(kind: item.kind, id: item.id, size: item.size, value: item.value),
                                    in: db, sealer: sealer, state: state)
            }
        }
    }

    /// Stores one item.
    public func save(kind: String, id: String, size: Int64 = 0, value: Data) throws {
        try save([(kind, id, size, value)])
    }

    /// The ids and sizes of every item of `kind`, without opening their values (the row set is
    /// checked first).
    public func sizes(kind: String) throws -> [String: Int64] {
        try store.read([], checking: [DeviceItem.table.name]) { db, _ in
            var result: [String: Int64] = [:]
            let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT id, size FROM device_items WHERE kind = ?"),
                                           arguments: [kind])
            while let row = try rows.next() { result[row[0]] = row[1] }
            return result
        }
    }

    /// Deletes items of `kind` with these ids, in one transaction; returns how many existed.
    @discardableResult
    public func delete(kind: String, ids: [String]) throws -> Int {
        guard !ids.isEmpty else { return 0 }
        return try store.mutate([]) { db, _, state in
            var removed = 0
            for id in ids where try SealedRows.delete(DeviceItem.self, key: [kind.databaseValue, id.databaseValue], in: db, state: state) {
                removed += 1
            }
            return removed
        }
    }
}

extension SealedStore {
    /// The device's own sealed items (a local program's state beside the synced mail).
    public var deviceItems: DeviceItemStore { DeviceItemStore(store: self) }
}

/// The clear columns of one message: what a listing needs without opening the sealed ones.
public struct StoredMessageSummary: Sendable, Hashable {
    /// The message id.
    public var id: String
    /// Unix time in seconds.
    public var time: Int64
    /// The size the server gave.
    public var size: Int64
    /// The flags (clear, as in ``MailMessage/flags``).
    public var flags: MessageFlags
    /// The labels.
    public var labelIDs: [String]
}

extension MailStore {
    /// The clear columns of every message (with `label`: of the messages under it), oldest first,
    /// after the row sets of the messages and their label links are checked: nothing is decrypted.
    ///
    /// Trust-model row **database (critical)**: only the columns that are clear by design
    /// (*Which columns are sealed*) are read, and only once their rows authenticated as a set.
    public func summaries(label: String? = nil) throws -> [StoredMessageSummary] {
        try store.read([], checking: [MailMessage.table.name, StoreState.linkTable]) { db, _ in
            let sql = label == nil
                ? "SELECT id, time, size, flags, label_ids FROM messages ORDER BY time, rowid"
                : "SELECT m.id, m.time, m.size, m.flags, m.label_ids FROM message_labels l JOIN messages m ON m.rowid = l.message_rowid WHERE l.label_id = ? ORDER BY l.time, l.message_rowid"
            let rows = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: label.map { [$0] } ?? [])
            var result: [StoredMessageSummary] = []
            while let row = try rows.next() {
                let labels: String = row[4]
                result.append(StoredMessageSummary(id: row[0], time: row[1], size: row[2], flags: MessageFlags(rawValue: row[3]),
                                             labelIDs: labels.isEmpty ? [] : labels.split(separator: ",").map(String.init)))
            }
            return result
        }
    }
}
