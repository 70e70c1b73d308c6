import Foundation
import Keychain
import RampartCore

/// The keeper of one user's MainKey: creation at login, protectors, unlock, autolock, wipe.
///
/// Trust-model rows:
/// - **keychain (low)**: the MainKey is stored only as ``WrappedKeyEnvelope``s made by its
///   protectors (*none*, *PIN*, *hardware*); several may be active at once.
/// - **device memory (moderate)**: the unwrapped key lives in a `MainKeySession` until a
///   lock — explicit, autolock (timer, background) or clock tampering — which zeroizes it and
///   every key derived from it, then publishes a lock event so dependents drop decrypted state.
/// - **database / everything local**: after ``Configuration/maxFailedAttempts`` consecutive
///   wrong PINs, every local item of the user is erased through the `WipeRegistry`.
///
/// At launch the MainKey must be unwrapped before anything else runs: while locked, every
/// access throws `LockedError`.
///
/// ```swift
/// let keymaker = Keymaker(userID: "u1", dependencies: container)
/// try keymaker.createMainKey()                       // at login (protector: none)
/// try keymaker.activate(.pin, credential: .pin(pin))  // replaces the none protector
/// keymaker.lock()
/// try keymaker.unlock(.pin(pin))
/// ```
public final class Keymaker: MainKeyProvider, @unchecked Sendable {
    public typealias Dependencies = HasKeychain & HasClock & HasWipeRegistry

    /// Tunables of a Keymaker.
    public struct Configuration: Sendable {
        /// Consecutive wrong PINs that trigger a wipe (default 10).
        public var maxFailedAttempts: Int
        /// The protector implementations available in this process.
        public var protectors: [any MainKeyProtector]
        /// The autolock policy of a new MainKey, and until the first unlock (then the stored,
        /// authenticated one applies: see ``StoredAutolockPolicy``).
        public var autolock: AutolockPolicy
        /// The file whose exclusive lock (`ExclusiveFileLock`) every process holds from reading
        /// the failed-PIN counter, through the PIN's derivation, to recording the result — so
        /// that parallel guessers in several processes are counted one after the other. Nil:
        /// only the threads of this Keymaker are serialized (one process, e.g. tests).
        public var attemptLockFile: URL?

        public init(maxFailedAttempts: Int = 10,
                    protectors: [any MainKeyProtector] = [NoneProtector(), PINProtector()],
                    autolock: AutolockPolicy = .afterMinutes(5),
                    attemptLockFile: URL? = nil) {
            precondition(maxFailedAttempts >= 1, "maxFailedAttempts must be at least 1")
            self.maxFailedAttempts = maxFailedAttempts
            self.protectors = protectors
            self.autolock = autolock
            self.attemptLockFile = attemptLockFile
        }
    }

    public let userID: UserID
    public let configuration: Configuration
    private let keychain: any Keychain
    private let clock: any RampartClock
    private let wipeRegistry: WipeRegistry
    private let session: MainKeySession
    private let stateLock = NSRecursiveLock()
    private var timer: AutolockTimer
    private var inBackground = false
    private var storedPolicyWarning: AutolockPolicyWarning?

    public init(userID: UserID, dependencies: any Dependencies, configuration: Configuration = Configuration()) {
        self.userID = userID
        self.configuration = configuration
        self.keychain = dependencies.keychain
        self.clock = dependencies.clock
        self.wipeRegistry = dependencies.wipeRegistry
        self.session = MainKeySession(userID: userID)
        // The stored policy is authenticated by the MainKey, so it is read at unlock.
        self.timer = AutolockTimer(policy: configuration.autolock, clock: dependencies.clock)
    }

    // MARK: Keychain addresses

    /// The keychain item holding the envelope of `kind`.
    public static func envelopeItem(_ user: UserID, _ kind: ProtectorKind) -> KeychainItemID {
        .user(user, "mainkey.\(kind.rawValue)")
    }

    static func failedAttemptsItem(_ user: UserID) -> KeychainItemID { .user(user, "pin.failedAttempts") }
    static func autolockItem(_ user: UserID) -> KeychainItemID { .user(user, "autolock.policy") }

    // MARK: MainKeyProvider

    public var isUnlocked: Bool {
        stateLock.withLock { enforceAutolock(); return session.isUnlocked }
    }

    /// The unlocked MainKey. Checks the autolock first, so an expired timer locks here.
    /// - Throws: `LockedError`.
    public func currentMainKey() throws -> MainKey {
        try stateLock.withLock {
            enforceAutolock()
            return try session.currentMainKey()
        }
    }

    public func observeLifecycle(_ handler: @escaping @Sendable (KeyLifecycleEvent) -> Void) -> ObserverToken {
        session.observeLifecycle(handler)
    }

    public func lifecycleEvents() -> AsyncStream<KeyLifecycleEvent> {
        session.lifecycleEvents()
    }

    // MARK: Creation

    /// Whether a MainKey (in any protector) exists for this user.
    public func hasMainKey() throws -> Bool {
        try !activeProtectors().isEmpty
    }

    /// The protectors whose envelopes are stored, in a fixed order.
    public func activeProtectors() throws -> [ProtectorKind] {
        try ProtectorKind.allCases.filter { try keychain.readIfPresent(Self.envelopeItem(userID, $0)) != nil }
    }

    /// Creates a fresh MainKey at login, stores it with the *none* protector, and unlocks.
    /// - Throws: ``KeymakerError/mainKeyAlreadyExists``.
    @discardableResult
    public func createMainKey() throws -> MainKey {
        try stateLock.withLock {
            guard try !hasMainKey() else { throw KeymakerError.mainKeyAlreadyExists }
            let key = MainKey.generate()
            try store(try protector(.none).wrap(key, for: userID, credential: .none))
            try resetFailedAttempts()
            try storeAutolockPolicy(configuration.autolock, key: key)
            timer.recordActivity(clock: clock)
            session.unlock(with: key)
            return key
        }
    }

    // MARK: Unlock and lock

    /// Unwraps the MainKey with `credential` and keeps it in memory until the next lock.
    ///
    /// The strongest protector decides (``unlockNeedsPIN()``): while a protector that needs a PIN
    /// is active, the key opens only with the PIN, even if an older, weaker envelope (*none* or
    /// *hardware* alone, left by an earlier version) is still stored — and that weaker envelope
    /// is removed after the PIN opened the key. Without a PIN protector, the *none* and
    /// *hardware* protectors open it (a PIN given then is not needed and not used). Every PIN attempt is counted *before* the derivation runs, so
    /// killing the process mid-attempt does not save the attacker a try; and counting, trying
    /// and recording run under ``Configuration/attemptLockFile``, so attempts started in
    /// parallel by many processes are evaluated one at a time and none runs after the wipe.
    /// - Throws: ``KeymakerError/wrongPIN(attemptsLeft:)``,
    ///   ``KeymakerError/wipedAfterTooManyFailedAttempts``, ``KeymakerError/pinRequired``,
    ///   ``KeymakerError/noMainKey``, ``KeymakerError/corruptEnvelope(_:)``.
    public func unlock(_ credential: UnlockCredential = .none) throws {
        try stateLock.withLock {
            let active = try activeProtectors()
            guard !active.isEmpty else { throw KeymakerError.noMainKey }
            let key: MainKey
            let pinKinds = [ProtectorKind.hardwarePIN, .pin].filter(active.contains)
            let plainKinds = [ProtectorKind.none, .hardware].filter(active.contains)
            if Self.unlockNeedsPIN(activeProtectors: active) {
                guard let pin = credential.pin else { throw KeymakerError.pinRequired }
                try PINProtector.validate(pin)
                key = try firstWorking(pinKinds) { try unlockCounted(kind: $0, credential: credential) }
                // A weaker envelope beside the PIN one (stored by an earlier version) goes now.
                for weaker in plainKinds { try? removeEnvelope(weaker) }
            } else {
                key = try firstWorking(plainKinds) { try protector($0).unwrap(try envelope($0), credential: .none) }
            }
            adoptStoredAutolockPolicy(key)
            timer.recordActivity(clock: clock)
            inBackground = false
            session.unlock(with: key)
        }
    }

    /// Whether unlocking needs the PIN: the one answer to "does this account ask for a PIN?",
    /// for commands in this process and the agent alike. True when any active protector needs a
    /// PIN (*PIN*, *hardware + PIN*): the strongest protector the user chose decides, never a
    /// weaker one beside it.
    public func unlockNeedsPIN() throws -> Bool {
        try Self.unlockNeedsPIN(activeProtectors: activeProtectors())
    }

    /// ``unlockNeedsPIN()`` for a list of active protectors reported elsewhere (e.g. by the
    /// agent's status), so that the rule lives here only.
    public static func unlockNeedsPIN(activeProtectors: [ProtectorKind]) -> Bool {
        activeProtectors.contains(where: \.needsPIN)
    }

    /// Tries `kinds` in order; moves on to the next one only when a *hardware* protector cannot
    /// work here at all (no TPM, TPM unreachable, envelope sealed by another TPM) — never after
    /// a wrong PIN or a lockout, which would let a guesser bypass the hardware's counting.
    private func firstWorking(_ kinds: [ProtectorKind], _ body: (ProtectorKind) throws -> MainKey) throws -> MainKey {
        for (index, kind) in kinds.enumerated() {
            do {
                return try body(kind)
            } catch let error where index < kinds.count - 1 && (kind == .hardware || kind == .hardwarePIN)
                        && !(error is KeymakerError && !Self.isUnavailable(error)) && !(error is ProtectorUnwrapFailure) {
                continue
            }
        }
        throw KeymakerError.noMainKey
    }

    private static func isUnavailable(_ error: any Error) -> Bool {
        if case KeymakerError.protectorUnavailable = error { return true }
        return false
    }

    /// One counted PIN attempt: under the cross-process attempt lock, checks that the key still
    /// exists (a wipe by another process ends the attempt here), counts, tries, records.
    private func unlockCounted(kind: ProtectorKind, credential: UnlockCredential) throws -> MainKey {
        guard let lockFile = configuration.attemptLockFile else { return try unlockCountedHoldingLock(kind: kind, credential: credential) }
        return try ExclusiveFileLock(url: lockFile).withLock { try unlockCountedHoldingLock(kind: kind, credential: credential) }
    }

    private func unlockCountedHoldingLock(kind: ProtectorKind, credential: UnlockCredential) throws -> MainKey {
        guard try hasMainKey() else { throw KeymakerError.noMainKey }
        let stored = try envelope(kind)
        let failures = try failedAttempts() + 1
        try setFailedAttempts(failures)
        do {
            let key = try protector(kind).unwrap(stored, credential: credential)
            try resetFailedAttempts()
            return key
        } catch ProtectorUnwrapFailure.wrongCredential {
            if failures >= configuration.maxFailedAttempts {
                let report = performWipe(reason: .tooManyFailedAttempts)
                if !report.isComplete { throw KeymakerError.wipeIncomplete(report.failures) }
                throw KeymakerError.wipedAfterTooManyFailedAttempts
            }
            throw KeymakerError.wrongPIN(attemptsLeft: configuration.maxFailedAttempts - failures)
        } catch ProtectorUnwrapFailure.hardwareLockedOut(let detail) {
            // The hardware refused before checking the PIN: not a guess, give the attempt back.
            try? setFailedAttempts(failures - 1)
            throw KeymakerError.hardwareLockedOut(detail)
        } catch {
            // A damaged envelope or unreachable hardware is not a wrong PIN: give the attempt back.
            try? setFailedAttempts(failures - 1)
            throw error
        }
    }

    /// Zeroizes the MainKey and every derived key, and publishes a lock event.
    public func lock(reason: LockReason = .userRequest) {
        stateLock.withLock { session.lock(reason: reason) }
    }

    // MARK: Protectors

    /// Protects the unlocked MainKey with exactly `kind`, the protection the user chose, and
    /// removes every other protector: no weaker copy (*none*, *PIN* alone, *hardware* without
    /// the PIN) stays beside a stronger one, and no stronger one the user turned away from
    /// lingers either. A copy the PIN alone opens could be searched offline from a copied disk,
    /// around the TPM's lockout; a *hardware* copy beside *hardware + PIN* would open without
    /// the PIN (trust-model row **keychain (low)**, PIN guessing). The new envelope is stored
    /// before the old ones are removed, so a crash never leaves the key without a protector.
    /// - Returns: the protectors removed, in a fixed order (for the caller to tell the user).
    /// - Throws: `LockedError`, ``KeymakerError/protectorAlreadyActive(_:)`` (when `kind` is
    ///   already the only protector), PIN validation errors.
    @discardableResult
    public func activate(_ kind: ProtectorKind, credential: UnlockCredential = .none) throws -> [ProtectorKind] {
        try stateLock.withLock {
            let key = try currentMainKey()
            let active = try activeProtectors()
            let others = active.filter { $0 != kind }
            guard !active.contains(kind) || !others.isEmpty else { throw KeymakerError.protectorAlreadyActive(kind) }
            if !active.contains(kind) {
                try store(try protector(kind).wrap(key, for: userID, credential: credential))
                if kind.needsPIN { try resetFailedAttempts() }
            }
            for old in others { try removeEnvelope(old) }
            timer.recordActivity(clock: clock)
            return others
        }
    }

    /// Removes a protector; the MainKey must be unlocked and keep at least one protector.
    /// - Throws: ``KeymakerError/cannotRemoveLastProtector``, ``KeymakerError/protectorNotActive(_:)``.
    public func deactivate(_ kind: ProtectorKind) throws {
        try stateLock.withLock {
            _ = try currentMainKey()
            let active = try activeProtectors()
            guard active.contains(kind) else { throw KeymakerError.protectorNotActive(kind) }
            guard active.count > 1 else { throw KeymakerError.cannotRemoveLastProtector }
            try removeEnvelope(kind)
        }
    }

    /// Turns protection off: stores the *none* envelope, then removes every other protector.
    /// - Returns: the protectors removed.
    @discardableResult
    public func disableProtection() throws -> [ProtectorKind] {
        try stateLock.withLock {
            let key = try currentMainKey()
            let active = try activeProtectors()
            if !active.contains(.none) { try store(try protector(.none).wrap(key, for: userID, credential: .none)) }
            let removed = active.filter { $0 != .none }
            for kind in removed { try removeEnvelope(kind) }
            try resetFailedAttempts()
            return removed
        }
    }

    /// Changes the PIN: checks the old one (counted like an unlock), then re-wraps the same
    /// MainKey — no data is re-encrypted, nothing is lost.
    public func changePIN(from old: SecretBytes, to new: SecretBytes) throws {
        try stateLock.withLock {
            try PINProtector.validate(new)
            let kind: ProtectorKind = try activeProtectors().contains(.hardwarePIN) ? .hardwarePIN : .pin
            guard try activeProtectors().contains(kind) else { throw KeymakerError.protectorNotActive(.pin) }
            let key = try unlockCounted(kind: kind, credential: .pin(old))
            let previous = try envelope(kind)
            let replacement = try protector(kind).wrap(key, for: userID, credential: .pin(new))
            try keychain.set(SecretBytes(copying: replacement.serialized()), for: Self.envelopeItem(userID, kind))
            if previous != replacement { try? protector(kind).discard(previous) }
            timer.recordActivity(clock: clock)
            if !session.isUnlocked {
                adoptStoredAutolockPolicy(key)
                session.unlock(with: key)
            } else {
                key.wipe()
            }
        }
    }

    // MARK: Autolock

    /// The autolock policy in force.
    public var autolockPolicy: AutolockPolicy { stateLock.withLock { timer.policy } }

    /// Why the stored autolock policy was not used at the last unlock (and
    /// ``StoredAutolockPolicy/fallback`` applies), or nil when it verified.
    public var autolockWarning: AutolockPolicyWarning? { stateLock.withLock { storedPolicyWarning } }

    /// Changes and persists the autolock policy, authenticated under the MainKey (which must be
    /// unlocked: the policy can only be changed by someone who can unlock).
    /// - Throws: `LockedError`.
    public func setAutolockPolicy(_ policy: AutolockPolicy) throws {
        try stateLock.withLock {
            try storeAutolockPolicy(policy, key: try currentMainKey())
            timer.recordActivity(clock: clock)
        }
    }

    private func storeAutolockPolicy(_ policy: AutolockPolicy, key: MainKey) throws {
        try keychain.set(try StoredAutolockPolicy.seal(policy, user: userID, key: key), for: Self.autolockItem(userID))
        timer.policy = policy
        storedPolicyWarning = nil
    }

    /// Applies the stored policy if it verifies under `key`; otherwise the shortest delay, with
    /// a warning (a missing, edited or foreign value can only shorten the autolock).
    private func adoptStoredAutolockPolicy(_ key: MainKey) {
        let verdict: StoredAutolockPolicy.Verdict
        do {
            verdict = try StoredAutolockPolicy.open(try keychain.readIfPresent(Self.autolockItem(userID)), user: userID, key: key)
        } catch {
            verdict = .untrusted(.authenticationFailed)
        }
        switch verdict {
        case .verified(let policy):
            timer.policy = policy
            storedPolicyWarning = nil
        case .untrusted(let warning):
            timer.policy = StoredAutolockPolicy.fallback
            storedPolicyWarning = warning
        }
    }

    /// The user did something: restart the autolock timer (unless it already expired).
    public func userActivity() {
        stateLock.withLock {
            enforceAutolock()
            if session.isUnlocked { timer.recordActivity(clock: clock) }
        }
    }

    /// The app went to the background: locks at once under ``AutolockPolicy/onBackground``.
    public func didEnterBackground() {
        stateLock.withLock {
            inBackground = true
            if timer.policy == .onBackground { session.lock(reason: .enteredBackground) }
        }
    }

    /// The app came back: applies any lock that fell due while in the background.
    public func willEnterForeground() {
        stateLock.withLock {
            inBackground = false
            enforceAutolock()
        }
    }

    /// Locks now if the policy says so. Returns the reason if it locked.
    @discardableResult
    public func checkAutolock() -> LockReason? {
        stateLock.withLock { enforceAutolock() }
    }

    /// Seconds until the timed autolock, or nil.
    public var secondsUntilAutolock: TimeInterval? {
        stateLock.withLock { session.isUnlocked ? timer.secondsRemaining(clock: clock) : nil }
    }

    /// Checks the autolock every `interval` until cancelled (for the agent process).
    public func runAutolockLoop(interval: Duration = .seconds(1)) async {
        while !Task.isCancelled {
            checkAutolock()
            try? await Task.sleep(for: interval)
        }
    }

    @discardableResult
    private func enforceAutolock() -> LockReason? {
        guard session.isUnlocked else {
            _ = timer.check(clock: clock)
            return nil
        }
        if let reason = timer.check(clock: clock) {
            session.lock(reason: reason)
            return reason
        }
        return nil
    }

    // MARK: Wipe

    /// Erases every local item of the user: the registered components (store, caches, push
    /// keys), hardware objects, and every keychain item of the user. Locks first.
    @discardableResult
    public func wipe(reason: WipeReason = .userRequest) -> WipeReport {
        stateLock.withLock { performWipe(reason: reason) }
    }

    /// Logout: the same as a wipe, for the reason `.logout`.
    @discardableResult
    public func logout() -> WipeReport { wipe(reason: .logout) }

    private func performWipe(reason: WipeReason) -> WipeReport {
        session.lock(reason: reason == .logout ? .logout : .wipe)
        var report = wipeRegistry.wipeAll(user: userID)
        for kind in ProtectorKind.allCases {
            if let stored = try? envelope(kind) { try? protector(kind).discard(stored) }
        }
        do {
            try keychain.deleteAll(user: userID)
            report.wiped.append("keychain(\(keychain.backendName))")
        } catch {
            report.failures.append(.init(component: "keychain", message: String(describing: error)))
        }
        session.publishWipe(reason: reason)
        return report
    }

    // MARK: Status

    /// What `rampart-dev key status` (and `rampart status`) shows.
    public func status() throws -> KeymakerStatus {
        try stateLock.withLock {
            enforceAutolock()
            let active = try activeProtectors()
            return KeymakerStatus(
                userID: userID,
                hasMainKey: !active.isEmpty,
                unlocked: session.isUnlocked,
                activeProtectors: active,
                unlockNeedsPIN: Self.unlockNeedsPIN(activeProtectors: active),
                availableProtectors: configuration.protectors.map {
                    KeymakerStatus.Availability(kind: $0.kind, availability: $0.availability())
                },
                failedAttempts: try failedAttempts(),
                maxFailedAttempts: configuration.maxFailedAttempts,
                autolock: timer.policy.description,
                autolockWarning: storedPolicyWarning?.description,
                secondsUntilAutolock: session.isUnlocked ? timer.secondsRemaining(clock: clock) : nil,
                keyFingerprint: try? session.currentMainKey().fingerprint,
                keychainBackend: keychain.backendName
            )
        }
    }

    // MARK: Internals

    private func protector(_ kind: ProtectorKind) throws -> any MainKeyProtector {
        guard let found = configuration.protectors.first(where: { $0.kind == kind }) else {
            throw KeymakerError.protectorUnavailable(kind, reason: "not configured in this process")
        }
        return found
    }

    private func envelope(_ kind: ProtectorKind) throws -> WrappedKeyEnvelope {
        let item = Self.envelopeItem(userID, kind)
        let bytes: SecretBytes
        do { bytes = try keychain.read(item) } catch KeychainError.notFound { throw KeymakerError.protectorNotActive(kind) }
        let envelope = try bytes.withUnsafeBytes { try WrappedKeyEnvelope.parse(Data($0), expectedUser: userID) }
        guard envelope.kind == kind else { throw KeymakerError.corruptEnvelope("item for \(kind) holds a \(envelope.kind) envelope") }
        return envelope
    }

    private func store(_ envelope: WrappedKeyEnvelope) throws {
        var serialized = envelope.serialized()
        defer { serialized.resetBytes(in: serialized.startIndex..<serialized.endIndex) }
        try keychain.set(SecretBytes(copying: serialized), for: Self.envelopeItem(userID, envelope.kind))
    }

    private func removeEnvelope(_ kind: ProtectorKind) throws {
        if let stored = try? envelope(kind) { try protector(kind).discard(stored) }
        try keychain.deleteIfPresent(Self.envelopeItem(userID, kind))
    }

    /// Consecutive wrong PINs so far.
    public func failedAttempts() throws -> Int {
        guard let stored = try keychain.readIfPresent(Self.failedAttemptsItem(userID)) else { return 0 }
        return try stored.withUnsafeBytes { bytes in
            guard bytes.count == 4 else { return configuration.maxFailedAttempts - 1 }
            return bytes.reduce(0) { ($0 << 8) | Int($1) }
        }
    }

    private func setFailedAttempts(_ count: Int) throws {
        let value = UInt32(clamping: max(0, count)).bigEndian
        let bytes = withUnsafeBytes(of: value) { SecretBytes(copying: $0) }
        try keychain.set(bytes, for: Self.failedAttemptsItem(userID))
    }

    private func resetFailedAttempts() throws {
        try setFailedAttempts(0)
    }
}

/// A snapshot of a Keymaker's state, for `rampart-dev key status` (and `rampart status`) (JSON with `--json`).
public struct KeymakerStatus: Sendable, Codable, Equatable {
    public struct Availability: Sendable, Codable, Equatable {
        public let kind: ProtectorKind
        public let available: Bool
        public let detail: String

        init(kind: ProtectorKind, availability: ProtectorAvailability) {
            self.kind = kind
            switch availability {
            case .available(let detail): available = true; self.detail = detail
            case .unavailable(let reason): available = false; detail = reason
            }
        }
    }

    public let userID: UserID
    public let hasMainKey: Bool
    public let unlocked: Bool
    public let activeProtectors: [ProtectorKind]
    /// Whether an unlock needs the PIN (``Keymaker/unlockNeedsPIN()``).
    public let unlockNeedsPIN: Bool
    public let availableProtectors: [Availability]
    public let failedAttempts: Int
    public let maxFailedAttempts: Int
    public let autolock: String
    /// Why the stored autolock policy was replaced by the shortest delay at the last unlock.
    public let autolockWarning: String?
    public let secondsUntilAutolock: Double?
    public let keyFingerprint: String?
    public let keychainBackend: String
}

/// Gives access to a user's Keymaker.
public protocol HasKeymaker {
    var keymaker: Keymaker { get }
}
