import Foundation

// Sign-up made on the device, as Proton does it: the client makes the SRP salt and verifier
// against the server's signed modulus, and the account's OpenPGP key locked with a passphrase
// derived from the password (bcrypt with a key salt); the server receives neither the password
// nor a cleartext key. Field names in Proton's style (capitalized), binary values base64.

extension APIRoute {
    /// `GET` → ``SignupInfoResponse`` (public): the signed modulus, the domain addresses are made
    /// in, whether an invitation is needed.
    public static let signupInfo = "/v1/signup"
    /// `POST` ``SignupRequest`` → ``SignupResponse`` (public, throttled per client address).
    public static let signup = "/v1/signup/accounts"
}

/// `GET /v1/signup` answer.
///
/// Trust-model row **transport (network), low trust**: ``modulus`` is the same cleartext-signed
/// modulus as at `/auth/info`; the client checks it against the pinned modulus key before making a
/// verifier with it.
public struct SignupInfoResponse: Codable, Sendable, Equatable {
    /// Always 1000.
    public var code: Int
    /// `-----BEGIN PGP SIGNED MESSAGE-----` over the base64 of N.
    public var modulus: String
    /// The domains an address may be in (one today: the server's).
    public var domains: [String]
    /// Whether a sign-up needs an invitation code (sign-up is closed unless the operator opened it).
    public var invitationRequired: Bool
    /// An answer.
    public init(modulus: String, domains: [String], invitationRequired: Bool) {
        code = 1000; self.modulus = modulus; self.domains = domains; self.invitationRequired = invitationRequired
    }
    enum CodingKeys: String, CodingKey {
        case code = "Code", modulus = "Modulus", domains = "Domains", invitationRequired = "InvitationRequired"
    }
}

/// `POST /v1/signup/accounts` body: everything the server keeps of a new account, made on the device.
///
/// Trust-model rows **server (zero access)** (no password, no passphrase, no cleartext key: the
/// SRP verifier, the salts, the public key and the private key locked with
/// bcrypt(password, key salt)), **username (critical)** (the name and address are the only
/// personal data sent) and **mailbox password (critical)** (it never leaves the device).
public struct SignupRequest: Codable, Sendable, Equatable {
    /// The account name: 3–40 ASCII letters, digits, `.`, `-`, `_` (unique without regard to case).
    public var username: String
    /// The name shown as the sender of mail (1–100 characters).
    public var displayName: String
    /// The account's address, in the server's domain; the key's user id must name it.
    public var address: String
    /// The SRP auth version the verifier was made for (4).
    public var version: Int
    /// base64 of the SRP salt (10 bytes).
    public var salt: String
    /// base64 of the SRP verifier g^x mod N (256 bytes, little-endian).
    public var verifier: String
    /// base64 of the key salt (16 bytes): the key passphrase is bcrypt(password, key salt).
    public var keySalt: String
    /// The user key's public half, armored.
    public var publicKey: String
    /// The user key, armored, every secret part locked with the key passphrase.
    public var privateKey: String
    /// The operator's single-use invitation code (`rampart server invite`), when sign-up is closed.
    public var invitation: String?
    /// The recovery copy of the key, locked under the recovery phrase (``RecoveryCopyUpload``);
    /// nil: the account cannot be recovered with a phrase (only reset by the operator).
    public var recovery: RecoveryCopyUpload?
    /// The key of ``address`` (``AddressKey``): locked with a token encrypted to and signed by
    /// the user key above (``publicKey``/``privateKey``); required.
    public var addressKey: AddressKey?
    /// A request.
    public init(username: String, displayName: String, address: String, version: Int, salt: String, verifier: String,
                keySalt: String, publicKey: String, privateKey: String, invitation: String? = nil, recovery: RecoveryCopyUpload? = nil,
                addressKey: AddressKey? = nil) {
        self.username = username; self.displayName = displayName; self.address = address; self.version = version
        self.salt = salt; self.verifier = verifier; self.keySalt = keySalt; self.publicKey = publicKey
        self.privateKey = privateKey; self.invitation = invitation; self.recovery = recovery; self.addressKey = addressKey
    }
    enum CodingKeys: String, CodingKey {
        case username = "Username", displayName = "DisplayName", address = "Address", version = "Version", salt = "Salt"
        case verifier = "Verifier", keySalt = "KeySalt", publicKey = "PublicKey", privateKey = "PrivateKey"
        case invitation = "Invitation", recovery = "Recovery", addressKey = "AddressKey"
    }
}

/// `POST /v1/signup/accounts` answer: the account exists; log in with SRP.
public struct SignupResponse: Codable, Sendable, Equatable {
    /// Always 1000.
    public var code: Int
    /// The new user's id.
    public var userId: String
    /// The username as stored (lower case).
    public var username: String
    /// The address as stored (lower case).
    public var address: String
    /// An answer.
    public init(userId: String, username: String, address: String) {
        code = 1000; self.userId = userId; self.username = username; self.address = address
    }
    enum CodingKeys: String, CodingKey { case code = "Code", userId = "UserID", username = "Username", address = "Address" }
}
