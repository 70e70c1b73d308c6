import Crypto
import Foundation
import RampartAPI
import RampartCore

/// The backend's database (``ServerStorage``: SQLite or PostgreSQL, one transaction per change): accounts, sessions,
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
    /// The engine underneath: ``SQLiteStorage`` or PostgreSQL's.
    let storage: any ServerStorage

    /// Opens (creating and migrating) the SQLite database at `url`.
    /// - Throws: ``ServerError/startFailed(_:)``.
    convenience init(url: URL) throws {
        let storage: SQLiteStorage
        do { storage = try SQLiteStorage(url: url) } catch {
            throw ServerError.startFailed("the database \(url.path) cannot be opened (\(error))")
        }
        try self.init(storage: storage, name: url.path)
    }

    /// The store of data folder `data`: what `open` opens, else SQLite in `<data>/backend.sqlite`.
    /// - Throws: ``ServerError/startFailed(_:)``.
    static func open(_ data: URL, with open: ServerStorageOpener?) throws -> BackendStore {
        guard let open else { return try BackendStore(url: data.appendingPathComponent("backend.sqlite")) }
        let storage: any ServerStorage
        do { storage = try open(data) } catch let error as ServerError { throw error } catch {
            // The engines' errors name a code or a cause, never a password or a statement.
            throw ServerError.startFailed("the database cannot be opened (\(error))")
        }
        return try BackendStore(storage: storage, name: "the database")
    }

    /// Migrates `storage` (named `name` in errors) and serves from it.
    /// - Throws: ``ServerError/startFailed(_:)``.
    init(storage: any ServerStorage, name: String) throws {
        self.storage = storage
        do {
            try storage.migrate(Self.migrator.migrations)
        } catch let error as ServerError {
            storage.close()
            throw error
        } catch {
            storage.close()
            throw ServerError.startFailed("the database \(name) cannot be opened (\(error))")
        }
    }

    static var migrator: StorageMigrator {
        var migrator = StorageMigrator()
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
        WindowCounter.registerMigration(&migrator)
        return migrator
    }

    /// Runs a write transaction; GRDB and SQLite errors become ``ServerError/storage(_:)``.
    func write<T>(_ body: (any StorageConnection) throws -> T) throws -> T {
        try Self.typedErrors { try storage.write(body) }
    }

    /// Runs a read; GRDB and SQLite errors become ``ServerError/storage(_:)``.
    func read<T>(_ body: (any StorageConnection) throws -> T) throws -> T {
        try Self.typedErrors { try storage.read(body) }
    }

    /// Runs single self-atomic statements outside the processes' write lock (``ServerStorage/autocommit(_:)``).
    func autocommit<T>(_ body: (any StorageConnection) throws -> T) throws -> T {
        try Self.typedErrors { try storage.autocommit(body) }
    }

    /// Passes typed errors and a lost connection (``StorageError/connectionLost(_:)``, retryable)
    /// through and turns anything else into ``ServerError/storage(_:)`` (the engine's error code
    /// or the error's type, never its text: it may quote a query).
    static func typedErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as any RampartError {
            throw error
        } catch StorageError.connectionLost(let why) {
            // Answered 503 with Retry-After (APIErrorMiddleware): the client sends it again.
            throw StorageError.connectionLost(why)
        } catch let error as StorageError {
            throw ServerError.storage(error.description)
        } catch {
            throw ServerError.storage("\(type(of: error))")
        }
    }

    /// Appends an event (inside the caller's transaction).
    static func appendEvent(_ db: any StorageConnection, userID: String, kind: APIEvent.Kind, action: APIEvent.Action, objectID: String) throws {
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

/// The server's migrations in order, each with the identifier it is recorded under.
struct StorageMigrator {
    private(set) var migrations: [StorageMigration] = []

    /// Adds migration `identifier`.
    mutating func registerMigration(_ identifier: String, _ body: @escaping @Sendable (any StorageConnection) throws -> Void) {
        migrations.append(StorageMigration(identifier, body))
    }
}
