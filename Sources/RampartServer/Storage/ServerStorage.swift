import Foundation

/// The seam between the server and its database engine: SQLite (``SQLiteStorage``, the embedded
/// default) or PostgreSQL (the `RampartServerPostgres` module).
///
/// The server writes its SQL once, in the SQLite dialect with `?` placeholders; an engine renders
/// it for its own database (``SQLDialect``). Every change runs in one transaction
/// (``write(_:)``): the body's statements commit together or not at all, and a body that throws
/// rolls back. Reads see one consistent snapshot.
///
/// Trust-model row **database (critical)**: what is written through this seam is what the
/// server keeps — ciphertext, verifiers, public keys and token hashes — whichever engine holds it.
public protocol ServerStorage: Sendable {
    /// The SQL dialect the engine's connections speak.
    var dialect: SQLDialect { get }
    /// Runs `body` in one write transaction and commits it; a throwing body rolls it back.
    /// - Throws: what `body` throws, or a ``StorageError``.
    func write<T>(_ body: (any StorageConnection) throws -> T) throws -> T
    /// Runs `body` on one consistent snapshot of the database.
    /// - Throws: what `body` throws, or a ``StorageError``.
    func read<T>(_ body: (any StorageConnection) throws -> T) throws -> T
    /// Runs `body`, whose statements each commit by themselves, without the lock that serializes
    /// write transactions across processes: only for single statements that are atomic on their
    /// own (a counter's `INSERT … ON CONFLICT DO UPDATE … WHERE`, a `DELETE … RETURNING`), so a
    /// hot counter does not queue behind every other write. SQLite runs `body` as one write
    /// transaction (its writes are serialized anyway).
    /// - Throws: what `body` throws, or a ``StorageError``.
    func autocommit<T>(_ body: (any StorageConnection) throws -> T) throws -> T
    /// Applies, in order, each migration this database has not applied yet (by its identifier),
    /// each in its own transaction.
    /// - Throws: what a migration throws, or a ``StorageError``.
    func migrate(_ migrations: [StorageMigration]) throws
    /// Closes the connections; later calls fail with ``StorageError/connectionLost(_:)``.
    func close()
}

/// Opens a server's storage for its data folder: what `EmbeddedServerConfiguration.storage` and the
/// offline tools (`createInvitation`, `AccountAdministration`, mail delivery) take; `nil` is SQLite
/// in `<data>/backend.sqlite`.
public typealias ServerStorageOpener = @Sendable (_ dataDirectory: URL) throws -> any ServerStorage

/// One connection inside a transaction of ``ServerStorage``: statements and queries.
public protocol StorageConnection: AnyObject {
    /// The dialect the SQL is rendered to.
    var dialect: SQLDialect { get }
    /// Runs a statement; returns the number of rows it changed.
    /// - Throws: ``StorageError``: ``StorageError/uniqueViolation(_:)`` for a duplicate key.
    @discardableResult
    func execute(sql: String, arguments: StorageArguments) throws -> Int
    /// Runs a query and returns all its rows.
    /// - Throws: ``StorageError``.
    func fetchAll(sql: String, arguments: StorageArguments) throws -> [StorageRow]
    /// The rows changed by the last ``execute(sql:arguments:)``.
    var changesCount: Int { get }
    /// Whether a table of that name exists.
    /// - Throws: ``StorageError``.
    func tableExists(_ name: String) throws -> Bool
}

extension StorageConnection {
    /// Runs a statement without arguments; returns the number of rows it changed.
    /// - Throws: ``StorageError``.
    @discardableResult
    public func execute(sql: String) throws -> Int { try execute(sql: sql, arguments: []) }
}

/// A schema change, identified as it is recorded in the database (the SQLite engine keeps GRDB's
/// `grdb_migrations` table, so existing data folders keep their history).
public struct StorageMigration: Sendable {
    /// The identifier recorded once the migration has run.
    public let identifier: String
    /// The change, run in its own transaction.
    public let body: @Sendable (any StorageConnection) throws -> Void

    /// A migration `identifier` that runs `body`.
    public init(_ identifier: String, _ body: @escaping @Sendable (any StorageConnection) throws -> Void) {
        self.identifier = identifier
        self.body = body
    }
}

/// A failure of the storage engine, as the server's code can act on it.
public enum StorageError: Error, Equatable, CustomStringConvertible {
    /// A row with the same unique key (or primary key) exists; the statement changed nothing.
    case uniqueViolation(String)
    /// The connection to the database broke (the server restarted, the network dropped): the
    /// transaction was rolled back, nothing of it was written, and the request can be retried.
    case connectionLost(String)
    /// Any other failure of the engine: its error code, never a query's text or values.
    case failed(String)

    public var description: String {
        switch self {
        case .uniqueViolation(let what): "unique constraint violated (\(what))"
        case .connectionLost(let why): "the database connection was lost (\(why))"
        case .failed(let why): why
        }
    }
}
