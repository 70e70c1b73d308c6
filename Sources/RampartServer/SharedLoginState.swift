import Crypto
import Foundation
import RampartCore
import SRP

/// Hits counted per key in one window that starts at the key's first counted hit, kept in the
/// database (`throttleWindows`), so every server process on the database counts the same hits.
///
/// A hit is one statement, atomic by itself on both engines: an
/// `INSERT … ON CONFLICT (scope, name) DO UPDATE … WHERE window over OR hits < limit`. SQLite
/// serializes it with every write; PostgreSQL locks the key's row for the upsert and evaluates the
/// `WHERE` on its newest version, so two processes counting the same key at once cannot both take
/// its last slot. It runs outside the processes' write lock (``ServerStorage/autocommit(_:)``).
/// A refused hit counts nothing. Windows whose time is over are swept now and then.
///
/// A key is stored as its HMAC-SHA256 (16 bytes, hex) under ``nameKey``, derived from the data
/// folder's `tls/srp-secret` (the same on every process of the folder): the table holds no client
/// address, no session id and no typed username (a password typed into the name field included).
///
/// Trust-model rows **access token (high)** and **several server processes**: a limit holds for
/// the whole deployment, not per process, and survives a restart.
struct WindowCounter: Sendable {
    let store: BackendStore
    /// What is counted (`srp.username`, `signup.address`, `rate.session`, …), the hits a window
    /// admits, and its length.
    let scope: String, limit: Int, window: TimeInterval
    /// The key the stored names are HMACs under (``SRPAuthority/counterKey``).
    let nameKey: SymmetricKey

    /// The key the counters' names are stored under, derived from the SRP secret of the data folder.
    static func nameKey(from secret: SymmetricKey) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: secret, info: Data("rampart throttle names v1".utf8), outputByteCount: 32)
    }

    /// The stored form of `name` in this scope.
    func stored(_ name: String) -> String {
        HMAC<SHA256>.authenticationCode(for: Data((scope + "\u{0}" + name).utf8), using: nameKey).prefix(16)
            .map { String(format: "%02x", $0) }.joined()
    }

    /// Counts one hit of `name` at `now`; nil when admitted, else the seconds until its window ends.
    /// - Throws: ``ServerError/storage(_:)``, `StorageError.connectionLost`.
    func hit(_ key: String, now: Date) throws -> Int? {
        let name = stored(key)
        let at = now.timeIntervalSince1970, over = at - window
        let sweep = UInt8.random(in: 0...255) == 0
        return try store.autocommit { db -> Int? in
            if sweep {
                try db.execute(sql: "DELETE FROM throttleWindows WHERE scope = ? AND started <= ?", arguments: [scope, over])
            }
            let counted = try db.execute(sql: """
                INSERT INTO throttleWindows (scope, name, started, hits) VALUES (?, ?, ?, 1)
                ON CONFLICT (scope, name) DO UPDATE SET
                    hits = CASE WHEN throttleWindows.started <= ? THEN 1 ELSE throttleWindows.hits + 1 END,
                    started = CASE WHEN throttleWindows.started <= ? THEN excluded.started ELSE throttleWindows.started END
                WHERE throttleWindows.started <= ? OR throttleWindows.hits < ?
                """, arguments: [scope, name, at, over, over, over, limit])
            if counted == 1 { return nil }
            let started = try Double.fetchOne(db, sql: "SELECT started FROM throttleWindows WHERE scope = ? AND name = ?",
                                              arguments: [scope, name]) ?? at
            return max(1, Int((started + window - at).rounded(.up)))
        }
    }

    /// Takes back one counted hit of `name` (a request that turned out not to count).
    func giveBack(_ key: String) throws {
        let name = stored(key)
        try store.autocommit { db in
            try db.execute(sql: "UPDATE throttleWindows SET hits = hits - 1 WHERE scope = ? AND name = ? AND hits > 0",
                           arguments: [scope, name])
        }
    }

    /// Forgets every hit of `name`.
    func clear(_ key: String) throws {
        let name = stored(key)
        try store.autocommit { db in
            try db.execute(sql: "DELETE FROM throttleWindows WHERE scope = ? AND name = ?", arguments: [scope, name])
        }
    }

    /// The counters' table, the pending SRP logins' (``SRPSessionStore``) and the recovery nonces'.
    /// On PostgreSQL they are `UNLOGGED`: no write-ahead log, so a hit's commit waits for no disk
    /// flush (5-8 ms a hit on this machine's disk with it, debug build); PostgreSQL empties them
    /// after a crash (not after a clean restart), which forgets counts and pending logins as a
    /// restart of the single process always did.
    static func registerMigration(_ migrator: inout StorageMigrator) {
        migrator.registerMigration("shared-login-state-v1") { db in
            let unlogged = db.dialect == .postgresql ? "UNLOGGED " : ""
            try db.execute(sql: """
                CREATE \(unlogged)TABLE throttleWindows (
                    scope TEXT NOT NULL,
                    name TEXT NOT NULL,
                    started REAL NOT NULL,
                    hits INTEGER NOT NULL,
                    PRIMARY KEY (scope, name));
                CREATE INDEX throttleWindows_started ON throttleWindows(started);
                CREATE \(unlogged)TABLE srpPending (
                    id TEXT PRIMARY KEY NOT NULL,
                    username TEXT NOT NULL,
                    userId TEXT,
                    expires REAL NOT NULL,
                    sealed BLOB NOT NULL);
                CREATE INDEX srpPending_expires ON srpPending(expires);
                """)
        }
        // The recovery flow's nonces (``RecoveryNonces``), by their SHA-256.
        migrator.registerMigration("recovery-nonces-v1") { db in
            let unlogged = db.dialect == .postgresql ? "UNLOGGED " : ""
            try db.execute(sql: "CREATE \(unlogged)TABLE recoveryNonces (nonceHash BLOB PRIMARY KEY NOT NULL, username TEXT NOT NULL, userId TEXT, expires REAL NOT NULL)")
        }
    }
}

/// Failed SRP proofs (and recovery attempts), counted per username and per client address in the
/// database (``WindowCounter``): an attempt is *reserved* (counted) before its proof is checked,
/// so parallel attempts, on one process or several, cannot overrun the limit; a successful login
/// gives its address's slot back and clears its username.
///
/// Trust-model rows **access token (high)** and **several server processes**: online password
/// guessing gets at most ``usernameLimit`` tries per account and ``addressLimit`` per address in
/// each ``window``, however the attempts are spread over the processes.
struct SRPThrottle: Sendable {
    static let usernameLimit = 10
    static let addressLimit = 50
    static let window: TimeInterval = 300
    let usernames: WindowCounter
    let addresses: WindowCounter
    let clock: any RampartClock

    /// A throttle counting under `scope` (`srp` for logins, `recovery` for recovery and reset).
    init(store: BackendStore, scope: String, nameKey: SymmetricKey, clock: any RampartClock) {
        usernames = WindowCounter(store: store, scope: scope + ".username", limit: Self.usernameLimit, window: Self.window, nameKey: nameKey)
        addresses = WindowCounter(store: store, scope: scope + ".address", limit: Self.addressLimit, window: Self.window, nameKey: nameKey)
        self.clock = clock
    }

    /// Counts one attempt for both keys, or throws ``ServerError/tooManyAttempts(retryAfterSeconds:)``
    /// (counting nothing) when either is at its limit.
    func reserve(username: String, address: String) throws {
        let now = clock.now
        if let wait = try usernames.hit(username, now: now) { throw ServerError.tooManyAttempts(retryAfterSeconds: wait) }
        if let wait = try addresses.hit(address, now: now) {
            try usernames.giveBack(username)
            throw ServerError.tooManyAttempts(retryAfterSeconds: wait)
        }
    }

    /// A successful login: the username's failures are forgotten, and this attempt is not
    /// counted against the address.
    func succeeded(username: String, address: String) throws {
        try usernames.clear(username)
        try addresses.giveBack(address)
    }
}

/// Sign-up attempts per client address in a window of an hour, counted in the database
/// (``WindowCounter``; every attempt counts, refused or not, so invitation codes cannot be guessed
/// quickly either).
///
/// Trust-model rows **transport (network), low trust** / *server abuse*, and **several server processes**.
struct SignupThrottle: Sendable {
    static let window: TimeInterval = 3600
    let counter: WindowCounter
    let clock: any RampartClock

    init(store: BackendStore, limit: Int, nameKey: SymmetricKey, clock: any RampartClock) {
        counter = WindowCounter(store: store, scope: "signup.address", limit: max(1, limit), window: Self.window, nameKey: nameKey)
        self.clock = clock
    }

    /// Counts one attempt, or throws ``SignupRefusal/throttled(retryAfterSeconds:)`` (counting nothing).
    func admit(_ address: String) throws {
        if let wait = try counter.hit(address, now: clock.now) { throw SignupRefusal.throttled(retryAfterSeconds: wait) }
    }
}

/// Each session's requests in one-minute windows, counted in the database (``WindowCounter``).
struct SessionRateLimiter: Sendable {
    let counter: WindowCounter
    var perMinute: Int { counter.limit }

    init(store: BackendStore, perMinute: Int, nameKey: SymmetricKey) {
        counter = WindowCounter(store: store, scope: "rate.session", limit: max(1, perMinute), window: 60, nameKey: nameKey)
    }

    /// Counts one request of `session` at `now`. - Throws: ``ServerError/limitExceeded(_:)``.
    func admit(_ session: String, now: Date = Date()) throws {
        if let wait = try counter.hit(session, now: now) { throw ServerError.limitExceeded(.tooManyRequests(retryAfterSeconds: wait)) }
    }
}

/// One SRP login in progress: made at `/auth/info`, taken (once) at `/auth`.
struct SRPPendingLogin: Sendable {
    let username: String
    /// Nil for an unknown username (the login will fail like a wrong password).
    let userID: String?
    let server: SRPServer
    let expires: Date
}

/// The pending SRP logins, in the database (`srpPending`), so the two steps of a login may reach
/// two server processes: single-use (``take(_:)`` deletes the row and returns it in one
/// statement, `DELETE … RETURNING`, so of two processes given the same proof only one finds it),
/// expiring after ``lifetime`` (expired rows are swept), at most about ``capacity`` live ones
/// (beyond, a new ask is refused with 429).
///
/// The server's ephemeral secret `b` (with the verifier it goes with) is stored sealed with
/// ChaCha20-Poly1305 under a key derived (HKDF-SHA256) from the data folder's `tls/srp-secret`,
/// which every process on the folder shares; the associated data binds it to the session id,
/// the username and the user id, so a row copied under another id or name does not open.
///
/// Trust-model rows **transport (network), low trust** (a replayed or guessed `SRPSession` finds
/// nothing) and **several server processes** (a login started on one process finishes on another;
/// a proof replayed to another process after one accepted it is refused; the database never holds
/// `b` in clear).
struct SRPSessionStore: Sendable {
    static let lifetime: TimeInterval = 180
    static let capacity = 10_000
    let store: BackendStore
    let group: SRPGroup
    let key: SymmetricKey
    let clock: any RampartClock

    /// The sealing key, derived from the SRP secret of the data folder.
    static func sealingKey(from secret: SymmetricKey) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: secret, info: Data("rampart srp pending login v1".utf8), outputByteCount: 32)
    }

    /// Stores a pending login for `verifier` with a fresh server ephemeral; returns its `SRPSession`
    /// (32 hex characters, 128 random bits) and the server's public ephemeral `B`.
    /// - Throws: ``ServerError/tooManyAttempts(retryAfterSeconds:)`` when full, a storage error.
    func add(username: String, userID: String?, verifier: [UInt8]) throws -> (session: String, serverEphemeral: [UInt8]) {
        let id = SymmetricKey(size: .bits128).withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
        let secret = SecretBytes(randomCount: 32)
        let server = try SRPServer(group: group, verifier: verifier, secretEphemeral: secret)
        var plain = [UInt8(verifier.count >> 8), UInt8(verifier.count & 0xFF)] + verifier
        try secret.withUnsafeBytes { plain += $0 }
        defer { plain.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
        let sealed = try ChaChaPoly.seal(plain, using: key, authenticating: Self.associatedData(id, username, userID)).combined
        let now = clock.now.timeIntervalSince1970
        try ExpiringRows.insert(into: "srpPending", columns: "id, username, userId, expires, sealed",
                                values: [id, username, userID, now + Self.lifetime, sealed], now: now, capacity: Self.capacity,
                                lifetime: Self.lifetime, store: store)
        return (id, server.serverEphemeral)
    }

    /// Takes the pending login out (it cannot be used again, by any process); nil when unknown,
    /// used, expired or not opening.
    func take(_ id: String) throws -> SRPPendingLogin? {
        let rows = try store.autocommit { db in
            try StorageRow.fetchAll(db, sql: "DELETE FROM srpPending WHERE id = ? RETURNING username, userId, expires, sealed",
                                    arguments: [id])
        }
        guard let row = rows.first else { return nil }
        let username: String = row["username"], userID: String? = row["userId"], expires = Date(timeIntervalSince1970: row["expires"])
        guard expires > clock.now,
              let box = try? ChaChaPoly.SealedBox(combined: row.data("sealed")),
              var plain = try? [UInt8](ChaChaPoly.open(box, using: key, authenticating: Self.associatedData(id, username, userID))) else {
            return nil
        }
        defer { plain.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
        guard plain.count > 2 else { return nil }
        let length = Int(plain[0]) << 8 | Int(plain[1])
        guard plain.count == 2 + length + 32 else { return nil }
        var secret = Array(plain[(2 + length)...])
        defer { secret.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
        let server = try SRPServer(group: group, verifier: Array(plain[2..<(2 + length)]), secretEphemeral: SecretBytes(consuming: &secret))
        return SRPPendingLogin(username: username, userID: userID, server: server, expires: expires)
    }

    static func associatedData(_ id: String, _ username: String, _ userID: String?) -> Data {
        Data("rampart-srp-pending\u{0}\(id)\u{0}\(username)\u{0}\(userID ?? "")".utf8)
    }
}

/// Tables of single-use rows that expire (`srpPending`, `recoveryNonces`: each has an `expires`
/// column, seconds since 1970).
enum ExpiringRows {
    /// Inserts one row in one statement unless `table` holds `capacity` rows (a soft cap: processes
    /// inserting at the same moment may pass it by a few); expired rows are swept now and then,
    /// and before a full table refuses.
    /// - Throws: ``ServerError/tooManyAttempts(retryAfterSeconds:)`` when full, a storage error.
    static func insert(into table: String, columns: String, values: StorageArguments, now: Double, capacity: Int,
                       lifetime: TimeInterval, store: BackendStore) throws {
        let sweep = UInt8.random(in: 0...63) == 0
        let placeholders = Array(repeating: "?", count: values.values.count).joined(separator: ", ")
        try store.autocommit { db in
            for attempt in 0..<2 {
                if sweep || attempt == 1 { try db.execute(sql: "DELETE FROM \(table) WHERE expires <= ?", arguments: [now]) }
                let added = try db.execute(sql: "INSERT INTO \(table) (\(columns)) SELECT \(placeholders) WHERE (SELECT COUNT(*) FROM \(table)) < ?",
                                           arguments: values + [capacity])
                if added == 1 { return }
            }
            throw ServerError.tooManyAttempts(retryAfterSeconds: Int(lifetime))
        }
    }
}
