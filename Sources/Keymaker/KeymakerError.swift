import RampartCore

/// Why a Keymaker operation failed. Wrong PINs and corrupt items are normal events, not crashes.
public enum KeymakerError: Error, Equatable, DescribedRampartError {
    /// No MainKey exists for this user (not logged in, or wiped).
    case noMainKey
    /// A MainKey already exists; log out first to create a new one.
    case mainKeyAlreadyExists
    /// The PIN was wrong. `attemptsLeft` more failures wipe every local item of the user.
    case wrongPIN(attemptsLeft: Int)
    /// Too many wrong PINs: every local item of the user was erased.
    case wipedAfterTooManyFailedAttempts
    /// The PIN is empty.
    case emptyPIN
    /// The PIN is shorter than the minimum length.
    case pinTooShort(minimum: Int)
    /// The PIN is longer than the maximum length.
    case pinTooLong(maximum: Int)
    /// The stored wrapped key cannot be decoded.
    case corruptEnvelope(String)
    /// The stored wrapped key has a format version this build does not know.
    case unsupportedEnvelopeVersion(UInt8)
    /// The stored wrapped key belongs to another user.
    case envelopeFromAnotherUser
    /// The protector is not active for this user.
    case protectorNotActive(ProtectorKind)
    /// The protector is already active (use change instead).
    case protectorAlreadyActive(ProtectorKind)
    /// Removing this protector would leave the MainKey with no protector at all.
    case cannotRemoveLastProtector
    /// No implementation of this protector is available in this process (e.g. no TPM).
    case protectorUnavailable(ProtectorKind, reason: String)
    /// The autolock delay is not one of the allowed values.
    case invalidAutolockDelay(minutes: Int)
    /// The wipe ran but some components failed to erase their data.
    case wipeIncomplete([WipeReport.Failure])
    /// The MainKey is protected by a PIN; give it to unlock.
    case pinRequired
    /// The secure hardware refuses every attempt for now (dictionary-attack lockout).
    case hardwareLockedOut(String)

    /// The code, category (the CLI's exit status) and message of each case.
    public var info: RampartErrorInfo {
        switch self {
        case .noMainKey: RampartErrorInfo(code: "keymaker.noMainKey", kind: .notFound, message: "No MainKey for this user: log in (or, on a test home, run `rampart-dev key init`) first.")
        case .mainKeyAlreadyExists: RampartErrorInfo(code: "keymaker.mainKeyAlreadyExists", kind: .badInput, message: "A MainKey already exists for this user; log out first to start over.")
        case .wrongPIN(let left): RampartErrorInfo(code: "keymaker.wrongPIN", kind: .wrongPIN, message: left == 1 ? "Wrong PIN. 1 attempt left before every local item of this account is erased."
                : "Wrong PIN. \(left) attempts left before every local item of this account is erased.")
        case .wipedAfterTooManyFailedAttempts: RampartErrorInfo(code: "keymaker.wiped", kind: .wiped, message: "Too many wrong PINs: every local item of this account was erased. Log in again.")
        case .emptyPIN: RampartErrorInfo(code: "keymaker.emptyPIN", kind: .badInput, message: "The PIN is empty.")
        case .pinTooShort(let minimum): RampartErrorInfo(code: "keymaker.pinTooShort", kind: .badInput, message: "The PIN is too short: use at least \(minimum) characters.")
        case .pinTooLong(let maximum): RampartErrorInfo(code: "keymaker.pinTooLong", kind: .badInput, message: "The PIN is too long: use at most \(maximum) characters.")
        case .corruptEnvelope(let why): RampartErrorInfo(code: "keymaker.corruptEnvelope", kind: .tampered, message: "The stored wrapped MainKey is corrupt (\(why)). Log in again to create a new one.")
        case .unsupportedEnvelopeVersion(let version): RampartErrorInfo(code: "keymaker.unsupportedEnvelopeVersion", kind: .tampered, message: "The stored wrapped MainKey has format version \(version), which this version of Rampart does not know; update Rampart.")
        case .envelopeFromAnotherUser: RampartErrorInfo(code: "keymaker.envelopeFromAnotherUser", kind: .tampered, message: "The stored wrapped MainKey belongs to another user; refusing to use it.")
        case .protectorNotActive(let kind): RampartErrorInfo(code: "keymaker.protectorNotActive", kind: .notFound, message: "The \(kind) protector is not active.")
        case .protectorAlreadyActive(let kind): RampartErrorInfo(code: "keymaker.protectorAlreadyActive", kind: .badInput, message: "The \(kind) protector is already active; change it instead.")
        case .cannotRemoveLastProtector: RampartErrorInfo(code: "keymaker.cannotRemoveLastProtector", kind: .badInput, message: "This is the MainKey's only protector; add another one (or `--none`) before removing it.")
        case .protectorUnavailable(let kind, let reason): RampartErrorInfo(code: "keymaker.protectorUnavailable", kind: .failure, message: "The \(kind) protector is not available here: \(reason)")
        case .invalidAutolockDelay(let minutes): RampartErrorInfo(code: "keymaker.invalidAutolockDelay", kind: .badInput, message: "Autolock after \(minutes) minutes is not offered; choose one of \(AutolockPolicy.allowedMinutes.map(String.init).joined(separator: ", ")).")
        case .wipeIncomplete(let failures): RampartErrorInfo(code: "keymaker.wipeIncomplete", kind: .failure, message: "The wipe did not complete: " + failures.map { "\($0.component): \($0.message)" }.joined(separator: "; "))
        case .pinRequired: RampartErrorInfo(code: "keymaker.pinRequired", kind: .wrongPIN, message: "The MainKey is protected by a PIN: unlock with your PIN.")
        case .hardwareLockedOut(let detail): RampartErrorInfo(code: "keymaker.hardwareLockedOut", kind: .wrongPIN, message: "The secure hardware is in dictionary-attack lockout and refuses every attempt for now (\(detail)). Wait for the lockout to expire.")
        }
    }

}
