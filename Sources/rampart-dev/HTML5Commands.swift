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
            let input = StandardStreams.readAll()
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
            // The tree is not freed (`print`'s buffer is flushed by `exit`): the process ends here.
            StandardStreams.exitWithoutFreeing()
        }
    }

    struct Serialize: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the spec serialization of the parsed tree.")
        @OptionGroup var options: ParseOptions
        func run() throws {
            guard options.fragment == nil else {
                print(try options.parse().serialized(scripting: options.scripting))
                StandardStreams.exitWithoutFreeing()
            }
            // A document: parsed into the arena tree (the same tree as the class DOM's, in a
            // fraction of the allocations) and written from the serializer's buffer.
            var parserOptions = HTML5ParserOptions(scripting: options.scripting)
            parserOptions.transportCharset = options.charset
            parserOptions.recordParseErrors = false
            let input = StandardStreams.readAll()
            let (parseOptions, scripting) = (parserOptions, options.scripting)
            try StandardStreams.onMainArena { () throws -> Void in
                let result: HTMLTreeParseResult
                do {
                    result = try HTML5Parser.parseTree(input, options: parseOptions)
                } catch {
                    FileHandle.standardError.write(Data("rampart: \(error)\n".utf8))
                    throw ExitCode(ExitStatus.badInput)
                }
                // Written out in 1 MiB pieces as the serializer makes them: no buffer of the
                // whole output (its memory and page faults).
                result.root.writeSerialization(scripting: scripting) { StandardStreams.write($0) }
                StandardStreams.newline()
                // The tree is not freed: the process ends here.
                StandardStreams.exitWithoutFreeing()
            }
        }
    }
}

/// `rampart bench html5`: MB/s on a procedurally generated mail corpus, against other parsers
/// in the same run, plus growth figures for hostile documents.
///
/// The other parsers run as served baselines (`scripts/html5/bench-parsers.py --serve`): lxml
/// (libxml2, not HTML5), lexbor (C, through selectolax 1.0.2) and html5ever (Rust, through markupever). After every
/// Swift pass each of them parses the corpus once, in reverse order every other turn, so every
/// turn is a set of passes run in the same seconds; the summary gives for each the ratio of the
/// medians and the median of the per-turn ratios. On a shared VM whose speed switches between
/// two states within seconds (docs/performance.md), the per-turn ratio is the figure that does
/// not move with the machine; the absolute MB/s does. html5lib (pure Python) parses once.
///
/// Each turn also parses the corpus into the arena tree (`HTMLTree`, the tree builder's second
/// sink: docs/arena-tree.md), next to the class DOM's pass (alternating which goes first), and
/// reports it beside the class DOM's figure with its own per-turn ratios (the arena's pass time
/// against the class DOM's and against each other parser's in the same turn).
///
/// Trust-model row: inbox (incoming mail) — every message the user opens is parsed.
struct HTML5Bench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "html5", abstract: "Benchmark the HTML5 parser on generated mail HTML.")

    @Option(help: "Timed passes over the corpus (the median is reported), each followed by one pass of every other parser.") var repetitions = 7
    @Option(help: "Python with html5lib, lxml and selectolax (default: .venv/bin/python3 or $RAMPART_PYTHON).") var python: String?
    @Flag(help: "Skip the other parsers (Python baselines).") var noPython = false
    @Flag(inversion: .prefixedNo, help: "Also measure the real-world corpora (scripts/html5/realworld-corpus.py: e-mail and documentation HTML from Debian and PyPI packages), in process and whole process.") var realWorld = true
    @Option(help: "Turns of the whole-process comparison (each contender runs once per turn).") var wholeTurns = 5

    /// The parsers `bench-parsers.py` serves, in the order they are printed.
    static let servedParsers = ["lxml", "lexbor", "html5ever"]

    func run() throws {
        print("rampart-dev bench html5 — \(BenchMachine.describe())")
        let corpus = MailCorpus.generate()
        let totalBytes = corpus.reduce(0) { $0 + $1.count }
        print("corpus: \(corpus.count) documents, \(totalBytes / 1024) KiB (\(corpus.map(\.count).min()! / 1024) KiB – \(corpus.map(\.count).max()! / 1024) KiB)")
        var options = HTML5ParserOptions()
        options.recordParseErrors = false

        // The corpus as files, for the other parsers.
        let python = noPython ? nil : pythonPath()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-html5-bench-\(getpid())")
        var served: [(name: String, version: String, baseline: ServedBaseline)] = []
        defer {
            for peer in served { peer.baseline.close() }
            try? FileManager.default.removeItem(at: dir)
        }
        if let python {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            for (i, document) in corpus.enumerated() {
                try Data(document).write(to: dir.appendingPathComponent(String(format: "%03d.html", i)))
            }
            let script = try BenchSupport.scriptsFolder("html5").appendingPathComponent("bench-parsers.py").path
            for name in Self.servedParsers {
                if let baseline = ServedBaseline(python, [script, dir.path, name, "--serve"]) {
                    served.append((name, baseline.readyInfo["version"] as? String ?? "?", baseline))
                } else {
                    print("\(name): not available (scripts/setup.sh installs it into .venv, or pass --python)")
                }
            }
        }

        var samples = BenchSamples()
        var treeSamples = BenchSamples()
        var treeSerializeSamples = BenchSamples()
        var treeSerializedBytes = 0
        var serializeSamples = BenchSamples()
        var serializedBytes = 0
        var peerSamples = [BenchSamples](repeating: BenchSamples(), count: served.count)
        var peerRatios = [[Double]](repeating: [], count: served.count)
        // The machine's state after each parse pass: on a shared VM it switches within seconds,
        // and every rate here switches with it (docs/performance.md).
        let probe = BenchProbe()
        var readNanoseconds: [Double] = []
        var workNanoseconds: [Double] = []
        for turn in 0..<max(repetitions, 1) {
            // Our round is a pass into the class DOM and one into the arena tree, back to back
            // (the class DOM first on even turns, the arena first on odd ones): the VM switches
            // speed within seconds, and adjacent passes are what make their ratio mean something.
            var treeSeconds = 0.0
            let (ours, theirs) = try ServedBaseline.turn(turn, with: served.map(\.baseline)) {
                var one = BenchSamples(), tree = BenchSamples()
                let classPass = { try one.measure { for document in corpus { _ = try HTML5Parser.parseDocument(document, options: options) } } }
                let treePass = { try tree.measure { for document in corpus { _ = try HTML5Parser.parseTree(document, options: options) } } }
                if turn % 2 == 0 { try classPass(); try treePass() } else { try treePass(); try classPass() }
                treeSeconds = tree.seconds[0]
                return one.seconds[0]
            }
            samples.append(ours)
            treeSamples.append(treeSeconds)
            for k in served.indices {
                guard let seconds = theirs[k] else { continue }
                peerSamples[k].append(seconds)
                peerRatios[k].append(seconds / ours)
            }
            workNanoseconds.append(probe.independentWorkNanoseconds())
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
            // The same into the arena tree and out of it (docs/arena-tree.md, step 3).
            var treeBytesOut = 0
            try treeSerializeSamples.measure {
                for document in corpus { treeBytesOut += try HTML5Parser.parseTree(document, options: options).innerHTML.utf8.count }
            }
            treeSerializedBytes = treeBytesOut
        }
        let swiftRate = Double(totalBytes) / 1e6 / samples.median
        print(String(format: "HTML5 parse (Swift, class DOM):  runs [%@] MB/s, median %.1f MB/s",
                     samples.megabytesPerSecond(totalBytes).map { String(format: "%.1f", $0) }.joined(separator: " "), swiftRate))
        let treeRate = Double(totalBytes) / 1e6 / treeSamples.median
        let treeRatios = zip(samples.seconds, treeSamples.seconds).map { $0 / $1 }
        print(String(format: "HTML5 parse into HTMLTree (arena): runs [%@] MB/s, median %.1f MB/s (goal >= 100: the parser's fast tree, HTML5Parser.parseTree); arena/class DOM per turn [%@]",
                     treeSamples.megabytesPerSecond(totalBytes).map { String(format: "%.1f", $0) }.joined(separator: " "), treeRate,
                     treeRatios.map { String(format: "%.2f", $0) }.joined(separator: " ")))
        print(String(format: "HTML5 parse + serialize (Swift): median %.1f MB/s of input (%d KiB out)",
                     Double(totalBytes) / 1e6 / serializeSamples.median, serializedBytes / 1024))
        print(String(format: "HTML5 parse + serialize (arena):  median %.1f MB/s of input (%d KiB out%@)",
                     Double(totalBytes) / 1e6 / treeSerializeSamples.median, treeSerializedBytes / 1024,
                     treeSerializedBytes == serializedBytes ? ", as many bytes as the class DOM's" : "; the class DOM wrote \(serializedBytes) bytes: a defect"))
        print(String(format: "machine state after each parse pass: independent work [%@] ns/step, random read from 4 MiB [%@] ns; dependent multiply-and-mix %.2f ns",
                     workNanoseconds.map { String(format: "%.2f", $0) }.joined(separator: " "),
                     readNanoseconds.map { String(format: "%.0f", $0) }.joined(separator: " "), probe.multiplyChainNanoseconds()))

        var summary: [String] = []
        for k in served.indices where peerSamples[k].seconds.count == samples.seconds.count {
            let rate = Double(totalBytes) / 1e6 / peerSamples[k].median
            let ratios = peerRatios[k]
            let label = "\(served[k].name) (\(served[k].version))"
            print(String(format: "%@, same turns: runs [%@] MB/s, median %.1f MB/s; Swift/%@ per turn [%@]",
                         label, peerSamples[k].megabytesPerSecond(totalBytes).map { String(format: "%.1f", $0) }.joined(separator: " "), rate,
                         served[k].name, ratios.map { String(format: "%.2f", $0) }.joined(separator: " ")))
            summary.append(String(format: "Swift/%@: %.2fx (ratio of medians), paired median %.2fx (%.2f–%.2fx over %d turns)", served[k].name,
                                  swiftRate / rate, BenchSamples.median(ratios), ratios.min() ?? .nan, ratios.max() ?? .nan, ratios.count))
            let treePaired = zip(peerSamples[k].seconds, treeSamples.seconds).map { $0 / $1 }
            summary.append(String(format: "Swift arena/%@: %.2fx (ratio of medians), paired median %.2fx (%.2f–%.2fx over %d turns)", served[k].name,
                                  treeRate / rate, BenchSamples.median(treePaired), treePaired.min() ?? .nan, treePaired.max() ?? .nan, treePaired.count))
        }
        for k in served.indices where peerSamples[k].seconds.count != samples.seconds.count {
            print("\(served[k].name): stopped answering after \(peerSamples[k].seconds.count) passes (not summarized)")
        }
        if let python {
            if let seconds = runHTML5Lib(python, dir: dir) {
                let rate = Double(totalBytes) / 1e6 / seconds
                print(String(format: "html5lib (pure Python, one pass): %.2f MB/s", rate))
                summary.append(String(format: "Swift/html5lib: %.1fx", swiftRate / rate))
            } else {
                print("html5lib (Python): not available")
            }
        } else if !noPython {
            print("other parsers: no python found (.venv/bin/python3 or RAMPART_PYTHON; scripts/setup.sh makes .venv)")
        }
        if !summary.isEmpty {
            print(String(format: "summary (goal: parser >= 100 MB/s; HTMLTree (arena) median %.1f MB/s: %@; class DOM median %.1f MB/s; arena/class DOM paired median %.2fx):",
                         treeRate, treeRate >= 100 ? "met" : "not met", swiftRate, BenchSamples.median(treeRatios)))
            for line in summary { print("  " + line) }
        }

        if realWorld, let python { try benchRealWorld(python: python, options: options) }

        // At most three timed parses per size: the bounded shapes take up to 2 s at 100 000.
        let hostileRepetitions = min(max(1, repetitions), 3)
        print("hostile documents (linear growth expected; ns/element should stay flat; best of \(hostileRepetitions)):")
        for shape in HostileShape.all {
            var previous: Double?
            for count in [10_000, 50_000, 100_000] {
                let html = shape.document(count)
                var bestTime = Double.infinity, bestTreeTime = Double.infinity
                var limited = false
                for _ in 0..<hostileRepetitions {
                    let start = DispatchTime.now().uptimeNanoseconds
                    let result = try HTML5Parser.parseDocument(html, options: options)
                    bestTime = min(bestTime, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
                    limited = result.formattingLimited || result.selectedContentLimited
                    // The same document into the arena tree (the same algorithm, the other sink).
                    let treeStart = DispatchTime.now().uptimeNanoseconds
                    _ = try HTML5Parser.parseTree(html, options: options)
                    bestTreeTime = min(bestTreeTime, Double(DispatchTime.now().uptimeNanoseconds - treeStart) / 1e9)
                }
                let perElement = bestTime * 1e9 / Double(count)
                let growth = previous.map { String(format: "  (%.2fx the per-element cost of the previous size)", perElement / $0) } ?? ""
                print(String(format: "  %@ x %6d: %8.2f ms, %6.0f ns/element%@; arena %6.0f ns/element%@", shape.label.padding(toLength: 32, withPad: " ", startingAt: 0), count, bestTime * 1000, perElement,
                             limited ? " [bound reached]" : "", bestTreeTime * 1e9 / Double(count), growth))
                previous = perElement
            }
        }
    }

    /// The real-world corpora: in process (the arena parse against lexbor and html5ever served
    /// in the same turns), then whole process (`rampart-dev html5 serialize` against the same
    /// parsers reading stdin and writing their serialization), with peak RSS on the 50 MB
    /// document.
    func benchRealWorld(python: String, options: HTML5ParserOptions) throws {
        let corpus: RealWorldCorpus
        switch RealWorldCorpus.assemble(python: python) {
        case .success(let found): corpus = found
        case .failure(let error):
            print("real-world corpora: not available (\(error))")
            return
        }
        print("real-world corpora (\(corpus.folder.path)):")
        for line in corpus.describeSources() { print("  " + line) }
        let script = try BenchSupport.scriptsFolder("html5").appendingPathComponent("bench-parsers.py").path
        var summary: [String] = []
        // The mail corpus is small (~0.3 MB): its documents repeated to ~3 MB per pass; the
        // documentation site's first ~10 MB of pages.
        for (name, documents) in [("real-world mail", try Self.repeated(corpus.documents("mail"), to: 3_000_000)),
                                  ("real-world docs", try corpus.documents("docs", limit: 10_000_000))] {
            let totalBytes = documents.reduce(0) { $0 + $1.count }
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-html5-realworld-\(getpid())")
            try? FileManager.default.removeItem(at: dir)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: dir) }
            for (i, document) in documents.enumerated() { try Data(document).write(to: dir.appendingPathComponent(String(format: "%05d.html", i))) }
            let peers = ["lexbor", "html5ever"].compactMap { parser in ServedBaseline(python, [script, dir.path, parser, "--serve"]).map { (parser, $0) } }
            defer { for peer in peers { peer.1.close() } }
            var arena = BenchSamples()
            var ratios = [[Double]](repeating: [], count: peers.count)
            for turn in 0..<max(repetitions, 1) {
                let (ours, theirs) = try ServedBaseline.turn(turn, with: peers.map(\.1)) {
                    var one = BenchSamples()
                    try one.measure { for document in documents { _ = try HTML5Parser.parseTree(document, options: options) } }
                    return one.seconds[0]
                }
                arena.append(ours)
                for k in peers.indices { if let seconds = theirs[k] { ratios[k].append(seconds / ours) } }
            }
            print(String(format: "%@ (in process, %d documents, %.1f MB): arena parse runs [%@] MB/s, median %.1f MB/s", name, documents.count, Double(totalBytes) / 1e6,
                         arena.megabytesPerSecond(totalBytes).map { String(format: "%.1f", $0) }.joined(separator: " "), Double(totalBytes) / 1e6 / arena.median))
            for k in peers.indices where !ratios[k].isEmpty {
                let line = String(format: "%@ — Swift arena/%@ in process: paired median %.2fx (%.2f–%.2fx over %d turns)", name, peers[k].0,
                                  BenchSamples.median(ratios[k]), ratios[k].min() ?? .nan, ratios[k].max() ?? .nan, ratios[k].count)
                print("  " + line)
                summary.append(line)
            }
        }
        let contenders = [WholeProcessBench.Contender(name: "rampart-dev", executable: BenchSupport.selfPath(), arguments: ["html5", "serialize"])]
            + ["lexbor", "html5ever"].map { WholeProcessBench.Contender(name: $0, executable: python, arguments: [script, "-", $0, "--stdin"]) }
        summary += WholeProcessBench.compare("real-world mail, parse + serialize", input: corpus.whole("mail.html"), contenders: contenders, turns: wholeTurns)
        summary += WholeProcessBench.compare("real-world docs 50 MB, parse + serialize", input: corpus.whole("docs-50mb.html"), contenders: contenders, turns: wholeTurns)
        print("real-world summary (goals: parse + serialize >= 1.5x lexbor whole process; peak RSS on 50 MB <= lexbor's):")
        for line in summary { print("  " + line) }
    }

    /// `documents` repeated in order until they hold at least `bytes` bytes.
    static func repeated(_ documents: [[UInt8]], to bytes: Int) -> [[UInt8]] {
        guard !documents.isEmpty else { return [] }
        var out: [[UInt8]] = [], total = 0
        while total < bytes { for document in documents { out.append(document); total += document.count } }
        return out
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

    /// Parses the corpus once with html5lib (pure Python: about a minute); the pass's seconds.
    func runHTML5Lib(_ python: String, dir: URL) -> Double? {
        let script = """
        import sys, os, time
        import html5lib
        docs = [open(os.path.join(sys.argv[1], f), 'rb').read() for f in sorted(os.listdir(sys.argv[1]))]
        t = time.perf_counter()
        for d in docs: html5lib.parse(d)
        print(time.perf_counter() - t)
        """
        guard let output = BaselineProcess.output(python, ["-c", script, dir.path]) else { return nil }
        return Double(String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
