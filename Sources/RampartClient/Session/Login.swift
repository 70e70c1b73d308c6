import Foundation
import Keymaker
import MailboxCrypto
import OpenPGP
import PushCrypto
import RampartAPI
import RampartCore
import SealedStore

/// What the user types at login. The passwords are secrets and are wiped after use (trust-model
/// row **mailbox password (critical)**).
public struct LoginCredentials: Sendable {
    public var username: String
    /// The login password (never sent: SRP proves it to the server; never stored).
    public var password: SecretBytes
    /// The mailbox password (never sent: it opens the private key locally).
    public var mailboxPassword: SecretBytes

    public init(username: String, password: SecretBytes, mailboxPassword: SecretBytes) {
        self.username = username; self.password = password; self.mailboxPassword = mailboxPassword
    }
}

/// What a login did (trust-model rows **MainKey**, **push payload key**: the new key's
/// fingerprint, and whether push was registered).
public struct LoginResult: Sendable {
    public var session: SessionRecord
    public var mainKeyFingerprint: String
    /// Nil when the push key was registered; otherwise why not (login still succeeds).
    public var pushProblem: String?
}

/// The login flow.
///
/// Trust-model rows **mailbox password (critical)** — it never leaves the device: the server
/// sends the OpenPGP private key locked under bcrypt(mailbox password, key salt), and it is
/// unlocked here; **MainKey** — a fresh random
/// MainKey is created per login (protector *none* until `rampart protect`); **the user's private
/// key (critical)**, **access token (high)** — both sealed under the MainKey in the keychain;
/// **push payload key** — a new key pair per session, its public half registered with the session id.
public enum LoginFlow {
    /// Logs in and sets the account up on this device.
    ///
    /// - Throws: ``ClientError/alreadyLoggedIn(_:)``, ``ClientError/loginRefused(_:)``,
    ///   `MailboxCryptoError.wrongMailboxPassword` (the server session is ended again),
    ///   ``ClientError/pinMismatch(host:served:)``, transport errors.
    public static func login(endpoint: ServerEndpoint, credentials: LoginCredentials,
                             account: ClientAccount, keymaker: Keymaker) async throws -> LoginResult {
        defer { credentials.password.wipe(); credentials.mailboxPassword.wipe() }
        guard try !keymaker.hasMainKey(), try !account.isLoggedIn() else { throw ClientError.alreadyLoggedIn(account.userID) }
        return try await APIClient(endpoint: endpoint).closing { api in
            try await login(api: api, endpoint: endpoint, credentials: credentials, account: account, keymaker: keymaker)
        }
    }

    static func login(api: APIClient, endpoint: ServerEndpoint, credentials: LoginCredentials,
                      account: ClientAccount, keymaker: Keymaker) async throws -> LoginResult {
        // SRP: only A and the proof M1 are sent; the server's proof is checked inside.
        let response = try await api.login(username: credentials.username, password: credentials.password)

        // The user key opens with bcrypt(mailbox password, key salt); each address key with its
        // token, which the user key decrypts and whose signature it verifies.
        let ring: AccountKeyring
        do {
            guard Data(base64Encoded: response.keys.keySalt) != nil else {
                throw ClientError.malformedResponse("the key salt is not base64")
            }
            ring = try AccountKeyring.unlock(response.keys, keyPassword: credentials.mailboxPassword)
        } catch {
            try? await api.logout()
            throw error
        }

        defer { ring.wipe() }
        var record = SessionRecord(serverUserID: response.userId, username: response.user.username,
                                   displayName: response.user.displayName, addresses: response.user.addresses,
                                   endpoint: endpoint, sessionID: response.sessionId, accessToken: response.accessToken,
                                   refreshToken: response.refreshToken, accessTokenExpiry: 0)
        try record.update(response.tokens, now: account.clock.now)
        let mainKey = try keymaker.createMainKey()
        do {
            try account.vault.saveSession(record, with: mainKey)
            try account.vault.saveMailboxKey(ring.primary, with: mainKey)
            try account.vault.saveKeyring(ring, with: mainKey)
            let store = try account.store()
            try store.mail.save(account: AccountRecord(id: response.userId, username: response.user.username,
                                                       displayName: response.user.displayName, addresses: response.user.addresses))
            try store.recordFirstLogin(account.clock.now)
            try account.files.prepare(for: account.userID)
        } catch {
            // Leave nothing half set up.
            account.close()
            keymaker.logout()
            try? await api.logout()
            throw error
        }

        var pushProblem: String?
        do {
            // Pushes name the server's user id: the keyring lives under it, linked to the local account.
            let pushUser = try UserID(validating: response.userId)
            try PushKeysWipe.link(account.userID, to: pushUser, in: account.keychain)
            let keyring = PushKeyring(keychain: account.keychain, clock: account.clock, userID: pushUser)
            let registration = try keyring.subscribe(sessionID: try PushSessionID(response.sessionId))
            try await api.registerPush(registration)
        } catch {
            pushProblem = String(describing: error)
        }
        return LoginResult(session: record, mainKeyFingerprint: mainKey.fingerprint, pushProblem: pushProblem)
    }
}

/// Logout: ends the server session, then erases everything of the user on this device.
///
/// Trust-model rows **access token** (the session is closed on the server), **push payload key**
/// (deleted), **device storage (low)** (the Keymaker's wipe runs every registered wipe: sealed
/// store, client files; then deletes every keychain item of the user).
public enum LogoutFlow {
    public struct Result: Sendable {
        /// Nil when the server ended the session; otherwise why not (the local wipe still ran).
        public var serverProblem: String?
        public var report: WipeReport
    }

    public static func logout(account: ClientAccount, keymaker: Keymaker) async -> Result {
        var serverProblem: String?
        do {
            let api = try account.api()
            do { try await api.logout() } catch { serverProblem = String(describing: error) }
            await api.shutdown()
        } catch {
            serverProblem = String(describing: error)
        }
        return Result(serverProblem: serverProblem, report: wipeDevice(account: account, keymaker: keymaker))
    }

    /// The device half of logout: closes the store and runs the Keymaker's logout (every
    /// registered wipe, every keychain item of the user).
    public static func wipeDevice(account: ClientAccount, keymaker: Keymaker) -> WipeReport {
        account.close()
        return keymaker.logout()
    }

    /// Deletes the account on the server (an SRP proof of `password` on a fresh challenge; the
    /// server erases every row of it in one transaction), then wipes this device as logout does.
    ///
    /// Trust-model rows **database (critical)** and **username (critical)** (nothing of the
    /// account stays on the server), **device storage (low)** (nor here).
    /// - Throws: ``ClientError/loginRefused(_:)`` for a wrong password (nothing deleted anywhere).
    public static func deleteAccount(account: ClientAccount, keymaker: Keymaker, password: SecretBytes) async throws -> WipeReport {
        defer { password.wipe() }
        let record = try account.session()
        let api = try account.api()
        do {
            try await SRPLogin.deleteAccount(api: api, username: record.username, password: password)
            await api.shutdown()
        } catch {
            await api.shutdown()
            throw error
        }
        return wipeDevice(account: account, keymaker: keymaker)
    }
}
