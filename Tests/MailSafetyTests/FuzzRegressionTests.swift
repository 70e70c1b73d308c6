import Foundation
import HTML5
import Testing
@testable import MailSafety
import RampartTestSupport

/// Inputs the sanitizer and CSS fuzz targets found (`Fuzz/`, docs/fuzzing.md), kept byte for
/// byte in Resources/fuzz/, with the oracle that failed: sanitize(sanitize(x)) == sanitize(x).
@Suite("Sanitizer: fuzz regressions")
struct SanitizerFuzzRegressionTests {
    static func fixture(_ name: String) throws -> String {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: "html", subdirectory: "Resources/fuzz"))
        return String(decoding: try Data(contentsOf: url), as: UTF8.self)
    }

    static func expectIdempotent(_ html: String, remote: RemoteContentPolicy) throws -> String {
        try expectIdempotent(html, options: SanitizerOptions(remote: remote))
    }

    static func expectIdempotent(_ html: String, options: SanitizerOptions) throws -> String {
        let sanitizer = MailSanitizer(options: options)
        let once = try sanitizer.sanitize(html).html
        let twice = try sanitizer.sanitize(once).html
        #expect(twice == once, "in=\(html.debugDescription)")
        return once
    }

    /// A fuzzer's input kept as is (`Resources/fuzz/NAME.fuzz`): the first byte picks the
    /// options as the fuzz targets do (`Fuzz/Sources/FuzzSupport/SanitizerRun.swift`), the rest is
    /// the text (invalid UTF-8 decoded with replacement characters, as the targets do).
    static func fuzzInput(_ name: String) throws -> (options: SanitizerOptions, text: String) {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: "fuzz", subdirectory: "Resources/fuzz"))
        let bytes = [UInt8](try Data(contentsOf: url))
        let choice = bytes.first ?? 0
        return (FuzzInput.sanitizerOptions(choice), String(decoding: bytes.dropFirst(), as: UTF8.self))
    }

    /// The CSS fuzz target's document: the CSS in a style attribute and, when it cannot close
    /// the element, in a `<style>` sheet.
    static func cssDocument(_ css: String) -> String {
        var attribute = ""
        HTMLSerializer.escape(css, attributeMode: true, into: &attribute)
        var html = "<p style=\"" + attribute + "\">x</p>"
        if !css.lowercased().contains("</style") { html += "<style>" + css + "</style>" }
        return html
    }

    static let png = EmbeddedAttachment(mimeType: "image/png", bytes: Data([0x89, 0x50, 0x4E, 0x47]))

    /// `href="https://ex<noframes ?utm_source=news…"`: stripping the tracking parameter left
    /// "https://ex<noframes " with a trailing space, which the second pass cleaned away.
    @Test(arguments: [RemoteContentPolicy.block, .allowAll])
    func trackingParameterStripLeavesNoTrailingSpace(remote: RemoteContentPolicy) throws {
        let out = try Self.expectIdempotent(try Self.fixture("tracking-parameters-trailing-space"), remote: remote)
        #expect(out.contains("href=\"https://ex<noframes\""))
        // The smallest form of it.
        let small = try Self.expectIdempotent("<a href=\"https://x.example/a ?utm_source=news\">l</a>", remote: remote)
        #expect(small.contains("href=\"https://x.example/a\""))
    }

    /// `<source src=cid:…>` outside `<picture>` is media: the first pass resolved the part to
    /// `rampart-cid:…` (or a `data:` image), which the second pass refused for media and dropped.
    /// Embedded parts now stand for images and fonts only, on every pass.
    @Test func embeddedPartAsMediaIsDroppedOnEveryPass() throws {
        let (options, text) = try Self.fuzzInput("source-cid-outside-picture")
        let out = try Self.expectIdempotent(text, options: options)
        #expect(!out.contains("rampart-cid"))
        #expect(out.contains("<source>"))
        for style in [EmbeddedImageStyle.dataURI, .appScheme("rampart-cid")] {
            for remote in [RemoteContentPolicy.block, .allowAll] {
                let options = SanitizerOptions(remote: remote, attachments: ["a@x": Self.png], embeddedImages: style)
                let media = try Self.expectIdempotent("<video src=cid:a@x></video><audio src=\"cid:a@x\"></audio><source src=cid:a@x>", options: options)
                #expect(!media.contains("src"), "\(media)")
                // In <picture> the same part is an image and stays.
                let picture = try Self.expectIdempotent("<picture><source src=cid:a@x><img src=cid:a@x></picture>", options: options)
                #expect(picture.components(separatedBy: "src=").count == 3, "\(picture)")
            }
        }
    }

    /// `\-->` in a style attribute is the ident `--` and a `>`; serialized without a comment
    /// between them it read `-->`, a CDC token, and the second pass dropped the declaration.
    @Test func escapedHyphensBeforeGreaterThanStayAnIdent() throws {
        let (options, text) = try Self.fuzzInput("css-escaped-hyphens-cdc")
        let out = try Self.expectIdempotent(Self.cssDocument(text), options: options)
        #expect(out.contains("style="))
        for remote in [RemoteContentPolicy.block, .allowAll] {
            let small = try Self.expectIdempotent("<p style=\"a: \\-->b\">x</p><style>p { a: \\-->b }</style>", remote: remote)
            #expect(small.contains("a:--/**/>b"), "\(small)")
            #expect(small.contains("{a:--/**/>b}"), "\(small)")
        }
    }

    /// A quoted remote URL in a `[` block inside `image-set()` passed as a plain string while
    /// remote content was blocked. Strings anywhere inside image-set() are URLs now.
    @Test func imageSetStringsInNestedBlocksAreURLs() throws {
        let (options, text) = try Self.fuzzInput("image-set-nested-remote-string")
        #expect(!options.remote.allowsRemote)
        let out = try Self.expectIdempotent(Self.cssDocument(text), options: options)
        #expect(!out.contains("https:"), "\(out)")

        let style = "<p style=\"background: image-set([ 'https://t.example/a.png' 1x ], ( 'https://t.example/b.png' ) 2x)\">x</p>"
        let blocked = try MailSanitizer(options: SanitizerOptions(remote: .block)).sanitize(style)
        #expect(blocked.html == "<p>x</p>")
        #expect(blocked.report.blockedRemote.map(\.url).contains("https://t.example/a.png"))
        let allowed = try Self.expectIdempotent(style, remote: .allowAll)
        #expect(allowed.contains("image-set([ url(&quot;https://t.example/a.png&quot;) 1x ], ( url(&quot;https://t.example/b.png&quot;) ) 2x)"), "\(allowed)")
        // A string that is not a loadable URL drops the declaration.
        let relative = try Self.expectIdempotent("<p style=\"background: image-set([ 'x.png' ])\">x</p>", remote: .allowAll)
        #expect(relative == "<p>x</p>")
    }

    /// With remote content allowed, an image "hidden" only by a style the CSS sanitizer drops was
    /// blocked as a tracking pixel (`data-rampart-src`); the second pass no longer saw the style
    /// and loaded it. The pixel check reads the style as kept.
    @Test func pixelCheckReadsTheKeptStyle() throws {
        let (options, text) = try Self.fuzzInput("pixel-style-dropped")
        #expect(options.remote.allowsRemote)
        let out = try Self.expectIdempotent(text, options: options)
        #expect(out == "<img src=\"https://track.example/p.\">")
        let dropped = try Self.expectIdempotent("<img src=\"https://t.example/p.gif\" style=\"width:0 expression(1)\">", remote: .allowAll)
        #expect(dropped == "<img src=\"https://t.example/p.gif\">")
        // A hiding style that is kept still makes a pixel, on every pass.
        let kept = try Self.expectIdempotent("<img src=\"https://t.example/p.gif\" style=\"width: 0; height: 0\">", remote: .allowAll)
        #expect(kept.contains("data-rampart-src=\"https://t.example/p.gif\""), "\(kept)")
        #expect(kept.contains("style=\"width:0;height:0\""), "\(kept)")
    }

    /// `?` in a link's fragment started a query for the tracking-parameter strip: once the real
    /// query was stripped, the second pass stripped `utm_*` from the fragment.
    @Test func trackingParametersInTheFragmentAreLeftAlone() throws {
        let (options, text) = try Self.fuzzInput("tracking-parameter-in-fragment")
        let out = try Self.expectIdempotent(text, options: options)
        #expect(out.contains("utm_campaign"), "\(out)")
        for remote in [RemoteContentPolicy.block, .allowAll] {
            let small = try Self.expectIdempotent("<a href=\"https://x.example/a?utm_source=n#f?utm_medium=m&k=1\">l</a>", remote: remote)
            #expect(small.contains("href=\"https://x.example/a#f?utm_medium=m&amp;k=1\""), "\(small)")
        }
        #expect(TrackingParameters.strip("https://x.example/#a?utm_source=n").removed.isEmpty)
        #expect(TrackingParameters.strip("https://x.example/?k=1&utm_source=n#a?utm_medium=m").url == "https://x.example/?k=1#a?utm_medium=m")
    }

    /// A selector's functions were checked at the top level only: `:not(@import …)` kept an
    /// `@import` token in the sheet. What is forbidden in a selector is now forbidden inside its
    /// functions and blocks too.
    @Test func selectorFunctionsAreCheckedInside() throws {
        let (options, text) = try Self.fuzzInput("selector-nested-at-keyword")
        let out = try Self.expectIdempotent(Self.cssDocument(text), options: options)
        #expect(!out.lowercased().contains("@import"), "\(out)")
        let sheet = "<style>p:not(@import x){color:red} a:is(:host){color:red} i:not([u=url(x)]){color:red} q:is(:not(:hover)){color:red}</style>"
        let small = try Self.expectIdempotent(sheet, remote: .block)
        #expect(small == "<style>#rampart-message q:is(:not(:hover)){color:red}</style>", "\(small)")
    }

    /// A srcset URL ending `,\u{0B}` lost its control character to URL cleaning and was written
    /// ending with a comma, which the next pass (like a browser) strips from a srcset URL. (The
    /// fixture is the text the sanitizer target sanitized, from the violation's report.)
    @Test(arguments: [RemoteContentPolicy.block, .allowAll])
    func srcsetURLsNeverEndWithACommaOnceCleaned(remote: RemoteContentPolicy) throws {
        _ = try Self.expectIdempotent(try Self.fixture("srcset-trailing-comma"), remote: remote)
        let small = try Self.expectIdempotent("<img srcset=\"https://a.example/x,\u{0B} 1x, https://b.example/y 2x\">", remote: remote)
        #expect(!small.contains("a.example"), "\(small)")
        #expect(small.contains("https://b.example/y 2x"), "\(small)")
    }

    /// A `;` in a rule's prelude stayed in the scoped selector, so the written sheet read
    /// `…; behavior: …`; a selector holding `;` or an unmatched closing bracket is dropped.
    @Test func selectorsWithSemicolonsAreDropped() throws {
        let (options, text) = try Self.fuzzInput("selector-with-semicolon")
        let out = try Self.expectIdempotent(Self.cssDocument(text), options: options)
        #expect(!out.contains("behavior"), "\(out)")
        let small = try Self.expectIdempotent("<style>p, x; behavior: y .z { margin: 1 auto } q ) { color: red } b { color: red }</style>", remote: .block)
        #expect(small == "<style>#rampart-message p{margin:1 auto}#rampart-message b{color:red}</style>", "\(small)")
    }

    /// Whitespace, a comment, whitespace in a declaration's value is two whitespace tokens (the
    /// comment is dropped); they were written as two spaces, which the second pass read as one
    /// token and wrote as one space (the `css` target, 141 129 executions into a long run).
    @Test func whitespaceAroundACommentIsWrittenAsOneSpace() throws {
        let (options, text) = try Self.fuzzInput("whitespace-comment-whitespace")
        let out = try Self.expectIdempotent(Self.cssDocument(text), options: options)
        #expect(out.contains("style="))
        for remote in [RemoteContentPolicy.block, .allowAll] {
            let small = try Self.expectIdempotent(
                "<p style=\"font-family: a \n/* x */\n b\">x</p><style>p { font-family: a /* x */ b }</style>", remote: remote)
            #expect(small.contains("style=\"font-family:a b\""), "\(small)")
            #expect(small.contains("{font-family:a b}"), "\(small)")
        }
    }
}
