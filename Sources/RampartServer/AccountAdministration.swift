import Foundation
import RampartAPI
import RampartCore

extension Accounts {
    /// Erases every row of an account inside the caller's transaction: its messages with their
    /// labels, attachments and originals, its events, labels, addresses, sessions and push
    /// subscriptions, drive volume, nodes, revisions and blocks, its SRP verifier, recovery copy
    /// and reset tokens, its user row (public key, locked key); the invitation it used keeps no
    /// link to it. The server keeps no blob outside the database (attachments, originals and
    /// drive blocks are rows; `secure_delete` overwrites freed pages).
    ///
    /// Trust-model rows **database (critical)** and **username (critical)**: after a deletion
    /// nothing of the account is left on the server to tie it to a person.
    /// - Parameter now: the time of the key-list change (the key log's leaf), Unix seconds.
    static func erase(_ db: any StorageConnection, userID: String, now: Int64) throws {
        try KeyList.apply(db, .erased(userID: userID), now: now)
        let statements = [
            "DELETE FROM messageOriginals WHERE userId = ?1 OR messageId IN (SELECT id FROM messages WHERE userId = ?1)",
            "DELETE FROM attachments WHERE userId = ?1 OR messageId IN (SELECT id FROM messages WHERE userId = ?1)",
            "DELETE FROM messageLabels WHERE messageId IN (SELECT id FROM messages WHERE userId = ?1)",
            "DELETE FROM messages WHERE userId = ?1",
            "DELETE FROM events WHERE userId = ?1",
            "DELETE FROM labels WHERE userId = ?1",
            "DELETE FROM pushSubscriptions WHERE userId = ?1",
            "DELETE FROM sessions WHERE userId = ?1",
            "DELETE FROM driveRevisions WHERE nodeId IN (SELECT id FROM driveNodes WHERE userId = ?1)",
            "DELETE FROM driveNodes WHERE userId = ?1",
            "DELETE FROM driveBlocks WHERE userId = ?1",
            "DELETE FROM driveVolumes WHERE userId = ?1",
            "DELETE FROM addresses WHERE userId = ?1",
            "DELETE FROM srpVerifiers WHERE userId = ?1",
            "DELETE FROM recoveryCopies WHERE userId = ?1",
            "DELETE FROM passwordResets WHERE userId = ?1",
            "UPDATE invitations SET usedBy = NULL WHERE usedBy = ?1",
            "DELETE FROM users WHERE id = ?1",
        ]
        for sql in statements { try db.execute(sql: sql, arguments: [userID]) }
    }

    /// The `disabled` flag of accounts.
    static func registerAdministrationMigration(_ migrator: inout StorageMigrator) {
        migrator.registerMigration("accounts-admin-v1") { db in
            try db.execute(sql: "ALTER TABLE users ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0")
        }
    }
}

/// One account as the operator sees it (`rampart server users list`): no key, verifier or mail.
public struct AccountSummary: Codable, Sendable, Equatable {
    public var username: String
    public var address: String
    /// Seconds since 1970.
    public var created: Int64
    public var disabled: Bool
    public var sessions: Int
    public var messages: Int
    public var hasRecoveryCopy: Bool
}

/// The operator's commands on accounts (`rampart server users …`), on the database of a data
/// folder (the server may be running).
///
/// Trust-model rows **access token (high)** (disabling deletes the account's sessions, so its
/// tokens stop working at once, and login is refused) and **database (critical)** (deleting
/// erases every row of the account in one transaction, `Accounts.erase`).
public enum AccountAdministration {
    /// Every account, by name.
    public static func list(dataDirectory: URL, storage: ServerStorageOpener? = nil) throws -> [AccountSummary] {
        try EmbeddedServer.openStore(dataDirectory, storage: storage).read { db in
            try StorageRow.fetchAll(db, sql: """
                SELECT username, addresses, created, disabled,
                       (SELECT COUNT(*) FROM sessions WHERE userId = users.id) AS sessions,
                       (SELECT COUNT(*) FROM messages WHERE userId = users.id) AS messages,
                       EXISTS (SELECT 1 FROM recoveryCopies WHERE userId = users.id) AS copy
                FROM users ORDER BY username
                """).map { row in
                let addresses = (try? JSONDecoder().decode([String].self, from: Data((row["addresses"] as String).utf8))) ?? []
                return AccountSummary(username: row["username"], address: addresses.first ?? "", created: row["created"],
                                      disabled: row["disabled"] as Int != 0, sessions: row["sessions"], messages: row["messages"],
                                      hasRecoveryCopy: row["copy"] as Int != 0)
            }
        }
    }

    /// Disables (ending every session at once) or enables an account.
    /// - Returns: how many sessions ended.
    /// - Throws: ``ServerError/notFound(_:)`` for an unknown name.
    @discardableResult
    public static func setDisabled(_ disabled: Bool, username: String, dataDirectory: URL, storage: ServerStorageOpener? = nil) throws -> Int {
        let ended = try EmbeddedServer.openStore(dataDirectory, storage: storage).write { db -> [String] in
            let userID = try Self.userID(db, username)
            try db.execute(sql: "UPDATE users SET disabled = ? WHERE id = ?", arguments: [disabled ? 1 : 0, userID])
            guard disabled else { return [] }
            return try RecoveryRoutes.endSessions(db, userID: userID)
        }
        removeInboxes(ended, dataDirectory: dataDirectory)
        return ended.count
    }

    /// Removes the push inboxes (`<data>/push/<session>/`) of ended sessions.
    static func removeInboxes(_ sessions: [String], dataDirectory: URL) {
        let push = dataDirectory.standardizedFileURL.appendingPathComponent("push", isDirectory: true)
        for id in sessions where !id.contains("/") && !id.hasPrefix(".") {
            try? FileManager.default.removeItem(at: push.appendingPathComponent(id, isDirectory: true))
        }
    }

    /// Erases the account and everything of it, in one transaction, then its sessions' push inboxes.
    /// - Throws: ``ServerError/notFound(_:)`` for an unknown name.
    public static func delete(username: String, dataDirectory: URL, storage: ServerStorageOpener? = nil) throws {
        let ended = try EmbeddedServer.openStore(dataDirectory, storage: storage).write { db -> [String] in
            let userID = try Self.userID(db, username)
            let ids = try String.fetchAll(db, sql: "SELECT id FROM sessions WHERE userId = ?", arguments: [userID])
            try Accounts.erase(db, userID: userID, now: Int64(Date().timeIntervalSince1970))
            return ids
        }
        removeInboxes(ended, dataDirectory: dataDirectory)
    }

    static func userID(_ db: any StorageConnection, _ username: String) throws -> String {
        guard let id = try String.fetchOne(db, sql: "SELECT id FROM users WHERE username = ? COLLATE NOCASE", arguments: [username]) else {
            throw ServerError.notFound("The account \(username)")
        }
        return id
    }
}
