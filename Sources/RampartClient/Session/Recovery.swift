import Foundation
import Keymaker
import MailboxCrypto
import OpenPGP
import RampartAPI
import RampartCore
import SRP

/// What the user gives to recover an account with its phrase, or to reset it with the operator's
/// token. Every secret is wiped after use.
///
/// Trust-model row **mailbox password (critical)**: `mailboxPassword` nil means one password
/// from now on (the key is locked under bcrypt(new login password, key salt)), whatever mode
/// the account had; given, the key is locked under it (two passwords).
public struct RecoveryCredentials: Sendable {
    public var username: String
    /// The new login password (only its SRP verifier is sent).
    public var password: SecretBytes
    /// Two-password mode: the new mailbox password that locks the key. Nil: one password.
    public var mailboxPassword: SecretBytes?

    public init(username: String, password: SecretBytes, mailboxPassword: SecretBytes? = nil) {
        self.username = username; self.password = password; self.mailboxPassword = mailboxPassword
    }
}

/// What a recovery or a reset did.
public struct RecoveryResult: Sendable {
    /// The server sessions of the account that ended (every one).
    public var endedSessions: Int
    /// The login that set this device up afterwards.
    public var login: LoginResult
    /// A reset's new recovery phrase (12 words, to be shown once); nil after a recovery (the phrase
    /// used still opens the copy, which holds the same key).
    public var newPhrase: SecretBytes?
}

/// Account recovery on the device.
///
/// - ``recover(endpoint:phrase:credentials:account:keymaker:)``: the phrase derives (scrypt, with
///   the server's salt) the access token that fetches the locked copy and the passphrase that opens
///   it here; the same key is locked again under bcrypt(new password, new key salt), a new SRP salt
///   and verifier are made, and the server gets them with a signature by the key over its nonce,
///   the name and the new values (proof of possession, checked with the stored public key). Old
///   mail still opens. Then ``LoginFlow``.
/// - ``regenerate(account:)``: a new phrase and copy of the unlocked key replace the old copy.
/// - ``reset(endpoint:token:credentials:account:keymaker:)``: with the operator's token, a new
///   password and NEW keys; mail sealed to the old key stays unreadable.
///
/// Trust-model rows **the user's private and public keys (critical)** (the copy is opened only
/// here; the key leaves the device locked), **mailbox password (critical)** and **server (zero
/// access)** (no phrase, password or passphrase is sent), **transport (network), low trust**
/// (pinned TLS and modulus key, as at login).
public enum RecoveryFlow {
    /// A new recovery phrase, as text (12 words separated by spaces), to show once.
    public static func newPhrase() -> SecretBytes { RecoveryPhrase.generate().text() }

    /// Reads a phrase as typed (any case and spacing) and returns it in its normal form.
    /// - Throws: `RecoveryPhraseError` (word count, unknown word and its position, checksum).
    public static func normalized(_ text: SecretBytes) throws -> SecretBytes { try RecoveryPhrase(phrase: text).text() }

    /// Recovers the account with its phrase, sets the new password(s), and logs in here.
    /// - Parameters:
    ///   - endpoint: the pinned server.
    ///   - phrase: the recovery phrase as typed (checked before anything is sent).
    ///   - credentials: the name and the new password(s); wiped when this returns.
    ///   - account: the local account to set up (nothing logged in yet).
    ///   - keymaker: its Keymaker (no MainKey yet).
    /// - Throws: `RecoveryPhraseError` (a mistyped phrase: nothing sent), ``ClientError/recoveryRefused(code:message:)``
    ///   (wrong phrase, another account's phrase, unknown name: the same answer), ``ClientError/alreadyLoggedIn(_:)``,
    ///   what ``LoginFlow/login(endpoint:credentials:account:keymaker:)`` throws.
    public static func recover(endpoint: ServerEndpoint, phrase: SecretBytes, credentials: RecoveryCredentials,
                               account: ClientAccount, keymaker: Keymaker) async throws -> RecoveryResult {
        let keyPassword = try credentials.mailboxPassword ?? credentials.password.withUnsafeBytes { SecretBytes(copying: $0) }
        defer { credentials.password.wipe(); keyPassword.wipe(); phrase.wipe() }
        let parsed = try RecoveryPhrase(phrase: phrase)
        guard try !keymaker.hasMainKey(), try !account.isLoggedIn() else { throw ClientError.alreadyLoggedIn(account.userID) }
        let username = credentials.username.lowercased()
        let ended = try await withAPI(endpoint) { api in
            let group = try await verifiedGroup(api)
            let info: RecoveryInfoResponse = try await refusals { try await api.json(.POST, APIRoute.recoveryInfo, body: RecoveryInfoRequest(username: username), authenticated: false) }
            guard let salt = Data(base64Encoded: info.salt), (Int(RecoveryKeyCopy.minimumLogN)...24).contains(info.logN) else {
                throw ClientError.malformedResponse("the recovery salt or cost (2^\(info.logN)) is unusable; a copy below 2^\(RecoveryKeyCopy.minimumLogN) is refused")
            }
            let token = try RecoveryKeyCopy.accessToken(phrase: parsed, salt: [UInt8](salt), logN: UInt8(info.logN))
            defer { token.wipe() }
            let access = try token.withUnsafeBytes { Data($0).base64EncodedString() }
            let copy: RecoveryCopyResponse = try await refusals {
                try await api.json(.POST, APIRoute.recoveryCopy, body: RecoveryCopyRequest(username: username, nonce: info.nonce, access: access),
                                   authenticated: false)
            }
            let key = try RecoveryKeyCopy(lockedKey: copy.lockedKey, salt: [UInt8](salt), logN: UInt8(info.logN)).unlock(with: parsed)
            let published: PGPPublicKey
            do { published = try PGPPublicKey(armored: copy.publicKey) } catch { throw ClientError.malformedResponse("the account's public key is not an OpenPGP key") }
            guard key.fingerprint == published.fingerprint else {
                throw ClientError.tampered("The recovery copy sent by the server (it is not the account's key)")
            }
            let srpSalt = SRPPassword.newSalt()
            let verifier = try SRPPassword.verifier(password: credentials.password, salt: srpSalt, group: group)
            let locked = try MailboxKey.lock(key, mailboxPassword: keyPassword)
            var request = RecoveryPasswordRequest(username: username, nonce: info.nonce, access: access, version: SRPPassword.version,
                                                  salt: Data(srpSalt).base64EncodedString(), verifier: Data(verifier).base64EncodedString(),
                                                  keySalt: Data(locked.keySalt).base64EncodedString(), privateKey: locked.locked, signature: "")
            request.signature = String(decoding: try OpenPGP.detachedSignature(for: request.signedText, with: key, armor: true), as: UTF8.self)
            let answer: AccountResetResponse = try await refusals { try await api.json(.POST, APIRoute.recoveryPassword, body: request, authenticated: false) }
            return answer.endedSessions
        }
        let login = try await LoginFlow.login(endpoint: endpoint, credentials: copies(username, credentials.password, keyPassword),
                                              account: account, keymaker: keymaker)
        return RecoveryResult(endedSessions: ended, login: login, newPhrase: nil)
    }

    /// Replaces the server's recovery copy with one under a new phrase (logged in, key unlocked).
    /// - Returns: the new phrase, to show once (the old phrase no longer opens anything).
    public static func regenerate(account: ClientAccount) async throws -> SecretBytes {
        // The copy is of the user key: the address keys open through their tokens.
        let ring = try account.keyring()
        defer { ring.wipe() }
        let key = ring.userKey
        let phrase = RecoveryPhrase.generate()
        let upload = try RecoveryKeyCopy.upload(key: key, phrase: phrase)
        let _: OKResponse = try await account.api().closing { api in
            try await refusals { try await api.json(.PUT, APIRoute.accountRecovery, body: upload) }
        }
        return phrase.text()
    }

    /// Resets the account with the operator's token: a new password, NEW keys and a new recovery
    /// phrase; mail sealed to the old key can no longer be read. Then logs in here.
    /// - Throws: ``ClientError/recoveryRefused(code:message:)`` (token unknown, used, expired, or
    ///   another account's), ``ClientError/alreadyLoggedIn(_:)``, what login throws.
    public static func reset(endpoint: ServerEndpoint, token: String, credentials: RecoveryCredentials, account: ClientAccount,
                             keymaker: Keymaker) async throws -> RecoveryResult {
        let keyPassword = try credentials.mailboxPassword ?? credentials.password.withUnsafeBytes { SecretBytes(copying: $0) }
        defer { credentials.password.wipe(); keyPassword.wipe() }
        guard try !keymaker.hasMainKey(), try !account.isLoggedIn() else { throw ClientError.alreadyLoggedIn(account.userID) }
        let username = credentials.username.lowercased()
        let phrase = RecoveryPhrase.generate()
        let ended = try await withAPI(endpoint) { api in
            let group = try await verifiedGroup(api)
            let info: ResetInfoResponse = try await refusals {
                try await api.json(.POST, APIRoute.resetInfo, body: ResetInfoRequest(username: username, token: token), authenticated: false)
            }
            // A new user key and a new key for every address of the account, as at sign-up.
            let (made, others) = try SignupPayload.make(username: username, displayName: info.displayName, address: info.address,
                                                        otherAddresses: (info.addresses ?? []).filter { $0 != info.address },
                                                        loginPassword: credentials.password, keyPassword: keyPassword, group: group,
                                                        recoveryPhrase: phrase)
            let request = AccountResetRequest(username: username, token: token, version: made.version, salt: made.salt, verifier: made.verifier,
                                              keySalt: made.keySalt, publicKey: made.publicKey, privateKey: made.privateKey, recovery: made.recovery,
                                              addressKeys: made.addressKey.map { [$0] + others })
            let answer: AccountResetResponse = try await refusals { try await api.json(.POST, APIRoute.reset, body: request, authenticated: false) }
            return answer.endedSessions
        }
        let login = try await LoginFlow.login(endpoint: endpoint, credentials: copies(username, credentials.password, keyPassword),
                                              account: account, keymaker: keymaker)
        return RecoveryResult(endedSessions: ended, login: login, newPhrase: phrase.text())
    }

    // MARK: Helpers

    static func copies(_ username: String, _ password: SecretBytes, _ keyPassword: SecretBytes) throws -> LoginCredentials {
        LoginCredentials(username: username, password: try password.withUnsafeBytes { SecretBytes(copying: $0) },
                         mailboxPassword: try keyPassword.withUnsafeBytes { SecretBytes(copying: $0) })
    }

    /// The server's SRP group, its signed modulus checked against the pinned key (as at sign-up).
    static func verifiedGroup(_ api: APIClient) async throws -> SRPGroup {
        let info: SignupInfoResponse = try await api.json(.GET, APIRoute.signupInfo, authenticated: false)
        return try SRPLogin.verifiedGroup(info.modulus, key: try SRPLogin.pinnedModulusKey(api.endpoint))
    }

    static func withAPI<T>(_ endpoint: ServerEndpoint, _ body: (APIClient) async throws -> T) async throws -> T {
        try await APIClient(endpoint: endpoint).closing(body)
    }

    /// A 4xx answer as ``ClientError/recoveryRefused(code:message:)`` (its code and sentence).
    static func refusals<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch ClientError.http(let status, let body?) where (400..<500).contains(status) && status != 401 {
            throw ClientError.recoveryRefused(code: body.error.code, message: body.error.message)
        }
    }
}
