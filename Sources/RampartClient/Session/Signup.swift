import Foundation
import Keymaker
import MailboxCrypto
import RampartAPI
import RampartCore
import SRP

/// What the user gives at sign-up. The passwords are secrets, wiped after use.
///
/// Trust-model row **mailbox password (critical)**: `mailboxPassword` is nil in one-password
/// mode, where the login password also unlocks the key (the key passphrase is
/// bcrypt(login password, key salt), made and used on the device only).
public struct SignupCredentials: Sendable {
    public var username: String
    /// The address; nil: `<username>@<the server's domain>`.
    public var address: String?
    /// The name shown as the sender of mail; nil: the username.
    public var displayName: String?
    /// The login password (never sent: only its SRP verifier is).
    public var password: SecretBytes
    /// Two-password mode: the mailbox password that locks the key (never sent). Nil: one password.
    public var mailboxPassword: SecretBytes?
    /// The operator's invitation code, when sign-up is closed.
    public var invitation: String?
    /// The recovery phrase (12 words, ``RecoveryFlow/newPhrase()``) whose copy of the key goes
    /// with the sign-up; nil: no recovery copy (only the operator's reset can help then).
    public var recoveryPhrase: SecretBytes?

    public init(username: String, address: String? = nil, displayName: String? = nil, password: SecretBytes,
                mailboxPassword: SecretBytes? = nil, invitation: String? = nil, recoveryPhrase: SecretBytes? = nil) {
        self.username = username; self.address = address; self.displayName = displayName; self.password = password
        self.mailboxPassword = mailboxPassword; self.invitation = invitation; self.recoveryPhrase = recoveryPhrase
    }
}

/// What a sign-up did: the account the server made, then the login that set it up here.
public struct SignupResult: Sendable {
    public var account: SignupResponse
    public var login: LoginResult
}

/// Sign-up made on the device, as Proton does it, then the same login as `rampart login`.
///
/// 1. `GET /v1/signup`: the server's modulus, verified against the pinned modulus key exactly as at
///    login (a modulus signed by any other key is refused, exit status 8); its domain.
/// 2. MailboxCrypto's `SignupPayload`: a fresh SRP salt and verifier of the login password for that group, a new
///    OpenPGP key locked with bcrypt(key password, key salt) (`MailboxKey`), and with a recovery
///    phrase a `RecoveryKeyCopy` of the key locked under scrypt(phrase).
/// 3. `POST /v1/signup/accounts` with only the verifier, the salts, the public key and the locked
///    private key.
/// 4. ``LoginFlow``: SRP login (server proof checked), MainKey, sealed session and key, push.
///
/// Trust-model rows **server (zero access)** (no password, passphrase or cleartext key is sent),
/// **transport (network), low trust** (pinned TLS, pinned modulus key), **mailbox password
/// (critical)** and **MainKey** (as at login).
public enum SignupFlow {
    /// Signs up and logs in.
    /// - Throws: ``ClientError/alreadyLoggedIn(_:)`` (before anything is sent),
    ///   ``ClientError/signupRefused(code:message:)`` (the server's reason; nothing was created),
    ///   `SRPError.invalidModulus` (exit status 8), what ``LoginFlow/login(endpoint:credentials:account:keymaker:)`` throws.
    /// - Parameters:
    ///   - endpoint: the pinned server (TLS pins and SRP modulus key).
    ///   - credentials: what the user typed; the passwords are wiped when this returns.
    ///   - account: the local account to set up (nothing logged in yet).
    ///   - keymaker: its Keymaker (no MainKey yet).
    ///   - created: called once the server made the account, before the login (a login that
    ///     fails then leaves an account the user can log in to with `rampart login`).
    public static func signUp(endpoint: ServerEndpoint, credentials: SignupCredentials, account: ClientAccount,
                              keymaker: Keymaker, created: (SignupResponse) -> Void = { _ in }) async throws -> SignupResult {
        // The key password: the mailbox password, or (one password) a copy of the login password.
        let keyPassword = try credentials.mailboxPassword ?? credentials.password.withUnsafeBytes { SecretBytes(copying: $0) }
        defer { credentials.password.wipe(); keyPassword.wipe() }
        guard try !keymaker.hasMainKey(), try !account.isLoggedIn() else { throw ClientError.alreadyLoggedIn(account.userID) }
        let api = try APIClient(endpoint: endpoint)
        let made: SignupResponse
        do {
            made = try await register(api: api, credentials: credentials, keyPassword: keyPassword)
            await api.shutdown()
        } catch {
            await api.shutdown()
            throw error
        }
        created(made)
        // Logs in with what the user typed (LoginFlow wipes its copies).
        let login = try await LoginFlow.login(
            endpoint: endpoint,
            credentials: LoginCredentials(username: made.username,
                                          password: try credentials.password.withUnsafeBytes { SecretBytes(copying: $0) },
                                          mailboxPassword: try keyPassword.withUnsafeBytes { SecretBytes(copying: $0) }),
            account: account, keymaker: keymaker)
        return SignupResult(account: made, login: login)
    }

    /// Creates the account only (`GET /v1/signup/info`, the modulus checked against the pinned
    /// key, `POST /v1/signup/accounts`), without logging in or touching a local account: what a
    /// load test's simulated devices do. The caller wipes the passwords.
    /// - Throws: ``ClientError/signupRefused(code:message:)``, `SRPError.invalidModulus`, transport errors.
    public static func register(api: APIClient, credentials: SignupCredentials, keyPassword: SecretBytes) async throws -> SignupResponse {
        let info: SignupInfoResponse = try await api.json(.GET, APIRoute.signupInfo, authenticated: false)
        // After the request, so that a TLS pin mismatch is reported first; then the modulus
        // signature, as at login.
        let group = try SRPLogin.verifiedGroup(info.modulus, key: try SRPLogin.pinnedModulusKey(api.endpoint))
        guard let domain = info.domains.first else { throw ClientError.malformedResponse("the server names no domain for addresses") }
        if info.invitationRequired && (credentials.invitation ?? "").isEmpty {
            throw ClientError.signupRefused(code: "signup.closed", message: "Sign-up is closed on this server: ask its operator for an invitation code (rampart server invite) and give it with --invite.")
        }
        let request = try SignupPayload.make(
            username: credentials.username, displayName: credentials.displayName ?? credentials.username,
            address: credentials.address ?? "\(credentials.username.lowercased())@\(domain)",
            loginPassword: credentials.password, keyPassword: keyPassword, group: group, invitation: credentials.invitation,
            recoveryPhrase: try credentials.recoveryPhrase.map { try RecoveryPhrase(phrase: $0) })
        do {
            return try await api.json(.POST, APIRoute.signup, body: request, authenticated: false)
        } catch ClientError.http(let status, let body?) where (400..<500).contains(status) {
            throw ClientError.signupRefused(code: body.error.code, message: body.error.message)
        }
    }
}
