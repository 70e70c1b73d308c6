import Foundation
import OpenPGP
import RampartAPI
import RampartCore

/// Proton's address keys: one OpenPGP key per address, locked with a random token (32 random
/// bytes, hex) as passphrase; the token travels as an OpenPGP message encrypted to the user key,
/// with a detached signature over it by the user key (Proton's `Token` and `Signature`).
///
/// A password change, a recovery with the phrase, or a second device touches only the user key:
/// every address key opens through its token. A reset makes a new user key and new address keys.
///
/// Trust-model rows **the user's private and public keys (critical)** (the server holds the
/// address key locked and its token encrypted: opening either needs the user key, which needs the
/// password) and **server (zero access)** (a token the server swapped or an address key it
/// substituted fails the signature or fingerprint check on the device, ``MailboxCryptoError/tampered(_:)``).
public enum AddressKeys {
    /// The token's random bytes (hex-encoded as the passphrase, 64 characters).
    public static let tokenByteCount = 32

    /// A new key for `address` (user id `name <address>`), locked with a fresh token that is
    /// encrypted to and signed by `userKey`.
    /// - Returns: the unlocked key (the caller wipes it) and what is uploaded.
    /// - Throws: `OpenPGPError`.
    public static func make(name: String, address: String, userKey: PGPPrivateKey) throws -> (key: PGPPrivateKey, upload: AddressKey) {
        let key = try PGPPrivateKey.generate(name: name, address: address)
        do {
            let random = try SecretBytes(randomCount: tokenByteCount)
            defer { random.wipe() }
            var hex = try random.withUnsafeBytes { bytes in Array(bytes.map { String(format: "%02x", $0) }.joined().utf8) }
            let token = SecretBytes(consuming: &hex)
            defer { token.wipe() }
            var tokenData = try token.withUnsafeBytes { Data($0) }
            defer { tokenData.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
            let encrypted = try OpenPGP.encrypt(tokenData, to: [userKey.publicKey], signedBy: nil, armor: true)
            let signature = try OpenPGP.detachedSignature(for: tokenData, with: userKey, armor: true)
            let upload = AddressKey(address: address.lowercased(), publicKey: key.publicKey.armored(),
                                    privateKey: try key.locked(passphrase: token),
                                    token: String(decoding: encrypted, as: UTF8.self), signature: String(decoding: signature, as: UTF8.self))
            return (key, upload)
        } catch {
            key.wipe()
            throw error
        }
    }

    /// Opens an address key: the token is decrypted with `userKey`, its signature checked against
    /// `userKey`, the key unlocked with it, and its fingerprint and user id checked against the
    /// record's public key and address.
    /// - Throws: ``MailboxCryptoError/tampered(_:)`` (a token not signed by the user key, a key
    ///   that is not the published one or names another address), ``MailboxCryptoError/malformed(_:)``.
    public static func unlock(_ record: AddressKey, userKey: PGPPrivateKey) throws -> PGPPrivateKey {
        let what = "address key of \(record.address.prefix(254))"
        var opened: PGPDecrypted
        do {
            opened = try OpenPGP.decrypt(Data(record.token.utf8), with: [userKey], verifyingWith: [],
                                         limits: PGPLimits(maxOutputBytes: 1024))
        } catch {
            throw MailboxCryptoError.tampered("token of the \(what) (it does not open with the user key)")
        }
        defer { opened.data.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
        let signed = try? OpenPGP.verifyDetached(opened.data, signature: Data(record.signature.utf8), against: [userKey.publicKey])
        guard case .verified? = signed else {
            throw MailboxCryptoError.tampered("token of the \(what) (its signature is not the user key's)")
        }
        let passphrase = SecretBytes(copying: opened.data)
        defer { passphrase.wipe() }
        let key: PGPPrivateKey
        do { key = try PGPPrivateKey.unlock(armored: record.privateKey, passphrase: passphrase) } catch {
            throw MailboxCryptoError.malformed("\(what) (\(error))")
        }
        let published = try? PGPPublicKey(armored: record.publicKey)
        guard key.fingerprint == published?.fingerprint,
              key.publicKey.addresses.map({ $0.lowercased() }) == [record.address.lowercased()] else {
            key.wipe()
            throw MailboxCryptoError.tampered(what)
        }
        return key
    }
}

/// An account's unlocked keys on the device: the user key and every address key, the first
/// active one the primary address's (the sender of mail by default, the key of drive and imports).
///
/// Trust-model row **the user's private and public keys (critical)**: opened from the login
/// answer with the key password (bcrypt) and the tokens; wiped with ``wipe()``.
public struct AccountKeyring: Sendable {
    /// The user key (it opens the tokens; it signs new addresses' tokens).
    public var userKey: PGPPrivateKey
    /// Every address key with its address and whether the address is still the account's.
    public var addressKeys: [(address: String, key: PGPPrivateKey, active: Bool)]

    /// A key ring.
    public init(userKey: PGPPrivateKey, addressKeys: [(address: String, key: PGPPrivateKey, active: Bool)]) {
        self.userKey = userKey; self.addressKeys = addressKeys
    }

    /// Opens the user key with `keyPassword` (bcrypt with the key salt), then each address key
    /// through its token; checks that the user key is the published one.
    /// - Throws: ``MailboxCryptoError/wrongMailboxPassword``, ``MailboxCryptoError/tampered(_:)``,
    ///   ``MailboxCryptoError/malformed(_:)`` (also when the account has no address key).
    public static func unlock(_ keys: UserKeys, keyPassword: SecretBytes) throws -> AccountKeyring {
        guard let salt = Data(base64Encoded: keys.keySalt) else { throw MailboxCryptoError.malformed("key salt") }
        let userKey = try MailboxKey.unlock(locked: keys.privateKey, keySalt: [UInt8](salt), mailboxPassword: keyPassword)
        var ring = AccountKeyring(userKey: userKey, addressKeys: [])
        do {
            guard userKey.fingerprint == (try? PGPPublicKey(armored: keys.publicKey))?.fingerprint else {
                throw MailboxCryptoError.tampered("user key sent by the server (it does not match the account's public key)")
            }
            guard keys.addressKeys.contains(where: { $0.active ?? true }) else { throw MailboxCryptoError.malformed("account (it has no address key)") }
            for record in keys.addressKeys {
                ring.addressKeys.append((record.address.lowercased(), try AddressKeys.unlock(record, userKey: userKey), record.active ?? true))
            }
        } catch {
            ring.wipe()
            throw error
        }
        return ring
    }

    /// The primary address's key (the first active one).
    public var primary: PGPPrivateKey { (addressKeys.first { $0.active } ?? addressKeys[0]).key }

    /// The active key of `address`, if the account has that address.
    public func key(for address: String) -> PGPPrivateKey? {
        addressKeys.first { $0.active && $0.address == address.lowercased() }?.key
    }

    /// Every address key, for opening mail (the primary first).
    public var decryptionKeys: [PGPPrivateKey] {
        let primary = self.primary
        return [primary] + addressKeys.map(\.key).filter { $0.fingerprint != primary.fingerprint }
    }

    /// Zeroizes every key now.
    public func wipe() {
        userKey.wipe()
        addressKeys.forEach { $0.key.wipe() }
    }
}
