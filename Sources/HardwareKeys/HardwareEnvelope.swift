import Crypto
import Foundation
import Keymaker
import RampartCore

/// The hardware-specific part of a *hardware* / *hardware + PIN* `WrappedKeyEnvelope`
/// (its `parameters` field), shared by the TPM and Secure Enclave protectors.
///
/// Trust-model row: **keychain (low)** answered by **secure hardware (high)** — the keychain
/// holds only this record and an AES-GCM ciphertext; the key that opens the ciphertext exists
/// only inside the hardware (sealed in the TPM, or derived by ECDH with a Secure Enclave key).
///
/// Layout, version 1 (integers big-endian):
///
/// | bytes | field |
/// |---|---|
/// | 1 | parameters version (1) |
/// | 1 | backend: 1 = TPM 2.0 sealed object, 2 = Secure Enclave P-256 key agreement |
/// | 1 + n | salt (16 bytes for *hardware + PIN*: PIN → authValue; empty otherwise) |
/// | 2 + n | blob 1: TPM2B_PUBLIC of the sealed object / Secure Enclave key's `dataRepresentation` |
/// | 2 + n | blob 2: TPM2B_PRIVATE of the sealed object / ephemeral P-256 public key (x9.63) |
///
/// The envelope's nonce and ciphertext are AES-256-GCM of the MainKey under the 32-byte
/// key-encryption key (KEK), with the envelope header (which contains these parameters) as
/// associated data: changing any byte of the TPM blobs, the salt, the user or the kind makes
/// unwrapping fail.
public struct HardwareEnvelopeParameters: Sendable, Equatable {
    public enum Backend: UInt8, Sendable {
        case tpm2 = 1
        case secureEnclave = 2
    }

    public static let version: UInt8 = 1
    public var backend: Backend
    public var salt: Data
    public var blob1: Data
    public var blob2: Data

    public var encoded: Data {
        var data = Data([Self.version, backend.rawValue])
        data.append(UInt8(salt.count))
        data.append(salt)
        for blob in [blob1, blob2] {
            data.append(UInt8((blob.count >> 8) & 0xFF))
            data.append(UInt8(blob.count & 0xFF))
            data.append(blob)
        }
        return data
    }

    /// - Throws: ``HardwareKeysError/corruptParameters(_:)``.
    public static func decode(_ data: Data) throws -> HardwareEnvelopeParameters {
        do {
            var reader = ByteReader(data)
            guard try reader.readByte() == version else { throw HardwareKeysError.corruptParameters("unknown parameters version") }
            guard let backend = Backend(rawValue: try reader.readByte()) else {
                throw HardwareKeysError.corruptParameters("unknown hardware backend")
            }
            let salt = try reader.readLengthPrefixed(width: 1)
            let blob1 = try reader.readLengthPrefixed(width: 2)
            let blob2 = try reader.readLengthPrefixed(width: 2)
            guard reader.isAtEnd else { throw HardwareKeysError.corruptParameters("trailing bytes") }
            guard salt.isEmpty || salt.count == 16 else { throw HardwareKeysError.corruptParameters("salt of \(salt.count) bytes") }
            return HardwareEnvelopeParameters(backend: backend, salt: salt, blob1: blob1, blob2: blob2)
        } catch let error as HardwareKeysError {
            throw error
        } catch {
            throw HardwareKeysError.corruptParameters("truncated")
        }
    }
}

/// AES-GCM wrap of the MainKey under a hardware-held KEK (shared by both backends).
enum HardwareWrap {
    /// Turns a PIN into a 32-byte TPM authValue: HKDF-SHA256(PIN, salt, "rampart.tpm.auth.v1|user").
    /// No slow KDF: every guess must go through the TPM, whose dictionary-attack lockout bounds them.
    static func authorization(pin: SecretBytes, salt: Data, user: UserID) throws -> SecretBytes {
        try pin.withUnsafeBytes { pinBytes in
            let key = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: pinBytes), salt: salt,
                                             info: Data("rampart.tpm.auth.v1|\(user.rawValue)".utf8), outputByteCount: 32)
            return key.withUnsafeBytes { SecretBytes(copying: $0) }
        }
    }

    static func seal(_ key: MainKey, kek: SecretBytes, into envelope: inout WrappedKeyEnvelope) throws {
        let header = envelope.header
        let sealed = try kek.withSymmetricKey { symmetric in
            try key.withUnsafeKeyBytes { try AES.GCM.seal($0, using: symmetric, authenticating: header) }
        }
        envelope.nonce = Data(sealed.nonce)
        envelope.ciphertext = sealed.ciphertext + sealed.tag
    }

    /// - Throws: ``HardwareKeysError/envelopeTampered(_:)`` when the ciphertext, nonce or header
    ///   was changed (the KEK came from the hardware, so this is never a wrong PIN).
    static func open(_ envelope: WrappedKeyEnvelope, kek: SecretBytes) throws -> MainKey {
        guard envelope.nonce.count == 12, envelope.ciphertext.count == MainKey.byteCount + 16 else {
            throw HardwareKeysError.envelopeTampered("wrong nonce or ciphertext length")
        }
        var opened: Data
        do {
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: envelope.nonce),
                                            ciphertext: envelope.ciphertext.prefix(MainKey.byteCount),
                                            tag: envelope.ciphertext.suffix(16))
            opened = try kek.withSymmetricKey { try AES.GCM.open(box, using: $0, authenticating: envelope.header) }
        } catch {
            throw HardwareKeysError.envelopeTampered("AES-GCM authentication failed")
        }
        guard let key = try envelope.adoptUnwrappedKey(&opened) else {
            throw HardwareKeysError.envelopeTampered("unwrapped key does not match its fingerprint")
        }
        return key
    }
}
