import ArgumentParser
import RampartCLIKit
import Foundation
import RampartBenchmarks
import MailSafety
import RampartCore

/// `rampart sanitize`: sanitizes mail HTML read on stdin.
///
/// Trust-model row: inbox (incoming mail) — the reference client's sanitizer, CSP and report.
struct SanitizeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sanitize",
        abstract: "Sanitize mail HTML from stdin (allowlist, CSS, remote content, trackers, CSP).",
        discussion: """
        Input must be UTF-8 (invalid bytes: exit 2 with the offset) and at most 32 MiB (exit 2).
        Elements nested deeper than 256 levels are removed; the report then has "truncated": true.
        Formats: html (the sanitized fragment), json ({html, csp, removed, blockedRemote, trackers,
        truncated}), document (a complete HTML document with the CSP <meta> first in <head>).
        """
    )

    enum Remote: String, ExpressibleByArgument, CaseIterable { case block, allow }
    enum Format: String, ExpressibleByArgument, CaseIterable { case html, json, document }

    @Option(help: "Remote content: block (default) or allow.") var remote: Remote = .block
    @Option(help: "Output: html, json or document.") var format: Format = .html
    @Option(help: "A tracker list to add (Rampart format, or MailTrackerBlocker .json).") var trackers: String?

    func run() throws {
        let input = FileHandle.standardInput.readDataToEndOfFile()
        var list = TrackerList.builtIn
        if let path = trackers {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ValidationError("Cannot read the tracker list at \(path).")
            }
            do {
                let extra = path.hasSuffix(".json")
                    ? try TrackerList(mailTrackerBlockerJSON: data)
                    : try TrackerList(rampartList: String(decoding: data, as: UTF8.self))
                list = list.merging(extra)
            } catch let error as TrackerListError {
                throw ValidationError(error.description)
            }
        }
        let options = SanitizerOptions(remote: remote == .allow ? .allowThisMessage : .block, trackers: list)
        let message: SanitizedMessage
        do {
            message = try MailSanitizer(options: options).sanitize(bytes: input)
        } catch {
            FileHandle.standardError.write(Data((error.description + "\n").utf8))
            throw ExitCode(ExitStatus.badInput)
        }
        let policy = ContentSecurityPolicy.viewer(remote == .allow ? .remoteAllowed : .embeddedImagesOnly)
        let output: String
        switch format {
        case .html:
            output = message.html
        case .document:
            output = renderDocument(message, policy: policy)
        case .json:
            struct Output: Encodable {
                var html: String
                var csp: String
                var removed: [String: Int]
                var blockedRemote: [BlockedResource]
                var trackers: [TrackerFinding]
                var truncated: Bool
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let value = Output(html: message.html, csp: policy.headerValue, removed: message.report.removed,
                               blockedRemote: message.report.blockedRemote, trackers: message.report.trackers,
                               truncated: message.report.truncated)
            output = String(decoding: try encoder.encode(value), as: UTF8.self)
        }
        FileHandle.standardOutput.write(Data((output + "\n").utf8))
    }
}

/// `rampart-dev bench sanitize`: MB/s of Rampart's sanitizer against nh3 (ammonia's Python
/// binding, PyPI, in .venv) and DOMPurify+jsdom (Debian), on two generated mail corpora, measured
/// in the same run: the original bench corpus (300 messages) and the newsletter corpus of
/// `bench html5` (big nested layout tables, inline CSS on every cell, 5 KB – 2 MB).
///
/// Each side runs `--rounds` times per corpus; the figure is the median round. Rampart's rounds
/// are split around the baselines (half before, half after) so a change of machine load during
/// the run moves both sides. nh3 runs twice: with its defaults (it drops `<style>` and `style`
/// attributes, so it does less work than Rampart, which sanitizes the CSS), and with `style`
/// attributes kept and filtered through a property allowlist (closer to Rampart's job).
/// DOMPurify+jsdom runs `--dompurify-rounds` (default 1): jsdom needs minutes per round on the
/// newsletter corpus, so its figure is one round unless asked otherwise.
///
/// Trust-model row: inbox (incoming mail) — sanitizing must be cheap enough to run on every
/// message.
struct BenchSanitizeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sanitize",
        abstract: "MB/s of Rampart's mail sanitizer vs nh3 and DOMPurify+jsdom on two generated mail corpora (medians)."
    )

    @Option(help: "Number of generated messages in the bench corpus.") var messages = 300
    @Option(help: "Timed rounds per side and corpus (the median is reported).") var rounds = 5
    @Option(help: "Python with nh3 (default: .venv/bin/python3 or $RAMPART_PYTHON).") var python: String?
    @Option(help: "Timed rounds of DOMPurify+jsdom per corpus (slow: jsdom takes minutes per round on the newsletter corpus).") var dompurifyRounds = 1
    @Flag(help: "Skip DOMPurify+jsdom.") var noDompurify = false

    func run() throws {
        print("rampart-dev bench sanitize — \(BenchMachine.describe())")
        let rounds = max(rounds, 1)
        let corpora: [(String, [String])] = [
            ("bench corpus", MailSafetyBenchCorpus.generate(count: messages)),
            ("newsletter corpus", MailCorpus.generate().map { String(decoding: $0, as: UTF8.self) }),
        ]
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let scripts = try BenchSupport.scriptsFolder("mailsafety")
        let root = scripts.deletingLastPathComponent().deletingLastPathComponent()
        let pythonPath = python ?? ProcessInfo.processInfo.environment["RAMPART_PYTHON"] ?? root.appendingPathComponent(".venv/bin/python3").path
        let sanitizer = MailSanitizer()
        var summary: [String] = []

        for (name, corpus) in corpora {
            let bytes = corpus.reduce(0) { $0 + $1.utf8.count }
            print(String(format: "%@: %d messages, %.2f MB", name, corpus.count, Double(bytes) / 1e6))
            let file = directory.appendingPathComponent("\(name.replacingOccurrences(of: " ", with: "-")).json")
            try JSONSerialization.data(withJSONObject: corpus).write(to: file)

            var rampart = BenchSamples()
            let firstHalf = (rounds + 1) / 2
            for _ in 0..<firstHalf { try rampart.measure { for message in corpus { _ = try sanitizer.sanitize(message) } } }
            let nh3 = Self.measure(pythonPath, [scripts.appendingPathComponent("bench-nh3.py").path, file.path, String(rounds)], environment: [:])
            let nh3Style = Self.measure(pythonPath, [scripts.appendingPathComponent("bench-nh3.py").path, file.path, String(rounds), "--keep-style"], environment: [:])
            let purify = noDompurify ? nil : Self.measure("/usr/bin/node", [scripts.appendingPathComponent("bench-dompurify.js").path, file.path, String(max(dompurifyRounds, 1))],
                                                          environment: ["NODE_PATH": "/usr/share/nodejs"])
            for _ in firstHalf..<rounds { try rampart.measure { for message in corpus { _ = try sanitizer.sanitize(message) } } }

            let rate = Double(bytes) / 1e6 / rampart.median
            print("  rampart:                  \(Self.format(rampart.megabytesPerSecond(bytes))) median \(String(format: "%.2f", rate)) MB/s")
            for (label, baseline) in [("nh3 (defaults)", nh3), ("nh3 (style kept, filtered)", nh3Style), ("DOMPurify+jsdom", purify)] {
                let padded = label.padding(toLength: 26, withPad: " ", startingAt: 0)
                guard let baseline else {
                    print("  \(padded)not measured" + (label.hasPrefix("nh3") ? " (scripts/setup.sh installs nh3 into .venv, or pass --python)" : noDompurify ? " (--no-dompurify)" : " (install nodejs node-dompurify node-jsdom)"))
                    continue
                }
                let baselineRate = Double(bytes) / 1e6 / baseline.median
                print("  \(padded)\(Self.format(baseline.megabytesPerSecond(bytes))) median \(String(format: "%.2f", baselineRate)) MB/s   rampart/\(label) = \(String(format: "%.2f", rate / baselineRate))x")
                summary.append(String(format: "%@ — rampart/%@: %.2fx", name, label, rate / baselineRate))
            }
        }
        print("summary (ratios of medians, same run; goals: >= 1.0x nh3, >= 10x DOMPurify):")
        for line in summary { print("  " + line) }
    }

    static func format(_ rates: [Double]) -> String {
        "runs [" + rates.map { String(format: "%.1f", $0) }.joined(separator: " ") + "] MB/s,"
    }

    /// Runs a baseline script; returns its per-round seconds, or `nil` if it cannot run.
    static func measure(_ executable: String, _ arguments: [String], environment: [String: String]) -> BenchSamples? {
        guard FileManager.default.isExecutableFile(atPath: executable) else { return nil }
        let environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        guard let data = BaselineProcess.output(executable, arguments, environment: environment),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let runs = object["runs"] as? [Double], !runs.isEmpty else { return nil }
        var samples = BenchSamples()
        for seconds in runs { samples.append(seconds) }
        return samples
    }
}
