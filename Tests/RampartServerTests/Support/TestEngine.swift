import Foundation
import RampartServer
import RampartServerPostgres
import RampartTestSupport
import Testing

/// The storage engines the server tests run on: SQLite always; PostgreSQL when
/// `RAMPART_POSTGRES_URL` names one (`source scripts/services/postgres.sh`; scripts/test.sh does),
/// and always in CI, where a missing server fails the tests instead of skipping them.
enum TestEngine: String, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgresql

    var testDescription: String { rawValue }

    static var postgresURL: String? { ProcessInfo.processInfo.environment["RAMPART_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 } }

    static var allUnderTest: [TestEngine] {
        postgresURL != nil || ProcessInfo.processInfo.environment["CI"] != nil ? [.sqlite, .postgresql] : [.sqlite]
    }

    /// The engine the whole-server suites run on: `RAMPART_SERVER_ENGINE` (`sqlite`, the default,
    /// or `postgresql`); scripts/test.sh runs RampartServerTests once with each.
    static var current: TestEngine {
        TestEngine(rawValue: ProcessInfo.processInfo.environment["RAMPART_SERVER_ENGINE"] ?? "") ?? .sqlite
    }

    /// The base URL, or a recorded failure.
    static func requiredPostgresURL() throws -> PostgresURL {
        guard let text = postgresURL else {
            throw TestEngineError.noPostgres
        }
        return try PostgresURL(text)
    }

    /// A fresh, empty storage of this engine for `body`; dropped afterwards.
    func withStorage(_ body: (any ServerStorage) throws -> Void) throws {
        switch self {
        case .sqlite:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-storage-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let storage = try SQLiteStorage(url: folder.appendingPathComponent("test.sqlite"))
            defer { storage.close() }
            try body(storage)
        case .postgresql:
            let base = try Self.requiredPostgresURL()
            let name = Self.databaseName(for: UUID().uuidString)
            let storage = try PostgresStorage(url: try PostgresAdmin.createDatabase(name, on: base))
            defer {
                storage.close()
                try? PostgresAdmin.dropDatabase(name, on: base)
            }
            try body(storage)
        }
    }

    /// ``withStorage(_:)`` on a thread of its own: the engines wait for their database on the
    /// caller's thread, which must not be one of the cooperative pool's (two on two cores).
    func withStorageOffThePool(_ body: @escaping @Sendable (any ServerStorage) throws -> Void) async throws {
        let engine = self
        try await onThreadOfItsOwn(named: "storage-test") { try engine.withStorage(body) }
    }

    /// The database of a test server's data folder (one per folder: a restarted server finds its data).
    static func databaseName(for key: String) -> String {
        "rampart_t_" + String(key.unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) }.map(Character.init)).lowercased().suffix(40)
    }

    /// What `EmbeddedServerConfiguration.storage` gets for a server of `folder` on this engine.
    func opener(folder: URL) throws -> (@Sendable (URL) throws -> any ServerStorage)? {
        guard self == .postgresql else { return nil }
        let url = try PostgresAdmin.createDatabase(Self.databaseName(for: folder.lastPathComponent), on: try Self.requiredPostgresURL())
        return { _ in try PostgresStorage(url: url) }
    }

    /// The libpq URL (with its password) of the database of `folder`, for psql.
    static func databaseURL(folder: URL) throws -> String {
        let base = try requiredPostgresURL().with(database: databaseName(for: folder.lastPathComponent))
        guard let text = postgresURL, let range = text.range(of: #"@/[A-Za-z0-9_]*\?"#, options: .regularExpression) else {
            throw TestEngineError.noPostgres
        }
        return text.replacingCharacters(in: range, with: "@/\(base.database)?")
    }

    /// Drops the database of `folder` (PostgreSQL).
    func dropDatabase(folder: URL) {
        guard self == .postgresql, let base = try? Self.requiredPostgresURL() else { return }
        try? PostgresAdmin.dropDatabase(Self.databaseName(for: folder.lastPathComponent), on: base)
    }
}

enum TestEngineError: Error, CustomStringConvertible {
    case noPostgres
    var description: String {
        "RAMPART_POSTGRES_URL is not set: start PostgreSQL with `source scripts/services/postgres.sh` (scripts/test.sh does)"
    }
}
