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
