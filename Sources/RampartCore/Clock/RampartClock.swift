import Foundation

/// The time sources Rampart needs: a wall clock (what the user sees, can be changed by anyone
/// with access to the device) and a monotonic clock (cannot be set back).
///
/// Trust-model row: **device memory (moderate)** — autolock decides how long the MainKey stays in
/// memory. Comparing both clocks lets the Keymaker notice someone setting the wall clock back to
/// dodge the autolock timer.
public protocol RampartClock: Sendable {
    /// Wall-clock time.
    var now: Date { get }
    /// Monotonic time in nanoseconds since an arbitrary origin; never goes backwards.
    var monotonicNanoseconds: UInt64 { get }
}

/// The real clocks of this machine (`Date()` and `CLOCK_MONOTONIC` / `ContinuousClock`).
public struct SystemClock: RampartClock {
    public init() {}
    public var now: Date { Date() }
    public var monotonicNanoseconds: UInt64 {
        let duration = ContinuousClock.now - SystemClock.origin
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) &* 1_000_000_000 &+ UInt64(max(0, attoseconds) / 1_000_000_000)
    }
    private static let origin = ContinuousClock.now
}

/// A clock moved by hand, for deterministic tests of time-dependent behaviour (autolock, cache
/// expiry). Both clocks advance together with ``advance(by:)``; ``setWallClock(_:)`` moves only
/// the wall clock, as a user changing the system time would.
public final class ManualClock: RampartClock, @unchecked Sendable {
    private let lock = NSLock()
    private var wall: Date
    private var monotonic: UInt64

    public init(now: Date = Date(timeIntervalSince1970: 1_800_000_000), monotonicNanoseconds: UInt64 = 1_000_000_000) {
        self.wall = now
        self.monotonic = monotonicNanoseconds
    }

    public var now: Date { lock.withLock { wall } }
    public var monotonicNanoseconds: UInt64 { lock.withLock { monotonic } }

    /// Advances both clocks by `seconds`.
    public func advance(by seconds: TimeInterval) {
        lock.withLock {
            wall = wall.addingTimeInterval(seconds)
            monotonic &+= UInt64(max(0, seconds) * 1_000_000_000)
        }
    }

    /// Sets only the wall clock (the monotonic clock keeps running as before).
    public func setWallClock(_ date: Date) {
        lock.withLock { wall = date }
    }
}

/// Gives access to the clock.
public protocol HasClock {
    var clock: any RampartClock { get }
}
