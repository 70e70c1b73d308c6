import ArgumentParser
import RampartCLIKit
import Foundation
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

    @Option(help: "Timed repetitions per document (best is kept).") var repetitions = 3
    @Option(help: "Python with html5lib/lxml (default: .venv/bin/python3 or $RAMPART_PYTHON).") var python: String?
    @Flag(help: "Skip the Python baselines.") var noPython = false

    func run() throws {
        let corpus = MailCorpus.generate()
        let totalBytes = corpus.reduce(0) { $0 + $1.count }
        print("corpus: \(corpus.count) documents, \(totalBytes / 1024) KiB (\(corpus.map(\.count).min()! / 1024) KiB – \(corpus.map(\.count).max()! / 1024) KiB)")
        var options = HTML5ParserOptions()
        options.recordParseErrors = false
        var best = Double.infinity
        for _ in 0..<repetitions {
            let start = DispatchTime.now().uptimeNanoseconds
            for document in corpus { _ = try HTML5Parser.parseDocument(document, options: options) }
            best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        }
        let swiftRate = Double(totalBytes) / 1e6 / best
        print(String(format: "HTML5 (Swift): %.1f MB/s (%.3f s per pass, best of %d)", swiftRate, best, repetitions))

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
                    print(String(format: "%@ (Python): %.2f MB/s; Swift/%@ = %.1fx", library, rate, library, swiftRate / rate))
                } else {
                    print("\(library) (Python): not available")
                }
            }
        } else if !noPython {
            print("Python baselines: no python with html5lib/lxml found (.venv/bin/python3 or RAMPART_PYTHON)")
        }

        print("hostile documents (linear growth expected; ns/element should stay flat):")
        for (label, unit) in [("nested <div>", "<div>"), ("unclosed <b>", "<b>x")] {
            var previous: Double?
            for count in [10_000, 50_000, 100_000] {
                let html = String(repeating: unit, count: count)
                var bestTime = Double.infinity
                for _ in 0..<max(1, repetitions) {
                    let start = DispatchTime.now().uptimeNanoseconds
                    _ = try HTML5Parser.parseDocument(html, options: options)
                    bestTime = min(bestTime, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
                }
                let perElement = bestTime * 1e9 / Double(count)
                let growth = previous.map { String(format: "  (%.2fx the per-element cost of the previous size)", perElement / $0) } ?? ""
                print(String(format: "  %@ x %6d: %8.2f ms, %6.0f ns/element%@", label, count, bestTime * 1000, perElement, growth))
                previous = perElement
            }
        }
    }

    func pythonPath() -> String? {
        if let python { return python }
        if let env = ProcessInfo.processInfo.environment["RAMPART_PYTHON"] { return env }
        let local = FileManager.default.currentDirectoryPath + "/.venv/bin/python3"
        return FileManager.default.isExecutableFile(atPath: local) ? local : nil
    }

    /// Runs the same corpus through a Python parser; returns the best pass time in seconds.
    func runPython(_ python: String, library: String, dir: URL) -> Double? {
        let parse = library == "html5lib" ? "html5lib.parse(d)" : "lxml.html.document_fromstring(d)"
        let script = """
        import sys, os, time
        import \(library == "html5lib" ? "html5lib" : "lxml.html")
        docs = [open(os.path.join(sys.argv[1], f), 'rb').read() for f in sorted(os.listdir(sys.argv[1]))]
        best = None
        for _ in range(\(library == "html5lib" ? 1 : repetitions)):
            t = time.perf_counter()
            for d in docs: \(parse)
            e = time.perf_counter() - t
            best = e if best is None else min(best, e)
        print(best)
        """
        guard let output = BaselineProcess.output(python, ["-c", script, dir.path]) else { return nil }
        return Double(String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}

/// A deterministic corpus of realistic mail HTML: newsletters with nested layout tables, inline
/// styles, images, links, entities, quoted replies, conditional comments; 5 KB to 2 MB.
enum MailCorpus {
    /// The corpus's random numbers: the store benchmark's SplitMix64, with picks.
    struct Random {
        var generator: SplitMix64
        init(state: UInt64) { generator = SplitMix64(seed: state) }
        mutating func next() -> UInt64 { generator.next() }
        mutating func int(_ n: Int) -> Int { Int(next() % UInt64(n)) }
        mutating func pick<T>(_ items: [T]) -> T { items[int(items.count)] }
    }

    static let words = ["account", "offer", "newsletter", "update", "weekly", "digest", "security", "invoice", "team",
                        "meeting", "project", "release", "privacy", "encrypted", "mail", "drive", "calendar", "réunion",
                        "größe", "naïve", "café", "日本語", "données", "price", "free", "shipping", "order", "today"]

    static func sentence(_ r: inout Random) -> String {
        var words: [String] = []
        for _ in 0..<(6 + r.int(14)) { words.append(r.pick(Self.words)) }
        var s = words.joined(separator: " ")
        if r.int(4) == 0 { s += " &amp; more &nbsp;&mdash; &#8364;\(r.int(100))" }
        if r.int(5) == 0 { s = "<b>" + s + "</b>" }
        if r.int(6) == 0 { s += " <a href=\"https://example.com/t/\(r.next() % 100000)?utm_source=mail&amp;id=\(r.int(999))\" style=\"color:#1a73e8;text-decoration:none\">read more</a>" }
        return s
    }

    static func newsletter(targetBytes: Int, _ r: inout Random) -> String {
        var out = """
        <!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
        <html xmlns="http://www.w3.org/1999/xhtml"><head><meta http-equiv="Content-Type" content="text/html; charset=UTF-8">
        <meta name="viewport" content="width=device-width, initial-scale=1.0"><title>Newsletter</title>
        <style type="text/css">body{margin:0;padding:0}table td{border-collapse:collapse}.btn{background:#1a73e8;color:#fff}
        @media only screen and (max-width:600px){.col{width:100%!important}}</style>
        <!--[if mso]><style>table{border-collapse:collapse}</style><![endif]--></head>
        <body style="margin:0;padding:0;background-color:#f4f4f4">
        <center><table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" bgcolor="#f4f4f4"><tr><td align="center">
        """
        while out.utf8.count < targetBytes {
            out += "<table role=\"presentation\" width=\"600\" cellpadding=\"0\" cellspacing=\"0\" border=\"0\" style=\"max-width:600px\">"
            for _ in 0..<(2 + r.int(4)) {
                out += "<tr>"
                for column in 0..<(1 + r.int(3)) {
                    out += "<td class=\"col\" valign=\"top\" width=\"\(200 + column * 10)\" style=\"padding:10px 20px;font-family:Arial,Helvetica,sans-serif;font-size:14px;line-height:20px;color:#333333\">"
                    if r.int(3) == 0 {
                        out += "<img src=\"https://cdn.example.com/img/\(r.next() % 100000).png\" width=\"180\" height=\"120\" alt=\"\(r.pick(words))\" style=\"display:block;border:0\">"
                    }
                    out += "<h2 style=\"margin:0 0 8px 0;font-size:18px\">\(r.pick(words).capitalized) \(r.pick(words))</h2>"
                    for _ in 0..<(1 + r.int(3)) { out += "<p style=\"margin:0 0 10px 0\">\(sentence(&r))</p>\n" }
                    if r.int(4) == 0 {
                        out += "<table cellpadding=\"0\" cellspacing=\"0\"><tr><td class=\"btn\" style=\"border-radius:4px\"><a href=\"https://example.com/c?\(r.int(9999))\" style=\"display:inline-block;padding:10px 18px\">Shop now &raquo;</a></td></tr></table>"
                    }
                    out += "</td>"
                }
                out += "</tr>\n"
            }
            out += "</table>\n"
        }
        out += "</td></tr></table></center><img src=\"https://track.example.com/open.gif?u=\(r.next())\" width=\"1\" height=\"1\"></body></html>"
        return out
    }

    static func personal(targetBytes: Int, _ r: inout Random) -> String {
        var out = "<div dir=\"ltr\"><div>Hi,</div><div><br></div>"
        var depth = 0
        while out.utf8.count < targetBytes {
            out += "<div>\(sentence(&r))</div>\n"
            if r.int(5) == 0 && depth < 20 {
                out += "<div class=\"gmail_quote\"><div dir=\"ltr\" class=\"gmail_attr\">On Mon, \(r.pick(words)) wrote:<br></div><blockquote class=\"gmail_quote\" style=\"margin:0 0 0 .8ex;border-left:1px #ccc solid;padding-left:1ex\">"
                depth += 1
            }
            if r.int(9) == 0 { out += "<ul><li>\(r.pick(words))<li>\(r.pick(words))</ul><p>unclosed <i>\(r.pick(words))" }
        }
        out += String(repeating: "</blockquote></div>", count: depth) + "</div>"
        return out
    }

    /// A few dozen documents from 5 KB to 2 MB (about 60% newsletters).
    static func generate() -> [[UInt8]] {
        var r = Random(state: 0x5EED)
        var sizes: [Int] = []
        for i in 0..<36 {
            // Log-spaced from 5 KB to 2 MB.
            let exponent = Double(i % 12) / 11.0
            sizes.append(Int(5_000 * pow(400.0, exponent)))
        }
        return sizes.enumerated().map { i, size in
            Array((i % 5 < 3 ? newsletter(targetBytes: size, &r) : personal(targetBytes: size, &r)).utf8)
        }
    }
}
