import Foundation
import OpenPGP
import RampartAPI
import RampartCore
import SRP

/// What a device makes to sign up (Proton's way): a fresh SRP salt and the verifier g^x mod N of
/// the login password for the server's (verified) group, a new OpenPGP user key locked with
/// bcrypt(key password, key salt) exactly as ``MailboxKey`` locks it, and the first address's key
/// locked with a token encrypted to and signed by the user key (``AddressKeys``). Only the
/// verifier, the salts, the public keys, the locked private keys and the token with its signature
/// go into RampartAPI's `SignupRequest`.
///
/// One-password mode: the key password *is* the login password (the passphrase is
/// bcrypt(login password, key salt) and never sent; SRP sends only a proof). Two-password mode:
/// a separate mailbox password. The client (`SignupFlow`) and the demo seed's stand-in client use
/// this one function.
///
/// Trust-model rows **server (zero access)**, **mailbox password (critical)** (neither password
/// nor the passphrase leaves this function; the caller wipes the passwords) and **the user's
/// private and public keys (critical)** (the unlocked key is wiped before returning).
public enum SignupPayload {
    /// Makes the request.
    /// - Parameters:
    ///   - username: the account name the user chose (the server checks its rules).
    ///   - displayName: the name shown as the sender of mail; it is also the key's user id name.
    ///   - address: the account's address; the key's user id names it.
    ///   - loginPassword: the login password: only its SRP verifier leaves this function.
    ///   - group: the SRP group of the server's modulus, *after* its signature was checked against
    ///     the pinned modulus key (the server's own group for the demo seed).
    ///   - keyPassword: the login password (one-password mode) or the mailbox password.
    ///   - invitation: the operator's invitation code, when sign-up is closed.
    ///   - recoveryPhrase: when given, a ``RecoveryKeyCopy`` of the new key under this phrase
    ///     goes with the request (`RecoveryCopyUpload`).
    ///   - recoveryLogN: scrypt's cost of that copy.
    /// - Throws: `SRPError`, `OpenPGPError` (an empty password, key generation).
    public static func make(username: String, displayName: String, address: String, loginPassword: SecretBytes,
                            keyPassword: SecretBytes, group: SRPGroup, invitation: String? = nil,
                            recoveryPhrase: RecoveryPhrase? = nil,
                            recoveryLogN: UInt8 = RecoveryKeyCopy.defaultLogN) throws -> SignupRequest {
        try make(username: username, displayName: displayName, address: address, otherAddresses: [], loginPassword: loginPassword,
                 keyPassword: keyPassword, group: group, invitation: invitation, recoveryPhrase: recoveryPhrase, recoveryLogN: recoveryLogN).request
    }

    /// Makes the request and a key of its own for each of `otherAddresses` (the account's addresses
    /// after `address`), locked with a token of the same user key: a reset of an account with
    /// several addresses gives every one a new key. The other arguments are as for the request alone.
    /// - Returns: the request and the other addresses' keys, in order.
    public static func make(username: String, displayName: String, address: String, otherAddresses: [String], loginPassword: SecretBytes,
                            keyPassword: SecretBytes, group: SRPGroup, invitation: String? = nil, recoveryPhrase: RecoveryPhrase? = nil,
                            recoveryLogN: UInt8 = RecoveryKeyCopy.defaultLogN) throws -> (request: SignupRequest, otherKeys: [AddressKey]) {
        let salt = SRPPassword.newSalt()
        let verifier = try SRPPassword.verifier(password: loginPassword, salt: salt, group: group)
        let key = try MailboxKey.create(name: displayName, address: address, mailboxPassword: keyPassword)
        defer { key.key.wipe() }
        let addressKey = try AddressKeys.make(name: displayName, address: address, userKey: key.key)
        defer { addressKey.key.wipe() }
        let others = try otherAddresses.map { other in
            let made = try AddressKeys.make(name: displayName, address: other, userKey: key.key)
            made.key.wipe()
            return made.upload
        }
        let request = SignupRequest(username: username, displayName: displayName, address: address, version: SRPPassword.version,
                             salt: Data(salt).base64EncodedString(), verifier: Data(verifier).base64EncodedString(),
                             keySalt: Data(key.keySalt).base64EncodedString(), publicKey: key.key.publicKey.armored(),
                             privateKey: key.locked, invitation: invitation,
                             recovery: try recoveryPhrase.map { try RecoveryKeyCopy.upload(key: key.key, phrase: $0, logN: recoveryLogN) },
                             addressKey: addressKey.upload)
        return (request, others)
    }
}
