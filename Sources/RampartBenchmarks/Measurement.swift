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

/// How fast the machine is right now at the three things a benchmark's time hangs on: one
/// dependent multiply-and-mix step (the core's clock), one step of six independent integer chains
/// (the core's throughput: how many instructions it retires per cycle when the code gives it
/// many at once) and one random read from 4 MiB (the caches and memory).
///
/// On the shared 2-core VMs the figures in docs/performance.md come from, the machine switches
/// within seconds between a fast and a slow state. The dependent chain does not move; the
/// independent chains run ~1.4× slower in the slow state, and the parser and the sanitizer
/// (many independent instructions per byte) ~1.7×; random reads swing from about 25 to over
/// 150 ns, but less in step with the parse rate. That is what a core whose execution units
/// (and L1/L2 caches) are shared with another tenant's thread looks like, which the guest cannot
/// see (it reports one thread per core). Read next to each timed pass, this tells a slow run of
/// the code from a run on a slow machine.
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

    /// Nanoseconds per step of six independent add/xor/shift chains (20 million steps, about
    /// 0.03 s): work the core can overlap, so its time falls when the core retires more
    /// instructions per cycle and rises when something else takes its execution units. On the
    /// AMD EPYC VM: 1.5–1.9 ns in the fast state, 2.0–3.1 ns in the slow one.
    public func independentWorkNanoseconds() -> Double {
        let steps = 20_000_000
        var a: UInt64 = UInt64(next[2]), b: UInt64 = 2, c: UInt64 = 3, d: UInt64 = 4, e: UInt64 = 5, f: UInt64 = 6
        let start = DispatchTime.now().uptimeNanoseconds
        for i in 0..<steps {
            let k = UInt64(truncatingIfNeeded: i)
            a = a &+ (k ^ (a &>> 3)); b = b &+ (k ^ (b &>> 5)); c = c &+ (k ^ (c &>> 7))
            d = d ^ (k &+ (d &<< 1)); e = e ^ (k &+ (e &<< 2)); f = f ^ (k &+ (f &<< 3))
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start)
        // Every chain feeds the result, so none can be dropped.
        return elapsed / Double(steps) + (a ^ b ^ c ^ d ^ e ^ f == 0 ? 1 : 0)
    }

    /// "machine state: independent work 1.56 ns/step, random read from 4 MiB 23 ns, dependent
    /// multiply-and-mix 1.98 ns".
    public func describe() -> String {
        String(format: "machine state: independent work %.2f ns/step, random read from 4 MiB %.0f ns, dependent multiply-and-mix %.2f ns",
               independentWorkNanoseconds(), randomReadNanoseconds(), multiplyChainNanoseconds())
    }
}
