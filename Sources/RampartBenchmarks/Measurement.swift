import Foundation

/// What every benchmark prints first: the machine it ran on and how busy it was, because the
/// figures of a shared 2-core machine move with the other jobs on it (ratios much less).
public enum BenchMachine {
    /// CPU model, logical cores, memory and the load average, one line.
    public static func describe() -> String {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "?" } ?? "?"
        let memory = Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824
        return String(format: "%@, %d cores, %.0f GiB; load average %@", model,
                      ProcessInfo.processInfo.activeProcessorCount, memory, loadAverage())
    }

    /// The 1-, 5- and 15-minute load averages (`/proc/loadavg`), or "?".
    public static func loadAverage() -> String {
        (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3)
            .joined(separator: " ") ?? "?"
    }
}

/// Timing of repeated runs: each run is measured alone and the median is what a benchmark
/// reports (the best run flatters, the mean follows the noisiest run).
public struct BenchSamples: Sendable {
    /// Seconds per run, in run order.
    public private(set) var seconds: [Double] = []

    public init() {}

    /// Runs `body` once and records its wall-clock time.
    public mutating func measure(_ body: () throws -> Void) rethrows {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        seconds.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }

    /// Adds a time measured elsewhere (a baseline process reports its own).
    public mutating func append(_ value: Double) { seconds.append(value) }

    /// The median of the recorded times (the mean of the middle two for an even count).
    public var median: Double { Self.median(seconds) }

    /// The fastest run.
    public var best: Double { seconds.min() ?? .nan }

    /// The median of `values` (`nan` when empty).
    public static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
    }

    /// MB/s (10^6 bytes per second) of each run over `bytes`.
    public func megabytesPerSecond(_ bytes: Int) -> [Double] { seconds.map { Double(bytes) / 1e6 / $0 } }
}

/// How fast the machine is right now at the two things a benchmark's time hangs on: one
/// dependent multiply-and-mix step (the core's clock) and one random read from 4 MiB (the caches
/// and memory, which the other tenants of a VM share).
///
/// On the shared 2-core VMs the figures in docs/performance.md come from, the core's speed stays
/// put while random reads swing from about 25 to over 100 ns within seconds, and
/// allocation-heavy work (the parser, the sanitizer) swings with them. Read next to each timed
/// pass, this tells a slow run of the code from a run on a slow machine.
public struct BenchProbe {
    /// One random cycle through all the slots (Sattolo's algorithm), so that every read depends
    /// on the one before and no prefetcher can guess it.
    private let next: [UInt32]
    private static let slots = 1 << 20

    /// Builds the 4 MiB table (a few milliseconds).
    public init() {
        var generator = SplitMix64(seed: 0x9E37)
        let count = Self.slots
        var table = [UInt32](unsafeUninitializedCapacity: count) { buffer, initialized in
            for i in 0..<count { buffer[i] = UInt32(i) }
            initialized = count
        }
        var i = count - 1
        while i > 0 {
            table.swapAt(i, Int(generator.next() % UInt64(i)))
            i -= 1
        }
        next = table
    }

    /// Nanoseconds per dependent random read (2 million reads, 0.05-0.3 s).
    public func randomReadNanoseconds() -> Double {
        let reads = 1 << 21
        var slot: UInt32 = 0
        let start = DispatchTime.now().uptimeNanoseconds
        next.withUnsafeBufferPointer { table in
            for _ in 0..<reads { slot = table[Int(slot)] }
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start)
        // The last slot feeds the result, so the loop cannot be dropped.
        return elapsed / Double(reads) + (slot == UInt32.max ? 1 : 0)
    }

    /// Nanoseconds per step of a dependent 64-bit multiply-and-mix chain (50 million steps,
    /// about 0.1 s). The mix (a shift and an exclusive or after the multiply) keeps the chain
    /// from being folded: an affine recurrence alone (`x * a + c`) was computed by the optimizer
    /// without running the loop step by step.
    public func multiplyChainNanoseconds() -> Double {
        let steps = 50_000_000
        var value = UInt64(next[1]) | 1
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<steps {
            value = value &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            value ^= value &>> 29
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start)
        return elapsed / Double(steps) + (value == 0 ? 1 : 0)
    }

    /// "machine state: random read from 4 MiB 23 ns, dependent multiply-and-mix 1.98 ns".
    public func describe() -> String {
        String(format: "machine state: random read from 4 MiB %.0f ns, dependent multiply-and-mix %.2f ns",
               randomReadNanoseconds(), multiplyChainNanoseconds())
    }
}
