import ArgumentParser
import RampartCLIKit
import Foundation
import RampartBenchmarks
import HTML5
#if canImport(RampartCore)
import RampartCore

extension HTML5Error: RampartError {}
#endif

/// `rampart html5 …`: the spec-exact HTML parser from the command line.
struct HTML5Command: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "html5",
        abstract: "Parse HTML (stdin) with the WHATWG parser: print the tree or the serialization.",
        subcommands: [Tree.self, Serialize.self, HTML5Bench.self]
    )

    struct ParseOptions: ParsableArguments {
        @Option(name: .long, help: "Parse as a fragment in this context element (e.g. body, tr, 'svg path').")
        var fragment: String?
        @Flag(name: .long, help: "Parse with the scripting flag on (<noscript> becomes raw text).")
        var scripting = false
        @Option(name: .long, help: "Charset from the MIME part (used when no BOM).")
        var charset: String?

        func parse() throws -> Node {
            let input = Array(FileHandle.standardInput.readDataToEndOfFile())
            var options = HTML5ParserOptions(scripting: scripting)
            options.transportCharset = charset
            do {
                if let fragment {
                    let (utf8, _) = EncodingSniffer.decode(input, transportCharset: charset)
                    return try HTML5Parser.parseFragment(String(decoding: utf8, as: UTF8.self), contextName: fragment, options: options).root
                }
                return try HTML5Parser.parseDocument(input, options: options).root
            } catch {
                FileHandle.standardError.write(Data("rampart: \(error)\n".utf8))
                throw ExitCode(ExitStatus.badInput)
            }
        }
    }

    struct Tree: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the tree in html5lib-tests' #document format.")
        @OptionGroup var options: ParseOptions
        func run() throws {
            let root = try options.parse()
            print(root is DocumentFragment ? "#document-fragment" : "#document")
            print(root.html5libTreeDump, terminator: "")
        }
    }

    struct Serialize: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the spec serialization of the parsed tree.")
        @OptionGroup var options: ParseOptions
        func run() throws {
            print(try options.parse().serialized(scripting: options.scripting))
        }
    }
}

/// `rampart bench html5`: MB/s on a procedurally generated mail corpus, against Python html5lib
/// and lxml when installed, plus growth figures for hostile documents.
struct HTML5Bench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "html5", abstract: "Benchmark the HTML5 parser on generated mail HTML.")

    @Option(help: "Timed passes over the corpus (the median is reported).") var repetitions = 7
    @Option(help: "Python with html5lib/lxml (default: .venv/bin/python3 or $RAMPART_PYTHON).") var python: String?
    @Flag(help: "Skip the Python baselines.") var noPython = false

    func run() throws {
        print("rampart-dev bench html5 — \(BenchMachine.describe())")
        let corpus = MailCorpus.generate()
        let totalBytes = corpus.reduce(0) { $0 + $1.count }
        print("corpus: \(corpus.count) documents, \(totalBytes / 1024) KiB (\(corpus.map(\.count).min()! / 1024) KiB – \(corpus.map(\.count).max()! / 1024) KiB)")
        var options = HTML5ParserOptions()
        options.recordParseErrors = false
        var samples = BenchSamples()
        var serializeSamples = BenchSamples()
        var serializedBytes = 0
        // The machine's memory speed after each parse pass: on a shared VM it swings within
        // seconds, and the parse rate swings with it (docs/performance.md).
        let probe = BenchProbe()
        var readNanoseconds: [Double] = []
        for _ in 0..<max(repetitions, 1) {
            try samples.measure { for document in corpus { _ = try HTML5Parser.parseDocument(document, options: options) } }
            readNanoseconds.append(probe.randomReadNanoseconds())
            // Parse + serialize (what the sanitizer pays per message, without the cleaning).
            var bytesOut = 0
            try serializeSamples.measure {
                for document in corpus {
                    var html = ""
                    HTMLSerializer.serializeChildren(of: try HTML5Parser.parseDocument(document, options: options).root, into: &html)
                    bytesOut += html.utf8.count
                }
            }
            serializedBytes = bytesOut
        }
        let swiftRate = Double(totalBytes) / 1e6 / samples.median
        print(String(format: "HTML5 parse (Swift):             runs [%@] MB/s, median %.1f MB/s (goal >= 100)",
                     samples.megabytesPerSecond(totalBytes).map { String(format: "%.1f", $0) }.joined(separator: " "), swiftRate))
        print(String(format: "HTML5 parse + serialize (Swift): median %.1f MB/s of input (%d KiB out)",
                     Double(totalBytes) / 1e6 / serializeSamples.median, serializedBytes / 1024))
        print(String(format: "machine state after each parse pass: random read from 4 MiB [%@] ns; dependent multiply-and-mix %.2f ns",
                     readNanoseconds.map { String(format: "%.0f", $0) }.joined(separator: " "), probe.multiplyChainNanoseconds()))

        if !noPython, let python = pythonPath() {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-html5-bench-\(getpid())")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: dir) }
            for (i, document) in corpus.enumerated() {
                try Data(document).write(to: dir.appendingPathComponent(String(format: "%03d.html", i)))
            }
            for library in ["html5lib", "lxml"] {
                if let seconds = runPython(python, library: library, dir: dir) {
                    let rate = Double(totalBytes) / 1e6 / seconds
                    print(String(format: "%@ (Python, same run): median %.2f MB/s; Swift/%@ = %.1fx", library, rate, library, swiftRate / rate))
                } else {
                    print("\(library) (Python): not available")
                }
            }
        } else if !noPython {
            print("Python baselines: no python with html5lib/lxml found (.venv/bin/python3 or RAMPART_PYTHON)")
        }

        // At most three timed parses per size: the bounded shapes take up to 2 s at 100 000.
        let hostileRepetitions = min(max(1, repetitions), 3)
        print("hostile documents (linear growth expected; ns/element should stay flat; best of \(hostileRepetitions)):")
        for shape in HostileShape.all {
            var previous: Double?
            for count in [10_000, 50_000, 100_000] {
                let html = shape.document(count)
                var bestTime = Double.infinity
                var limited = false
                for _ in 0..<hostileRepetitions {
                    let start = DispatchTime.now().uptimeNanoseconds
                    let result = try HTML5Parser.parseDocument(html, options: options)
                    bestTime = min(bestTime, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
                    limited = result.formattingLimited || result.selectedContentLimited
                }
                let perElement = bestTime * 1e9 / Double(count)
                let growth = previous.map { String(format: "  (%.2fx the per-element cost of the previous size)", perElement / $0) } ?? ""
                print(String(format: "  %@ x %6d: %8.2f ms, %6.0f ns/element%@%@", shape.label.padding(toLength: 32, withPad: " ", startingAt: 0), count, bestTime * 1000, perElement,
                             limited ? " [bound reached]" : "", growth))
                previous = perElement
            }
        }
    }

    /// A hostile document shape: `count` repetitions of a unit that once made some step of the
    /// parser quadratic. The last three reach the parser's bounds for hostile input (the output
    /// says so): distinct formatting elements (Noah's Ark compares a bounded window), closed
    /// formatting elements re-created in every paragraph (bounded reconstruction), and options
    /// after a `<selectedcontent>` (a bounded search per option).
    ///
    /// Trust-model row: inbox (incoming mail) — hostile markup must not stall the viewer.
    struct HostileShape: Sendable {
        let label: String
        let document: @Sendable (Int) -> String

        static let all: [HostileShape] = [
            HostileShape(label: "nested <div>") { String(repeating: "<div>", count: $0) },
            HostileShape(label: "unclosed <b>") { String(repeating: "<b>x", count: $0) },
            HostileShape(label: "distinct unclosed <b>") { count in (0..<count).map { "<b class=c\($0)>x" }.joined() },
            HostileShape(label: "<b> re-created per <p>") { count in (0..<count).map { "<p><b class=c\($0)>x</p>" }.joined() },
            HostileShape(label: "<option> after <selectedcontent>") { count in
                "<select>" + String(repeating: "<option>x", count: count / 2) + "<button><selectedcontent></selectedcontent></button>"
                    + String(repeating: "<option selected>y", count: count - count / 2)
            },
        ]
    }

    func pythonPath() -> String? {
        if let python { return python }
        if let env = ProcessInfo.processInfo.environment["RAMPART_PYTHON"] { return env }
        let local = FileManager.default.currentDirectoryPath + "/.venv/bin/python3"
        return FileManager.default.isExecutableFile(atPath: local) ? local : nil
    }

    /// Runs the same corpus through a Python parser; returns the median pass time in seconds
    /// (html5lib, pure Python, runs one pass).
    func runPython(_ python: String, library: String, dir: URL) -> Double? {
        let parse = library == "html5lib" ? "html5lib.parse(d)" : "lxml.html.document_fromstring(d)"
        let script = """
        import sys, os, time
        import \(library == "html5lib" ? "html5lib" : "lxml.html")
        docs = [open(os.path.join(sys.argv[1], f), 'rb').read() for f in sorted(os.listdir(sys.argv[1]))]
        runs = []
        for _ in range(\(library == "html5lib" ? 1 : repetitions)):
            t = time.perf_counter()
            for d in docs: \(parse)
            runs.append(time.perf_counter() - t)
        runs.sort()
        n = len(runs)
        print(runs[n // 2] if n % 2 else (runs[n // 2 - 1] + runs[n // 2]) / 2)
        """
        guard let output = BaselineProcess.output(python, ["-c", script, dir.path]) else { return nil }
        return Double(String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
