import Crypto
import Foundation
import RampartCore

/// How long the MainKey stays in memory.
///
/// Trust-model row: **device memory (moderate)** — "the MainKey stays in memory per the
/// autolock setting: for a chosen time, or until the app goes to the background".
public enum AutolockPolicy: Sendable, Equatable, Codable, CustomStringConvertible {
    /// Never lock automatically (only on explicit lock, logout, or clock tampering).
    case never
    /// Lock when the app enters the background.
    case onBackground
    /// Lock after this many minutes without user activity (one of ``allowedMinutes``).
    case afterMinutes(Int)

    /// The delays offered, in minutes.
    public static let allowedMinutes = [1, 2, 5, 10, 15, 30, 60]

    /// A validated timed policy. - Throws: ``KeymakerError/invalidAutolockDelay(minutes:)``.
    public static func after(minutes: Int) throws -> AutolockPolicy {
        guard allowedMinutes.contains(minutes) else { throw KeymakerError.invalidAutolockDelay(minutes: minutes) }
        return .afterMinutes(minutes)
    }

    /// Parses `never`, `background`, or a number of minutes.
    public init(parsing text: String) throws {
        switch text.lowercased() {
        case "never": self = .never
        case "background", "on-background": self = .onBackground
        default:
            guard let minutes = Int(text) else { throw KeymakerError.invalidAutolockDelay(minutes: -1) }
            self = try .after(minutes: minutes)
        }
    }

    public var description: String {
        switch self {
        case .never: "never"
        case .onBackground: "background"
        case .afterMinutes(let minutes): "\(minutes)"
        }
    }

    var timeout: TimeInterval? {
        if case .afterMinutes(let minutes) = self { return TimeInterval(minutes * 60) }
        return nil
    }
}

/// Why the stored autolock policy was not used, and the shortest delay
/// (``StoredAutolockPolicy/fallback``) applies instead.
public enum AutolockPolicyWarning: String, Sendable, Equatable, Codable, CustomStringConvertible {
    /// No policy is stored although the MainKey exists (it was deleted, or written by a version
    /// of Rampart that did not authenticate it).
    case missing
    /// The stored policy does not carry a valid MAC under this account's MainKey: it was
    /// changed outside Rampart (or copied from another account).
    case authenticationFailed
    /// The stored policy authenticated but does not parse (written by an incompatible version).
    case unreadable

    public var description: String {
        let fallback = "autolock after \(StoredAutolockPolicy.fallback) minute applies until you set it again (`rampart-dev key autolock`)"
        switch self {
        case .missing: return "The stored autolock setting is missing; \(fallback)."
        case .authenticationFailed: return "The stored autolock setting was changed outside Rampart; \(fallback)."
        case .unreadable: return "The stored autolock setting could not be read; \(fallback)."
        }
    }
}

/// The autolock policy as kept in the keychain: authenticated under a sub-key of the MainKey.
///
/// Trust-model rows: **keychain (low)** and **settings — modified (high)**: whoever can write
/// the keychain folder must not be able to keep the MainKey in memory longer. The item holds
/// `0x02 ‖ HMAC-SHA256(sub-key keymaker.autolock-mac[user], "rampart.autolock.v2" ‖ user ‖ policy) ‖ policy`;
/// a missing, edited or foreign value is replaced by ``fallback`` (the shortest offered delay),
/// so tampering can only shorten the autolock. Honest limit: an older authenticated value of
/// the same account (a restored keychain copy) still verifies — there is no rollback counter.
public enum StoredAutolockPolicy {
    static let version: UInt8 = 2
    /// What applies when the stored policy cannot be trusted: the shortest offered delay.
    public static let fallback: AutolockPolicy = .afterMinutes(AutolockPolicy.allowedMinutes[0])

    static func purpose(_ user: UserID) -> KeyPurpose { KeyPurpose("keymaker.autolock-mac", context: user.rawValue) }

    /// Calls `body` with the MAC key and the MAC input for `text`.
    static func withMAC<R>(_ text: [UInt8], user: UserID, key: MainKey, _ body: (SymmetricKey, [UInt8]) throws -> R) throws -> R {
        let subkey = try key.derivedKey(for: purpose(user))
        defer { subkey.wipe() }
        let input = Array("rampart.autolock.v2".utf8) + [0] + Array(user.rawValue.utf8) + [0] + text
        return try subkey.withSymmetricKey { try body($0, input) }
    }

    /// The item's bytes for `policy`.
    static func seal(_ policy: AutolockPolicy, user: UserID, key: MainKey) throws -> SecretBytes {
        let text = Array(policy.description.utf8)
        let tag = try withMAC(text, user: user, key: key) { Array(HMAC<SHA256>.authenticationCode(for: $1, using: $0)) }
        return SecretBytes(copying: [version] + tag + text)
    }

    /// What a stored value is worth.
    enum Verdict: Equatable {
        case verified(AutolockPolicy)
        case untrusted(AutolockPolicyWarning)
    }

    /// The verified policy in `stored`, or why it cannot be used.
    static func open(_ stored: SecretBytes?, user: UserID, key: MainKey) throws -> Verdict {
        guard let stored else { return .untrusted(.missing) }
        let bytes = try stored.withUnsafeBytes { Array($0) }
        guard bytes.count > 33, bytes.count <= 33 + 64, bytes[0] == version else { return .untrusted(.authenticationFailed) }
        let text = Array(bytes[33...])
        let valid = try withMAC(text, user: user, key: key) {
            HMAC<SHA256>.isValidAuthenticationCode(Array(bytes[1..<33]), authenticating: $1, using: $0)
        }
        guard valid else { return .untrusted(.authenticationFailed) }
        guard let policy = try? AutolockPolicy(parsing: String(decoding: text, as: UTF8.self)) else { return .untrusted(.unreadable) }
        return .verified(policy)
    }
}

/// Decides when the MainKey must be locked, from user activity, app state and two clocks.
///
/// The timer runs on the monotonic clock, which nobody can set back. The wall clock is watched
/// too: when it moves differently from the monotonic clock by more than ``clockSkewTolerance``
/// (someone set the time back to dodge the timer, or forward), the verdict is "lock now".
public struct AutolockTimer: Sendable {
    /// How far the wall clock may drift from the monotonic clock between two checks.
    public static let clockSkewTolerance: TimeInterval = 5

    public var policy: AutolockPolicy
    private var lastActivityWall: Date
    private var lastActivityMonotonic: UInt64
    private var lastCheckWall: Date
    private var lastCheckMonotonic: UInt64

    public init(policy: AutolockPolicy, clock: any RampartClock) {
        self.policy = policy
        let wall = clock.now
        let monotonic = clock.monotonicNanoseconds
        lastActivityWall = wall
        lastActivityMonotonic = monotonic
        lastCheckWall = wall
        lastCheckMonotonic = monotonic
    }

    /// Records user activity (restarts the timer).
    public mutating func recordActivity(clock: any RampartClock) {
        lastActivityWall = clock.now
        lastActivityMonotonic = clock.monotonicNanoseconds
        lastCheckWall = lastActivityWall
        lastCheckMonotonic = lastActivityMonotonic
    }

    /// Returns the reason to lock now, or nil to stay unlocked.
    public mutating func check(clock: any RampartClock) -> LockReason? {
        let wall = clock.now
        let monotonic = clock.monotonicNanoseconds
        defer {
            lastCheckWall = wall
            lastCheckMonotonic = monotonic
        }
        let monotonicSinceCheck = Double(monotonic &- lastCheckMonotonic) / 1e9
        let wallSinceCheck = wall.timeIntervalSince(lastCheckWall)
        if abs(wallSinceCheck - monotonicSinceCheck) > Self.clockSkewTolerance {
            return .clockTampering
        }
        if let timeout = policy.timeout {
            let idle = Double(monotonic &- lastActivityMonotonic) / 1e9
            if idle >= timeout { return .autolockTimeout }
        }
        return nil
    }

    /// Seconds left before the timed lock, or nil for untimed policies.
    public func secondsRemaining(clock: any RampartClock) -> TimeInterval? {
        guard let timeout = policy.timeout else { return nil }
        let idle = Double(clock.monotonicNanoseconds &- lastActivityMonotonic) / 1e9
        return max(0, timeout - idle)
    }
}
