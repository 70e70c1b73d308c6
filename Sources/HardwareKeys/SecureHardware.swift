import Foundation
import Keymaker
import RampartCore

/// The secure hardware of this machine and its MainKey protectors: TPM 2.0 on Linux, Secure
/// Enclave on Apple platforms.
///
/// Trust-model row: **secure hardware (high)** — "private keys generated inside and never
/// exported". The composition root (the app, `rampart`) calls ``protectors(tpm:)`` (or
/// `GlobalContainer.addSecureHardwareProtectors()`) so the `Keymaker` can use the *hardware*
/// and *hardware + PIN* protectors beside *none* and *PIN*. Both kinds are always registered:
/// when no hardware is present, their `MainKeyProtector/availability()` says why and every
/// wrap fails with ``HardwareKeysError/noTPM(_:)`` — never a crash, never a silent fallback.
public enum SecureHardware {
    /// The hardware protectors for this process.
    public static func protectors(tpm: TPMConfiguration = .fromEnvironment()) -> [any MainKeyProtector] {
        #if canImport(CryptoKit) && (os(macOS) || os(iOS))
        return [SecureEnclaveProtector(kind: .hardware), SecureEnclaveProtector(kind: .hardwarePIN)]
        #else
        return [TPMProtector(kind: .hardware, configuration: tpm), TPMProtector(kind: .hardwarePIN, configuration: tpm)]
        #endif
    }

    /// One line on the secure hardware found here, for `rampart-dev key status` (and `rampart status`).
    public static func found(tpm: TPMConfiguration = .fromEnvironment()) -> String {
        #if canImport(CryptoKit) && (os(macOS) || os(iOS))
        return SecureEnclaveProtector.isAvailable ? "Secure Enclave" : "none (this device has no Secure Enclave)"
        #elseif os(Linux)
        guard tpm.tcti != nil else { return "none: no TPM 2.0 found (\(tpm.origin))" }
        do {
            return try TPMDevice(configuration: tpm).describe().description
        } catch {
            return "none: \(error)"
        }
        #else
        return "none: no secure hardware support on this platform"
        #endif
    }
}

extension GlobalContainer {
    /// Adds the secure-hardware protectors to the protectors every Keymaker of this container
    /// uses (call before the first Keymaker is made). Idempotent.
    public func addSecureHardwareProtectors(tpm: TPMConfiguration = .fromEnvironment()) {
        let existing = mainKeyProtectors.filter { $0.kind != .hardware && $0.kind != .hardwarePIN }
        override(.mainKeyProtectors, with: existing + SecureHardware.protectors(tpm: tpm))
    }
}
