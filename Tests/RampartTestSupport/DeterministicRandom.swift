import RampartBenchmarks

// The deterministic generators the randomized tests and the fuzz targets use, so that a failure
// reproduces from its seed. They are defined once, in RampartBenchmarks (whose corpora use them
// too), and re-exported here: the benchmarks library, which the executables link, does not
// depend on test code, and a test needs only `import RampartTestSupport`.

/// SplitMix64 (`RampartBenchmarks.SplitMix64`): a `RandomNumberGenerator`, with `next(_:)` for
/// a number below a bound.
public typealias SplitMix64 = RampartBenchmarks.SplitMix64

/// A 64-bit linear congruential generator (`RampartBenchmarks.LinearCongruential64`): numbers
/// in `0..<2^31`, with `next(_:)` for a number below a bound.
public typealias LinearCongruential64 = RampartBenchmarks.LinearCongruential64
