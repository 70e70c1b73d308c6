import Crypto
import Foundation
import RampartCore
import _CryptoExtras

/// scrypt parameters of a PIN envelope: N = 2^`logN`, r, p and the salt.
///
/// The floor is the seed app's N = 2^15, r = 8, p = 1; ``calibrated(target:)`` raises N until a
/// derivation takes about the target time on this machine (250 ms by default).
public struct ScryptParameters: Sendable, Equatable, Codable {
    public var logN: UInt8
    public var r: UInt32
    public var p: UInt32
    public var salt: Data

    /// The weakest parameters Rampart accepts, for new envelopes and when reading old ones.
    public static let minimumLogN: UInt8 = 15
    public static let minimumR: UInt32 = 8
    /// A ceiling that keeps memory use sane (2^20 × 8 × 128 B = 1 GiB).
    public static let maximumLogN: UInt8 = 20

    public init(logN: UInt8, r: UInt32 = 8, p: UInt32 = 1, salt: Data = ScryptParameters.randomSalt()) {
        self.logN = logN
        self.r = r
        self.p = p
        self.salt = salt
    }

    public static func randomSalt() -> Data {
        Data(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
    }

    /// The floor parameters with a fresh salt.
    public static var minimum: ScryptParameters { ScryptParameters(logN: minimumLogN) }

    /// Measures a derivation at the floor and raises N (doubling) until one derivation takes
    /// about `target` seconds; never below the floor, never above ``maximumLogN``.
    public static func calibrated(target: TimeInterval = 0.25) -> ScryptParameters {
        let probe = ScryptParameters.minimum
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            _ = try? probe.deriveKey(pin: Array("calibration".utf8).withUnsafeBytes { SecretBytes(copying: $0) })
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var logN = minimumLogN
        var predicted = max(seconds, 1e-4)
        while logN < maximumLogN, predicted * 2 <= target * 1.4 {
            logN += 1
            predicted *= 2
        }
        return ScryptParameters(logN: logN)
    }

    /// Serialized form inside the envelope: kdf id (1 = scrypt), logN, r, p, salt.
    public var encoded: Data {
        var data = Data([1, logN])
        for value in [r, p] { withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) } }
        data.appendLengthPrefixed(salt, width: 1)
        return data
    }

    public static func decode(_ data: Data) throws -> ScryptParameters {
        var reader = ByteReader(data)
        guard try reader.readByte() == 1 else { throw KeymakerError.corruptEnvelope("unknown KDF") }
        let logN = try reader.readByte()
        let r = UInt32(try reader.readUInt(width: 4))
        let p = UInt32(try reader.readUInt(width: 4))
        let salt = try reader.readLengthPrefixed(width: 1)
        guard reader.isAtEnd else { throw KeymakerError.corruptEnvelope("trailing KDF bytes") }
        guard logN >= minimumLogN, logN <= maximumLogN, r >= minimumR, r <= 32, p >= 1, p <= 16, salt.count >= 16 else {
            throw KeymakerError.corruptEnvelope("KDF parameters outside the accepted range (N=2^\(logN), r=\(r), p=\(p))")
        }
        return ScryptParameters(logN: logN, r: r, p: p, salt: salt)
    }

    /// Derives the 256-bit key-encryption key from `pin`.
    ///
    /// swift-crypto's scrypt returns a `SymmetricKey` (zeroized on release); its internal
    /// intermediate `Data` buffer is not zeroized — a limit of the library, documented.
    public func deriveKey(pin: SecretBytes) throws -> SecretBytes {
        try pin.withUnsafeBytes { pinBytes in
            let key = try KDF.Scrypt.deriveKey(
                from: pinBytes, salt: salt, outputByteCount: 32,
                rounds: 1 << Int(logN), blockSize: Int(r), parallelism: Int(p)
            )
            return key.withUnsafeBytes { SecretBytes(copying: $0) }
        }
    }
}

/// The *PIN* protector: a key derived from the PIN with scrypt wraps the MainKey with AES-GCM.
///
/// Trust-model row: **keychain (low)** — the keychain holds only the wrapped key; neither the
/// PIN nor the derived key is ever persisted, and both are wiped right after use. Unlike the
/// seed app's unauthenticated AES-CTR, AES-GCM (with the envelope header as associated data)
/// tells a wrong PIN from a right one at once and refuses a modified envelope.
///
/// Honest limit: anyone who copies the keychain can guess PINs offline at the cost of one
/// scrypt derivation per guess; the attempt counter cannot stop that. The hardware protector
/// (TPM / Secure Enclave) is the answer: there every guess goes through the hardware.
public struct PINProtector: MainKeyProtector {
    /// Minimum and maximum PIN length, in bytes of UTF-8.
    public static let minimumLength = 4
    public static let maximumLength = 128

    /// How parameters for new envelopes are chosen.
    public enum Strength: Sendable {
        /// Calibrate N to about `seconds` per derivation on this machine (default 0.25 s).
        case calibrated(seconds: TimeInterval)
        /// Fixed parameters (never below the floor).
        case fixed(logN: UInt8)
    }

    public let strength: Strength

    public init(strength: Strength = .calibrated(seconds: 0.25)) {
        self.strength = strength
    }

    public var kind: ProtectorKind { .pin }

    /// Checks a PIN's length. - Throws: ``KeymakerError/emptyPIN``, ``KeymakerError/pinTooShort(minimum:)``,
    /// ``KeymakerError/pinTooLong(maximum:)``.
    public static func validate(_ pin: SecretBytes) throws {
        if pin.count == 0 { throw KeymakerError.emptyPIN }
        if pin.count < minimumLength { throw KeymakerError.pinTooShort(minimum: minimumLength) }
        if pin.count > maximumLength { throw KeymakerError.pinTooLong(maximum: maximumLength) }
    }

    func parametersForNewEnvelope() -> ScryptParameters {
        switch strength {
        case .calibrated(let seconds): ScryptParameters.calibrated(target: seconds)
        case .fixed(let logN): ScryptParameters(logN: max(logN, ScryptParameters.minimumLogN))
        }
    }

    public func wrap(_ key: MainKey, for user: UserID, credential: UnlockCredential) throws -> WrappedKeyEnvelope {
        guard let pin = credential.pin else { throw KeymakerError.emptyPIN }
        try Self.validate(pin)
        let parameters = parametersForNewEnvelope()
        var envelope = WrappedKeyEnvelope(kind: .pin, userID: user, keyFingerprint: key.fingerprint,
                                          parameters: parameters.encoded)
        let kek = try parameters.deriveKey(pin: pin)
        defer { kek.wipe() }
        let sealed = try kek.withSymmetricKey { symmetric in
            try key.withUnsafeKeyBytes { keyBytes in
                try AES.GCM.seal(keyBytes, using: symmetric, authenticating: envelope.header)
            }
        }
        envelope.nonce = Data(sealed.nonce)
        envelope.ciphertext = sealed.ciphertext + sealed.tag
        return envelope
    }

    public func unwrap(_ envelope: WrappedKeyEnvelope, credential: UnlockCredential) throws -> MainKey {
        guard envelope.kind == .pin else { throw KeymakerError.corruptEnvelope("not a PIN envelope") }
        guard let pin = credential.pin else { throw ProtectorUnwrapFailure.wrongCredential }
        try Self.validate(pin)
        let parameters = try ScryptParameters.decode(envelope.parameters)
        guard envelope.nonce.count == 12, envelope.ciphertext.count == MainKey.byteCount + 16 else {
            throw KeymakerError.corruptEnvelope("wrong nonce or ciphertext length")
        }
        let kek = try parameters.deriveKey(pin: pin)
        defer { kek.wipe() }
        let box = try AES.GCM.SealedBox(
            nonce: AES.GCM.Nonce(data: envelope.nonce),
            ciphertext: envelope.ciphertext.prefix(MainKey.byteCount),
            tag: envelope.ciphertext.suffix(16)
        )
        var opened: Data
        do {
            opened = try kek.withSymmetricKey { try AES.GCM.open(box, using: $0, authenticating: envelope.header) }
        } catch is SecretError {
            throw SecretError.wiped
        } catch {
            throw ProtectorUnwrapFailure.wrongCredential
        }
        guard let key = try envelope.adoptUnwrappedKey(&opened) else {
            throw KeymakerError.corruptEnvelope("unwrapped key does not match its fingerprint")
        }
        return key
    }
}
