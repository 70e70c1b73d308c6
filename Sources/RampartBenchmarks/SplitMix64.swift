/// A small, fast, deterministic random number generator (SplitMix64).
///
/// The one definition for the benchmarks, the tests and the fuzz targets: the tests and fuzz
/// targets reach it through `RampartTestSupport`, which re-exports it, so that this library (which
/// the executables link) never depends on test code.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// A number in `0..<bound` (the remainder of ``next()``: slightly biased, which a benchmark
    /// corpus or a randomized test does not mind).
    public mutating func next(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}

/// A 64-bit linear congruential generator (Knuth's MMIX multiplier and increment), whose numbers
/// are bits 33 to 63 of the state: the sanitizer corpus's generator and the randomized tests'
/// (`RampartTestSupport` re-exports it).
public struct LinearCongruential64 {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    /// The next number, in `0..<2^31`.
    public mutating func next() -> Int {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Int(truncatingIfNeeded: state >> 33)
    }
    /// A number in `0..<bound` (0 when `bound` is not positive).
    public mutating func next(_ bound: Int) -> Int { next() % max(bound, 1) }
}
