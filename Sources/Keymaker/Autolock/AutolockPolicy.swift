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
