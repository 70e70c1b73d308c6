import Crypto
import Foundation
import GRDB
import RampartCore

/// The authenticated state of the whole store: a monotonic epoch and, for every authenticated
/// table, the number of rows and a digest of the set of its rows' (primary key, version, rowid).
///
/// Trust-model rows: **database — modified (critical)**, **settings — modified (high)**, **device
/// storage (low)**. Row envelopes prove that a row is one Rampart wrote, at its place; this state
/// proves the *set* of rows is the latest one Rampart wrote: a deleted row, an inserted (old or
/// foreign) row, or an older copy of a row put back changes the set, and the digest no longer
/// matches. The state is one row (`store_state`), HMAC-SHA256 under the MainKey sub-key
/// `store.state-mac[user]`; every write transaction advances the epoch, and each written row takes
/// the new epoch as its version, so no two writes of a row have the same version.
///
/// Digest: the XOR of `HMAC-SHA256(store.state-mac, element)` over the table's rows, where the
/// element is `"r" ‖ lp(table) ‖ typed key values ‖ version ‖ rowid` for a row,
/// `"l" ‖ lp(label) ‖ time ‖ message rowid` for a label link and `"s" ‖ lp(name) ‖ version` for a
/// setting. Without the key an attacker can compute no element, so cannot make another set hit a
/// digest (the XOR of keyed pseudo-random values; sets only, never a row twice).
///
/// What remains possible with the disk alone: putting back an older copy of the *whole* store
/// (every table and this state together), unless a ``StoreRollbackAnchor`` kept elsewhere
/// remembers a later epoch.
struct StoreState: Sendable, Equatable {
    static let digestCount = 32

    struct TableDigest: Sendable, Equatable {
        var count: Int64 = 0
        var digest = [UInt8](repeating: 0, count: StoreState.digestCount)

        mutating func toggle(_ element: [UInt8]) {
            for index in 0..<StoreState.digestCount { digest[index] ^= element[index] }
        }
    }

    var epoch: Int64
    var tables: [String: TableDigest]

    /// The tables whose row sets are authenticated: every sealed table and the settings. The
    /// label links are checked against the links the (authenticated) message rows imply.
    static var authenticatedTables: [String] {
        StoreSchema.sealedTables.map(\.name) + [settingsTable]
    }
    static let linkTable = "message_labels"
    static let settingsTable = "settings"

    static var empty: StoreState {
        StoreState(epoch: 0, tables: Dictionary(uniqueKeysWithValues: authenticatedTables.map { ($0, TableDigest()) }))
    }

    func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        RowEncoding.appendInt(epoch, to: &bytes)
        let names = tables.keys.sorted()
        RowEncoding.appendCount(names.count, to: &bytes)
        for name in names {
            let table = tables[name]!
            RowEncoding.appendString(name, to: &bytes)
            RowEncoding.appendInt(table.count, to: &bytes)
            bytes.append(contentsOf: table.digest)
        }
        return bytes
    }

    static func decode(_ data: Data) -> StoreState? {
        let bytes = [UInt8](data)
        var offset = 0
        func int() -> Int64? {
            guard bytes.count - offset >= 8 else { return nil }
            defer { offset += 8 }
            return bytes[offset..<(offset + 8)].reduce(0) { $0 << 8 | Int64($1) }
        }
        func count() -> Int? {
            guard bytes.count - offset >= 4 else { return nil }
            defer { offset += 4 }
            return bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
        }
        guard let epoch = int(), let tableCount = count(), tableCount <= 64 else { return nil }
        var tables: [String: TableDigest] = [:]
        for _ in 0..<tableCount {
            guard let length = count(), bytes.count - offset >= length else { return nil }
            let name = String(decoding: bytes[offset..<(offset + length)], as: UTF8.self)
            offset += length
            guard let rows = int(), bytes.count - offset >= digestCount else { return nil }
            tables[name] = TableDigest(count: rows, digest: Array(bytes[offset..<(offset + digestCount)]))
            offset += digestCount
        }
        guard offset == bytes.count else { return nil }
        return StoreState(epoch: epoch, tables: tables)
    }
}

/// Computes digest elements and the state's MAC under `store.state-mac[user]`.
struct StateKey: @unchecked Sendable {
    private let keyed: HMAC<SHA256>
    private let macPrefix: [UInt8]

    init(key: SymmetricKey, user: UserID, keyVersion: KeyVersion) {
        keyed = HMAC<SHA256>(key: key)
        var prefix = Array("rampart.store-state.v2".utf8)
        withUnsafeBytes(of: SealedStore.schemaVersion.bigEndian) { prefix.append(contentsOf: $0) }
        RowEncoding.appendString(user.rawValue, to: &prefix)
        prefix.append(contentsOf: keyVersion.bytes)
        macPrefix = prefix
    }

    private func hmac(_ bytes: [UInt8]) -> [UInt8] {
        var mac = keyed
        mac.update(data: bytes)
        return Array(mac.finalize())
    }

    func rowElement(table: String, key: some Collection<DatabaseValue>, version: Int64, rowid: Int64,
                    extra: some Collection<DatabaseValue>) -> [UInt8] {
        var bytes: [UInt8] = [0x72] // r
        bytes.reserveCapacity(96)
        RowEncoding.appendString(table, to: &bytes)
        RowEncoding.appendCount(key.count, to: &bytes)
        for value in key { RowEncoding.append(value, to: &bytes) }
        RowEncoding.appendInt(version, to: &bytes)
        RowEncoding.appendInt(rowid, to: &bytes)
        RowEncoding.appendCount(extra.count, to: &bytes)
        for value in extra { RowEncoding.append(value, to: &bytes) }
        return hmac(bytes)
    }

    func settingElement(name: String, version: Int64) -> [UInt8] {
        var bytes: [UInt8] = [0x73] // s
        RowEncoding.appendString(name, to: &bytes)
        RowEncoding.appendInt(version, to: &bytes)
        return hmac(bytes)
    }

    func mac(_ state: StoreState) -> [UInt8] { hmac(macPrefix + state.encoded()) }

    /// The MAC of an anchor record (the epoch kept outside the database).
    func anchorMAC(epoch: Int64) -> [UInt8] {
        var bytes = Array("anchor".utf8) + macPrefix
        RowEncoding.appendInt(epoch, to: &bytes)
        return hmac(bytes)
    }

    /// The epoch of an anchor record (8-byte epoch ‖ MAC), nil if it does not authenticate.
    func anchoredEpoch(_ record: Data) -> Int64? {
        let bytes = [UInt8](record)
        guard bytes.count == 8 + 32 else { return nil }
        let epoch = bytes[0..<8].reduce(Int64(0)) { $0 << 8 | Int64($1) }
        return safeCompare(anchorMAC(epoch: epoch), Array(bytes[8...])) ? epoch : nil
    }

    func isValid(_ mac: Data, for state: StoreState) -> Bool {
        var check = keyed
        check.update(data: macPrefix + state.encoded())
        return safeCompare(Array(check.finalize()), [UInt8](mac))
    }

    private func safeCompare(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}

/// The state inside one write transaction: loaded and checked at the start, changed row by row,
/// saved (epoch + 1, new MAC) at the end.
final class StateTransaction {
    let key: StateKey
    private(set) var state: StoreState
    /// The version every row written in this transaction takes.
    var version: Int64 { state.epoch }

    init(db: Database, key: StateKey) throws {
        self.key = key
        var state = try Self.load(db, key: key)
        state.epoch += 1
        self.state = state
    }

    static func tamperedState(_ reason: TamperReason) -> SealedStoreError {
        .tampered(table: "store_state", column: "*", primaryKey: "1", reason: reason)
    }

    /// The stored state, checked. A store without a state row must be empty (a fresh store).
    static func load(_ db: Database, key: StateKey) throws -> StoreState {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT tables, mac FROM store_state WHERE id = 1")) else {
            for table in StoreState.authenticatedTables
            where try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(table))") == true {
                throw tamperedState(.missingValue)
            }
            return .empty
        }
        guard let encoded = try? row.decode(Data.self, atIndex: 0), let mac = try? row.decode(Data.self, atIndex: 1),
              let state = StoreState.decode(encoded) else { throw tamperedState(.malformedContent) }
        guard key.isValid(mac, for: state) else { throw tamperedState(.authenticationFailed) }
        return state
    }

    static func store(_ state: StoreState, in db: Database, key: StateKey) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO store_state (id, epoch, tables, mac) VALUES (1, ?, ?, ?)")
            .execute(arguments: [state.epoch, Data(state.encoded()), Data(key.mac(state))])
    }

    func save(in db: Database) throws { try Self.store(state, in: db, key: key) }

    func addRow(table: String, key values: some Collection<DatabaseValue>, version: Int64, rowid: Int64,
                extra: some Collection<DatabaseValue>) {
        state.tables[table, default: .init()].toggle(
            key.rowElement(table: table, key: values, version: version, rowid: rowid, extra: extra))
        state.tables[table, default: .init()].count += 1
    }

    func removeRow(table: String, key values: some Collection<DatabaseValue>, version: Int64, rowid: Int64,
                   extra: some Collection<DatabaseValue>) {
        state.tables[table, default: .init()].toggle(
            key.rowElement(table: table, key: values, version: version, rowid: rowid, extra: extra))
        state.tables[table, default: .init()].count -= 1
    }

    /// Replaces a table's digest (a reset the user or a re-sync asked for).
    func reset(_ table: String, to digest: StoreState.TableDigest = .init()) {
        state.tables[table] = digest
    }
}

/// The label links a set of message rows implies, or the links stored: a count and the XOR of
/// per-link hashes under this process's random hashing seed (an attacker with the disk does not
/// know it, and both sides are computed in the same process).
struct LinkSum: Equatable {
    var count = 0
    var hash: Int = 0

    mutating func add(label: Substring, time: Int64, rowid: Int64) {
        var hasher = Hasher()
        hasher.combine(label)
        hasher.combine(time)
        hasher.combine(rowid)
        hash ^= hasher.finalize()
        count += 1
    }
}

/// Recomputes the digest of a table from its rows (the check at first use, and key rotation).
enum RowSetDigest {
    static func compute(_ table: String, in db: Database, key: StateKey) throws -> StoreState.TableDigest {
        try computeWithLinks(table, in: db, key: key).digest
    }

    /// The digest of a table and, for messages, the label links its rows imply (from the `time`
    /// and `label_ids` bound into each row's digest element).
    static func computeWithLinks(_ table: String, in db: Database, key: StateKey) throws
        -> (digest: StoreState.TableDigest, links: LinkSum) {
        var result = StoreState.TableDigest()
        var links = LinkSum()
        if table == StoreState.settingsTable {
            let cursor = try Row.fetchCursor(db, sql: "SELECT name, version FROM settings")
            while let row = try cursor.next() {
                guard let name = row[0] as String?, let version = row[1] as Int64? else {
                    throw SealedStoreError.tampered(table: table, column: "*", primaryKey: "*", reason: .malformedContent)
                }
                result.toggle(key.settingElement(name: name, version: version))
                result.count += 1
            }
            return (result, links)
        }
        guard let sealedTable = StoreSchema.sealedTables.first(where: { $0.name == table }) else { return (result, links) }
        let keyCount = sealedTable.keyColumns.count, extraCount = sealedTable.digestColumns.count
        let isMessages = table == MailMessage.table.name
        let columns = ["rowid"] + sealedTable.keyColumns + ["version"] + sealedTable.digestColumns
        let cursor = try Row.fetchCursor(db, sql: "SELECT \(columns.joined(separator: ", ")) FROM \(table)")
        var values: [DatabaseValue] = []
        values.reserveCapacity(columns.count)
        while let row = try cursor.next() {
            values.removeAll(keepingCapacity: true)
            for index in 0..<columns.count { values.append(row[index]) }
            guard case .int64(let rowid) = values[0].storage, case .int64(let version) = values[keyCount + 1].storage else {
                throw SealedStoreError.tampered(table: table, column: "version", primaryKey: "*", reason: .malformedContent)
            }
            let extra = values[(keyCount + 2)..<(keyCount + 2 + extraCount)]
            result.toggle(key.rowElement(table: table, key: values[1..<(1 + keyCount)], version: version, rowid: rowid,
                                         extra: extra))
            result.count += 1
            if isMessages {
                guard case .int64(let time) = extra[extra.startIndex].storage,
                      case .string(let labels) = extra[extra.startIndex + 1].storage else {
                    throw SealedStoreError.tampered(table: table, column: "label_ids", primaryKey: "*", reason: .malformedContent)
                }
                for label in Set(labels.split(separator: ",")) { links.add(label: label, time: time, rowid: rowid) }
            }
        }
        return (result, links)
    }

    /// The label links as stored.
    static func storedLinks(in db: Database) throws -> LinkSum {
        var links = LinkSum()
        let cursor = try Row.fetchCursor(db, sql: "SELECT label_id, time, message_rowid FROM message_labels")
        while let row = try cursor.next() {
            guard let label = row[0] as String?, let time = row[1] as Int64?, let rowid = row[2] as Int64? else {
                throw SealedStoreError.tampered(table: StoreState.linkTable, column: "*", primaryKey: "*", reason: .malformedContent)
            }
            links.add(label: Substring(label), time: time, rowid: rowid)
        }
        return links
    }
}

/// Somewhere outside the database that remembers the highest store epoch (a keychain item), so
/// that putting back an older copy of the database alone is detected.
///
/// Trust-model row: **device storage (low)** — rollback. Only as strong as the place that holds
/// it: when the anchor sits on the same disk (the file keychain), an attacker who restores both
/// the database and the keychain folder from the same earlier copy is not detected; with a
/// separate store (Apple keychain, a TPM NV counter) that copy has to be rolled back too.
public protocol StoreRollbackAnchor: Sendable {
    /// The stored record, or nil when none exists.
    func load() throws -> Data?
    /// Replaces the stored record.
    func save(_ record: Data) throws
}
