import Crypto
import Foundation
import GRDB
import RampartCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One row of the attachment index, with its sealed metadata still sealed.
struct AttachmentRow: Sendable {
    /// HMAC-SHA256 of the attachment id under a MainKey sub-key (hex): finds a row without
    /// storing the id in clear.
    var lookup: String
    /// AES-GCM seal of ``AttachmentMetadata`` (AD = table | column | lookup | user).
    var sealedMetadata: Data
    /// Random name of the sealed blob in the attachments folder.
    var blobName: String
    /// Size of the sealed blob in bytes (visible on disk anyway).
    var storedBytes: Int64
    var storedAt: Date
    var lastUsedAt: Date
}

/// The cleartext metadata of a cached attachment, only ever stored sealed.
struct AttachmentMetadata: Codable, Sendable {
    var attachmentID: String
    var fileName: String
    var mimeType: String
}

/// The attachment index: a small GRDB database in the vault folder (0600), every sensitive
/// column sealed. Timestamps and sizes stay in clear: expiry and least-recently-used eviction
/// query them, and a blob's size and times are visible from the file system anyway.
final class AttachmentIndex: @unchecked Sendable {
    private let queue: DatabaseQueue
    let path: URL

    init(path: URL) throws {
        self.path = path
        if !VaultDisk.exists(path) {
            let fd = open(path.path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw FileVaultError.fromWrite(errno: errno, path: path.path, operation: "open") }
            close(fd)
        }
        do {
            var configuration = Configuration()
            configuration.label = "rampart.filevault.attachments"
            configuration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA secure_delete = ON")
            }
            queue = try DatabaseQueue(path: path.path, configuration: configuration)
            var migrator = DatabaseMigrator()
            migrator.registerMigration("v1") { db in
                try db.execute(sql: """
                    CREATE TABLE attachment (
                        lookup TEXT PRIMARY KEY NOT NULL,
                        sealedMetadata BLOB NOT NULL,
                        blobName TEXT NOT NULL UNIQUE,
                        storedBytes INTEGER NOT NULL,
                        storedAt REAL NOT NULL,
                        lastUsedAt REAL NOT NULL
                    );
                    CREATE INDEX attachment_lastUsedAt ON attachment(lastUsedAt);
                    """)
            }
            try migrator.migrate(queue)
        } catch {
            throw Self.typed(error)
        }
        PrivateFiles.markExcludedFromBackup(path)
    }

    static func typed(_ error: any Error) -> FileVaultError {
        if let vault = error as? FileVaultError { return vault }
        if let db = error as? DatabaseError, db.resultCode == .SQLITE_FULL {
            return .diskFull(path: "attachment index")
        }
        return .index(message: String(describing: error))
    }

    private func run<R>(_ body: (Database) throws -> R) throws -> R {
        do { return try queue.write(body) } catch { throw Self.typed(error) }
    }

    func row(lookup: String) throws -> AttachmentRow? {
        try run { db in
            try Row.fetchOne(db, sql: "SELECT * FROM attachment WHERE lookup = ?", arguments: [lookup]).map(Self.decode)
        }
    }

    /// Inserts or replaces a row; returns the blob name of the row it replaced, if any.
    func upsert(_ row: AttachmentRow) throws -> String? {
        try run { db in
            let previous = try String.fetchOne(db, sql: "SELECT blobName FROM attachment WHERE lookup = ?", arguments: [row.lookup])
            try db.execute(sql: """
                INSERT OR REPLACE INTO attachment (lookup, sealedMetadata, blobName, storedBytes, storedAt, lastUsedAt)
                VALUES (?, ?, ?, ?, ?, ?)
                """, arguments: [row.lookup, row.sealedMetadata, row.blobName, row.storedBytes,
                                 row.storedAt.timeIntervalSince1970, row.lastUsedAt.timeIntervalSince1970])
            return previous
        }
    }

    func touch(lookup: String, at date: Date) throws {
        try run { db in
            try db.execute(sql: "UPDATE attachment SET lastUsedAt = ? WHERE lookup = ?",
                           arguments: [date.timeIntervalSince1970, lookup])
        }
    }

    func delete(lookup: String) throws {
        try run { db in try db.execute(sql: "DELETE FROM attachment WHERE lookup = ?", arguments: [lookup]) }
    }

    func all() throws -> [AttachmentRow] {
        try run { db in
            try Row.fetchAll(db, sql: "SELECT * FROM attachment ORDER BY lastUsedAt ASC").map(Self.decode)
        }
    }

    func totalBytes() throws -> Int64 {
        try run { db in try Int64.fetchOne(db, sql: "SELECT COALESCE(SUM(storedBytes), 0) FROM attachment") ?? 0 }
    }

    func deleteAll() throws {
        try run { db in try db.execute(sql: "DELETE FROM attachment") }
    }

    private static func decode(_ row: Row) -> AttachmentRow {
        AttachmentRow(lookup: row["lookup"], sealedMetadata: row["sealedMetadata"], blobName: row["blobName"],
                      storedBytes: row["storedBytes"],
                      storedAt: Date(timeIntervalSince1970: row["storedAt"]),
                      lastUsedAt: Date(timeIntervalSince1970: row["lastUsedAt"]))
    }
}
