import Foundation
import RampartServer

/// Which database `rampart server start` uses: `--database URL`, else the `database` key of the
/// data folder's `config.json`, else SQLite in `<data>/backend.sqlite` (the embedded default).
///
/// Trust-model row **server database (critical)**: a URL may carry a password; it is shown only
/// as ``PostgresURL/redacted``, and a `config.json` holding one must be readable by its owner
/// only (0600), as the data folder's keys are.
public enum ServerDatabase {
    /// The data folder's settings file that may name the database.
    public static let configFileName = "config.json"

    /// The storage opener for `EmbeddedServerConfiguration.storage` and the database as it may be
    /// shown, or nil for SQLite.
    /// - Throws: ``PostgresStorageError/invalidURL(_:)`` for a URL this engine cannot use or a
    ///   `config.json` that others can read.
    public static func choose(argument: String?, dataDirectory: URL) throws
        -> (open: @Sendable (URL) throws -> any ServerStorage, shown: String)? {
        guard let text = try argument ?? configured(in: dataDirectory), text != "sqlite" else { return nil }
        let url = try PostgresURL(text)
        return ({ _ in try PostgresStorage(url: url) }, url.redacted)
    }

    /// The `database` key of `<data>/config.json`, if any.
    static func configured(in dataDirectory: URL) throws -> String? {
        let file = dataDirectory.appendingPathComponent(configFileName)
        guard let data = FileManager.default.contents(atPath: file.path) else { return nil }
        struct Config: Decodable { var database: String? }
        guard let config = try? JSONDecoder().decode(Config.self, from: data) else {
            throw PostgresStorageError.invalidURL("\(file.path) is not JSON of the form {\"database\": \"postgresql://…\"}")
        }
        if let database = config.database, database.contains("@"),
           let mode = (try? FileManager.default.attributesOfItem(atPath: file.path))?[.posixPermissions] as? Int, mode & 0o077 != 0 {
            throw PostgresStorageError.invalidURL("\(file.path) may hold a password and others can read it: chmod 600 it")
        }
        return config.database
    }
}
