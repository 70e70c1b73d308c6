import Crypto
import Foundation
import MailboxCrypto
import OpenPGP
import RampartAPI
import RampartCore
import SRP

/// Why a recovery, a reset or a recovery copy was refused: one case per rule, with its HTTP status,
/// a stable code and a sentence a person can act on (never echoing a key, token or phrase).
///
/// Trust-model rows **the user's private and public keys (critical)** and **transport (network),
/// low trust**: a refused request changes nothing; an unknown name and a wrong phrase get the same
/// answer.
public enum RecoveryRefusal: RampartError, Sendable, Equatable {
    /// The phrase's access token does not match (or the name is unknown, or has no copy).
    case wrongPhrase
    /// The nonce is unknown, expired, already used, or for another name.
    case nonceInvalid
    /// The uploaded copy is not a locked, complete copy of the account's key, or its cost is too low.
    case copyInvalid(String)
    /// The new locked key is not the account's key, not locked, or incomplete.
    case keyInvalid(String)
    /// The signature by the recovered key does not verify against the account's public key.
    case signatureInvalid
    /// The reset token is unknown, used, expired, or for another account.
    case tokenInvalid
    /// The account is disabled by the operator.
    case disabled
    /// A field is malformed.
    case malformed(field: String, why: String)

    public var code: String {
        switch self {
        case .wrongPhrase: "recovery.wrongPhrase"
        case .nonceInvalid: "recovery.nonceInvalid"
        case .copyInvalid: "recovery.copyInvalid"
        case .keyInvalid: "recovery.keyInvalid"
        case .signatureInvalid: "recovery.signatureInvalid"
        case .tokenInvalid: "recovery.tokenInvalid"
        case .disabled: "account.disabled"
        case .malformed: "recovery.malformed"
        }
    }

    public var message: String {
        switch self {
        case .wrongPhrase:
            "This recovery phrase does not open a recovery copy of this account (a phrase of another account, one replaced since, or no such account)."
        case .nonceInvalid: "The recovery attempt expired or was already used; start again."
        case .copyInvalid(let why): "The recovery copy is refused: \(why)."
        case .keyInvalid(let why): "The new locked key is refused: \(why)."
        case .signatureInvalid: "The proof of possession (a signature by the account's key) does not verify; nothing was changed."
        case .tokenInvalid: "The reset token is unknown, already used, expired or for another account; ask the operator for a new one (rampart server reset-password)."
        case .disabled: "This account is disabled by the server's operator."
        case .malformed(let field, let why): "The field \"\(field)\" is malformed: \(why)."
        }
    }

    public var description: String { message }
    public var kind: RampartErrorKind { if case .malformed = self { .badInput } else { .failure } }

    var status: Int {
        switch self {
        case .malformed: 400
        case .tokenInvalid, .disabled: 403
        default: 422
        }
    }

    var body: APIErrorBody { APIErrorBody(code: code, message: message) }
}

/// A recovery copy whose every field was checked.
struct CheckedRecoveryCopy {
    let lockedKey: String
    let salt: [UInt8]
    let logN: Int
    let accessHash: [UInt8]
}

/// The recovery copies of account keys (table `recoveryCopies`), the operator's reset tokens
/// (table `passwordResets`), and their checks.
///
/// Trust-model rows **the user's private and public keys (critical)** (a copy is stored only if
/// RNP reads it as a complete key whose every secret part is passphrase-locked, of the account's
/// public key, at scrypt cost 2^15 or more; the access token only as SHA-256) and **access token
/// (high)** by analogy (reset tokens: 128 random bits, stored as SHA-256, single use, expiring).
enum RecoveryCopies {
    /// Checks an uploaded copy against the account's public key.
    /// - Throws: ``RecoveryRefusal/copyInvalid(_:)``.
    static func check(_ upload: RecoveryCopyUpload, publicKey: PGPPublicKey) throws -> CheckedRecoveryCopy {
        guard upload.logN >= Int(RecoveryKeyCopy.minimumLogN), upload.logN <= 24 else {
            throw RecoveryRefusal.copyInvalid("its scrypt cost 2^\(upload.logN) is outside 2^\(RecoveryKeyCopy.minimumLogN)...2^24")
        }
        guard let salt = Data(base64Encoded: upload.salt), salt.count == RecoveryKeyCopy.saltCount else {
            throw RecoveryRefusal.copyInvalid("its salt must be base64 of \(RecoveryKeyCopy.saltCount) bytes")
        }
        guard let access = Data(base64Encoded: upload.access), access.count == 32 else {
            throw RecoveryRefusal.copyInvalid("its access token must be base64 of 32 bytes")
        }
        try checkLocked(upload.lockedKey, publicKey: publicKey, refusal: RecoveryRefusal.copyInvalid)
        return CheckedRecoveryCopy(lockedKey: upload.lockedKey, salt: [UInt8](salt), logN: upload.logN,
                                   accessHash: RecoveryKeyCopy.accessHash([UInt8](access)))
    }

    /// An armored secret key that is `publicKey`'s, complete, and locked in every part.
    static func checkLocked(_ armored: String, publicKey: PGPPublicKey, refusal: (String) -> RecoveryRefusal) throws {
        let inspection: PGPSecretKeyInspection
        do {
            guard armored.utf8.count <= Signups.maximumKeyCharacters, OpenPGP.isArmored(Data(armored.utf8)) else {
                throw OpenPGPError.malformed("not armored")
            }
            inspection = try PGPPrivateKey.inspectLocked(armored: armored)
        } catch {
            throw refusal("it is not one armored OpenPGP secret key")
        }
        guard inspection.everySecretPartLocked else { throw refusal("it is not locked with a passphrase") }
        guard inspection.hasEverySecretPart else { throw refusal("a secret part (primary key or subkey) is missing") }
        guard inspection.publicKey.fingerprint == publicKey.fingerprint else {
            throw refusal("it is not the account's key (\(publicKey.fingerprint.hex))")
        }
    }

    /// Stores (or replaces) the copy of `userID`, inside the caller's transaction.
    static func store(_ db: any StorageConnection, userID: String, copy: CheckedRecoveryCopy, now: Int64) throws {
        try db.execute(sql: """
            INSERT INTO recoveryCopies (userId, lockedKey, salt, logN, accessHash, created) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (userId) DO UPDATE SET lockedKey = excluded.lockedKey, salt = excluded.salt, logN = excluded.logN,
                accessHash = excluded.accessHash, created = excluded.created
            """, arguments: [userID, Data(copy.lockedKey.utf8), Data(copy.salt), copy.logN, Data(copy.accessHash), now])
    }

    /// The stored copy of `userID`, if any.
    static func fetch(_ db: any StorageConnection, userID: String) throws -> (lockedKey: String, salt: [UInt8], logN: Int, accessHash: [UInt8])? {
        guard let row = try StorageRow.fetchOne(db, sql: "SELECT lockedKey, salt, logN, accessHash FROM recoveryCopies WHERE userId = ?",
                                         arguments: [userID]) else { return nil }
        return (String(decoding: row.data("lockedKey"), as: UTF8.self), [UInt8](row.data("salt")), row["logN"], [UInt8](row.data("accessHash")))
    }

    /// Whether `access` (base64) is the token whose hash is `stored` (compared in constant time).
    static func accessMatches(_ access: String, stored: [UInt8]) -> Bool {
        guard access.utf8.count <= 64, let token = Data(base64Encoded: access), token.count == 32 else { return false }
        let hash = RecoveryKeyCopy.accessHash([UInt8](token))
        guard hash.count == stored.count else { return false }
        return zip(hash, stored).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// The tables `recoveryCopies` and `passwordResets`.
    static func registerMigration(_ migrator: inout StorageMigrator) {
        migrator.registerMigration("recovery-v1") { db in
            try db.execute(sql: """
                CREATE TABLE recoveryCopies (
                    userId TEXT PRIMARY KEY NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    lockedKey BLOB NOT NULL,
                    salt BLOB NOT NULL,
                    logN INTEGER NOT NULL,
                    accessHash BLOB NOT NULL,
                    created INTEGER NOT NULL);
                CREATE TABLE passwordResets (
                    tokenHash BLOB PRIMARY KEY NOT NULL,
                    userId TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    created INTEGER NOT NULL,
                    expires INTEGER NOT NULL,
                    used INTEGER);
                """)
        }
    }
}

/// Reset tokens the operator hands out (`rampart server reset-password USER`).
public enum PasswordResets {
    /// The default lifetime of a reset token: 24 hours.
    public static let defaultLifetime: TimeInterval = 86_400

    static func hash(_ token: String) -> Data { Data(SHA256.hash(data: Data(token.trimmingCharacters(in: .whitespaces).utf8))) }

    /// A new token for `username`, stored hashed; returns the token (to be shown once).
    /// - Throws: ``ServerError/notFound(_:)`` for an unknown username.
    static func create(in store: BackendStore, username: String, now: Date, lifetime: TimeInterval) throws -> String {
        let token = "rmr-" + SymmetricKey(size: .bits128).withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
        let created = Int64(now.timeIntervalSince1970)
        try store.write { db in
            guard let userID = try String.fetchOne(db, sql: "SELECT id FROM users WHERE username = ? COLLATE NOCASE", arguments: [username])
            else { throw ServerError.notFound("The account \(username)") }
            try db.execute(sql: "INSERT INTO passwordResets (tokenHash, userId, created, expires) VALUES (?, ?, ?, ?)",
                           arguments: [hash(token), userID, created, created + Int64(lifetime)])
        }
        return token
    }

    /// The user id a live token of `username` belongs to.
    /// - Throws: ``RecoveryRefusal/tokenInvalid``.
    static func userID(_ db: any StorageConnection, token: String, username: String, now: Int64) throws -> String {
        guard token.utf8.count <= 128, let userID = try String.fetchOne(db, sql: """
            SELECT passwordResets.userId FROM passwordResets JOIN users ON users.id = passwordResets.userId
            WHERE tokenHash = ? AND used IS NULL AND expires > ? AND users.username = ? COLLATE NOCASE
            """, arguments: [hash(token), now, username]) else { throw RecoveryRefusal.tokenInvalid }
        return userID
    }
}

/// The single-use nonces of recoveries in progress: made at `/v1/recovery/info`, checked at
/// `/v1/recovery/copy`, taken at `/v1/recovery/password`; they expire after ``lifetime``.
///
/// Trust-model rows **transport (network), low trust** (a replayed proof finds no nonce) and
/// **several server processes** (the nonces are rows of the database, each taken once).
struct RecoveryNonces: Sendable {
    static let lifetime: TimeInterval = 600
    static let capacity = 10_000
    struct Entry { let username: String; let userID: String?; let expires: Date }
    let store: BackendStore
    let clock: any RampartClock

    /// A new nonce for `username`, stored as its SHA-256 in `recoveryNonces` (every process on the
    /// database finds it). - Throws: ``ServerError/tooManyAttempts(retryAfterSeconds:)`` when full.
    func issue(username: String, userID: String?) throws -> String {
        let nonce = SymmetricKey(size: .bits128).withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
        let now = clock.now.timeIntervalSince1970
        try ExpiringRows.insert(into: "recoveryNonces", columns: "nonceHash, username, userId, expires",
                                values: [Self.hash(nonce), username, userID, now + Self.lifetime], now: now, capacity: Self.capacity,
                                lifetime: Self.lifetime, store: store)
        return nonce
    }

    /// The entry of a live nonce for `username`; `consume` deletes it (one `DELETE … RETURNING`:
    /// of two processes given the same nonce, one finds it).
    /// - Throws: ``RecoveryRefusal/nonceInvalid``.
    func entry(_ nonce: String, username: String, consume: Bool) throws -> Entry {
        let sql = consume ? "DELETE FROM recoveryNonces WHERE nonceHash = ? RETURNING username, userId, expires"
                          : "SELECT username, userId, expires FROM recoveryNonces WHERE nonceHash = ?"
        let row = try store.autocommit { db in try StorageRow.fetchOne(db, sql: sql, arguments: [Self.hash(nonce)]) }
        guard let row else { throw RecoveryRefusal.nonceInvalid }
        let found = Entry(username: row["username"], userID: row["userId"], expires: Date(timeIntervalSince1970: row["expires"]))
        guard found.expires > clock.now, found.username == username else { throw RecoveryRefusal.nonceInvalid }
        return found
    }

    static func hash(_ nonce: String) -> Data { Data(SHA256.hash(data: Data(nonce.utf8))) }
}

extension EmbeddedServer {
    /// Makes a single-use reset token for `username` in the backend of `dataDirectory` (the server
    /// may be running) and returns it; only its hash is stored (`rampart server reset-password`).
    /// With it the user sets a new password and NEW keys: mail sealed to the old key stays unreadable.
    /// - Throws: ``ServerError`` (unknown account, storage, a bad folder).
    public static func createPasswordReset(dataDirectory: URL, username: String, lifetime: TimeInterval = PasswordResets.defaultLifetime,
                                           now: Date = Date(), storage: ServerStorageOpener? = nil) throws -> String {
        try PasswordResets.create(in: try openStore(dataDirectory, storage: storage), username: username, now: now, lifetime: lifetime)
    }

    /// The backend of a data folder the server made (it may be running), on `storage` when given.
    static func openStore(_ dataDirectory: URL, storage: ServerStorageOpener? = nil) throws -> BackendStore {
        if let storage { return try BackendStore.open(dataDirectory, with: storage) }
        let database = dataDirectory.standardizedFileURL.appendingPathComponent("backend.sqlite")
        guard FileManager.default.fileExists(atPath: database.path) else {
            throw ServerError.notFound("The server database \(database.path) (start the server once with this --data folder)")
        }
        return try BackendStore(url: database)
    }
}
