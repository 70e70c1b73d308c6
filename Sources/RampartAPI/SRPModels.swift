import Foundation

// SRP login, with the JSON field names of Proton's API, so that Proton's own client code
// (proton-client's `Session.authenticate`) runs against the embedded server unchanged.
// Binary values are base64 (standard alphabet); numbers little-endian.

extension APIRoute {
    /// `POST` ``SRPAuthInfoRequest`` → ``SRPAuthInfoResponse`` (public): the modulus (signed),
    /// the account's salt and a fresh server ephemeral bound to a single-use `SRPSession`.
    public static let authInfo = "/auth/info"
    /// `POST` ``SRPAuthRequest`` → ``SRPAuthResponse`` (public): the client's ephemeral and proof;
    /// the answer carries the server's proof and, only if the proof matched, a new session.
    public static let auth = "/auth"
}

/// Proton's success code in every SRP answer.
public enum SRPAPICode {
    /// Success.
    public static let ok = 1000
    /// A request the server cannot read (a field missing, malformed base64, a wrong length).
    public static let invalidInput = 2001
    /// Too many failed logins for this username or from this address: wait.
    public static let tooManyAttempts = 2028
    /// Wrong username or password (the same answer for an unknown username).
    public static let wrongCredentials = 8002
    /// The `SRPSession` is unknown, expired or already used: start again at `/auth/info`.
    public static let invalidSession = 10_013
    /// The server failed.
    public static let serverError = 5000
}

/// `POST /auth/info` body.
///
/// Trust-model row **transport (network), low trust**: the username is the only thing sent.
public struct SRPAuthInfoRequest: Codable, Sendable {
    /// The account name (compared case-insensitively; 1–256 bytes).
    public var username: String
    /// A request.
    public init(username: String) { self.username = username }
    enum CodingKeys: String, CodingKey { case username = "Username" }
}

/// `POST /auth/info` answer.
///
/// Trust-model rows **transport (network), low trust** (``modulus`` is an OpenPGP cleartext-signed
/// message the client verifies against the pinned modulus key) and **server (zero access)** (an
/// unknown username gets a salt that is the same on every ask and an ephemeral made the same way
/// as a real one, so the answer does not tell whether the account exists).
public struct SRPAuthInfoResponse: Codable, Sendable {
    /// Always 1000.
    public var code: Int
    /// `-----BEGIN PGP SIGNED MESSAGE-----` over the base64 of N (256 bytes, little-endian).
    public var modulus: String
    /// base64 of B (256 bytes, little-endian).
    public var serverEphemeral: String
    /// The auth version: 4 (bcrypt `$2y$10$` + expand-hash).
    public var version: Int
    /// base64 of the account's 10-byte salt.
    public var salt: String
    /// The single-use handle of this login attempt (32 hex characters), expiring after a few minutes.
    public var srpSession: String
    /// An answer.
    public init(modulus: String, serverEphemeral: String, version: Int, salt: String, srpSession: String) {
        code = SRPAPICode.ok; self.modulus = modulus; self.serverEphemeral = serverEphemeral; self.version = version
        self.salt = salt; self.srpSession = srpSession
    }
    enum CodingKeys: String, CodingKey {
        case code = "Code", modulus = "Modulus", serverEphemeral = "ServerEphemeral", version = "Version", salt = "Salt"
        case srpSession = "SRPSession"
    }
}

/// `POST /auth` body.
///
/// Trust-model row **transport (network), low trust**: the password is not in it, only the proof
/// that the client knows it.
public struct SRPAuthRequest: Codable, Sendable {
    /// The same username as at `/auth/info`.
    public var username: String
    /// base64 of A (1 to 256 bytes, little-endian; proton-client drops high zero bytes).
    public var clientEphemeral: String
    /// base64 of M1 (256 bytes).
    public var clientProof: String
    /// The `SRPSession` of the `/auth/info` answer.
    public var srpSession: String
    /// A request.
    public init(username: String, clientEphemeral: String, clientProof: String, srpSession: String) {
        self.username = username; self.clientEphemeral = clientEphemeral; self.clientProof = clientProof; self.srpSession = srpSession
    }
    enum CodingKeys: String, CodingKey {
        case username = "Username", clientEphemeral = "ClientEphemeral", clientProof = "ClientProof", srpSession = "SRPSession"
    }
}

/// `POST /auth` answer: Proton's fields (`ServerProof`, `UID`, `AccessToken`, `RefreshToken`,
/// `Scope`, …) plus what Rampart's client needs after a login (``login``: user id, user, keys).
///
/// Trust-model rows **access token (high)** and **transport (network), low trust**: the client
/// checks ``serverProof`` before it uses or stores anything else of this answer.
public struct SRPAuthResponse: Codable, Sendable {
    /// Always 1000.
    public var code: Int
    /// base64 of M2 = H(A ‖ M1 ‖ S), the server's proof that it knows the verifier.
    public var serverProof: String
    /// The session's id (Proton's `UID`).
    public var uid: String
    /// The new access token.
    public var accessToken: String
    /// The new refresh token.
    public var refreshToken: String
    /// Seconds until the access token expires.
    public var expiresIn: Int
    /// `"Bearer"`.
    public var tokenType: String
    /// Space-separated scopes (proton-client splits it).
    public var scope: String
    /// Rampart's login answer (user id, tokens, user, keys), as the password login returned it.
    public var login: LoginResponse
    /// An answer.
    public init(serverProof: String, login: LoginResponse, scope: String = "full self mail drive") {
        code = SRPAPICode.ok; self.serverProof = serverProof; uid = login.sessionId; accessToken = login.accessToken
        refreshToken = login.refreshToken; expiresIn = login.expiresIn; tokenType = "Bearer"; self.scope = scope; self.login = login
    }
    enum CodingKeys: String, CodingKey {
        case code = "Code", serverProof = "ServerProof", uid = "UID", accessToken = "AccessToken", refreshToken = "RefreshToken"
        case expiresIn = "ExpiresIn", tokenType = "TokenType", scope = "Scope", login = "RampartLogin"
    }
}

/// Proton's error body: `{"Code": <not 1000>, "Error": "..."}`, plus Rampart's own
/// ``APIErrorBody`` shape (`error`) so both kinds of client read it.
///
/// Trust-model row **transport (network), low trust**: a refused SRP request gets a 4xx with a
/// precise reason that never echoes a value.
public struct SRPErrorBody: Codable, Sendable, Equatable {
    /// Proton's code (``SRPAPICode``).
    public var code: Int
    /// What went wrong, for a person.
    public var error: String
    /// The same as an ``APIErrorBody``'s detail.
    public var detail: APIErrorBody.Detail
    /// An error body.
    public init(code: Int, error: String, rampartCode: String) {
        self.code = code; self.error = error; detail = APIErrorBody.Detail(code: rampartCode, message: error)
    }
    enum CodingKeys: String, CodingKey { case code = "Code", error = "Error", detail = "error" }
}

/// `POST /v1/account/password` (a session is needed): a new salt and verifier for the login
/// password, with an SRP proof of the current one made on a fresh `/auth/info` challenge.
///
/// Trust-model row **server (zero access)**: neither password is sent; the server checks the proof
/// of the old one and stores only the new salt and verifier.
public struct SRPChangePasswordRequest: Codable, Sendable {
    /// base64 of A for the old password (the `/auth/info` challenge of ``srpSession``).
    public var clientEphemeral: String
    /// base64 of M1 for the old password.
    public var clientProof: String
    /// The `SRPSession` of the `/auth/info` answer (single-use).
    public var srpSession: String
    /// base64 of the new 10-byte salt.
    public var salt: String
    /// base64 of the new verifier (256 bytes, little-endian).
    public var verifier: String
    /// Whether to end the account's other sessions (default: true).
    public var endOtherSessions: Bool
    /// One-password mode only: the same user key re-locked under bcrypt(new password, a fresh key
    /// salt), stored with the verifier in one transaction. Nil keeps the locked key (two-password
    /// accounts keep their mailbox password).
    public var userKey: RelockedUserKey?
    /// A request.
    public init(clientEphemeral: String, clientProof: String, srpSession: String, salt: String, verifier: String,
                endOtherSessions: Bool = true, userKey: RelockedUserKey? = nil) {
        self.clientEphemeral = clientEphemeral; self.clientProof = clientProof; self.srpSession = srpSession
        self.salt = salt; self.verifier = verifier; self.endOtherSessions = endOtherSessions; self.userKey = userKey
    }
    enum CodingKeys: String, CodingKey {
        case clientEphemeral = "ClientEphemeral", clientProof = "ClientProof", srpSession = "SRPSession", salt = "Salt"
        case verifier = "Verifier", endOtherSessions = "EndOtherSessions", userKey = "UserKey"
    }
}

/// The account's user key locked under a new passphrase: the server takes it only if it is
/// locked in every part and has the stored user key's fingerprint (trust-model row **the user's
/// private and public keys (critical)**).
public struct RelockedUserKey: Codable, Sendable {
    /// The armored locked private key.
    public var privateKey: String
    /// base64 of the new 16-byte key salt.
    public var keySalt: String
    /// A re-locked key.
    public init(privateKey: String, keySalt: String) { self.privateKey = privateKey; self.keySalt = keySalt }
    enum CodingKeys: String, CodingKey { case privateKey = "PrivateKey", keySalt = "KeySalt" }
}

/// The answer of ``APIRoute/accountPassword``.
public struct SRPChangePasswordResponse: Codable, Sendable {
    /// Always 1000.
    public var code: Int
    /// base64 of M2 for the old password's proof (the client checks it).
    public var serverProof: String
    /// How many other sessions were ended.
    public var endedSessions: Int
    /// An answer.
    public init(serverProof: String, endedSessions: Int) { code = SRPAPICode.ok; self.serverProof = serverProof; self.endedSessions = endedSessions }
    enum CodingKeys: String, CodingKey { case code = "Code", serverProof = "ServerProof", endedSessions = "EndedSessions" }
}

extension APIRoute {
    /// `POST` ``SRPChangePasswordRequest`` → ``SRPChangePasswordResponse`` (needs a session).
    public static let accountPassword = "/v1/account/password"
    /// `GET` → ``UserKeys`` (needs a session): the user key as a login hands it out (public,
    /// locked private, key salt) and the address keys.
    public static let accountKeys = "/v1/account/keys"
}
