import Bcrypt
import Crypto
import Foundation
import OpenPGP
import RampartAPI
import RampartCore

extension RecoveryKeyCopy {
    /// The access token of a copy: HMAC-SHA256 of a fixed label under the same scrypt output that
    /// locks the copy (one derivation, two uses). The server keeps only its SHA-256
    /// (``accessHash(_:)``) and hands the locked copy only to a client that sends the token, so
    /// nobody fetches copies to guess at offline without the phrase.
    ///
    /// Trust-model row **the user's private and public keys (critical)**: the token opens nothing;
    /// it only gates the download of the locked copy.
    public static func accessToken(phrase: RecoveryPhrase, salt: [UInt8], logN: UInt8) throws -> SecretBytes {
        guard salt.count == saltCount else { throw RecoveryPhraseError.malformedCopy("salt of \(salt.count) bytes") }
        guard (minimumLogN...24).contains(logN) else {
            throw RecoveryPhraseError.malformedCopy("scrypt cost 2^\(logN) is outside 2^\(minimumLogN)...2^24")
        }
        let key = try phrase.derivedKey(salt: salt, logN: logN)
        defer { key.wipe() }
        return try key.withUnsafeBytes { bytes in
            var mac = Array(HMAC<SHA256>.authenticationCode(for: Data("rampart.recovery.access.v1".utf8), using: SymmetricKey(data: bytes)))
            return SecretBytes(consuming: &mac)
        }
    }

    /// What the server stores of an access token: its SHA-256.
    public static func accessHash(_ token: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: token)) }

    /// The upload of a new copy of `key` under `phrase`: the locked key, salt, cost and access token.
    /// - Throws: `OpenPGPError`, ``RecoveryPhraseError``.
    public static func upload(key: PGPPrivateKey, phrase: RecoveryPhrase, logN: UInt8 = defaultLogN) throws -> RecoveryCopyUpload {
        let copy = try make(key: key, phrase: phrase, logN: logN)
        let token = try accessToken(phrase: phrase, salt: copy.salt, logN: copy.logN)
        defer { token.wipe() }
        return RecoveryCopyUpload(lockedKey: copy.lockedKey, salt: Data(copy.salt).base64EncodedString(), logN: Int(copy.logN),
                                  access: try token.withUnsafeBytes { Data($0).base64EncodedString() })
    }
}

extension MailboxKey {
    /// Locks an existing key under `mailboxPassword` with a fresh key salt (recovery: the same key,
    /// a new password).
    /// - Returns: the armored locked key and the key salt.
    public static func lock(_ key: PGPPrivateKey, mailboxPassword: SecretBytes) throws -> (locked: String, keySalt: [UInt8]) {
        let salt = try SecretBytes(randomCount: keySaltCount).withUnsafeBytes { Array($0) }
        let passphrase = try Bcrypt.mailboxKeyPassphrase(password: mailboxPassword, keySalt: salt)
        defer { passphrase.wipe() }
        return (try key.locked(passphrase: passphrase), salt)
    }
}
