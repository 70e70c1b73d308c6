/// The TPM's dictionary-attack (DA) protection settings (TPM2_DictionaryAttackParameters).
///
/// Trust-model row: **secure hardware (high)** — the reason a six-digit PIN is acceptable with
/// the *hardware + PIN* protector: after `maxTries` wrong authorizations the TPM refuses every
/// further attempt (even the right one) until `recoveryTime` seconds have passed per failure
/// or the lockout hierarchy resets it. The counter lives in the TPM's NV memory, so it survives
/// restarts of the process and of the TPM.
public struct TPMDictionaryAttackParameters: Sendable, Equatable, CustomStringConvertible {
    /// Authorization failures before lockout (TPM2_PT_MAX_AUTH_FAIL).
    public var maxTries: UInt32
    /// Seconds after which one failure is forgotten (TPM2_PT_LOCKOUT_INTERVAL); 0 disables DA.
    public var recoveryTime: UInt32
    /// Seconds before the lockout authorization may be tried again after it failed
    /// (TPM2_PT_LOCKOUT_RECOVERY).
    public var lockoutRecovery: UInt32

    public init(maxTries: UInt32, recoveryTime: UInt32, lockoutRecovery: UInt32) {
        self.maxTries = maxTries
        self.recoveryTime = recoveryTime
        self.lockoutRecovery = lockoutRecovery
    }

    /// What Rampart recommends when it provisions a TPM itself: 5 tries, one forgiven every
    /// 2 hours (so at most ~60 guesses a day), lockout authorization retry after 24 hours.
    public static let recommended = TPMDictionaryAttackParameters(maxTries: 5, recoveryTime: 7200, lockoutRecovery: 86400)

    public var description: String {
        "maxTries=\(maxTries), recoveryTime=\(recoveryTime)s, lockoutRecovery=\(lockoutRecovery)s"
    }
}

/// A reading of the TPM's dictionary-attack state.
///
/// Trust-model row: **secure hardware (high)** — shows the lockout that bounds PIN guesses
/// (`rampart-dev key status` (and `rampart status`), `rampart-dev key tpm-lockout`).
public struct TPMDictionaryAttackStatus: Sendable, Equatable, CustomStringConvertible {
    /// Current failure count (TPM2_PT_LOCKOUT_COUNTER).
    public var failedTries: UInt32
    public var parameters: TPMDictionaryAttackParameters
    /// Whether the TPM is in lockout now (TPMA_PERMANENT.inLockout).
    public var inLockout: Bool

    public var description: String {
        "\(inLockout ? "IN LOCKOUT, " : "")\(failedTries)/\(parameters.maxTries) failures, one forgiven every \(parameters.recoveryTime) s"
    }
}

/// Identity of the TPM found, for `rampart-dev key status` (and `rampart status`).
///
/// Trust-model row: **secure hardware (high)** — which hardware the protector relies on.
public struct TPMDescription: Sendable, Equatable, CustomStringConvertible {
    public var tcti: String
    /// Manufacturer id as text, e.g. "IBM" (swtpm), "INTC", "MSFT", "STM".
    public var manufacturer: String
    /// Vendor string, e.g. "SW   TPM".
    public var vendor: String
    public var dictionaryAttack: TPMDictionaryAttackStatus

    public var description: String {
        "TPM 2.0 \(manufacturer) \(vendor) via \(tcti); DA: \(dictionaryAttack)"
    }
}
