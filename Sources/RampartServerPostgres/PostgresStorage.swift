import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import RampartServer

/// The server's storage on PostgreSQL (15 or later), through postgres-nio: several server
/// processes on one database.
///
/// The calls are synchronous, as the server's storage code is: each statement is sent on
/// postgres-nio's event loop and the calling thread (one of the server's own `ServerThreads`)
/// waits for its answer, so no thread of Swift's cooperative pool is held and no event loop waits.
///
/// - Connections: a pool of at most ``maximumConnections``, opened on demand; a connection found
///   closed (PostgreSQL restarted, the network dropped) is thrown away and a new one is opened.
///   A transaction that had not sent its first statement is retried once on a fresh connection;
///   one that loses its connection later is rolled back by PostgreSQL and fails with
///   `StorageError.connectionLost`, which the server answers 503 with `Retry-After`.
/// - Writes: `READ COMMITTED`, and every write transaction first takes one transaction-level
///   advisory lock (`pg_advisory_xact_lock`), so writes are serialized across all processes as
///   SQLite serializes them within one: a read-then-write (a free id, an unused invitation, a
///   single-use SRP session) sees no other process's change between its read and its write.
/// - Reads: `REPEATABLE READ READ ONLY`, one snapshot per read, as SQLite's WAL readers have.
/// - SQL: the server's SQLite-dialect statements rendered by `SQLDialect.postgresql`.
///
/// Trust-model row **server database (critical)**: the same rows as on SQLite — ciphertext,
/// verifiers, public keys and token hashes. A deleted row stays in its page until VACUUM
/// (autovacuum) reclaims the space, and in the write-ahead log and backups until those are
/// recycled; PostgreSQL has no `secure_delete`. What a deleted row held is ciphertext or a hash,
/// as on SQLite. The URL's password is never logged (``PostgresURL/redacted``); postgres-nio's
/// own log (which can carry statements) is switched off.
public final class PostgresStorage: ServerStorage, @unchecked Sendable {
    /// The most connections this process opens.
    public let maximumConnections: Int
    /// The database, as logs may show it.
    public let url: PostgresURL
    private let configuration: PostgresConnection.Configuration
    private let logger = Logger(label: "rampart.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
    private let group: any EventLoopGroup
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    private var opened = 0
    private var closed = false
    private var nextID = 0
    private let renderings = RenderCache()
    /// The advisory lock every write transaction takes ("RAMPART" in ASCII).
    static let writeLock: Int64 = 0x52414D50415254

    /// Connects to `url` (one connection is opened at once, so a wrong address or password fails
    /// here, at start).
    /// - Throws: ``PostgresStorageError/invalidURL(_:)``, `StorageError`.
    public init(url: PostgresURL, maximumConnections: Int = 8) throws {
        self.url = url
        self.maximumConnections = max(1, maximumConnections)
        self.configuration = try url.configuration()
        self.group = MultiThreadedEventLoopGroup.singleton
        let first = try checkout()
        checkin(first)
    }

    deinit {
        // A server stopped without close(): its idle connections are closed, each kept alive by
        // its own close's callback until the close is done.
        for connection in idle where !connection.isClosed {
            connection.close().whenComplete { _ in _ = connection }
        }
    }

    public var dialect: SQLDialect { .postgresql }

    public func write<T>(_ body: (any StorageConnection) throws -> T) throws -> T {
        try transaction(begin: ["BEGIN ISOLATION LEVEL READ COMMITTED", "SELECT pg_advisory_xact_lock(\(Self.writeLock))"], body)
    }

    public func read<T>(_ body: (any StorageConnection) throws -> T) throws -> T {
        try transaction(begin: ["BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"], body)
    }

    /// No transaction and no advisory lock: each statement commits by itself (the counters'
    /// upserts and the single-use SRP logins' `DELETE … RETURNING`, atomic on their own).
    public func autocommit<T>(_ body: (any StorageConnection) throws -> T) throws -> T {
        try transaction(begin: [], body)
    }

    public func migrate(_ migrations: [StorageMigration]) throws {
        try write { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS rampart_migrations (identifier TEXT PRIMARY KEY NOT NULL)")
            let applied = Set(try String.fetchAll(db, sql: "SELECT identifier FROM rampart_migrations"))
            for migration in migrations where !applied.contains(migration.identifier) {
                try migration.body(db)
                try db.execute(sql: "INSERT INTO rampart_migrations (identifier) VALUES (?)", arguments: [migration.identifier])
            }
        }
    }

    public func close() {
        condition.lock()
        closed = true
        let connections = idle
        idle = []
        opened -= connections.count
        condition.broadcast()
        condition.unlock()
        for connection in connections { try? connection.close().wait() }
    }

    /// Runs `body` on a pooled connection outside any transaction (each statement commits by
    /// itself): for what PostgreSQL runs only so, as `CREATE DATABASE`.
    /// - Throws: what `body` throws, or a `StorageError`.
    public func withSession<T>(_ body: (any StorageConnection) throws -> T) throws -> T {
        try transaction(begin: [], body)
    }

    /// Runs `body` in a transaction opened by `begin` (none: no transaction), on a pooled connection.
    private func transaction<T>(begin: [String], _ body: (any StorageConnection) throws -> T) throws -> T {
        var attempt = 0
        while true {
            attempt += 1
            let connection = try checkout()
            let transaction = PostgresTransaction(connection: connection, logger: logger, renderings: renderings)
            do {
                for statement in begin { _ = try transaction.run(statement, []) }
            } catch StorageError.connectionLost(let why) {
                // Nothing of this transaction reached the database: a fresh connection can run it.
                discard(connection)
                if attempt < 2 { continue }
                throw StorageError.connectionLost(why)
            } catch {
                finish(connection, after: error)
                throw error
            }
            let result: T
            do {
                result = try body(transaction)
                if !begin.isEmpty { _ = try transaction.run("COMMIT", []) }
            } catch {
                if !begin.isEmpty && !connection.isClosed { _ = try? transaction.run("ROLLBACK", []) }
                finish(connection, after: error)
                throw error
            }
            checkin(connection)
            return result
        }
    }

    /// How long a statement's answer is waited for before its connection is given up.
    static let answerTimeout: TimeInterval = 60

    /// Waits (on the caller's thread, never an event loop) for `future`; a timeout closes
    /// `connection` and is a lost connection.
    static func waitForAnswer<T: Sendable>(_ future: EventLoopFuture<T>, on connection: PostgresConnection?) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox<T>()
        future.whenComplete { result in
            box.set(result)
            done.signal()
        }
        guard done.wait(timeout: .now() + answerTimeout) == .success, let result = box.get() else {
            connection?.close().whenComplete { _ in _ = connection }
            throw StorageError.connectionLost("no answer from the database in \(Int(answerTimeout)) s")
        }
        do { return try result.get() } catch { throw PostgresErrors.translated(error) }
    }

    private func finish(_ connection: PostgresConnection, after error: any Error) {
        if connection.isClosed || (error as? StorageError).map({ if case .connectionLost = $0 { true } else { false } }) == true {
            discard(connection)
        } else {
            checkin(connection)
        }
    }

    /// An open connection: an idle one, a new one, or the next one freed (for up to 10 s).
    private func checkout() throws -> PostgresConnection {
        let deadline = Date().addingTimeInterval(10)
        condition.lock()
        while true {
            if closed {
                condition.unlock()
                throw StorageError.connectionLost("the storage is closed")
            }
            while let connection = idle.popLast() {
                if !connection.isClosed {
                    condition.unlock()
                    return connection
                }
                opened -= 1
            }
            if opened < maximumConnections {
                opened += 1
                nextID += 1
                let id = nextID
                condition.unlock()
                do {
                    return try Self.waitForAnswer(PostgresConnection.connect(on: group.next(), configuration: configuration, id: id, logger: logger),
                                                  on: nil)
                } catch {
                    condition.lock()
                    opened -= 1
                    condition.signal()
                    condition.unlock()
                    throw PostgresErrors.translated(error)
                }
            }
            guard condition.wait(until: deadline) else {
                condition.unlock()
                throw StorageError.connectionLost("all \(maximumConnections) database connections stayed busy for 10 s")
            }
        }
    }

    private func checkin(_ connection: PostgresConnection) {
        condition.lock()
        if closed || connection.isClosed {
            opened -= 1
            condition.signal()
            condition.unlock()
            if !connection.isClosed { try? connection.close().wait() }
            return
        }
        idle.append(connection)
        condition.signal()
        condition.unlock()
    }

    private func discard(_ connection: PostgresConnection) {
        condition.lock()
        opened -= 1
        condition.signal()
        condition.unlock()
        if !connection.isClosed { _ = try? connection.close().wait() }
    }
}

/// The server's SQL rendered once per distinct statement.
final class RenderCache: @unchecked Sendable {
    private let lock = NSLock()
    private var statements: [String: [String]] = [:]

    func statements(_ sql: String, single: Bool) -> [String] {
        lock.lock()
        defer { lock.unlock() }
        if let cached = statements[sql] { return cached }
        let rendered = single ? [SQLDialect.postgresql.render(sql)] : SQLDialect.postgresql.statements(sql)
        if statements.count < 4096 { statements[sql] = rendered }
        return rendered
    }
}

/// One connection inside one transaction.
final class PostgresTransaction: StorageConnection {
    let connection: PostgresConnection
    let logger: Logger
    let renderings: RenderCache
    private(set) var changesCount = 0

    init(connection: PostgresConnection, logger: Logger, renderings: RenderCache) {
        self.connection = connection
        self.logger = logger
        self.renderings = renderings
    }

    var dialect: SQLDialect { .postgresql }

    @discardableResult
    func execute(sql: String, arguments: StorageArguments) throws -> Int {
        var changed = 0
        for statement in renderings.statements(sql, single: !arguments.values.isEmpty) {
            changed = try run(statement, arguments.values).metadata.rows ?? 0
        }
        changesCount = changed
        return changed
    }

    func fetchAll(sql: String, arguments: StorageArguments) throws -> [StorageRow] {
        let result = try run(renderings.statements(sql, single: true)[0], arguments.values)
        return try result.rows.map(PostgresValues.row)
    }

    func tableExists(_ name: String) throws -> Bool {
        try Bool.fetchOne(self, sql: "SELECT to_regclass(?) IS NOT NULL", arguments: [name]) ?? false
    }

    /// Sends one rendered statement and waits for its answer (at most ``PostgresStorage/answerTimeout``:
    /// a connection that went away without failing the query is closed and reported lost).
    func run(_ sql: String, _ values: [StorageValue]) throws -> PostgresQueryResult {
        guard !connection.isClosed else { throw StorageError.connectionLost("the connection is closed") }
        var binds = PostgresBindings(capacity: values.count)
        for value in values { PostgresValues.bind(value, to: &binds) }
        return try PostgresStorage.waitForAnswer(connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger),
                                                 on: connection)
    }
}

enum PostgresValues {
    static func bind(_ value: StorageValue, to binds: inout PostgresBindings) {
        switch value {
        case .null: binds.appendNull()
        case .integer(let integer): binds.append(integer)
        case .real(let real): binds.append(real)
        case .text(let text): binds.append(text)
        case .blob(let data): binds.append(ByteBuffer(bytes: data))
        }
    }

    static func row(_ row: PostgresRow) throws -> StorageRow {
        var columns: [String] = []
        var values: [StorageValue] = []
        for cell in row {
            columns.append(cell.columnName)
            values.append(try value(cell))
        }
        return StorageRow(columns: columns, values: values)
    }

    static func value(_ cell: PostgresCell) throws -> StorageValue {
        guard cell.bytes != nil else { return .null }
        do {
            switch cell.dataType {
            case .int2: return .integer(Int64(try cell.decode(Int16.self)))
            case .int4: return .integer(Int64(try cell.decode(Int32.self)))
            case .int8: return .integer(try cell.decode(Int64.self))
            case .bool: return .integer(try cell.decode(Bool.self) ? 1 : 0)
            case .float4, .float8: return .real(try cell.decode(Double.self))
            case .numeric:
                let decimal = try cell.decode(Decimal.self)
                let number = NSDecimalNumber(decimal: decimal)
                return decimal == number.int64Value.decimal ? .integer(number.int64Value) : .real(number.doubleValue)
            case .bytea:
                var buffer = try cell.decode(ByteBuffer.self)
                return .blob(Data(buffer.readBytes(length: buffer.readableBytes) ?? []))
            default: return .text(try cell.decode(String.self))
            }
        } catch {
            throw StorageError.failed("a PostgreSQL value of type \(cell.dataType) cannot be read")
        }
    }
}

private extension Int64 {
    var decimal: Decimal { Decimal(self) }
}

enum PostgresErrors {
    /// postgres-nio's and NIO's errors as `StorageError`: the SQLSTATE or the error's kind,
    /// never its text (it may quote a statement or a value).
    static func translated(_ error: any Error) -> any Error {
        if error is StorageError { return error }
        if let error = error as? PSQLError {
            switch error.code {
            case .server:
                let state = error.serverInfo?[.sqlState] ?? "?"
                if state == "23505" { return StorageError.uniqueViolation("PostgreSQL \(state)") }
                // 08: connection exception; 57P01-03: shutting down, crash recovery, starting up;
                // 40001/40P01: serialization failure, deadlock (nothing was written: retry).
                if state.hasPrefix("08") || ["57P01", "57P02", "57P03", "40001", "40P01"].contains(state) {
                    return StorageError.connectionLost("PostgreSQL \(state)")
                }
                return StorageError.failed("PostgreSQL error \(state)")
            case .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown, .poolClosed:
                return StorageError.connectionLost("\(error.code)")
            default:
                return StorageError.failed("PostgreSQL \(error.code)")
            }
        }
        if error is ChannelError || error is IOError || error is NIOConnectionError {
            return StorageError.connectionLost("\(type(of: error))")
        }
        return StorageError.failed("\(type(of: error))")
    }
}

/// One result handed from an event loop to the waiting thread.
final class ResultBox<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<T, any Error>?
    func set(_ value: Result<T, any Error>) { lock.withLock { result = value } }
    func get() -> Result<T, any Error>? { lock.withLock { result } }
}
