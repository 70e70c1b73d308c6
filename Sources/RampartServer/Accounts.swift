import Crypto
import Foundation
import MailboxCrypto
import OpenPGP
import RampartAPI
import RampartCore
import SRP

/// An authenticated session, as a route sees it.
struct AuthenticatedSession: Sendable {
    let sessionID: String
    let userID: String
}

/// Accounts, logins and sessions.
///
/// Trust-model row **access token (high)**: access tokens (1 h by default) and refresh tokens
/// (30 days, rotated at each refresh) are 256-bit random values the server stores only as SHA-256
/// hashes, so a copy of the database gives no live session; logout deletes the session row (and
/// with it the push subscription), so its tokens stop working at once.
struct Accounts: Sendable {
    let store: BackendStore
    let clock: any RampartClock
    let accessTokenLifetime: TimeInterval
    let refreshTokenLifetime: TimeInterval

    /// The user key a login hands out: the armored public key, the armored locked private key and
    /// the key salt (trust-model row **the user's private and public keys (critical)**); the
    /// caller adds the address keys (``KeyList/records(_:userID:)``).
    static func userKeys(_ row: StorageRow) throws -> UserKeys {
        let publicKey: PGPPublicKey
        do { publicKey = try PGPPublicKey(binary: row.data("publicKey")) } catch {
            throw ServerError.storage("the account's public key is unreadable")
        }
        return UserKeys(publicKey: publicKey.armored(), privateKey: String(decoding: row.data("sealedPrivateKey"), as: UTF8.self),
                        keySalt: row.data("keySalt").base64EncodedString())
    }

    static func userInfo(_ row: StorageRow) -> UserInfo {
        let addresses = (try? JSONDecoder().decode([String].self, from: Data((row["addresses"] as String).utf8))) ?? []
        return UserInfo(username: row["username"], displayName: row["displayName"], addresses: addresses)
    }

    func openSession(userID: String) throws -> SessionTokens {
        let sessionID = BackendStore.newID("s")
        let access = Self.newToken("rat_"), refresh = Self.newToken("rrt_")
        let now = clock.now.timeIntervalSince1970
        try store.write { db in
            try db.execute(sql: """
                INSERT INTO sessions (id, userId, accessHash, accessExpires, refreshHash, refreshExpires, created)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """, arguments: [sessionID, userID, Self.hash(access), now + accessTokenLifetime,
                                 Self.hash(refresh), now + refreshTokenLifetime, now])
        }
        return SessionTokens(sessionId: sessionID, accessToken: access, refreshToken: refresh, expiresIn: Int(accessTokenLifetime))
    }

    /// The session an access token belongs to.
    /// - Throws: ``ServerError/invalidToken`` (unknown or ended), ``ServerError/tokenExpired``.
    func authenticate(accessToken: String) throws -> AuthenticatedSession {
        let row = try store.read { db in
            try StorageRow.fetchOne(db, sql: "SELECT id, userId, accessExpires FROM sessions WHERE accessHash = ?",
                             arguments: [Self.hash(accessToken)])
        }
        guard let row else { throw ServerError.invalidToken }
        guard (row["accessExpires"] as Double) > clock.now.timeIntervalSince1970 else { throw ServerError.tokenExpired }
        return AuthenticatedSession(sessionID: row["id"], userID: row["userId"])
    }

    /// New access and refresh tokens for the session of `refreshToken`; the old ones stop working.
    func refresh(refreshToken: String) throws -> SessionTokens {
        let access = Self.newToken("rat_"), refresh = Self.newToken("rrt_")
        let now = clock.now.timeIntervalSince1970
        return try store.write { db in
            guard let row = try StorageRow.fetchOne(db, sql: "SELECT id, refreshExpires FROM sessions WHERE refreshHash = ?",
                                             arguments: [Self.hash(refreshToken)])
            else { throw ServerError.invalidToken }
            let sessionID: String = row["id"]
            guard (row["refreshExpires"] as Double) > now else {
                try db.execute(sql: "DELETE FROM sessions WHERE id = ?", arguments: [sessionID])
                throw ServerError.invalidToken
            }
            try db.execute(sql: """
                UPDATE sessions SET accessHash = ?, accessExpires = ?, refreshHash = ?, refreshExpires = ? WHERE id = ?
                """, arguments: [Self.hash(access), now + accessTokenLifetime, Self.hash(refresh), now + refreshTokenLifetime, sessionID])
            return SessionTokens(sessionId: sessionID, accessToken: access, refreshToken: refresh, expiresIn: Int(accessTokenLifetime))
        }
    }

    /// Ends a session: its tokens and its push subscription are deleted.
    func logout(_ session: AuthenticatedSession) throws {
        try store.write { db in
            try db.execute(sql: "DELETE FROM sessions WHERE id = ?", arguments: [session.sessionID])
        }
    }

    /// The sessions of `session`'s user, oldest first (the caller's marked current).
    func sessions(of session: AuthenticatedSession) throws -> [SessionSummary] {
        try store.read { db in
            try StorageRow.fetchAll(db, sql: "SELECT id, created, accessExpires FROM sessions WHERE userId = ? ORDER BY created, id",
                                    arguments: [session.userID])
        }.map { row in
            SessionSummary(id: row["id"], created: Int64(row["created"] as Double),
                           lastRefreshed: Int64((row["accessExpires"] as Double) - accessTokenLifetime), current: row["id"] == session.sessionID)
        }
    }

    /// Ends session `id` of the same user (its tokens stop working at once).
    /// - Throws: ``ServerError/notFound(_:)`` for a session of another user or none.
    func endSession(_ id: String, of session: AuthenticatedSession) throws {
        try store.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM sessions WHERE id = ? AND userId = ?", arguments: [id, session.userID]) == true
            else { throw ServerError.notFound("The session \(id)") }
            try db.execute(sql: "DELETE FROM sessions WHERE id = ? AND userId = ?", arguments: [id, session.userID])
        }
    }

    /// The user id of a local address, if any.
    func userID(forAddress address: String) throws -> String? {
        try store.read { db in
            try String.fetchOne(db, sql: "SELECT userId FROM addresses WHERE address = ?", arguments: [address.lowercased()])
        }
    }

    func userRow(_ userID: String) throws -> StorageRow {
        guard let row = try store.read({ db in try StorageRow.fetchOne(db, sql: "SELECT * FROM users WHERE id = ?", arguments: [userID]) })
        else { throw ServerError.notFound("The user") }
        return row
    }

    static func newToken(_ prefix: String) -> String {
        let key = SymmetricKey(size: .bits256)
        let text = key.withUnsafeBytes { Data($0) }.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return prefix + text
    }

    static func hash(_ token: String) -> Data { Data(SHA256.hash(data: Data(token.utf8))) }
}
