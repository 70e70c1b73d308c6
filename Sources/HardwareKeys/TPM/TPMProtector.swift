import Foundation
import Keymaker
import RampartCore

/// The Linux hardware protectors: the MainKey wrapped by a key sealed in a TPM 2.0.
///
/// Trust-model row: **secure hardware (high)** — "the MainKey is encrypted and the ciphertext
/// kept in the keychain; the hardware decrypts it". A fresh 32-byte key-encryption key (KEK)
/// wraps the MainKey with AES-256-GCM (envelope header as associated data); the KEK itself is
/// sealed into a TPM keyedhash object (`fixedTPM | fixedParent`) under the owner hierarchy's
/// storage primary key, so the envelope in the keychain opens only on this TPM.
///
/// - `ProtectorKind/hardware`: the sealed object has an empty authValue and `noDA`: no user
///   secret, bound to this machine (like the seed's biometric protector, without biometrics).
/// - `ProtectorKind/hardwarePIN`: the object's authValue is HKDF(PIN, salt, user); every
///   guess is an HMAC-authorized TPM2_Unseal, counted by the TPM's dictionary-attack lockout.
///
/// Errors: ``HardwareKeysError`` (no TPM, blob from another TPM, tampered envelope),
/// `ProtectorUnwrapFailure/wrongCredential` for a wrong PIN, and
/// `ProtectorUnwrapFailure/hardwareLockedOut(_:)` while the TPM is in lockout.
public struct TPMProtector: MainKeyProtector {
    public let kind: ProtectorKind
    public let configuration: TPMConfiguration

    /// - Parameters:
    ///   - kind: `ProtectorKind/hardware` or `ProtectorKind/hardwarePIN`.
    ///   - configuration: which TPM to use (`RAMPART_TPM_TCTI`, else `/dev/tpmrm0`, else `/dev/tpm0`).
    public init(kind: ProtectorKind, configuration: TPMConfiguration = .fromEnvironment()) {
        precondition(kind == .hardware || kind == .hardwarePIN, "TPMProtector is a hardware protector")
        self.kind = kind
        self.configuration = configuration
    }

    /// Both hardware protectors on the TPM of `configuration`, or none when no TPM is configured.
    public static func all(configuration: TPMConfiguration = .fromEnvironment()) -> [TPMProtector] {
        guard configuration.tcti != nil else { return [] }
        return [TPMProtector(kind: .hardware, configuration: configuration),
                TPMProtector(kind: .hardwarePIN, configuration: configuration)]
    }

    public func availability() -> ProtectorAvailability {
        #if os(Linux)
        do {
            let description = try TPMDevice(configuration: configuration).describe()
            return .available(detail: description.description)
        } catch {
            return .unavailable(reason: String(describing: error))
        }
        #else
        return .unavailable(reason: "TPM 2.0 protector is Linux only; use the Secure Enclave protector")
        #endif
    }

    public func wrap(_ key: MainKey, for user: UserID, credential: UnlockCredential) throws -> WrappedKeyEnvelope {
        #if os(Linux)
        let device = TPMDevice(configuration: configuration)
        var salt = Data()
        var authorization: SecretBytes?
        switch (kind, credential) {
        case (.hardwarePIN, .pin(let pin)):
            try PINProtector.validate(pin)
            salt = Data(try SecretBytes(randomCount: 16).withUnsafeBytes { Array($0) })
            authorization = try HardwareWrap.authorization(pin: pin, salt: salt, user: user)
        case (.hardwarePIN, .none):
            throw KeymakerError.emptyPIN
        case (.hardware, .pin):
            throw HardwareKeysError.credentialMismatch("the hardware protector takes no PIN (use hardwarePIN)")
        default:
            break
        }
        defer { authorization?.wipe() }
        let kek = SecretBytes(randomCount: 32)
        defer { kek.wipe() }
        let sealed = try device.seal(kek, authorization: authorization)
        let parameters = HardwareEnvelopeParameters(backend: .tpm2, salt: salt,
                                                    blob1: sealed.publicArea, blob2: sealed.privateArea)
        var envelope = WrappedKeyEnvelope(kind: kind, userID: user, keyFingerprint: key.fingerprint,
                                          parameters: parameters.encoded)
        try HardwareWrap.seal(key, kek: kek, into: &envelope)
        return envelope
        #else
        throw HardwareKeysError.noTPM("TPM 2.0 protector is Linux only")
        #endif
    }

    public func unwrap(_ envelope: WrappedKeyEnvelope, credential: UnlockCredential) throws -> MainKey {
        #if os(Linux)
        guard envelope.kind == kind else { throw KeymakerError.corruptEnvelope("not a \(kind) envelope") }
        let parameters = try HardwareEnvelopeParameters.decode(envelope.parameters)
        guard parameters.backend == .tpm2 else { throw HardwareKeysError.corruptParameters("not a TPM envelope") }
        var authorization: SecretBytes?
        switch kind {
        case .hardwarePIN:
            guard let pin = credential.pinValue else { throw ProtectorUnwrapFailure.wrongCredential }
            guard parameters.salt.count == 16 else { throw HardwareKeysError.corruptParameters("missing PIN salt") }
            authorization = try HardwareWrap.authorization(pin: pin, salt: parameters.salt, user: envelope.userID)
        default:
            guard parameters.salt.isEmpty else { throw HardwareKeysError.corruptParameters("unexpected PIN salt") }
        }
        defer { authorization?.wipe() }
        let kek: SecretBytes
        do {
            kek = try TPMDevice(configuration: configuration)
                .unseal(TPMSealedObject(publicArea: parameters.blob1, privateArea: parameters.blob2),
                        authorization: authorization)
        } catch HardwareKeysError.wrongAuthorization {
            throw ProtectorUnwrapFailure.wrongCredential
        } catch HardwareKeysError.lockedOut(let detail) {
            throw ProtectorUnwrapFailure.hardwareLockedOut(detail)
        }
        defer { kek.wipe() }
        guard kek.count == 32 else { throw HardwareKeysError.envelopeTampered("sealed key of \(kek.count) bytes") }
        return try HardwareWrap.open(envelope, kek: kek)
        #else
        throw HardwareKeysError.noTPM("TPM 2.0 protector is Linux only")
        #endif
    }
}

extension UnlockCredential {
    var pinValue: SecretBytes? {
        if case .pin(let pin) = self { return pin }
        return nil
    }
}
