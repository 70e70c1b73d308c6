import Crypto
import Foundation
import GRDB
import RampartAPI
import RampartCore

/// The backend's SQLite database (GRDB, WAL mode, one transaction per change): accounts, sessions,
/// sealed messages and attachments, labels, the event log, push subscriptions and drive objects.
///
/// Trust-model rows **database (critical)** and **the user's private and public keys
/// (critical)**, on the server side: what it stores is zero-access — message bodies (subject,
/// sender, recipients, HTML) and attachment contents are OpenPGP messages (``MailPart``) to the
/// user's key, the private key is locked under a passphrase derived from the mailbox password
/// (which the server never receives), drive
/// names and blocks arrive already encrypted by the client. For login passwords only SRP salts
/// and verifiers are kept (``SRPAuthority``), tokens as SHA-256 hashes. Every change and its event are written in
/// one transaction, so a crash leaves either both or neither.
final class BackendStore: Sendable {
    let pool: DatabasePool

    /// Opens (creating and migrating) the database at `url`.
    /// - Throws: ``ServerError/startFailed(_:)``.
    init(url: URL) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.label = "rampart.server"
        // Deleted rows (a deleted message, an ended session's token hashes) are overwritten, not
        // left in free pages.
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA secure_delete = ON") }
        // Created 0600 before SQLite opens it: SQLite gives the -wal and -shm files the mode of
        // the database file.
        if !FileManager.default.fileExists(atPath: url.path) {
            let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd >= 0 { close(fd) }
        }
        _ = chmod(url.path, 0o600)
        do {
            pool = try DatabasePool(path: url.path, configuration: configuration)
            try Self.migrator.migrate(pool)
        } catch {
            throw ServerError.startFailed("the database \(url.path) cannot be opened (\(error))")
        }
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE users (
                    id TEXT PRIMARY KEY NOT NULL,
                    username TEXT NOT NULL UNIQUE,
                    displayName TEXT NOT NULL,
                    addresses TEXT NOT NULL,
                    passwordSalt BLOB NOT NULL,
                    passwordLogN INTEGER NOT NULL,
                    passwordHash BLOB NOT NULL,
                    publicKey BLOB NOT NULL,
                    sealedPrivateKey BLOB NOT NULL,
                    created INTEGER NOT NULL);
                CREATE TABLE addresses (
                    address TEXT PRIMARY KEY NOT NULL,
                    userId TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE);
                CREATE TABLE sessions (
                    id TEXT PRIMARY KEY NOT NULL,
                    userId TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    accessHash BLOB NOT NULL UNIQUE,
                    accessExpires REAL NOT NULL,
                    refreshHash BLOB NOT NULL UNIQUE,
                    refreshExpires REAL NOT NULL,
                    created REAL NOT NULL);
                CREATE TABLE labels (
                    userId TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    id TEXT NOT NULL,
                    name TEXT NOT NULL,
                    PRIMARY KEY (userId, id));
                CREATE TABLE messages (
                    id TEXT PRIMARY KEY NOT NULL,
                    userId TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    conversationId TEXT NOT NULL,
                    time INTEGER NOT NULL,
                    size INTEGER NOT NULL,
                    unread INTEGER NOT NULL,
                    sealedBody BLOB NOT NULL);
                CREATE INDEX messages_user_time ON messages(userId, time);
                CREATE TABLE messageLabels (
                    messageId TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
                    labelId TEXT NOT NULL,
                    PRIMARY KEY (messageId, labelId));
                CREATE TABLE attachments (
                    id TEXT PRIMARY KEY NOT NULL,
                    messageId TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
                    userId TEXT NOT NULL,
                    position INTEGER NOT NULL,
                    name TEXT NOT NULL,
                    mimeType TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    contentId TEXT,
                    sealedData BLOB NOT NULL);
                CREATE TABLE events (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    userId TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    action TEXT NOT NULL,
                    objectId TEXT NOT NULL);
                CREATE INDEX events_user ON events(userId, id);
                CREATE TABLE pushSubscriptions (
                    sessionId TEXT PRIMARY KEY NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                    userId TEXT NOT NULL,
                    registration TEXT NOT NULL);
                CREATE TABLE pushSeenKeys (fingerprint BLOB PRIMARY KEY NOT NULL);
                CREATE TABLE driveVolumes (
                    id TEXT PRIMARY KEY NOT NULL,
                    userId TEXT NOT NULL UNIQUE REFERENCES users(id) ON DELETE CASCADE,
                    shareId TEXT NOT NULL,
                    rootNodeId TEXT NOT NULL);
                CREATE TABLE driveNodes (
                    id TEXT PRIMARY KEY NOT NULL,
                    userId TEXT NOT NULL,
                    parentId TEXT,
                    sealedName BLOB NOT NULL,
                    isFolder INTEGER NOT NULL,
                    revisionId TEXT,
                    modified INTEGER NOT NULL);
                CREATE TABLE driveRevisions (
                    id TEXT PRIMARY KEY NOT NULL,
                    nodeId TEXT NOT NULL REFERENCES driveNodes(id) ON DELETE CASCADE,
                    blockIds TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    created INTEGER NOT NULL);
                CREATE TABLE driveBlocks (
                    id TEXT PRIMARY KEY NOT NULL,
                    userId TEXT NOT NULL,
                    sha256 TEXT NOT NULL,
                    data BLOB NOT NULL);
                """)
        }
        Mailbox.registerOriginalsMigration(&migrator)
        migrator.registerMigration("v3-openpgp") { db in
            // Accounts of an older Rampart hold X25519 keys sealed with scrypt ("RMPK") and mail
            // sealed with HPKE ("RMHP"): neither opens in the OpenPGP mail format.
            if try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM users") ?? 0 > 0 {
                throw ServerError.startFailed("""
                    this data folder was made by an older Rampart (HPKE mail, X25519 keys), which this version \
                    cannot read; start the server with a new --data folder
                    """)
            }
            try db.execute(sql: "ALTER TABLE users ADD COLUMN keySalt BLOB NOT NULL DEFAULT x''")
        }
        SRPAuthority.registerMigration(&migrator)
        Invitations.registerMigration(&migrator)
        RecoveryCopies.registerMigration(&migrator)
        Accounts.registerAdministrationMigration(&migrator)
        KeyLog.registerMigration(&migrator)
        KeyList.registerMigration(&migrator)
        return migrator
    }

    /// Runs a write transaction; GRDB and SQLite errors become ``ServerError/storage(_:)``.
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        try Self.typedErrors { try pool.write(body) }
    }

    /// Runs a read; GRDB and SQLite errors become ``ServerError/storage(_:)``.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        try Self.typedErrors { try pool.read(body) }
    }

    /// Passes typed errors through and turns anything else into ``ServerError/storage(_:)``
    /// (the SQLite result code or the error's type, never its text: it may quote a query).
    static func typedErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as any RampartError {
            throw error
        } catch let error as DatabaseError {
            throw ServerError.storage("SQLite error \(error.resultCode.rawValue)")
        } catch {
            throw ServerError.storage("\(type(of: error))")
        }
    }

    /// Appends an event (inside the caller's transaction).
    static func appendEvent(_ db: Database, userID: String, kind: APIEvent.Kind, action: APIEvent.Action, objectID: String) throws {
        try db.execute(sql: "INSERT INTO events (userId, kind, action, objectId) VALUES (?, ?, ?, ?)",
                       arguments: [userID, kind.rawValue, action.rawValue, objectID])
    }

    /// A random identifier: `prefix` + 24 hex characters (96 random bits).
    static func newID(_ prefix: String) -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<12).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return prefix + bytes.map { String(format: "%02x", $0) }.joined()
    }
}

extension Row {
    /// A column as `Data` (empty if NULL).
    func data(_ column: String) -> Data { (self[column] as Data?) ?? Data() }
}
