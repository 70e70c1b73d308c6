import Foundation
import HTML5
import MailSafety
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

    @Test func serializeWritesTheSpecSerialization() async throws {
        let run = try await dev.run(["html5", "serialize"], stdin: Self.message)
        #expect(run.status == 0, "\(run.stderr)")
        let expected = try HTML5Parser.parseTree(Array(Self.message.utf8)).root.innerHTML
        #expect(run.stdout == expected + "\n")
    }
}
