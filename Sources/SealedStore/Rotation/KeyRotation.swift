import Crypto
import Foundation
import GRDB
import RampartCore

/// The outcome of one call to ``SealedStore/rotateKeys(from:to:batchSize:maximumBatches:)``.
public struct KeyRotationReport: Sendable, Equatable {
    /// Rows re-sealed by this call (not counting earlier, interrupted calls).
    public let rowsResealed: Int
    /// Batches committed by this call.
    public let batches: Int
    /// Whether every table and setting is now under the new key.
    public let finished: Bool
}

/// A key rotation that was started and not finished (a crash, or a batch limit).
public struct PendingKeyRotation: Sendable, Equatable {
    public let fromVersion: String
    public let toVersion: String
    public let table: String
    public let lastRowID: Int64
    public let rowsDone: Int
}

extension SealedStore {
    /// Re-seals every sealed value, the blind index and the settings MACs under `newKey`.
    ///
    /// Trust-model row: **device storage (low)** / **database (critical)** — after a PIN reset
    /// that forces a new MainKey, nothing stays readable with the old one, and no data is lost.
    ///
    /// Crash-safe and resumable: tables are walked in rowid order in batches; each batch is one
    /// transaction that also records the progress (table, last rowid) in `key_rotation`. After a
    /// crash, call again with the same two keys: it continues after the last committed batch.
    /// A value that does not authenticate under the old key stops the rotation with
    /// ``SealedStoreError/tampered(table:column:primaryKey:reason:)`` (nothing is laundered).
    ///
    /// While a rotation is pending, values are under two keys: finish it before other use (the
    /// Keymaker keeps the old and new keys until ``KeyRotationReport/finished``, then installs
    /// the new key).
    /// - Parameters:
    ///   - maximumBatches: stop after this many batches (for a bounded background slot).
    ///   - oldKey: the MainKey the values are sealed under now.
    ///   - newKey: the MainKey to seal them under.
    ///   - batchSize: rows re-sealed per write transaction.
    /// - Throws: `locked` if the store's provider is locked; ``SealedStoreError/rotationMismatch(inProgressFrom:inProgressTo:)``.
    @discardableResult
    public func rotateKeys(from oldKey: MainKey, to newKey: MainKey, batchSize: Int = 256,
                           maximumBatches: Int? = nil) throws -> KeyRotationReport {
        guard batchSize > 0 else { throw SealedStoreError.invalidInput("batch size must be positive") }
        let from = KeyVersion(oldKey), to = KeyVersion(newKey)
        return try withPool { pool in
            let oldKeys = try StoreKeys(mainKey: oldKey, user: user, needs: [.columns, .index, .settings, .state])
            defer { oldKeys.wipe() }
            let newKeys = try StoreKeys(mainKey: newKey, user: user, needs: [.columns, .index, .settings, .state])
            defer { newKeys.wipe() }
            if from == to { return KeyRotationReport(rowsResealed: 0, batches: 0, finished: true) }

            try pool.write { db in
                if let row = try Row.fetchOne(db, sql: "SELECT from_version, to_version FROM key_rotation") {
                    let existingFrom: String = try row.decode(forColumn: "from_version")
                    let existingTo: String = try row.decode(forColumn: "to_version")
                    guard existingFrom == from.description, existingTo == to.description else {
                        throw SealedStoreError.rotationMismatch(inProgressFrom: existingFrom, inProgressTo: existingTo)
                    }
                } else {
                    // Before anything is re-sealed, the row sets must be the authenticated ones
                    // under the old key: a rotation never blesses deleted, inserted or replayed rows.
                    let state = try StateTransaction.load(db, key: try oldKeys.stateKey())
                    for table in StoreState.authenticatedTables {
                        guard try RowSetDigest.compute(table, in: db, key: try oldKeys.stateKey())
                                == (state.tables[table] ?? .init()) else {
                            throw SealedStoreError.tampered(table: table, column: "*", primaryKey: "*", reason: .rowSetChanged)
                        }
                    }
                    try db.execute(sql: """
                        INSERT INTO key_rotation (id, from_version, to_version, table_index, last_rowid, rows_done)
                        VALUES (1, ?, ?, 0, 0, 0)
                        """, arguments: [from.description, to.description])
                }
            }
            var resealed = 0, batches = 0
            let tables = StoreSchema.sealedTables
            while true {
                if let maximumBatches, batches >= maximumBatches {
                    return KeyRotationReport(rowsResealed: resealed, batches: batches, finished: false)
                }
                let done = try pool.write { db -> Bool in
                    // Tables with nothing to re-seal are skipped inside the same transaction, so
                    // every committed batch but the last re-seals at least one row.
                    while true {
                        guard let progress = try Row.fetchOne(db, sql: "SELECT table_index, last_rowid FROM key_rotation")
                        else { return true }
                        let tableIndex: Int = max(0, try progress.decode(Int.self, forColumn: "table_index"))
                        let lastRowID: Int64 = try progress.decode(forColumn: "last_rowid")
                        guard tableIndex < tables.count else {
                            try Self.rotateSettings(in: db, user: user, old: oldKeys, new: newKeys)
                            try Self.rotateState(in: db, old: oldKeys, new: newKeys)
                            try db.execute(sql: "DELETE FROM key_rotation")
                            return true
                        }
                        let count = try Self.rotateBatch(of: tables[tableIndex], after: lastRowID, limit: batchSize,
                                                         in: db, old: oldKeys, new: newKeys)
                        resealed += count.rows
                        if count.rows < batchSize {
                            try db.execute(sql: """
                                UPDATE key_rotation SET table_index = ?, last_rowid = 0, rows_done = rows_done + ?
                                """, arguments: [tableIndex + 1, count.rows])
                            if count.rows == 0 { continue }
                        } else {
                            try db.execute(sql: "UPDATE key_rotation SET last_rowid = ?, rows_done = rows_done + ?",
                                           arguments: [count.lastRowID, count.rows])
                        }
                        return false
                    }
                }
                batches += 1
                if done { return KeyRotationReport(rowsResealed: resealed, batches: batches, finished: true) }
            }
        }
    }

    /// The rotation in progress, if any.
    public func pendingRotation() throws -> PendingKeyRotation? {
        try read([]) { db, _ in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM key_rotation") else { return nil }
            let index: Int = try row.decode(forColumn: "table_index")
            let tables = StoreSchema.sealedTables
            return PendingKeyRotation(fromVersion: try row.decode(forColumn: "from_version"),
                                      toVersion: try row.decode(forColumn: "to_version"),
                                      table: index >= 0 && index < tables.count ? tables[index].name : "settings",
                                      lastRowID: try row.decode(forColumn: "last_rowid"),
                                      rowsDone: try row.decode(forColumn: "rows_done"))
        }
    }

    private static func rotateBatch(of table: SealedTable, after lastRowID: Int64, limit: Int, in db: Database,
                                    old: StoreKeys, new: StoreKeys) throws -> (rows: Int, lastRowID: Int64) {
        let oldSealer = try old.columns(), newSealer = try new.columns()
        let rows = try Row.fetchAll(db, sql: """
            SELECT \(table.allColumns.joined(separator: ", ")), rowid AS rampart_rowid FROM \(table.name)
            WHERE rowid > ? ORDER BY rowid LIMIT ?
            """, arguments: [lastRowID, limit])
        let update = try db.makeStatement(sql: "UPDATE \(table.name) SET sealed = ? WHERE rowid = ?")
        let keyCount = table.keyColumns.count, clearCount = table.clearColumns.count
        var last = lastRowID
        for row in rows {
            let rowid: Int64 = row["rampart_rowid"]
            let values = (0..<table.allColumns.count).map { row[$0] as DatabaseValue }
            let key = values[0..<keyCount], clear = values[keyCount..<(keyCount + clearCount)]
            func tampered(_ reason: TamperReason) -> SealedStoreError {
                .tampered(table: table.name, column: "sealed", primaryKey: SealedRows.describe(key), reason: reason)
            }
            guard case .int64(let version) = values[keyCount + clearCount].storage else { throw tampered(.malformedContent) }
            guard case .blob(let envelope) = values[keyCount + clearCount + 1].storage else { throw tampered(.missingValue) }
            let alreadyNew = RowSealer.keyVersion(ofEnvelope: envelope) == new.keyVersion
            let sealer = alreadyNew ? newSealer : oldSealer
            let opened: [Data]
            do throws(TamperReason) {
                opened = try sealer.open(envelope: envelope,
                                         associatedData: sealer.associatedData(table: table.name, version: version,
                                                                              key: key, clear: clear),
                                         fieldCount: table.sealedColumns.count)
            } catch {
                throw tampered(error)
            }
            if !alreadyNew {
                let resealed = try newSealer.seal(
                    fields: opened.map { [UInt8]($0) },
                    associatedData: newSealer.associatedData(table: table.name, version: version, key: key, clear: clear))
                try update.execute(arguments: [resealed, rowid])
            }
            if table.name == MailMessage.table.name {
                let message = try MailMessage(row: row, opened: opened)
                try db.execute(sql: "DELETE FROM search_tokens WHERE message_rowid = ?", arguments: [rowid])
                try MailStore.reindex(message, rowid: rowid, in: db, index: new.blindIndex())
            }
            last = rowid
        }
        return (rows.count, last)
    }

    /// The authenticated state under the new key: every table's digest recomputed from its rows
    /// (checked under the old key when the rotation started), the epoch carried on.
    private static func rotateState(in db: Database, old: StoreKeys, new: StoreKeys) throws {
        let previous = try? StateTransaction.load(db, key: try old.stateKey())
        var state = StoreState(epoch: (previous?.epoch ?? 0) + 1, tables: [:])
        for table in StoreState.authenticatedTables {
            state.tables[table] = try RowSetDigest.compute(table, in: db, key: try new.stateKey())
        }
        try StateTransaction.store(state, in: db, key: try new.stateKey())
    }

    /// Re-MACs the settings that verify under the old key; values that do not verify are left
    /// as they are (they keep failing and falling back to the safe default — never laundered).
    private static func rotateSettings(in db: Database, user: UserID, old: StoreKeys, new: StoreKeys) throws {
        guard let oldKey = old.settingsKey, let newKey = new.settingsKey else { return }
        for row in try Row.fetchAll(db, sql: "SELECT name, value, version, mac FROM settings") {
            guard let name = try? row.decode(String.self, forColumn: "name"),
                  let value = try? row.decode(String.self, forColumn: "value"),
                  let version = try? row.decode(Int64.self, forColumn: "version"),
                  let mac = try? row.decode(Data.self, forColumn: "mac") else { continue }
            let input = macInput(user, name, value, version)
            guard HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: input, using: oldKey) else { continue }
            let newMAC = Data(HMAC<SHA256>.authenticationCode(for: input, using: newKey))
            try db.execute(sql: "UPDATE settings SET mac = ? WHERE name = ?", arguments: [newMAC, name])
        }
    }
}
