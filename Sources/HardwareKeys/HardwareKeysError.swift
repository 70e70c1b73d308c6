import RampartCore

/// Why a hardware-key operation failed.
///
/// Trust-model row: **secure hardware (high)** — every failure of the TPM / Secure Enclave path
/// is reported as one of these, never as a crash, so `rampart key status` and the unlock screen
/// can tell "no TPM here" from "wrong PIN" from "locked out".
public enum HardwareKeysError: Error, Equatable, DescribedRampartError {
    /// No TPM was found (no device node and no `RAMPART_TPM_TCTI`), or this platform has none.
    case noTPM(String)
    /// The TCTI could not be loaded or the TPM did not answer through it.
    case tctiUnavailable(tcti: String, responseCode: UInt32, message: String)
    /// A TPM command failed for a reason other than authorization.
    case commandFailed(command: String, responseCode: UInt32, message: String)
    /// The owner hierarchy has an authorization value; Rampart needs it empty to create its
    /// storage primary key.
    case ownerAuthorizationRequired
    /// The sealed object does not load under this TPM's storage key: it was made by another
    /// TPM (a copied keychain) or the owner hierarchy was cleared since.
    case sealedObjectFromAnotherTPM(responseCode: UInt32)
    /// The authorization value (the PIN) was wrong; the TPM counted a dictionary-attack failure.
    case wrongAuthorization(responseCode: UInt32)
    /// The TPM is in dictionary-attack lockout and refuses every authorization for now.
    case lockedOut(String)
    /// The protector-specific part of the envelope cannot be decoded.
    case corruptParameters(String)
    /// The envelope (ciphertext, nonce or header) was modified after it was made.
    case envelopeTampered(String)
    /// The credential does not fit the protector (a PIN for *hardware*, none for *hardware + PIN*).
    case credentialMismatch(String)

    /// The code, category (the CLI's exit status) and message of each case.
    public var info: RampartErrorInfo {
        switch self {
        case .noTPM(let why): RampartErrorInfo(code: "hardware.noTPM", kind: .failure, message: "No TPM 2.0 is available: \(why). Set RAMPART_TPM_TCTI (e.g. swtpm:host=127.0.0.1,port=2321) or use the PIN protector.")
        case .tctiUnavailable(let tcti, let rc, let message): RampartErrorInfo(code: "hardware.tctiUnavailable", kind: .failure, message: "The TPM at '\(tcti)' cannot be reached (\(TPMResponseCode.hex(rc)): \(message)). Check that the device exists and is readable, or that swtpm is running.")
        case .commandFailed(let command, let rc, let message): RampartErrorInfo(code: "hardware.commandFailed", kind: .failure, message: "The TPM refused \(command) (\(TPMResponseCode.hex(rc)): \(message)).")
        case .ownerAuthorizationRequired: RampartErrorInfo(code: "hardware.ownerAuthorizationRequired", kind: .failure, message: "The TPM's owner hierarchy has a password; Rampart needs an unowned owner hierarchy (clear it with tpm2_changeauth -c owner) or use the PIN protector.")
        case .sealedObjectFromAnotherTPM(let rc): RampartErrorInfo(code: "hardware.sealedObjectFromAnotherTPM", kind: .failure, message: "The wrapped MainKey was sealed by another TPM (or this TPM's owner hierarchy was cleared) and cannot be opened here (\(TPMResponseCode.hex(rc))). Log in again on this device.")
        case .wrongAuthorization(let rc): RampartErrorInfo(code: "hardware.wrongAuthorization", kind: .failure, message: "The TPM rejected the PIN (\(TPMResponseCode.hex(rc))); the attempt was counted by its dictionary-attack protection.")
        case .lockedOut(let detail): RampartErrorInfo(code: "hardware.lockedOut", kind: .locked, message: "The TPM is in dictionary-attack lockout and refuses every PIN for now (\(detail)). Wait for the recovery interval or reset the lockout with the lockout authorization.")
        case .corruptParameters(let why): RampartErrorInfo(code: "hardware.corruptParameters", kind: .tampered, message: "The hardware part of the wrapped MainKey is corrupt (\(why)). Log in again to create a new one.")
        case .envelopeTampered(let why): RampartErrorInfo(code: "hardware.envelopeTampered", kind: .tampered, message: "The hardware-wrapped MainKey was modified (\(why)) and is refused. Log in again to create a new one.")
        case .credentialMismatch(let why): RampartErrorInfo(code: "hardware.credentialMismatch", kind: .failure, message: "Wrong kind of credential for this protector: \(why).")
        }
    }

}
