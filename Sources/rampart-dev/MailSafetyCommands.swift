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

/// `rampart bench sanitize`: MB/s of Rampart's sanitizer, nh3 (PyPI, in .venv) and
/// DOMPurify+jsdom (Debian) on one generated mail corpus.
///
/// Trust-model row: inbox (incoming mail) — sanitizing must be cheap enough to run on every
/// message.
struct BenchSanitizeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sanitize",
        abstract: "MB/s of Rampart's mail sanitizer vs nh3 and DOMPurify+jsdom on a generated mail corpus."
    )

    @Option(help: "Number of generated messages.") var messages = 300
    @Option(help: "Rounds (the best is reported).") var rounds = 3
    @Option(help: "Python with nh3 (default: .venv/bin/python3 or $RAMPART_PYTHON).") var python: String?

    func run() throws {
        let corpus = MailSafetyBenchCorpus.generate(count: messages)
        let bytes = corpus.reduce(0) { $0 + $1.utf8.count }
        let sanitizer = MailSanitizer()
        var best = Double.infinity
        for _ in 0..<max(rounds, 1) {
            let start = ContinuousClock.now
            for message in corpus { _ = try sanitizer.sanitize(message) }
            let elapsed = ContinuousClock.now - start
            best = min(best, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }
        let rampart = Double(bytes) / best / 1e6
        print(String(format: "corpus: %d messages, %.2f MB", corpus.count, Double(bytes) / 1e6))
        print(String(format: "rampart:          %8.2f MB/s", rampart))

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("messages.json")
        try JSONSerialization.data(withJSONObject: corpus).write(to: file)
        let root = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        let scripts = root.appendingPathComponent("scripts/mailsafety")

        let pythonPath = python ?? ProcessInfo.processInfo.environment["RAMPART_PYTHON"] ?? root.appendingPathComponent(".venv/bin/python3").path
        if let nh3 = Self.measure(pythonPath, [scripts.appendingPathComponent("bench-nh3.py").path, file.path, String(rounds)], environment: [:]) {
            print(String(format: "nh3:              %8.2f MB/s   rampart/nh3 = %.2f", nh3, rampart / nh3))
        } else {
            print("nh3:              not measured (run scripts/setup.sh to install nh3 into .venv, or pass --python)")
        }
        if let purify = Self.measure("/usr/bin/node", [scripts.appendingPathComponent("bench-dompurify.js").path, file.path, String(rounds)], environment: ["NODE_PATH": "/usr/share/nodejs"]) {
            print(String(format: "dompurify+jsdom:  %8.2f MB/s   rampart/dompurify = %.2f", purify, rampart / purify))
        } else {
            print("dompurify+jsdom:  not measured (install nodejs node-dompurify node-jsdom)")
        }
    }

    /// Runs a baseline script and returns its MB/s, or `nil` if it cannot run.
    static func measure(_ executable: String, _ arguments: [String], environment: [String: String]) -> Double? {
        guard FileManager.default.isExecutableFile(atPath: executable) else { return nil }
        let environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        guard let data = BaselineProcess.output(executable, arguments, environment: environment),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        return object["mbPerSecond"] as? Double
    }
}
