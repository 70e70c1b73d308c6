import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The system clock (`clock_gettime(CLOCK_REALTIME)`, what `Date()`, Go's `time.Now` and Rust's
/// `SystemTime` read) for tests of clock edges, such as a key stamped in a second that another
/// clock (`time()`) does not show yet.
public enum SystemClock {
    /// Nanoseconds since 1970.
    public static func nanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// Returns once the clock has reached `target` (nanoseconds since 1970), within microseconds:
    /// it sleeps until about 2 ms before, then spins.
    public static func wait(until target: Int64) {
        while true {
            let left = target - nanoseconds()
            if left <= 0 { return }
            if left > 3_000_000 { usleep(UInt32((left - 2_000_000) / 1000)) }
        }
    }
}
