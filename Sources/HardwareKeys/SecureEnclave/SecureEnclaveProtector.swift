#if canImport(CryptoKit) && (os(macOS) || os(iOS))
import CryptoKit
import Foundation
import Keymaker
import LocalAuthentication
import RampartCore
import Security

/// The Apple hardware protector: the MainKey wrapped to a Secure Enclave P-256 key.
///
/// Trust-model row: **secure hardware (high)** — the Secure Enclave creates the key pair and
/// never exports the private key; it performs the key agreement only after biometry or the
/// device passcode (`.userPresence`). The envelope mirrors the TPM one
/// (``HardwareEnvelopeParameters``, backend 2):
/// - blob 1: the Secure Enclave key's `dataRepresentation` (an opaque handle, useless elsewhere);
/// - blob 2: an ephemeral P-256 public key (x9.63);
/// - KEK = HKDF-SHA256(ECDH(enclave key, ephemeral key), salt: blob 2,
///   info: "rampart.se.kek.v1|" + user), 32 bytes; MainKey sealed with AES-256-GCM under the
///   KEK, the envelope header as associated data (``HardwareWrap``).
///
/// *hardware + PIN* adds the PIN as the key's application password (`.applicationPassword`):
/// the Secure Enclave checks it and applies its own attempt limits.
/// Not compiled or run on Linux; kept small on purpose.
public struct SecureEnclaveProtector: MainKeyProtector {
    public let kind: ProtectorKind

    /// - Parameter kind: ``ProtectorKind/hardware`` or ``ProtectorKind/hardwarePIN``.
    public init(kind: ProtectorKind) {
        precondition(kind == .hardware || kind == .hardwarePIN, "SecureEnclaveProtector is a hardware protector")
        self.kind = kind
    }

    public static var isAvailable: Bool { SecureEnclave.isAvailable }

    public func availability() -> ProtectorAvailability {
        Self.isAvailable ? .available(detail: "Secure Enclave") : .unavailable(reason: "this device has no Secure Enclave")
    }

    private func context(_ credential: UnlockCredential) throws -> LAContext {
        let context = LAContext()
        if kind == .hardwarePIN {
            guard case .pin(let pin) = credential else { throw ProtectorUnwrapFailure.wrongCredential }
            try PINProtector.validate(pin)
            let text = try pin.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
            guard context.setCredential(Data(text.utf8), type: .applicationPassword) else {
                throw HardwareKeysError.credentialMismatch("the Secure Enclave refused the PIN as application password")
            }
        }
        return context
    }

    private static func kek(_ secret: SharedSecret, ephemeral: Data, user: UserID) -> SecretBytes {
        secret.hkdfDerivedSymmetricKey(using: SHA256.self, salt: ephemeral,
                                       sharedInfo: Data("rampart.se.kek.v1|\(user.rawValue)".utf8), outputByteCount: 32)
            .withUnsafeBytes { SecretBytes(copying: $0) }
    }

    /// Errors that already say what went wrong (a wrong credential, a Keymaker or hardware-key
    /// error): passed on as they are, not wrapped as a Secure Enclave failure.
    private static func passesThrough(_ error: any Error) -> Bool {
        error is ProtectorUnwrapFailure || error is KeymakerError || error is HardwareKeysError
    }

    public func wrap(_ key: MainKey, for user: UserID, credential: UnlockCredential) throws -> WrappedKeyEnvelope {
        guard Self.isAvailable else { throw HardwareKeysError.noTPM("this device has no Secure Enclave") }
        var flags: SecAccessControlCreateFlags = [.privateKeyUsage, .userPresence]
        if kind == .hardwarePIN { flags.insert(.applicationPassword) }
        guard let access = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, flags, nil) else {
            throw HardwareKeysError.commandFailed(command: "SecAccessControlCreateWithFlags", responseCode: 0, message: "refused")
        }
        let enclaveKey: SecureEnclave.P256.KeyAgreement.PrivateKey
        do {
            enclaveKey = try SecureEnclave.P256.KeyAgreement.PrivateKey(accessControl: access, authenticationContext: try context(credential))
        } catch let error where Self.passesThrough(error) {
            throw error
        } catch {
            throw HardwareKeysError.commandFailed(command: "SecureEnclave key creation", responseCode: 0, message: "\(error)")
        }
        let ephemeral = P256.KeyAgreement.PrivateKey()
        let ephemeralPublic = ephemeral.publicKey.x963Representation
        let kek = Self.kek(try ephemeral.sharedSecretFromKeyAgreement(with: enclaveKey.publicKey), ephemeral: ephemeralPublic, user: user)
        defer { kek.wipe() }
        let parameters = HardwareEnvelopeParameters(backend: .secureEnclave, salt: Data(),
                                                    blob1: enclaveKey.dataRepresentation, blob2: ephemeralPublic)
        var envelope = WrappedKeyEnvelope(kind: kind, userID: user, keyFingerprint: key.fingerprint, parameters: parameters.encoded)
        try HardwareWrap.seal(key, kek: kek, into: &envelope)
        return envelope
    }

    public func unwrap(_ envelope: WrappedKeyEnvelope, credential: UnlockCredential) throws -> MainKey {
        guard envelope.kind == kind else { throw KeymakerError.corruptEnvelope("not a \(kind) envelope") }
        let parameters = try HardwareEnvelopeParameters.decode(envelope.parameters)
        guard parameters.backend == .secureEnclave else { throw HardwareKeysError.corruptParameters("not a Secure Enclave envelope") }
        let ephemeral: P256.KeyAgreement.PublicKey
        do {
            ephemeral = try P256.KeyAgreement.PublicKey(x963Representation: parameters.blob2)
        } catch {
            throw HardwareKeysError.corruptParameters("ephemeral public key does not decode")
        }
        let secret: SharedSecret
        do {
            let enclaveKey = try SecureEnclave.P256.KeyAgreement.PrivateKey(
                dataRepresentation: parameters.blob1, authenticationContext: try context(credential))
            secret = try enclaveKey.sharedSecretFromKeyAgreement(with: ephemeral)
        } catch let error where Self.passesThrough(error) {
            throw error
        } catch {
            // Wrong application password, cancelled authentication, or a key from another device.
            if kind == .hardwarePIN { throw ProtectorUnwrapFailure.wrongCredential }
            throw HardwareKeysError.sealedObjectFromAnotherTPM(responseCode: 0)
        }
        let kek = Self.kek(secret, ephemeral: parameters.blob2, user: envelope.userID)
        defer { kek.wipe() }
        return try HardwareWrap.open(envelope, kek: kek)
    }

    /// Secure Enclave keys made by CryptoKit are not stored by the system: dropping the
    /// envelope drops the only handle, so there is nothing else to delete.
    public func discard(_ envelope: WrappedKeyEnvelope) throws {}
}
#endif
