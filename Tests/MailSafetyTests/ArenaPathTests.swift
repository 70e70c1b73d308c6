import Foundation
import HTML5
import RampartTestSupport
import Testing
@_spi(Reference) @testable import MailSafety

/// The sanitizer's arena path (`MailSanitizer.sanitize`: parse, clean and re-parse check on the
/// arena tree) against the class DOM path it replaced (`referenceSanitize`), byte for byte:
/// the same HTML and the same report for every input — the XSS corpus under every option set
/// the fuzz targets use, the fuzz fixtures, hostile shapes (deep nesting, the parser's
/// reconstruction bound, which sends the re-parse check to its rare branch), random markup, and
/// the real-world mail corpus where `scripts/html5/realworld-corpus.py` has built it.
///
/// Trust-model row: inbox (incoming mail) — the switch to the arena tree must not change one
/// byte of what the viewer receives.
@Suite struct ArenaPathTests {
    /// Expects both paths to give the same message (or the same error) for `html`.
    static func expectSame(_ html: String, options: SanitizerOptions, sourceLocation: SourceLocation = #_sourceLocation) {
        let sanitizer = MailSanitizer(options: options)
        let arena = Result<SanitizedMessage, MailSafetyError>(catching: { () throws(MailSafetyError) in try sanitizer.sanitize(html) })
        let reference = Result<SanitizedMessage, MailSafetyError>(catching: { () throws(MailSafetyError) in try sanitizer.referenceSanitize(html) })
        switch (arena, reference) {
        case (.success(let a), .success(let r)):
            #expect(Array(a.html.utf8) == Array(r.html.utf8), "\(html.prefix(300).debugDescription)", sourceLocation: sourceLocation)
            #expect(a.report == r.report, "\(html.prefix(300).debugDescription)", sourceLocation: sourceLocation)
            #expect(a == r, sourceLocation: sourceLocation)
        case (.failure(let a), .failure(let r)):
            #expect(a == r, sourceLocation: sourceLocation)
        default:
            Issue.record("one path failed: \(arena) / \(reference) for \(html.prefix(300).debugDescription)", sourceLocation: sourceLocation)
        }
    }

    /// Every option set the fuzz targets pick (first byte 0...15).
    static let optionSets: [SanitizerOptions] = (0...15).map { FuzzInput.sanitizerOptions(UInt8($0)) } + [
        SanitizerOptions(remote: .allowAll, attachments: Corpus.attachments, remoteProxy: nil),
        SanitizerOptions(attachments: Corpus.attachments, stripTrackingParameters: false, limits: SanitizerLimits(maxDepth: 8, maxPasses: 2)),
    ]

    @Test(arguments: 0..<optionSets.count)
    func xssCorpusGivesTheSameOutputAndReport(optionSet: Int) {
        #expect(Corpus.vectors.count >= 300)
        for vector in Corpus.vectors {
            Self.expectSame(vector, options: Self.optionSets[optionSet])
        }
    }

    @Test func fuzzFixturesGiveTheSameOutputAndReport() throws {
        let folder = try #require(Bundle.module.url(forResource: "fuzz", withExtension: nil, subdirectory: "Resources"))
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        #expect(files.count >= 10)
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: file))
            if file.pathExtension == "fuzz", let first = bytes.first {
                Self.expectSame(String(decoding: bytes.dropFirst(), as: UTF8.self), options: FuzzInput.sanitizerOptions(first))
            } else {
                for options in Self.optionSets.prefix(4) { Self.expectSame(String(decoding: bytes, as: UTF8.self), options: options) }
            }
        }
    }

    /// Hostile shapes: nesting past the depth limit; `<b>` re-created in 70 000 paragraphs, past
    /// the parser's bound on re-created elements (the first parse is limited: the report's
    /// `hostileMarkup`); markup that runs out of passes and falls back to text; a `<pre>` whose
    /// line feeds the cleaner drops; templates, `<selectedcontent>`, foster parenting; the size
    /// and wrapper id errors.
    @Test func hostileShapesGiveTheSameOutputAndReport() {
        let options = SanitizerOptions()
        Self.expectSame(String(repeating: "<div>", count: 400) + "deep" + String(repeating: "</div>", count: 400), options: options)
        Self.expectSame(String(repeating: "<i>", count: 300) + "x", options: options)
        Self.expectSame("<p><b class=c>" + String(repeating: "<p>x", count: 70_000), options: options)
        Self.expectSame("<pre wrap=\"\"><!---->\n\nquoted\n</pre><textarea><b></b>\nt</textarea><listing><!---->\n</listing>", options: options)
        Self.expectSame("<form><math><mtext><table><mglyph><style><img src=x onerror=alert(1)>", options: options)
        Self.expectSame("<svg><style><img src=x onerror=alert(1)></style></svg><math><style>a</style></math>", options: options)
        Self.expectSame("<template><p>in</p></template><select><option>a<selectedcontent></selectedcontent></select>", options: options)
        Self.expectSame("<table><tr><td>a</td></tr><b>foster</b><p>p</table>x<a href=https://e.example/?utm_source=n>l</a>", options: options)
        var tight = SanitizerOptions()
        tight.limits.maxPasses = 1
        tight.limits.maxInputBytes = 1 << 16
        Self.expectSame("<svg><p><style><img src=x></style>", options: tight)
        Self.expectSame(String(repeating: "x", count: 1 << 17), options: tight)
        tight.wrapperID = "9bad"
        Self.expectSame("<p>x</p>", options: tight)
    }

    /// 3 000 random documents assembled from tokenizer-significant pieces, under rotating options.
    @Test func randomMarkupGivesTheSameOutputAndReport() {
        let pieces = [
            "<p>", "</p>", "<div>", "</div>", "<a href=\"javascript:alert(1)\">", "<a href=https://e.example/?utm_source=x>", "</a>",
            "<img src=x onerror=alert(1)>", "<img src=\"https://t.example/p.gif\" width=1>", "<svg>", "</svg>", "<math>", "</math>",
            "<mtext>", "<mglyph>", "<foreignObject>", "<desc>", "<title>", "<style>", "</style>", "<script>", "</script>",
            "<noscript>", "<template>", "</template>", "<table>", "</table>", "<tr>", "<td>", "<select>", "<option>", "<form>",
            "<textarea>", "<xmp>", "<iframe>", "<!--", "-->", "<!-- x -->", "<![CDATA[", "]]>", "\"", "'", "=", ">", "<", "/",
            "&lt;", "&amp;", "&#x3c;", " ", "\n", "\t", "\u{0}", "text", "é", "p{color:red}", "@import url(https://t.example/a.css);",
            "<b style=\"position:fixed;z-index:99999\">", "</b>", "<use href=#a>", "<image href=https://t.example/i.png>",
            "<font color=red>", "<pre>", "</pre>", "<li>", "<ul>", "<img src=cid:logo@example>", "<img src=cid:part1@fuzz srcset=\"a 1x, b,\">",
            "<div style=\"color:red;background:url(javascript:x)\">", "<source src=x>", "<picture>", "<video poster=p>",
            "<source src=cid:logo@example>", "<source src=cid:part1@fuzz srcset=cid:part1@fuzz>", "<source src=https://t.example/v.mp4>",
            "<td background=https://t.example/b.png>", "<a ping=\"https://t.example/p\" href=h>", "<span id=rampart-x name=forms>",
            "<img data-rampart-src=https://t.example/r.png style=\"display:none\">", "<svg><a xlink:href=javascript:x>",
        ]
        var random = LinearCongruential64(seed: 0x5A11)
        for round in 0..<3_000 {
            var html = ""
            for _ in 0..<random.next(30) { html += pieces[random.next(pieces.count)] }
            Self.expectSame(html, options: Self.optionSets[round % Self.optionSets.count])
        }
    }

    /// Where scripts/html5/realworld-corpus.py puts the real-world mail documents.
    static let realWorldMail = Corpus.packageRoot.appendingPathComponent(".build/realworld-corpus/mail")

    /// The real-world mail documents (scripts/html5/realworld-corpus.py's `mail` folder): each one
    /// and its sanitized output, two option sets. The corpus is assembled from Debian and PyPI
    /// packages at bench time, not in a test run: without it the test is reported as skipped.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: realWorldMail.path),
                   "no real-world corpus in this clone (scripts/html5/realworld-corpus.py builds it)"))
    func realWorldMailGivesTheSameOutputAndReport() throws {
        let files = try FileManager.default.contentsOfDirectory(at: Self.realWorldMail, includingPropertiesForKeys: nil)
        #expect(files.contains { $0.pathExtension == "html" }, "no .html document in \(Self.realWorldMail.path)")
        for file in files where file.pathExtension == "html" {
            let html = try String(contentsOf: file, encoding: .utf8)
            Self.expectSame(html, options: SanitizerOptions())
            Self.expectSame(html, options: SanitizerOptions(remote: .allowAll, attachments: Corpus.attachments))
        }
    }
}
