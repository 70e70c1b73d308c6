import CRampartShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Process-wide measures that keep secrets out of places the trust model rates low.
///
/// Trust-model rows: **device memory (moderate)** and **device storage (low)**: a core dump is a
/// file on disk holding whatever was in memory, MainKey included.
public enum ProcessHardening {
    /// Turns off core dumps for this process (`RLIMIT_CORE` = 0, and on Linux
    /// `PR_SET_DUMPABLE` = 0, which also stops other processes of the same user from
    /// attaching with `ptrace`). Returns whether every step succeeded.
    @discardableResult
    public static func disableCoreDumps() -> Bool {
        var ok = true
        #if canImport(Glibc) || canImport(Darwin)
        var limit = rlimit(rlim_cur: 0, rlim_max: 0)
        #if canImport(Glibc)
        ok = setrlimit(Int32(RLIMIT_CORE.rawValue), &limit) == 0 && ok
        ok = rampart_set_nondumpable() == 0 && ok
        #else
        ok = setrlimit(RLIMIT_CORE, &limit) == 0 && ok
        #endif
        #endif
        return ok
    }
}
