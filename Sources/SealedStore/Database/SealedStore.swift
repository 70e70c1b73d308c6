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
/// - Every sensitive column holds a ``Sealed`` envelope (AES-256-GCM under a HKDF sub-key of
///   the MainKey, bound to schema version, table, column, primary key, user and key version).
/// - Every read and write asks the ``MainKeyProvider`` for the key first and fails with
///   ``SealedStoreError/locked(_:)`` while locked. Sub-keys are derived per operation and wiped
///   when it ends; nothing decrypted is cached. On a lock event the SQLite page caches
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
    /// The schema version bound into every sealed value's associated data.
    public static let schemaVersion: UInt32 = 1

    public let user: UserID
    public let files: StoreFiles
    let provider: any MainKeyProvider
    private let lock = NSLock()
    private var pool: DatabasePool?
    private var lifecycleToken: ObserverToken?
    private var wipeRegistration: ObserverToken?
    /// Sub-keys of the current MainKey. A `DerivedKey` is zeroized by `MainKey.wipe()` (every
    /// lock), so this never outlives the unlock; it is also dropped on the lock event and
    /// whenever the MainKey object changes. It holds no decrypted data.
    private weak var cachedMainKey: MainKey?
    private var cachedSubKeys: [KeyPurpose: DerivedKey] = [:]

    /// Opens (creating and migrating if needed) the database of `keys.userID`.
    /// - Throws: ``SealedStoreError/locked(_:)`` if the key is locked (opening runs the
    ///   migrations, a write), ``SealedStoreError/files(_:)``, ``SealedStoreError/database(code:message:)``.
    public init(files: StoreFiles, keys provider: any MainKeyProvider) throws {
        self.user = provider.userID
        self.files = files
        self.provider = provider
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
            try StoreSchema.migrator.migrate(pool)
        } catch let error as DatabaseError {
            throw SealedStoreError.database(code: error.resultCode.rawValue, message: error.message ?? "\(error)")
        }
        try files.tightenPermissions(for: user)
        self.pool = pool
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

    /// Keeps a wipe-registry token alive as long as this store.
    func retainWipeRegistration(_ token: ObserverToken) {
        lock.withLock { wipeRegistration = token }
    }

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

    /// Runs `body` in a write transaction with freshly derived sub-keys.
    func write<T>(_ needs: KeyNeeds = .columns, _ body: (Database, StoreKeys) throws -> T) throws -> T {
        try access(needs) { pool, keys in try pool.write { db in try body(db, keys) } }
    }

    func access<T>(_ needs: KeyNeeds, _ body: (DatabasePool, StoreKeys) throws -> T) throws -> T {
        guard let pool = currentPool else { throw SealedStoreError.closed(user) }
        do {
            let mainKey = try provider.currentMainKey()
            let keys = try StoreKeys(mainKey: mainKey, user: user, needs: needs) { purpose in
                try self.subKey(purpose, of: mainKey)
            }
            return try body(pool, keys)
        } catch let error as SealedStoreError {
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
                cachedMainKey = mainKey
            }
            if let key = cachedSubKeys[purpose], !key.isWiped { return key }
            let key = try mainKey.derivedKey(for: purpose)
            cachedSubKeys[purpose] = key
            return key
        }
    }

    private func dropSubKeys() {
        let keys = lock.withLock { () -> [DerivedKey] in
            defer { cachedSubKeys.removeAll(); cachedMainKey = nil }
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
}

/// The sub-keys of one operation. Derived from the MainKey at the start, wiped at the end.
struct StoreKeys {
    static func columnPurpose(_ user: UserID) -> KeyPurpose { KeyPurpose("store.columns", context: user.rawValue) }
    static func indexPurpose(_ user: UserID) -> KeyPurpose { KeyPurpose("store.blind-index", context: user.rawValue) }
    static func settingsPurpose(_ user: UserID) -> KeyPurpose { KeyPurpose("store.settings-mac", context: user.rawValue) }

    private let owned: [DerivedKey]
    let sealer: ColumnSealer?
    let index: BlindIndex?
    let settingsKey: SymmetricKey?
    let keyVersion: KeyVersion

    /// - Parameter derive: where sub-keys come from; by default a fresh derivation owned (and
    ///   wiped by ``wipe()``) by this value.
    init(mainKey: MainKey, user: UserID, needs: KeyNeeds,
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
        let version = KeyVersion(mainKey)
        keyVersion = version
        sealer = needs.contains(.columns)
            ? ColumnSealer(key: try symmetric(Self.columnPurpose(user)), user: user, keyVersion: version,
                           schemaVersion: SealedStore.schemaVersion)
            : nil
        index = needs.contains(.index) ? BlindIndex(key: try symmetric(Self.indexPurpose(user))) : nil
        settingsKey = needs.contains(.settings) ? try symmetric(Self.settingsPurpose(user)) : nil
        self.owned = owned
    }

    func columns() throws -> ColumnSealer {
        guard let sealer else { preconditionFailure("operation did not ask for the column key") }
        return sealer
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
