import Foundation
import RampartCore

/// The *none* protector: the MainKey sits in clear in the keychain.
///
/// Trust-model row: **keychain (low)** — weak against forensics and against anyone who can
/// read the keychain; still never in backups (keychain items are this-device-only). It exists
/// because it is the seed app's default until the user sets a PIN.
public struct NoneProtector: MainKeyProtector {
    public init() {}
    public var kind: ProtectorKind { .none }

    public func wrap(_ key: MainKey, for user: UserID, credential: UnlockCredential) throws -> WrappedKeyEnvelope {
        let clear = try key.withUnsafeKeyBytes { Data($0) }
        return WrappedKeyEnvelope(kind: .none, userID: user, keyFingerprint: key.fingerprint, ciphertext: clear)
    }

    public func unwrap(_ envelope: WrappedKeyEnvelope, credential: UnlockCredential) throws -> MainKey {
        guard envelope.kind == .none else { throw KeymakerError.corruptEnvelope("not a none-protector envelope") }
        guard envelope.ciphertext.count == MainKey.byteCount else {
            throw KeymakerError.corruptEnvelope("key has \(envelope.ciphertext.count) bytes")
        }
        let key = try MainKey(adopting: SecretBytes(copying: envelope.ciphertext))
        guard key.fingerprint == envelope.keyFingerprint else {
            key.wipe()
            throw KeymakerError.corruptEnvelope("key does not match its fingerprint")
        }
        return key
    }
}
