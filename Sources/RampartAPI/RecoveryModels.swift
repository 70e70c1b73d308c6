import Foundation

// Account recovery and deletion: the recovery copy of the account key (locked on the device under
// scrypt of the recovery phrase), recovery with the phrase (the same key, so old mail opens), the
// operator's reset token (new keys: old mail stays unreadable), and deleting the account.
// Field names in Proton's style (capitalized), binary values base64.

extension APIRoute {
    /// `POST` ``RecoveryInfoRequest`` → ``RecoveryInfoResponse`` (public, throttled per client
    /// address and per username): the scrypt salt and cost of the account's recovery copy and a
    /// single-use nonce. An unknown name (or an account without a copy) gets a stable made-up salt:
    /// the answer does not tell whether the account exists.
    public static let recoveryInfo = "/v1/recovery/info"
    /// `POST` ``RecoveryCopyRequest`` → ``RecoveryCopyResponse`` (public, throttled): the locked
    /// copy, only to a client that proves it derived the access token from the phrase.
    public static let recoveryCopy = "/v1/recovery/copy"
    /// `POST` ``RecoveryPasswordRequest`` → ``AccountResetResponse`` (public, throttled): a new
    /// password for the same key, proven by a signature of the recovered key.
    public static let recoveryPassword = "/v1/recovery/password"
    /// `POST` ``ResetInfoRequest`` → ``ResetInfoResponse`` (public, throttled): the account's
    /// address and name, for an operator's reset token.
    public static let resetInfo = "/v1/recovery/reset/info"
    /// `POST` ``AccountResetRequest`` → ``AccountResetResponse`` (public, throttled): a new
    /// password and new keys with an operator's reset token.
    public static let reset = "/v1/recovery/reset"
    /// `PUT` ``RecoveryCopyUpload`` → `OKResponse` (session): replaces the recovery copy.
    public static let accountRecovery = "/v1/account/recovery"
    /// `POST` ``AccountDeleteRequest`` → ``AccountDeleteResponse`` (session, SRP proof of the
    /// password on a fresh `/auth/info` challenge): erases the account.
    public static let accountDelete = "/v1/account/delete"
}

/// The recovery copy as the device uploads it (sign-up, `rampart account recovery-phrase
/// --regenerate`, a reset).
///
/// Trust-model row **the user's private and public keys (critical)**: the key is locked under a
/// passphrase scrypt derives from the phrase; `access` is a second value derived from the same
/// scrypt output, of which the server keeps only SHA-256 (it gates ``APIRoute/recoveryCopy``).
public struct RecoveryCopyUpload: Codable, Sendable, Equatable {
    /// The armored OpenPGP private key, every secret part locked.
    public var lockedKey: String
    /// base64 of the 16-byte scrypt salt.
    public var salt: String
    /// scrypt's N = 2^logN (at least 15).
    public var logN: Int
    /// base64 of the 32-byte access token (HMAC of the scrypt output).
    public var access: String
    /// An upload.
    public init(lockedKey: String, salt: String, logN: Int, access: String) {
        self.lockedKey = lockedKey; self.salt = salt; self.logN = logN; self.access = access
    }
    enum CodingKeys: String, CodingKey { case lockedKey = "LockedKey", salt = "Salt", logN = "LogN", access = "Access" }
}

/// `POST /v1/recovery/info` body.
public struct RecoveryInfoRequest: Codable, Sendable, Equatable {
    public var username: String
    public init(username: String) { self.username = username }
    enum CodingKeys: String, CodingKey { case username = "Username" }
}

/// `POST /v1/recovery/info` answer: the same shape for every name.
public struct RecoveryInfoResponse: Codable, Sendable, Equatable {
    public var code: Int
    /// base64 of the scrypt salt (made up, but stable, for an unknown name).
    public var salt: String
    /// scrypt's cost.
    public var logN: Int
    /// A single-use nonce (expires after a few minutes) that the next two calls name.
    public var nonce: String
    public init(salt: String, logN: Int, nonce: String) { code = 1000; self.salt = salt; self.logN = logN; self.nonce = nonce }
    enum CodingKeys: String, CodingKey { case code = "Code", salt = "Salt", logN = "LogN", nonce = "Nonce" }
}

/// `POST /v1/recovery/copy` body.
public struct RecoveryCopyRequest: Codable, Sendable, Equatable {
    public var username: String
    public var nonce: String
    /// base64 of the access token derived from the phrase.
    public var access: String
    public init(username: String, nonce: String, access: String) { self.username = username; self.nonce = nonce; self.access = access }
    enum CodingKeys: String, CodingKey { case username = "Username", nonce = "Nonce", access = "Access" }
}

/// `POST /v1/recovery/copy` answer.
public struct RecoveryCopyResponse: Codable, Sendable, Equatable {
    public var code: Int
    /// The locked copy, armored.
    public var lockedKey: String
    /// The account's public key, armored (the opened copy must be this key).
    public var publicKey: String
    public init(lockedKey: String, publicKey: String) { code = 1000; self.lockedKey = lockedKey; self.publicKey = publicKey }
    enum CodingKeys: String, CodingKey { case code = "Code", lockedKey = "LockedKey", publicKey = "PublicKey" }
}

/// `POST /v1/recovery/password` body: a new SRP salt and verifier and the same key locked under
/// bcrypt(new password, new key salt), signed by that key.
///
/// Trust-model rows **server (zero access)** (no password; the key stays locked) and **the user's
/// private and public keys (critical)** (the signature, checked against the stored public key,
/// proves the phrase opened the copy).
public struct RecoveryPasswordRequest: Codable, Sendable, Equatable {
    public var username: String
    public var nonce: String
    public var access: String
    /// The SRP auth version (4).
    public var version: Int
    public var salt: String
    public var verifier: String
    public var keySalt: String
    /// The account's key, armored, locked under bcrypt(new key password, key salt).
    public var privateKey: String
    /// An armored detached signature of ``signedText`` by the account's key.
    public var signature: String
    public init(username: String, nonce: String, access: String, version: Int, salt: String, verifier: String, keySalt: String,
                privateKey: String, signature: String) {
        self.username = username; self.nonce = nonce; self.access = access; self.version = version; self.salt = salt
        self.verifier = verifier; self.keySalt = keySalt; self.privateKey = privateKey; self.signature = signature
    }
    enum CodingKeys: String, CodingKey {
        case username = "Username", nonce = "Nonce", access = "Access", version = "Version", salt = "Salt", verifier = "Verifier"
        case keySalt = "KeySalt", privateKey = "PrivateKey", signature = "Signature"
    }

    /// What the signature covers: a fixed label, the username (lower case), the server's nonce,
    /// the new salts, verifier and locked key, one per line.
    public var signedText: Data {
        Data(["rampart-recovery-v1", username.lowercased(), nonce, salt, verifier, keySalt, privateKey].joined(separator: "\n").utf8)
    }
}

/// `POST /v1/recovery/reset/info` body.
public struct ResetInfoRequest: Codable, Sendable, Equatable {
    public var username: String
    public var token: String
    public init(username: String, token: String) { self.username = username; self.token = token }
    enum CodingKeys: String, CodingKey { case username = "Username", token = "Token" }
}

/// `POST /v1/recovery/reset/info` answer: what the new key's user id must name.
public struct ResetInfoResponse: Codable, Sendable, Equatable {
    public var code: Int
    public var address: String
    public var displayName: String
    /// Every address of the account (first ``address``): the reset needs a new key for each.
    public var addresses: [String]?
    public init(address: String, displayName: String, addresses: [String]? = nil) {
        code = 1000; self.address = address; self.displayName = displayName; self.addresses = addresses
    }
    enum CodingKeys: String, CodingKey { case code = "Code", address = "Address", displayName = "DisplayName", addresses = "Addresses" }
}

/// `POST /v1/recovery/reset` body: with the operator's token, a new password and NEW keys (mail
/// sealed to the old key no longer opens).
public struct AccountResetRequest: Codable, Sendable, Equatable {
    public var username: String
    public var token: String
    public var version: Int
    public var salt: String
    public var verifier: String
    public var keySalt: String
    public var publicKey: String
    public var privateKey: String
    /// A recovery copy of the new key (a new phrase).
    public var recovery: RecoveryCopyUpload?
    /// A new key for every address of the account (``ResetInfoResponse/addresses``), each locked
    /// with a token of the new user key.
    public var addressKeys: [AddressKey]?
    public init(username: String, token: String, version: Int, salt: String, verifier: String, keySalt: String, publicKey: String,
                privateKey: String, recovery: RecoveryCopyUpload?, addressKeys: [AddressKey]? = nil) {
        self.username = username; self.token = token; self.version = version; self.salt = salt; self.verifier = verifier
        self.keySalt = keySalt; self.publicKey = publicKey; self.privateKey = privateKey; self.recovery = recovery
        self.addressKeys = addressKeys
    }
    enum CodingKeys: String, CodingKey {
        case username = "Username", token = "Token", version = "Version", salt = "Salt", verifier = "Verifier", keySalt = "KeySalt"
        case publicKey = "PublicKey", privateKey = "PrivateKey", recovery = "Recovery", addressKeys = "AddressKeys"
    }
}

/// The answer of a recovery or a reset: the password is set; every session of the account ended.
public struct AccountResetResponse: Codable, Sendable, Equatable {
    public var code: Int
    public var endedSessions: Int
    public init(endedSessions: Int) { code = 1000; self.endedSessions = endedSessions }
    enum CodingKeys: String, CodingKey { case code = "Code", endedSessions = "EndedSessions" }
}

/// `POST /v1/account/delete` body: an SRP proof of the login password on a fresh challenge.
public struct AccountDeleteRequest: Codable, Sendable, Equatable {
    public var clientEphemeral: String
    public var clientProof: String
    public var srpSession: String
    public init(clientEphemeral: String, clientProof: String, srpSession: String) {
        self.clientEphemeral = clientEphemeral; self.clientProof = clientProof; self.srpSession = srpSession
    }
    enum CodingKeys: String, CodingKey { case clientEphemeral = "ClientEphemeral", clientProof = "ClientProof", srpSession = "SRPSession" }
}

/// `POST /v1/account/delete` answer: the account is erased.
public struct AccountDeleteResponse: Codable, Sendable, Equatable {
    public var code: Int
    /// base64 of the server's SRP proof (the client checks it).
    public var serverProof: String
    public init(serverProof: String) { code = 1000; self.serverProof = serverProof }
    enum CodingKeys: String, CodingKey { case code = "Code", serverProof = "ServerProof" }
}
