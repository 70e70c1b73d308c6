import Foundation
import GRDB
#if canImport(Glibc)
import Glibc
#endif

/// The embedded engine: one SQLite file through GRDB (a `DatabasePool` in WAL mode, one writer,
/// readers on snapshots). The only file of the server that sees GRDB.
///
/// Trust-model row **database (critical)**: deleted rows (a deleted message, an ended session's
/// token hashes) are overwritten (`PRAGMA secure_delete`), not left in free pages, and the file
/// and its `-wal`/`-shm` companions are created 0600.
public final class SQLiteStorage: ServerStorage {
    let pool: DatabasePool

    /// Opens (creating 0600) the database at `url`.
    /// - Throws: ``StorageError/failed(_:)`` naming the SQLite result code.
    public init(url: URL) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.label = "rampart.server"
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA secure_delete = ON") }
        // Created 0600 before SQLite opens it: SQLite gives the -wal and -shm files the mode of
        // the database file.
        if !FileManager.default.fileExists(atPath: url.path) {
            let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd >= 0 { Glibc.close(fd) }
        }
        _ = chmod(url.path, 0o600)
        pool = try Self.translated { try DatabasePool(path: url.path, configuration: configuration) }
    }

    public var dialect: SQLDialect { .sqlite }

    public func write<T>(_ body: (any StorageConnection) throws -> T) throws -> T {
        try Self.translated { try pool.write { db in try body(SQLiteConnection(db)) } }
    }

    public func read<T>(_ body: (any StorageConnection) throws -> T) throws -> T {
        try Self.translated { try pool.read { db in try body(SQLiteConnection(db)) } }
    }

    public func autocommit<T>(_ body: (any StorageConnection) throws -> T) throws -> T {
        try write(body)
    }

    public func migrate(_ migrations: [StorageMigration]) throws {
        var migrator = DatabaseMigrator()
        for migration in migrations {
            migrator.registerMigration(migration.identifier) { db in try migration.body(SQLiteConnection(db)) }
        }
        try Self.translated { try migrator.migrate(pool) }
    }

    public func close() {
        try? pool.close()
    }

    /// GRDB's errors as ``StorageError`` (the SQLite result code, never the error's text: it may
    /// quote a query); every other error passes through.
    static func translated<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DatabaseError {
            if error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE || error.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY {
                throw StorageError.uniqueViolation("SQLite error \(error.extendedResultCode.rawValue)")
            }
            throw StorageError.failed("SQLite error \(error.resultCode.rawValue)")
        }
    }
}

/// A GRDB `Database` behind ``StorageConnection``, for the time of one transaction.
final class SQLiteConnection: StorageConnection {
    let db: Database

    init(_ db: Database) { self.db = db }

    var dialect: SQLDialect { .sqlite }

    @discardableResult
    func execute(sql: String, arguments: StorageArguments) throws -> Int {
        try SQLiteStorage.translated {
            try db.execute(sql: sql, arguments: Self.arguments(arguments))
            return db.changesCount
        }
    }

    func fetchAll(sql: String, arguments: StorageArguments) throws -> [StorageRow] {
        try SQLiteStorage.translated {
            try Row.fetchAll(db, sql: sql, arguments: Self.arguments(arguments)).map { row in
                StorageRow(columns: Array(row.columnNames), values: row.databaseValues.map(Self.value))
            }
        }
    }

    var changesCount: Int { db.changesCount }

    func tableExists(_ name: String) throws -> Bool {
        try SQLiteStorage.translated { try db.tableExists(name) }
    }

    static func arguments(_ arguments: StorageArguments) -> StatementArguments {
        StatementArguments(arguments.values.map { value -> (any DatabaseValueConvertible)? in
            switch value {
            case .null: nil
            case .integer(let integer): integer
            case .real(let real): real
            case .text(let text): text
            case .blob(let data): data
            }
        })
    }

    static func value(_ value: DatabaseValue) -> StorageValue {
        switch value.storage {
        case .null: .null
        case .int64(let integer): .integer(integer)
        case .double(let real): .real(real)
        case .string(let text): .text(text)
        case .blob(let data): .blob(data)
        }
    }
}
