import RampartCore

/// Why a Keymaker operation failed. Wrong PINs and corrupt items are normal events, not crashes.
public enum KeymakerError: Error, Equatable, RampartError {
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

    /// The category the CLI's exit status and the agent's wire use.
    public var kind: RampartErrorKind {
        switch self {
        case .wrongPIN, .pinRequired, .hardwareLockedOut: .wrongPIN
        case .wipedAfterTooManyFailedAttempts: .wiped
        case .noMainKey, .protectorNotActive: .notFound
        case .corruptEnvelope, .unsupportedEnvelopeVersion, .envelopeFromAnotherUser: .tampered
        case .emptyPIN, .pinTooShort, .pinTooLong, .invalidAutolockDelay, .protectorAlreadyActive,
             .cannotRemoveLastProtector, .mainKeyAlreadyExists: .badInput
        case .protectorUnavailable, .wipeIncomplete: .failure
        }
    }

    public var code: String {
        switch self {
        case .noMainKey: "keymaker.noMainKey"
        case .mainKeyAlreadyExists: "keymaker.mainKeyAlreadyExists"
        case .wrongPIN: "keymaker.wrongPIN"
        case .wipedAfterTooManyFailedAttempts: "keymaker.wiped"
        case .emptyPIN: "keymaker.emptyPIN"
        case .pinTooShort: "keymaker.pinTooShort"
        case .pinTooLong: "keymaker.pinTooLong"
        case .corruptEnvelope: "keymaker.corruptEnvelope"
        case .unsupportedEnvelopeVersion: "keymaker.unsupportedEnvelopeVersion"
        case .envelopeFromAnotherUser: "keymaker.envelopeFromAnotherUser"
        case .protectorNotActive: "keymaker.protectorNotActive"
        case .protectorAlreadyActive: "keymaker.protectorAlreadyActive"
        case .cannotRemoveLastProtector: "keymaker.cannotRemoveLastProtector"
        case .protectorUnavailable: "keymaker.protectorUnavailable"
        case .invalidAutolockDelay: "keymaker.invalidAutolockDelay"
        case .wipeIncomplete: "keymaker.wipeIncomplete"
        case .pinRequired: "keymaker.pinRequired"
        case .hardwareLockedOut: "keymaker.hardwareLockedOut"
        }
    }

    public var description: String {
        switch self {
        case .noMainKey: "No MainKey for this user: log in (or, on a test home, run `rampart-dev key init`) first."
        case .mainKeyAlreadyExists: "A MainKey already exists for this user; log out first to start over."
        case .wrongPIN(let left):
            left == 1 ? "Wrong PIN. 1 attempt left before every local item of this account is erased."
                : "Wrong PIN. \(left) attempts left before every local item of this account is erased."
        case .wipedAfterTooManyFailedAttempts:
            "Too many wrong PINs: every local item of this account was erased. Log in again."
        case .emptyPIN: "The PIN is empty."
        case .pinTooShort(let minimum): "The PIN is too short: use at least \(minimum) characters."
        case .pinTooLong(let maximum): "The PIN is too long: use at most \(maximum) characters."
        case .corruptEnvelope(let why): "The stored wrapped MainKey is corrupt (\(why)). Log in again to create a new one."
        case .unsupportedEnvelopeVersion(let version):
            "The stored wrapped MainKey has format version \(version), which this version of Rampart does not know; update Rampart."
        case .envelopeFromAnotherUser: "The stored wrapped MainKey belongs to another user; refusing to use it."
        case .protectorNotActive(let kind): "The \(kind) protector is not active."
        case .protectorAlreadyActive(let kind): "The \(kind) protector is already active; change it instead."
        case .cannotRemoveLastProtector: "This is the MainKey's only protector; add another one (or `--none`) before removing it."
        case .protectorUnavailable(let kind, let reason): "The \(kind) protector is not available here: \(reason)"
        case .invalidAutolockDelay(let minutes):
            "Autolock after \(minutes) minutes is not offered; choose one of \(AutolockPolicy.allowedMinutes.map(String.init).joined(separator: ", "))."
        case .wipeIncomplete(let failures):
            "The wipe did not complete: " + failures.map { "\($0.component): \($0.message)" }.joined(separator: "; ")
        case .pinRequired: "The MainKey is protected by a PIN: unlock with your PIN."
        case .hardwareLockedOut(let detail):
            "The secure hardware is in dictionary-attack lockout and refuses every attempt for now (\(detail)). Wait for the lockout to expire."
        }
    }
}
