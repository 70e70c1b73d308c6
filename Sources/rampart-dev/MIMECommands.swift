import ArgumentParser
import Foundation
import MIME
import RampartCLIKit
import RampartCore

/// `rampart-dev mime …`: the MIME library on real files.
struct MIMECommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mime",
        abstract: "Parse RFC 5322 / MIME messages and mbox files with Rampart's MIME library.",
        subcommands: [MIMEParse.self, MIMEScan.self]
    )
}

/// `rampart-dev mime parse FILE [--json]`: one message as the reader sees it.
struct MIMEParse: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parse",
        abstract: "Parse one message; --json prints the summary other tools compare with a reference parser.",
        discussion: """
        JSON: {"subject","from","to","cc","date" (UTC),"messageId","text","html","attachments":[{"filename", \
        "contentType","contentId","disposition","size","sha256"}]}; text/html are the bodies Python's \
        get_body(("plain",)) / get_body(("html",)) would pick, attachments what iter_attachments walks \
        (recursively). Parts that could not be decoded are listed on stderr. Exit 2 when the file cannot \
        be read or holds no message.
        """)
    @Argument(help: "The message file (.eml).") var file: String
    @Flag(help: "Print the JSON summary.") var json = false

    func run() throws {
        try reportingErrors {
            let bytes: [UInt8]
            do { bytes = try EMLReader.readBytes(path: file) } catch {
                throw RuntimeError.badInput("\(file): cannot be read (\(error))")
            }
            let message = MIMEMessage(bytes: bytes)
            guard !message.headers.fields.isEmpty else {
                throw RuntimeError.badInput("\(file): byte 0: no header fields, this is not an RFC 5322 message")
            }
            for problem in message.problems {
                FileHandle.standardError.write(Data("rampart-dev: \(file): \(problem)\n".utf8))
            }
            let summary = MessageSummary(message)
            if json {
                print(summary.json())
                return
            }
            print("Subject: \(summary.subject ?? "(none)")")
            print("From:    \(summary.from.map { $0.name.map { "\($0) <" } ?? "<" }.joined())" + summary.from.map { "\($0.address)>" }.joined(separator: ", "))
            print("To:      \(summary.to.map(\.address).joined(separator: ", "))")
            if !summary.cc.isEmpty { print("Cc:      \(summary.cc.map(\.address).joined(separator: ", "))") }
            print("Date:    \(summary.date ?? "(none)")")
            print("Bodies:  text \(summary.text.map { "\($0.count) characters" } ?? "none"), html \(summary.html.map { "\($0.count) characters" } ?? "none")")
            for attachment in summary.attachments {
                print("Attachment: \(attachment.filename ?? "(no name)")  \(attachment.contentType)  \(attachment.disposition)  \(attachment.size) bytes  sha256 \(attachment.sha256.prefix(16))…")
            }
        }
    }
}

/// `rampart-dev mime scan MBOX`: the measured half of `bench mime`, in its own process so that
/// its peak memory is its own.
struct MIMEScan: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Parse every message of an mbox (bodies and attachments decoded); print JSON with time and peak memory.")
    @Argument(help: "The mbox file.") var mbox: String

    func run() throws {
        try reportingErrors {
            let start = ContinuousClock.now
            let result = try MIMEBenchmark.parseMbox(path: mbox)
            let elapsed = ContinuousClock.now - start
            var usage = rusage()
            #if os(Linux)
            getrusage(RUSAGE_SELF.rawValue, &usage)
            let peakKiB = usage.ru_maxrss
            #else
            getrusage(RUSAGE_SELF, &usage)
            let peakKiB = usage.ru_maxrss / 1024  // bytes on Apple platforms
            #endif
            let seconds = elapsed.inSeconds
            print("{\"messages\": \(result.messages), \"bytes\": \(result.bytes), \"attachments\": \(result.attachments), \"attachmentBytes\": \(result.attachmentBytes), \"skipped\": \(result.skipped), \"seconds\": \(seconds), \"peakRSSKiB\": \(peakKiB)}")
        }
    }
}

/// `rampart-dev bench mime`: MB/s and peak memory of the MIME library on a generated mbox, next
/// to Python's `mailbox` + `email` on the same file in the same run; then the whole `rampart
/// import` rate (parse, seal, upload, sync) against a local server.
struct BenchMIME: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mime",
        abstract: "Parse a generated mbox (≥ 200 MB, ≥ 10k messages) against Python's mailbox+email; time `rampart import`.")
    @Option(help: "Use this mbox instead of generating one.") var file: String?
    @Option(help: "Messages to generate.") var messages = 10_000
    @Option(name: .customLong("size-mb"), help: "Approximate size to generate, in MiB.") var sizeMB = 200
    @Option(help: "Runs of each parser (the median is reported).") var runs = 3
    @Option(name: .customLong("import-messages"), help: "Messages in the import test (0 skips it).") var importMessages = 500
    @Option(help: "Python with the standard library (default: $RAMPART_PYTHON, .venv/bin/python3, python3).") var python: String?

    func run() throws {
        try reportingErrors {
            let scripts = try BenchSupport.scriptsFolder("mime")
            let python = python ?? BenchSupport.python()
            let work = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-bench-mime-\(getpid())", isDirectory: true)
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: work) }
            let mbox = file ?? work.appendingPathComponent("bench.mbox").path
            if file == nil {
                print("Generating \(messages) messages, about \(sizeMB) MiB …")
                try BenchSupport.run([python, scripts.appendingPathComponent("make-mbox.py").path, mbox,
                                      "--messages", String(messages), "--size-mb", String(sizeMB)])
            }
            let size = (try FileManager.default.attributesOfItem(atPath: mbox)[.size] as? NSNumber)?.doubleValue ?? 0
            print(String(format: "mbox: %.1f MB (%@)", size / 1e6, mbox))
            print("machine: \(BenchSupport.machine())")
            var swift: [BenchSupport.ScanResult] = []
            var baseline: [BenchSupport.ScanResult] = []
            for run in 1...max(1, runs) {
                swift.append(try BenchSupport.scan([BenchSupport.selfPath(), "mime", "scan", mbox]))
                baseline.append(try BenchSupport.scan([python, scripts.appendingPathComponent("python-baseline.py").path, mbox]))
                print(String(format: "run %d: Rampart %.1f MB/s (%d messages, peak %.1f MiB); Python %.1f MB/s (%d messages, peak %.1f MiB)",
                             run, swift.last!.megabytesPerSecond(size), swift.last!.messages, swift.last!.peakMiB,
                             baseline.last!.megabytesPerSecond(size), baseline.last!.messages, baseline.last!.peakMiB))
            }
            let rampartRate = BenchSupport.median(swift.map { $0.megabytesPerSecond(size) })
            let pythonRate = BenchSupport.median(baseline.map { $0.megabytesPerSecond(size) })
            let peak = swift.map(\.peakMiB).max() ?? 0
            print(String(format: "parse: Rampart %.1f MB/s, Python mailbox+email %.1f MB/s: %.2fx (target ≥ 3x); Rampart peak memory %.1f MiB (target < 100 MiB)",
                         rampartRate, pythonRate, rampartRate / pythonRate, peak))
            if importMessages > 0 {
                let rate = try ImportRateBench(work: work, python: python, scripts: scripts, messages: importMessages).run()
                print(String(format: "import: %d messages in %.2f s = %.1f messages/s (parse, seal to the user's key, upload, sync; debug or release as built)",
                             rate.messages, rate.seconds, Double(rate.messages) / rate.seconds))
            }
        }
    }
}

/// The whole `rampart import` on a generated mbox, against a fresh local server.
struct ImportRateBench {
    let work: URL
    let python: String
    let scripts: URL
    let messages: Int

    func run() throws -> (messages: Int, seconds: Double) {
        let rampart = URL(fileURLWithPath: BenchSupport.selfPath()).deletingLastPathComponent().appendingPathComponent("rampart").path
        guard FileManager.default.isExecutableFile(atPath: rampart) else {
            throw RuntimeError.badInput("the import test needs the `rampart` executable next to rampart-dev (\(rampart)); build it")
        }
        let mbox = work.appendingPathComponent("import.mbox").path
        try BenchSupport.run([python, scripts.appendingPathComponent("make-mbox.py").path, mbox, "--messages", String(messages),
                              "--size-mb", String(max(1, messages / 50)), "--seed", "7"])
        let home = work.appendingPathComponent("home", isDirectory: true)
        let data = work.appendingPathComponent("server", isDirectory: true)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: rampart)
        server.arguments = ["--home", home.path, "server", "start", "--data", data.path, "--port", "0"]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer { server.terminate(); server.waitUntilExit() }
        let info = data.appendingPathComponent("server.json")
        let deadline = Date().addingTimeInterval(60)
        while !FileManager.default.fileExists(atPath: info.path) {
            guard Date() < deadline, server.isRunning else { throw RuntimeError.badInput("the local server did not start") }
            Thread.sleep(forTimeInterval: 0.1)
        }
        let environment = ["RAMPART_HOME": home.path, "RAMPART_USER": "bench"]
        try BenchSupport.run([rampart, "login", "--server-info", info.path, "--username", "demo", "--password-stdin", "--mailbox-password-stdin"],
                             input: "demo-login-password\ndemo-mailbox-password\n", environment: environment)
        let start = ContinuousClock.now
        try BenchSupport.run([rampart, "import", mbox, "--label", "Bench"], environment: environment)
        let elapsed = ContinuousClock.now - start
        return (messages, elapsed.inSeconds)
    }
}

/// Child processes, scripts and medians for the benchmarks that compare with outside tools.
enum BenchSupport {
    struct ScanResult: Decodable {
        var messages: Int
        var seconds: Double
        var peakRSSKiB: Int
        var peakMiB: Double { Double(peakRSSKiB) / 1024 }
        func megabytesPerSecond(_ bytes: Double) -> Double { bytes / 1e6 / seconds }
    }

    static func selfPath() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// `scripts/<name>` of the source tree: from the current folder, or above the executable
    /// (`.build/<config>/rampart-dev`).
    static func scriptsFolder(_ name: String) throws -> URL {
        var candidates = [URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("scripts/\(name)")]
        var folder = URL(fileURLWithPath: selfPath()).deletingLastPathComponent()
        for _ in 0..<5 {
            folder = folder.deletingLastPathComponent()
            candidates.append(folder.appendingPathComponent("scripts/\(name)"))
        }
        guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0.path) }) else {
            throw RuntimeError.badInput("scripts/\(name) not found: run from the source folder")
        }
        return found
    }

    static func python() -> String {
        if let env = ProcessInfo.processInfo.environment["RAMPART_PYTHON"], FileManager.default.isExecutableFile(atPath: env) { return env }
        let local = FileManager.default.currentDirectoryPath + "/.venv/bin/python3"
        return FileManager.default.isExecutableFile(atPath: local) ? local : "/usr/bin/env python3"
    }

    /// Runs a command to completion; its output is discarded unless it fails.
    @discardableResult
    static func run(_ command: [String], input: String? = nil, environment: [String: String] = [:]) throws -> Data {
        let parts = command.flatMap { $0.hasPrefix("/usr/bin/env ") ? $0.split(separator: " ").map(String.init) : [$0] }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: parts[0])
        process.arguments = Array(parts.dropFirst())
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe(), errors = Pipe(), stdin = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try? stdin.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw RuntimeError.badInput("\(parts.joined(separator: " ")) failed (exit \(process.terminationStatus)): \(String(decoding: err.suffix(2000), as: UTF8.self))")
        }
        return out
    }

    static func scan(_ command: [String]) throws -> ScanResult {
        let output = try run(command)
        guard let line = String(decoding: output, as: UTF8.self).split(separator: "\n").last(where: { $0.hasPrefix("{") }) else {
            throw RuntimeError.badInput("\(command.joined(separator: " ")) printed no result")
        }
        return try JSONDecoder().decode(ScanResult.self, from: Data(line.utf8))
    }

    static func median(_ values: [Double]) -> Double { Timing(samples: values).median }

    static func machine() -> String {
        let cpu = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("model name") }?
            .split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
        return "\(cpu), \(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.physicalMemory / (1 << 30)) GiB"
    }
}
