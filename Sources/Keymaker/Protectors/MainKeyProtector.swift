import Foundation
import RampartCore

/// What the user gives to unlock: nothing (the *none* and *hardware* protectors) or a PIN.
public enum UnlockCredential: Sendable {
    case none
    case pin(SecretBytes)

    var pin: SecretBytes? {
        if case .pin(let pin) = self { return pin }
        return nil
    }
}

/// Wraps and unwraps the MainKey. One implementation per ``ProtectorKind``.
///
/// Trust-model row: **keychain (low)** — the keychain only ever holds a wrapped MainKey, unless
/// the user chose the *none* protector. Implementations: ``NoneProtector``, ``PINProtector``,
/// and the hardware protectors of the `HardwareKeys` module.
public protocol MainKeyProtector: Sendable {
    /// The kind of envelope this protector makes and opens.
    var kind: ProtectorKind { get }

    /// Whether the protector can work in this process (e.g. a TPM is reachable). The reason is
    /// shown by `rampart-dev key status` (and `rampart status`).
    func availability() -> ProtectorAvailability

    /// Wraps `key` for `user`.
    /// - Throws: ``KeymakerError`` (e.g. ``KeymakerError/emptyPIN``), or the protector's errors.
    func wrap(_ key: MainKey, for user: UserID, credential: UnlockCredential) throws -> WrappedKeyEnvelope

    /// Unwraps the key from `envelope`.
    /// - Throws: ``ProtectorUnwrapFailure/wrongCredential`` when the PIN (or hardware
    ///   authorization) is wrong; ``KeymakerError`` for damaged envelopes.
    func unwrap(_ envelope: WrappedKeyEnvelope, credential: UnlockCredential) throws -> MainKey

    /// Releases whatever the protector keeps outside the envelope (e.g. a TPM object) when the
    /// envelope is removed. Default: nothing.
    func discard(_ envelope: WrappedKeyEnvelope) throws
}

extension MainKeyProtector {
    public func discard(_ envelope: WrappedKeyEnvelope) throws {}
    public func availability() -> ProtectorAvailability { .available(detail: kind.rawValue) }
}

/// Whether a protector can be used here.
public enum ProtectorAvailability: Sendable, Equatable {
    case available(detail: String)
    case unavailable(reason: String)

    public var isAvailable: Bool {
        if case .available = self { return true }
        return false
    }
}

/// Thrown by a protector's `unwrap` when the credential is wrong. The Keymaker turns it into
/// ``KeymakerError/wrongPIN(attemptsLeft:)`` after counting the attempt.
public enum ProtectorUnwrapFailure: Error, Equatable {
    case wrongCredential
    /// The hardware refuses every attempt for now (TPM dictionary-attack lockout).
    case hardwareLockedOut(String)
}
