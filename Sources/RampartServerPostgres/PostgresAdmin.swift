import Foundation
import RampartServer

/// Creating and dropping databases on a PostgreSQL server (tests, benchmarks, an operator's first
/// start): through the URL's user, who needs the CREATEDB right.
public enum PostgresAdmin {
    /// Creates database `name` (letters, digits and `_` only) on the server of `url` unless it
    /// exists; returns the URL of the new database.
    /// - Throws: ``PostgresStorageError/invalidURL(_:)`` for another name, `StorageError`.
    @discardableResult
    public static func createDatabase(_ name: String, on url: PostgresURL) throws -> PostgresURL {
        try checked(name)
        let admin = try PostgresStorage(url: url.with(database: "postgres"), maximumConnections: 1)
        defer { admin.close() }
        try admin.withSession { db in
            if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = ?)", arguments: [name]) != true {
                try db.execute(sql: "CREATE DATABASE \(name)")
            }
        }
        return url.with(database: name)
    }

    /// Drops database `name` on the server of `url` (its connections are ended first).
    /// - Throws: ``PostgresStorageError/invalidURL(_:)`` for another name, `StorageError`.
    public static func dropDatabase(_ name: String, on url: PostgresURL) throws {
        try checked(name)
        let admin = try PostgresStorage(url: url.with(database: "postgres"), maximumConnections: 1)
        defer { admin.close() }
        try admin.withSession { db in
            try db.execute(sql: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        }
    }

    private static func checked(_ name: String) throws {
        guard !name.isEmpty, name.count <= 63, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }),
              !(name.first?.isNumber ?? true) else {
            throw PostgresStorageError.invalidURL("the database name \(name.prefix(80)) is not letters, digits and _")
        }
    }
}
