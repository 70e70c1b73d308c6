import Foundation
import HTML5
@_spi(CommandLine) import MailSafety
import RampartTestSupport
import Testing

/// `rampart-dev sanitize` and `rampart-dev html5 serialize` as the whole-process benches run
/// them (stdin to stdout; the work on a thread of its own on glibc's main arena, the tree of
/// `html5 serialize` left to the process's exit): they write what the library gives in process,
/// and fail with a clear message and status.
@Suite struct FilterCommandTests {
    let dev = CLITool.rampartDev

    /// A message with a sheet of the byte path's shapes, an event handler, a remote image and a
    /// few thousand elements (enough for the allocator to grow its heap).
    static let message: String = {
        var html = "<style>#outlook a{padding:0}@media (max-width:600px){td.cell>p+p{margin:0}}</style>"
        html += "<p onclick=x()>Hi <b>there</b><img src=https://t.example/p.gif></p>"
        for n in 0..<3_000 { html += "<table><tr><td style=\"color:#333;padding:4px\">row \(n) &amp; more</td></tr></table>" }
        return html
    }()

    @Test func sanitizeWritesWhatTheLibraryWrites() async throws {
        let run = try await dev.run(["sanitize"], stdin: Self.message)
        #expect(run.status == 0, "\(run.stderr)")
        let expected = try MailSanitizer().sanitize(Self.message).html
        #expect(run.stdout == expected + "\n")
        #expect(!run.stdout.contains("onclick"))
    }

    @Test func sanitizeRefusesBytesThatAreNotUTF8() async throws {
        let run = try await dev.run(["sanitize"], input: Data([0x3C, 0x70, 0x3E, 0xFF, 0xFE]))
        #expect(run.status == 2)
        #expect(run.stderr.contains("not valid UTF-8 (first bad byte at offset 3)"))
        #expect(run.output.isEmpty)
    }

    /// The command's entry (`sanitize(utf8:)`: checked as UTF-8 once, copied without a second
    /// check) answers as `sanitize(bytes:)`: the same output and report for UTF-8 of every
    /// width (and a byte-order mark, which is text here), the same error and offset for every
    /// kind of bad byte at the start, middle and end, the same size limit; also when the last
    /// pass's tree is kept to the process's end (`freeingTree: false`, what the command asks).
    @Test func wholeInputAnswersAsTheBytesEntry() throws {
        let sanitizer = MailSanitizer()
        let texts = ["", "<p>plain</p>", Self.message, "<p title=\"é€𝄞\">ü ß 中文 🙂</p>\u{FEFF}", "\u{FEFF}<b>x</b>", String(repeating: "é<i>x</i>", count: 5_000),
                     // CR LF and lone CRs (the parser's input is then a copy), and markup built to mutate
                     // when parsed again (the nested-form mutation).
                     Self.message.replacingOccurrences(of: "<table>", with: "\r\n<table>\r"),
                     "<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>"]
        for text in texts {
            let bytes = Array(text.utf8)
            #expect(try sanitizer.sanitize(utf8: bytes) == sanitizer.sanitize(bytes: bytes))
            // The command's way: the last pass's tree kept to the process's end, the same answer.
            #expect(try sanitizer.sanitize(utf8: bytes, freeingTree: false) == sanitizer.sanitize(bytes: bytes))
        }
        let bad: [[UInt8]] = [[0xFF], [0x80], [0xC0, 0x80], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xF5], [0xE2, 0x82], [0xF0, 0x9F, 0x99]]
        for sequence in bad {
            for prefix in [[], Array("<p>a".utf8), Array(String(repeating: "é<b>x</b>", count: 100).utf8)] {
                for suffix in [[], Array("</p>".utf8)] {
                    let bytes = prefix + sequence + suffix
                    var expected: MailSafetyError?
                    do { _ = try sanitizer.sanitize(bytes: bytes) } catch { expected = error }
                    #expect(expected == .invalidEncoding(byteOffset: prefix.count), "\(bytes.suffix(12))")
                    #expect(throws: expected!) { try sanitizer.sanitize(utf8: bytes) }
                }
            }
        }
        var small = SanitizerOptions()
        small.limits = SanitizerLimits(maxInputBytes: 8)
        #expect(throws: MailSafetyError.tooLarge(bytes: 9, limit: 8)) { try MailSanitizer(options: small).sanitize(utf8: Array("<p>é</p>".utf8)) }
        var badWrapper = SanitizerOptions()
        badWrapper.wrapperID = "1st"
        #expect(throws: MailSafetyError.invalidWrapperID("1st")) { try MailSanitizer(options: badWrapper).sanitize(utf8: Array("<p>é</p>".utf8)) }
    }

    /// `html5 tree` and `html5 serialize --fragment` (class DOM, printed, the tree left to the
    /// process's exit) print what the library gives.
    @Test func treeAndFragmentPrintWhatTheLibraryGives() async throws {
        let tree = try await dev.run(["html5", "tree"], stdin: Self.message)
        #expect(tree.status == 0, "\(tree.stderr)")
        #expect(tree.stdout == "#document\n" + (try HTML5Parser.parseDocument(Self.message).root.html5libTreeDump))
        let fragment = try await dev.run(["html5", "serialize", "--fragment", "td"], stdin: Self.message)
        #expect(fragment.status == 0, "\(fragment.stderr)")
        #expect(fragment.stdout == (try HTML5Parser.parseFragment(Self.message, contextName: "td").root.serialized(scripting: false)) + "\n")
    }

    @Test func serializeWritesTheSpecSerialization() async throws {
        let run = try await dev.run(["html5", "serialize"], stdin: Self.message)
        #expect(run.status == 0, "\(run.stderr)")
        let expected = try HTML5Parser.parseTree(Array(Self.message.utf8)).root.innerHTML
        #expect(run.stdout == expected + "\n")
    }
}
