import Foundation

// Proton's key model: a user key, locked with bcrypt(password, key salt), and one key per address
// whose passphrase is a random token encrypted to the user key and signed by it (the `Token` and
// `Signature` fields of Proton's address keys). Field names in Proton's style.

/// An address key as it travels: the public key, the private key locked with the token, the
/// token as an OpenPGP message to the user key and a detached signature over the token by the
/// user key.
///
/// Trust-model rows **the user's private and public keys (critical)** (the server holds only the
/// locked key and the encrypted token: it cannot open either) and **server (zero access)** (the
/// server checks the structure of the token and signature, never their content).
public struct AddressKey: Codable, Sendable, Equatable {
    /// The address the key is for (its user id names it).
    public var address: String
    /// The armored OpenPGP public key.
    public var publicKey: String
    /// The armored private key, every secret part locked with the token as passphrase.
    public var privateKey: String
    /// The armored OpenPGP message holding the token, encrypted to the user key.
    public var token: String
    /// The armored detached signature over the token by the user key.
    public var signature: String
    /// Whether the address still belongs to the account (a removed address keeps its key for old mail).
    public var active: Bool?
    /// An address key.
    public init(address: String, publicKey: String, privateKey: String, token: String, signature: String, active: Bool? = nil) {
        self.address = address; self.publicKey = publicKey; self.privateKey = privateKey
        self.token = token; self.signature = signature; self.active = active
    }
    enum CodingKeys: String, CodingKey {
        case address = "Address", publicKey = "PublicKey", privateKey = "PrivateKey", token = "Token", signature = "Signature", active = "Active"
    }
}

/// The account's addresses (first the one made at sign-up) and every key of its key ring.
public struct AddressListResponse: Codable, Sendable, Equatable {
    /// Always 1000.
    public var code: Int
    /// The addresses mail is delivered to, first the primary one.
    public var addresses: [String]
    /// Every address key, active and removed.
    public var keys: [AddressKey]
    /// An answer.
    public init(addresses: [String], keys: [AddressKey]) { code = 1000; self.addresses = addresses; self.keys = keys }
    enum CodingKeys: String, CodingKey { case code = "Code", addresses = "Addresses", keys = "Keys" }
}

extension APIRoute {
    /// `GET` → ``AddressListResponse``: the account's addresses; `POST` ``AddressKey`` →
    /// ``AddressListResponse``: one more address with its key made on the device; `DELETE
    /// ?address=A` → ``AddressListResponse``: the address stops receiving mail and leaves the key
    /// directory, its key stays in the account's key ring so old mail still opens (session).
    public static let addresses = "/v1/addresses"
}
