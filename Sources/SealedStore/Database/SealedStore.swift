import Crypto
import Foundation
import GRDB
import RampartCore

/// One user's sealed SQLite database: the local copy of mail and drive data.
///
/// Trust-model rows: **database (messages, attachments, contacts, labels; drive nodes, revisions,
/// blocks, thumbnails, shares, volumes, share URLs) — critical to read, disclose and modify**;
/// **device storage (low)**; **device backups (low)**; **settings (modified: high)**.
///
/// - Every row is one AES-256-GCM envelope (under a HKDF sub-key of the MainKey) of its sensitive
///   fields, whose associated data binds schema version, user, key version, table, primary key,
///   row version and every clear column; the set of rows of each table is authenticated by the
///   store state (epoch and keyed digests), checked at a table's first use in each process.
/// - Every read and write asks the `MainKeyProvider` for the key first and fails with
///   ``SealedStoreError/locked(_:)`` while locked. Sub-keys are derived once per unlock and wiped
///   with the MainKey; nothing decrypted is cached. On a lock event the SQLite page caches
///   (ciphertext and clear columns only) are released too.
/// - Files: one database per user, 0600 in a 0700 folder excluded from backups, WAL mode,
///   `secure_delete = ON`, `synchronous = FULL`.
///
/// ```swift
/// let store = try SealedStore(files: StoreFiles(root: url), keys: session)
/// try store.mail.insert(message: message)
/// let found = try store.mail.message(id: message.id)
/// ```
public final class SealedStore: @unchecked Sendable {
    /// The schema version bound into every sealed value's associated data. Version 2: one
    /// envelope per row, clear columns in its associated data, authenticated row sets.
    public static let schemaVersion: UInt32 = 2

    public let user: UserID
    public let files: StoreFiles
    let provider: any MainKeyProvider
    private let lock = NSLock()
    private var pool: DatabasePool?
    private var lifecycleToken: ObserverToken?
    /// Sub-keys of the current MainKey. A `DerivedKey` is zeroized by `MainKey.wipe()` (every
    /// lock), so this never outlives the unlock; it is also dropped on the lock event and
    /// whenever the MainKey object changes. It holds no decrypted data.
    private weak var cachedMainKey: MainKey?
    private var cachedSubKeys: [KeyPurpose: DerivedKey] = [:]
    /// The row sealer and state key built from those sub-keys (same lifetime: dropped with them).
    private var cachedOperationKeys: OperationKeys?
    /// Tables whose row set was checked against the authenticated state in this process (true)
    /// or found changed (false). A changed table stays refused until a reset (re-sync) of it.
    private var checkedTables: [String: Bool] = [:]
    /// The highest epoch this process has seen: a lower one later is a rollback.
    private var highestEpoch: Int64 = 0
    let anchor: (any StoreRollbackAnchor)?

    /// Opens (creating and migrating if needed) the database of `keys.userID`.
    /// - Parameters:
    ///   - anchor: where the highest epoch is remembered outside the database (a
    ///     keychain item); nil keeps no such record (an older copy of the whole database then goes
    ///     unnoticed).
    ///   - files: the user's store folder and database path.
    ///   - provider: the MainKey provider of the user (the Keymaker, or the agent's copy).
    /// - Throws: ``SealedStoreError/locked(_:)`` if the key is locked (opening runs the
    ///   migrations, a write), ``SealedStoreError/files(_:)``, ``SealedStoreError/database(code:message:)``,
    ///   ``SealedStoreError/outdatedStore(_:)`` for a database of the older column layout,
    ///   `tampered` (`rolledBack`) when the anchor remembers a later epoch.
    public init(files: StoreFiles, keys provider: any MainKeyProvider, anchor: (any StoreRollbackAnchor)? = nil) throws {
        self.user = provider.userID
        self.files = files
        self.provider = provider
        self.anchor = anchor
        guard provider.isUnlocked else { throw SealedStoreError.locked(provider.userID) }
        try files.prepare(for: user)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.label = "rampart.sealed-store"
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA secure_delete = ON")
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        let pool: DatabasePool
        do {
            pool = try DatabasePool(path: files.databaseURL(for: user).path, configuration: configuration)
            let outdated = try pool.read { db in
                try db.tableExists("grdb_migrations")
                    && (try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM grdb_migrations WHERE identifier = ?)",
                                          arguments: [StoreSchema.columnLayoutMigration]) ?? false)
            }
            if outdated {
                try? pool.close()
                throw SealedStoreError.outdatedStore(user)
            }
            try StoreSchema.migrator.migrate(pool)
        } catch let error as DatabaseError {
            throw SealedStoreError.database(code: error.resultCode.rawValue, message: error.message ?? "\(error)")
        }
        try files.tightenPermissions(for: user)
        self.pool = pool
        try startState()
        OpenStores.shared.add(self)
        let user = self.user
        lifecycleToken = provider.observeLifecycle { [weak self] event in
            switch event {
            case .locked(let who, _) where who == user:
                // Nothing decrypted is cached; drop the (already wiped) sub-keys and let SQLite
                // drop its page caches (ciphertext and clear columns) as well.
                self?.dropSubKeys()
                self?.currentPool?.releaseMemoryEventually()
            case .wiped(let who, _) where who == user:
                self?.close()
            default:
                break
            }
        }
    }

    deinit {
        lifecycleToken?.cancel()
        try? pool?.close()
    }

    /// Mail records: accounts, messages, conversations, attachments, contacts, labels, events.
    public var mail: MailStore { MailStore(store: self) }
    /// Drive records: volumes, shares, nodes, revisions, blocks, thumbnails, share URLs.
    public var drive: DriveStore { DriveStore(store: self) }

    /// Whether the database is open (not closed or wiped).
    public var isOpen: Bool { currentPool != nil }

    var currentPool: DatabasePool? { lock.withLock { pool } }

    /// Closes the database. Later calls throw ``SealedStoreError/closed(_:)``.
    public func close() {
        let closing = lock.withLock { () -> DatabasePool? in
            defer { pool = nil }
            return pool
        }
        try? closing?.close()
        OpenStores.shared.remove(self)
    }

    /// Closes the database and deletes its files (database, WAL, SHM, journal) and folder.
    /// The sub-keys are never stored; they die with the MainKey.
    public func wipe() throws {
        close()
        try files.remove(user: user)
    }

    // MARK: - Access

    /// Runs `body` in a read transaction with freshly derived sub-keys.
    func read<T>(_ needs: KeyNeeds = .columns, _ body: (Database, StoreKeys) throws -> T) throws -> T {
        try access(needs) { pool, keys in try pool.read { db in try body(db, keys) } }
    }

    /// Runs `body` in a read transaction after checking, once per process, that the row set of
    /// each of `tables` is the authenticated one.
    /// - Throws: `tampered` (`rowSetChanged`) for a table whose rows were deleted, inserted or
    ///   replaced by older copies on disk.
    func read<T>(_ needs: KeyNeeds = .columns, checking tables: [String],
                 _ body: (Database, StoreKeys) throws -> T) throws -> T {
        let unchecked = lock.withLock { tables.filter { checkedTables[$0] != true } }
        if unchecked.isEmpty { return try read(needs, body) }
        return try access(needs.union(.state)) { pool, keys in
            try pool.read { db in
                try checkRowSets(unchecked, in: db, keys: keys)
                return try body(db, keys)
            }
        }
    }

    /// Checks the row sets of `tables` against the authenticated state (and its epoch against
    /// the highest one seen), remembering the outcome for this process.
    func checkRowSets(_ tables: [String], in db: Database, keys: StoreKeys) throws {
        let known = lock.withLock { checkedTables }
        if let failed = tables.first(where: { known[$0] == false }) {
            throw SealedStoreError.tampered(table: failed, column: "*", primaryKey: "*", reason: .rowSetChanged)
        }
        let state = try StateTransaction.load(db, key: keys.stateKey())
        let seen = lock.withLock { () -> Int64 in
            defer { highestEpoch = max(highestEpoch, state.epoch) }
            return highestEpoch
        }
        guard state.epoch >= seen else { throw StateTransaction.tamperedState(.rolledBack) }
        var impliedLinks: LinkSum?
        func check(_ table: String) throws {
            let actual = try RowSetDigest.computeWithLinks(table, in: db, key: keys.stateKey())
            if table == MailMessage.table.name { impliedLinks = actual.links }
            let matches = actual.digest == (state.tables[table] ?? .init())
            lock.withLock { checkedTables[table] = matches }
            guard matches else {
                throw SealedStoreError.tampered(table: table, column: "*", primaryKey: "*", reason: .rowSetChanged)
            }
        }
        for table in tables where known[table] != true && table != StoreState.linkTable { try check(table) }
        if tables.contains(StoreState.linkTable), known[StoreState.linkTable] != true {
            // The links must be exactly those the message rows (checked just now) imply.
            if impliedLinks == nil { try check(MailMessage.table.name) }
            let matches = try RowSetDigest.storedLinks(in: db) == impliedLinks
            lock.withLock { checkedTables[StoreState.linkTable] = matches }
            guard matches else {
                throw SealedStoreError.tampered(table: StoreState.linkTable, column: "*", primaryKey: "*", reason: .rowSetChanged)
            }
        }
    }

    /// Forgets the outcome of earlier row-set checks of `tables` (after a reset of them).
    func forgetChecks(_ tables: [String]) {
        lock.withLock { tables.forEach { checkedTables[$0] = nil } }
    }

    /// Runs `body` in a write transaction with the authenticated state loaded (and checked);
    /// rows written take the transaction's new epoch as their version. The state is saved in
    /// the same transaction, and the rollback anchor updated after the commit.
    func mutate<T>(_ needs: KeyNeeds = .columns, _ body: (Database, StoreKeys, StateTransaction) throws -> T) throws -> T {
        var record: (epoch: Int64, mac: [UInt8])?
        let result = try access(needs.union(.state)) { pool, keys in
            try pool.write { db -> T in
                let state = try StateTransaction(db: db, key: try keys.stateKey())
                let result = try body(db, keys, state)
                try state.save(in: db)
                record = (state.state.epoch, keys.stateKey().anchorMAC(epoch: state.state.epoch))
                return result
            }
        }
        if let record {
            lock.withLock { highestEpoch = max(highestEpoch, record.epoch) }
            try saveAnchor(epoch: record.epoch, mac: record.mac)
        }
        return result
    }

    /// Creates the state of a fresh store, and checks the store against the rollback anchor.
    ///
    /// The anchor is read inside the write transaction: while it holds SQLite's write lock no
    /// other process can commit (and then record) a later epoch, so a command opening the store
    /// while another one writes never mistakes the other's new epoch for a rollback.
    private func startState() throws {
        var current: (epoch: Int64, mac: [UInt8])?
        try access(.state) { pool, keys in
            try pool.write { db in
                let stateKey = try keys.stateKey()
                let existing = try Row.fetchOne(db, sql: "SELECT 1 FROM store_state WHERE id = 1")
                if existing == nil {
                    // A fresh (empty) store gets its state; a store with rows and no state opens,
                    // but every read and write of it is refused by load() (`tampered`).
                    guard let state = try? StateTransaction.load(db, key: stateKey) else { return }
                    try StateTransaction.store(state, in: db, key: stateKey)
                    current = (state.epoch, stateKey.anchorMAC(epoch: state.epoch))
                } else if let state = try? StateTransaction.load(db, key: stateKey) {
                    current = (state.epoch, stateKey.anchorMAC(epoch: state.epoch))
                }
                guard let anchor, let current else { return }
                // A record that does not authenticate (another key, edited) is replaced, not trusted.
                if let stored = try? anchor.load(), let remembered = stateKey.anchoredEpoch(stored) {
                    guard current.epoch >= remembered else { throw StateTransaction.tamperedState(.rolledBack) }
                    lock.withLock { highestEpoch = max(highestEpoch, remembered) }
                }
            }
        }
        if let current { try saveAnchor(epoch: current.epoch, mac: current.mac) }
    }

    private func saveAnchor(epoch: Int64, mac: [UInt8]) throws {
        guard let anchor else { return }
        var record = Data()
        withUnsafeBytes(of: epoch.bigEndian) { record.append(contentsOf: $0) }
        record.append(contentsOf: mac)
        do { try anchor.save(record) } catch {
            throw SealedStoreError.files("cannot record the store's epoch outside the database: \(error)")
        }
    }

    /// Runs `body` in a write transaction with freshly derived sub-keys.
    func write<T>(_ needs: KeyNeeds = .columns, _ body: (Database, StoreKeys) throws -> T) throws -> T {
        try access(needs) { pool, keys in try pool.write { db in try body(db, keys) } }
    }

    func access<T>(_ needs: KeyNeeds, _ body: (DatabasePool, StoreKeys) throws -> T) throws -> T {
        guard let pool = currentPool else { throw SealedStoreError.closed(user) }
        do {
            let mainKey = try provider.currentMainKey()
            let cached = needs.isSubset(of: [.columns, .state]) && !needs.isEmpty ? try operationKeys(of: mainKey) : nil
            let keys = try StoreKeys(mainKey: mainKey, user: user, needs: needs, cached: cached) { purpose in
                try self.subKey(purpose, of: mainKey)
            }
            return try body(pool, keys)
        } catch let error as SealedStoreError {
            if case .tampered(let table, _, _, _) = error, MailStore.syncedTables.contains(table) {
                // Remembered (unauthenticated: at worst it causes a re-sync) so that the next
                // sync downloads the mail again instead of keeping the edited row.
                try? pool.write { db in
                    try db.execute(sql: "INSERT OR REPLACE INTO technical (name, value) VALUES ('needs_resync', 1)")
                }
            }
            throw error
        } catch is LockedError {
            throw SealedStoreError.locked(user)
        } catch SecretError.wiped {
            throw SealedStoreError.locked(user)
        } catch let error as DatabaseError {
            throw SealedStoreError.database(code: error.resultCode.rawValue, message: error.message ?? "\(error)")
        }
    }

    /// The sub-key for `purpose` of `mainKey`, derived once per unlock.
    private func subKey(_ purpose: KeyPurpose, of mainKey: MainKey) throws -> DerivedKey {
        try lock.withLock {
            if cachedMainKey !== mainKey {
                cachedSubKeys.removeAll()
                cachedOperationKeys = nil
                cachedMainKey = mainKey
            }
            if let key = cachedSubKeys[purpose], !key.isWiped { return key }
            let key = try mainKey.derivedKey(for: purpose)
            cachedSubKeys[purpose] = key
            return key
        }
    }

    /// The row sealer and state key of `mainKey`, built once per unlock (reads and writes of rows
    /// then pay no key set-up beyond AES-GCM's own).
    private func operationKeys(of mainKey: MainKey) throws -> OperationKeys {
        let columnPurpose = StoreKeys.columnPurpose(user)
        if let cached = lock.withLock({ () -> OperationKeys? in
            guard cachedMainKey === mainKey, let column = cachedSubKeys[columnPurpose], !column.isWiped else { return nil }
            return cachedOperationKeys
        }) { return cached }
        let version = KeyVersion(mainKey)
        let column = try subKey(columnPurpose, of: mainKey)
        let state = try subKey(StoreKeys.statePurpose(user), of: mainKey)
        let keys = OperationKeys(
            sealer: RowSealer(key: try column.withUnsafeBytes { SymmetricKey(data: $0) }, user: user, keyVersion: version,
                              schemaVersion: Self.schemaVersion),
            state: StateKey(key: try state.withUnsafeBytes { SymmetricKey(data: $0) }, user: user, keyVersion: version),
            keyVersion: version)
        lock.withLock { if cachedMainKey === mainKey { cachedOperationKeys = keys } }
        return keys
    }

    private func dropSubKeys() {
        let keys = lock.withLock { () -> [DerivedKey] in
            defer { cachedSubKeys.removeAll(); cachedOperationKeys = nil; cachedMainKey = nil }
            return Array(cachedSubKeys.values)
        }
        keys.forEach { $0.wipe() }
    }

    /// Runs `body` on the open pool after checking the key is unlocked (no sub-key needed).
    func withPool<T>(_ body: (DatabasePool) throws -> T) throws -> T {
        try access([]) { pool, _ in try body(pool) }
    }

    // MARK: - Technical data

    /// Technical data kept in clear: the date of first login and the cache schema version.
    public func technicalData() throws -> TechnicalData {
        try read([]) { db, _ in
            let first = try Int64.fetchOne(db, sql: "SELECT value FROM technical WHERE name = 'first_login'")
            let version = try Int.fetchOne(db, sql: "SELECT value FROM technical WHERE name = 'cache_schema_version'")
            return TechnicalData(firstLogin: first.map { Date(timeIntervalSince1970: TimeInterval($0)) },
                                 cacheSchemaVersion: version ?? 0)
        }
    }

    /// Records the first login date, once (later calls keep the first value).
    public func recordFirstLogin(_ date: Date) throws {
        try write([]) { db, _ in
            try db.execute(sql: "INSERT OR IGNORE INTO technical (name, value) VALUES ('first_login', ?)",
                           arguments: [Int64(date.timeIntervalSince1970)])
        }
    }
}

/// Technical data about the local cache (clear: it reveals nothing about the mailbox).
public struct TechnicalData: Sendable, Equatable {
    public let firstLogin: Date?
    public let cacheSchemaVersion: Int
}

/// Which sub-keys an operation needs.
struct KeyNeeds: OptionSet {
    let rawValue: Int
    static let columns = KeyNeeds(rawValue: 1)
    static let index = KeyNeeds(rawValue: 2)
    static let settings = KeyNeeds(rawValue: 4)
    static let state = KeyNeeds(rawValue: 8)
}

/// The row sealer and state key of one unlock.
struct OperationKeys: @unchecked Sendable {
    let sealer: RowSealer
    let state: StateKey
    let keyVersion: KeyVersion
}

/// The sub-keys of one operation. Derived from the MainKey at the start, wiped at the end.
struct StoreKeys {
    static func columnPurpose(_ user: UserID) -> KeyPurpose { KeyPurpose("store.columns", context: user.rawValue) }
    static func indexPurpose(_ user: UserID) -> KeyPurpose { KeyPurpose("store.blind-index", context: user.rawValue) }
    static func settingsPurpose(_ user: UserID) -> KeyPurpose { KeyPurpose("store.settings-mac", context: user.rawValue) }
    static func statePurpose(_ user: UserID) -> KeyPurpose { KeyPurpose("store.state-mac", context: user.rawValue) }

    private let owned: [DerivedKey]
    let sealer: RowSealer?
    let state: StateKey?
    let index: BlindIndex?
    let settingsKey: SymmetricKey?
    let keyVersion: KeyVersion

    /// - Parameter derive: where sub-keys come from; by default a fresh derivation owned (and
    ///   wiped by ``wipe()``) by this value.
    init(mainKey: MainKey, user: UserID, needs: KeyNeeds, cached: OperationKeys? = nil,
         derive: ((KeyPurpose) throws -> DerivedKey)? = nil) throws {
        var owned: [DerivedKey] = []
        func symmetric(_ purpose: KeyPurpose) throws -> SymmetricKey {
            let key: DerivedKey
            if let derive {
                key = try derive(purpose)
            } else {
                key = try mainKey.derivedKey(for: purpose)
                owned.append(key)
            }
            return try key.withUnsafeBytes { SymmetricKey(data: $0) }
        }
        if let cached {
            keyVersion = cached.keyVersion
            sealer = needs.contains(.columns) ? cached.sealer : nil
            state = needs.contains(.state) ? cached.state : nil
            index = nil
            settingsKey = nil
            self.owned = []
            return
        }
        let version = KeyVersion(mainKey)
        keyVersion = version
        sealer = needs.contains(.columns)
            ? RowSealer(key: try symmetric(Self.columnPurpose(user)), user: user, keyVersion: version,
                        schemaVersion: SealedStore.schemaVersion)
            : nil
        state = needs.contains(.state)
            ? StateKey(key: try symmetric(Self.statePurpose(user)), user: user, keyVersion: version)
            : nil
        index = needs.contains(.index) ? BlindIndex(key: try symmetric(Self.indexPurpose(user))) : nil
        settingsKey = needs.contains(.settings) ? try symmetric(Self.settingsPurpose(user)) : nil
        self.owned = owned
    }

    func columns() throws -> RowSealer {
        guard let sealer else { preconditionFailure("operation did not ask for the column key") }
        return sealer
    }

    func stateKey() -> StateKey {
        guard let state else { preconditionFailure("operation did not ask for the state key") }
        return state
    }

    func blindIndex() -> BlindIndex {
        guard let index else { preconditionFailure("operation did not ask for the index key") }
        return index
    }

    /// Wipes the sub-keys this value derived itself (not the store's per-unlock ones).
    func wipe() { owned.forEach { $0.wipe() } }
}

/// The stores open in this process, so a wipe can close a store before deleting its files.
final class OpenStores: @unchecked Sendable {
    static let shared = OpenStores()
    private let lock = NSLock()
    private var stores: [ObjectIdentifier: WeakStore] = [:]

    private struct WeakStore { weak var store: SealedStore? }

    func add(_ store: SealedStore) { lock.withLock { stores[ObjectIdentifier(store)] = WeakStore(store: store) } }
    func remove(_ store: SealedStore) { lock.withLock { _ = stores.removeValue(forKey: ObjectIdentifier(store)) } }

    func stores(of user: UserID, in files: StoreFiles) -> [SealedStore] {
        lock.withLock { stores.values.compactMap(\.store).filter { $0.user == user && $0.files == files } }
    }
}
