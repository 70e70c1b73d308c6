import Foundation
import RampartBenchmarks
import RampartCLIKit
#if canImport(Glibc)
import Glibc
#endif

/// Whole-process comparisons for `bench html5` and `bench sanitize`: each contender is a command
/// run the way a person runs it (`rampart-dev html5 serialize < file > out`), standard input
/// from the document's file and standard output to `/dev/null`; the wall time from spawn to exit
/// and the peak resident memory (`wait4`'s `ru_maxrss`) of each run. The contenders take turns,
/// one run each per turn, in reverse order every other turn (as `ServedBaseline.turn`), so each
/// turn's runs share the machine's state, and the figure to read is the median of the per-turn
/// ratios.
///
/// Trust-model row: inbox (incoming mail) — the viewer's cost on mail as it is sent.
enum WholeProcessBench {
    /// A command compared whole-process.
    struct Contender {
        var name: String
        var executable: String
        var arguments: [String]
    }

    /// One run: wall seconds, peak RSS in KiB and the exit status (`nil` if it could not start).
    struct Run {
        var seconds: Double
        var peakKiB: Int
        var status: Int32
    }

    /// Runs `contender` once with `input` as standard input and standard output discarded.
    static func run(_ contender: Contender, input: String) -> Run? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, input, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([contender.executable] + contender.arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let start = DispatchTime.now().uptimeNanoseconds
        let spawned = (argv + [nil]).withUnsafeBufferPointer { pointers in
            posix_spawn(&pid, contender.executable, &actions, nil, UnsafeMutablePointer(mutating: pointers.baseAddress!), environ)
        }
        guard spawned == 0 else { return nil }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let exited = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Run(seconds: seconds, peakKiB: usage.ru_maxrss, status: exited)
    }

    /// Runs every contender `turns` times on `input`, in turns; prints one line per contender
    /// (MB/s of input per run, median, peak RSS) and the first contender's paired ratios to each
    /// other. Returns the summary lines (`label — first/other: paired median …`).
    @discardableResult
    static func compare(_ label: String, input: String, contenders: [Contender], turns: Int) -> [String] {
        let bytes = (try? FileManager.default.attributesOfItem(atPath: input)[.size] as? Int) ?? 0
        print(String(format: "%@ (whole process, stdin %.1f MB → stdout, %d turns):", label, Double(bytes) / 1e6, turns))
        var samples = [BenchSamples](repeating: BenchSamples(), count: contenders.count)
        var peaks = [Int](repeating: 0, count: contenders.count)
        var failed = [String?](repeating: nil, count: contenders.count)
        for turn in 0..<max(turns, 1) {
            let order = turn.isMultiple(of: 2) ? Array(contenders.indices) : contenders.indices.reversed()
            for k in order where failed[k] == nil {
                guard let run = run(contenders[k], input: input) else { failed[k] = "could not start"; continue }
                guard run.status == 0 else { failed[k] = "exit status \(run.status)"; continue }
                samples[k].append(run.seconds)
                peaks[k] = max(peaks[k], run.peakKiB)
            }
        }
        for k in contenders.indices {
            let name = contenders[k].name.padding(toLength: 30, withPad: " ", startingAt: 0)
            if let reason = failed[k] { print("  \(name)not measured (\(reason))"); continue }
            print(String(format: "  %@runs [%@] MB/s, median %.1f MB/s, peak RSS %.0f MiB", name,
                         samples[k].megabytesPerSecond(bytes).map { String(format: "%.1f", $0) }.joined(separator: " "),
                         Double(bytes) / 1e6 / samples[k].median, Double(peaks[k]) / 1024))
        }
        guard failed[0] == nil else { return ["\(label) — \(contenders[0].name): \(failed[0]!)"] }
        var summary: [String] = []
        for k in contenders.indices.dropFirst() where failed[k] == nil {
            let ratios = zip(samples[k].seconds, samples[0].seconds).map { $0 / $1 }
            let line = String(format: "%@ — %@/%@ whole process: paired median %.2fx (%.2f–%.2fx over %d turns); peak RSS %.0f MiB vs %.0f MiB (%.2fx)",
                              label, contenders[0].name, contenders[k].name, BenchSamples.median(ratios), ratios.min() ?? .nan,
                              ratios.max() ?? .nan, ratios.count, Double(peaks[0]) / 1024, Double(peaks[k]) / 1024,
                              Double(peaks[0]) / Double(max(peaks[k], 1)))
            print("  " + line)
            summary.append(line)
        }
        return summary
    }
}

/// The real-world corpora (scripts/html5/realworld-corpus.py: HTML shipped in Debian and PyPI
/// packages, assembled at bench time and never committed).
struct RealWorldCorpus {
    /// The corpus's folder (`mail/`, `docs/`, `whole/`, `manifest.json`).
    let folder: URL

    /// Builds (or finds, when up to date) the corpus with `python`; `nil` with the reason when
    /// it cannot.
    static func assemble(python: String) -> Result<RealWorldCorpus, RuntimeError> {
        do {
            let script = try BenchSupport.scriptsFolder("html5").appendingPathComponent("realworld-corpus.py").path
            let environment = ProcessInfo.processInfo.environment.merging(["RAMPART_PYTHON": python]) { $1 }
            guard let output = BaselineProcess.output(python, [script], environment: environment) else {
                return .failure(.badInput("scripts/html5/realworld-corpus.py failed (run it by hand to see why)"))
            }
            let path = String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            return .success(RealWorldCorpus(folder: URL(fileURLWithPath: path)))
        } catch let error as RuntimeError {
            return .failure(error)
        } catch {
            return .failure(.badInput("\(error)"))
        }
    }

    /// The documents of `name` (`mail` or `docs`), in name order, up to `limit` bytes.
    func documents(_ name: String, limit: Int = .max) throws -> [[UInt8]] {
        let folder = folder.appendingPathComponent(name)
        var documents: [[UInt8]] = []
        var total = 0
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() where total < limit {
            let bytes = Array(try Data(contentsOf: folder.appendingPathComponent(file)))
            total += bytes.count
            documents.append(bytes)
        }
        return documents
    }

    /// The path of a whole-process input (`mail.html`, `docs-25mb.html`, `docs-50mb.html`).
    func whole(_ name: String) -> String { folder.appendingPathComponent("whole").appendingPathComponent(name).path }

    /// One line per source: package, version, origin, files, bytes.
    func describeSources() -> [String] {
        guard let data = try? Data(contentsOf: folder.appendingPathComponent("manifest.json")),
              let manifest = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let sources = manifest["sources"] as? [[String: Any]] else { return ["(no manifest)"] }
        return sources.map { source in
            "\(source["corpus"] ?? "?"): \(source["package"] ?? "?") \(source["version"] ?? "?") (\(source["origin"] ?? "?")), \(source["files"] ?? "?") files, \(source["bytes"] ?? "?") bytes — \(source["what"] ?? "")"
        }
    }
}
