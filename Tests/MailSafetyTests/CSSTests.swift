import Foundation
import Testing
@testable import MailSafety

private func style(_ css: String, remote: RemoteContentPolicy = .block) throws -> SanitizedMessage {
    try MailSanitizer(options: SanitizerOptions(remote: remote)).sanitize("<p style=\"\(css)\">x</p>")
}

private func sheet(_ css: String, remote: RemoteContentPolicy = .block) throws -> String {
    try MailSanitizer(options: SanitizerOptions(remote: remote)).sanitize("<style>\(css)</style>").html
}

@Suite struct CSSTests {
    @Test func tokenizerDecodesEscapesLikeABrowser() {
        #expect(CSSTokenizer.tokenize("\\65 xpression(") == [.function("expression")])
        #expect(CSSTokenizer.tokenize("u\\72l(x)") == [.url("x")])
        #expect(CSSTokenizer.tokenize("url( 'a b' )") == [.function("url"), .whitespace, .string("a b"), .whitespace, .closeParen])
        #expect(CSSTokenizer.tokenize("/* c */@import") == [.atKeyword("import")])
        #expect(CSSTokenizer.tokenize("10px 5% -3") == [
            .dimension(10, repr: "10", unit: "px"), .whitespace, .percentage(5, repr: "5"), .whitespace, .number(-3, repr: "-3", isInteger: true),
        ])
        #expect(CSSTokenizer.tokenize("\"unterminated\nx") == [.badString, .whitespace, .ident("x")])
    }

    @Test(arguments: [
        "width:expression(alert(1))", "width:\\65 xpression(alert(1))", "behavior:url(x.htc)", "-moz-binding:url(x.xml#xss)",
        "background:url(javascript:alert(1))", "background-image:url('javascript:alert(1)')", "x:javascript:alert(1)",
        "font-family:'javascript:alert(1)'", "color:var(--x)", "--x:url(https://t.example/)", "color:attr(title)",
    ])
    func scriptCapableDeclarationsAreDropped(css: String) throws {
        let result = try style(css)
        #expect(result.html == "<p>x</p>", "\(css) → \(result.html)")
    }

    @Test func safeDeclarationsAreKeptNormalized() throws {
        let result = try style("color: RED; font: 12px/1.5 'Helvetica Neue', sans-serif !important; margin:0 auto")
        #expect(result.html == "<p style=\"color:RED;font:12px/1.5 &quot;Helvetica Neue&quot;, sans-serif!important;margin:0 auto\">x</p>")
    }

    @Test func overlayPositioningIsNeutralized() throws {
        let result = try style("position:fixed;top:0;left:0;z-index:2147483647;width:100%")
        #expect(result.html == "<p style=\"position:static;top:0;left:0;z-index:100;width:100%\">x</p>")
        #expect(result.report.count(.cssPositioning) == 2)
    }

    @Test func remoteBackgroundsAreBlockedByDefaultAndKeptWhenAllowed() throws {
        let blocked = try style("background:url(https://t.example/bg.png) red;color:blue")
        #expect(blocked.html == "<p style=\"color:blue\">x</p>")
        #expect(blocked.report.blockedRemote == [BlockedResource(url: "https://t.example/bg.png", kind: .cssBackground)])
        let allowed = try style("background:url(https://cdn.example/bg.png) red", remote: .allowAll)
        #expect(allowed.html == "<p style=\"background:url(&quot;https://cdn.example/bg.png&quot;) red\">x</p>")
        let imageSet = try style("background-image:image-set('https://t.example/a.png' 1x)")
        #expect(imageSet.html == "<p>x</p>")
        #expect(imageSet.report.blockedRemote.count == 1)
    }

    @Test func selectorsAreScopedToTheMessageWrapper() throws {
        let html = try sheet("html, body { margin:0 } :root{color:red} p.x > a { color:red } * {font-size:2px} body + div{display:none} ~ p {x:y} #rampart-message p{color:blue}")
        #expect(html == "<style>#rampart-message{margin:0}#rampart-message{color:red}#rampart-message p.x > a{color:red}#rampart-message *{font-size:2px}#rampart-message p{color:blue}</style>")
    }

    @Test func importFontFaceAndMediaAreHandled() throws {
        let html = try sheet("@import url(https://t.example/a.css); @media (max-width: 600px) { .c { width: 100% } } @font-face { font-family: X; src: url(https://fonts.example/x.woff2) format('woff2') } @font-face { font-family: Y; src: local(Arial) } @keyframes k { from {} }")
        #expect(html == "<style>@media (max-width: 600px){#rampart-message .c{width:100%}}@font-face{font-family:Y;src:local(Arial)}</style>")
    }

    @Test func styleTextCannotCloseTheStyleElement() throws {
        // The parser ends <style> at the first </style>: the rest is markup and gets sanitized.
        let broken = try sheet("p { font-family: '</style><script>alert(1)</script>' } a{color:red}")
        #expect(!broken.contains("<script"))
        // A CSS escape decodes to "</style>" inside the sheet; it must be written back escaped.
        let html = try sheet("p{font-family:\"\\3c/style\\3e\\3cscript\\3e alert(1)\"}")
        #expect(html == "<style>#rampart-message p{font-family:\"\\3c /style>\\3c script>alert(1)\"}</style>")
        let again = try MailSanitizer().sanitize(html).html
        #expect(again == html)
    }

    @Test func serializationReTokenizesToTheSameTokens() {
        for css in ["a-b 1e3 -x .5em #id 10\\65 m", "url(a\\)b) 'q\"uote' \\3c foo", "a/**/b 1/**/2 -/**/-x"] {
            let once = CSSSerializer.serialize(CSSParser.components(css))
            let twice = CSSSerializer.serialize(CSSParser.components(once))
            #expect(once == twice, "\(css) → \(once) → \(twice)")
            #expect(!once.contains("<"))
        }
    }
}
