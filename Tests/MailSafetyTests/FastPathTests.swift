import Foundation
import Testing
@testable import MailSafety
@testable import HTML5
import RampartTestSupport

/// The byte-level fast paths against the full paths they shortcut: same output, same report.
@Suite struct FastPathTests {
    private static func fullStyle(_ css: String) -> (String?, SanitizationReport) {
        let gate = ResourceGate(options: SanitizerOptions())
        let result = CSSSanitizer(gate: gate, scopeID: "rampart-message").sanitizeStyleAttributeFully(css)
        return (result, gate.report)
    }

    @Test(arguments: [
        ("margin:0 0 8px", "margin:0 0 8px"),
        ("color: RED; font: 12px/1.5 'Helvetica Neue', sans-serif !important; margin:0 auto",
         "color:RED;font:12px/1.5 \"Helvetica Neue\", sans-serif!important;margin:0 auto"),
        ("COLOR:Red;", "color:Red"),
        ("  ;; color : red ;; ", "color:red"),
        ("color:RGB( 0 , 0,0 )", "color:rgb( 0 , 0,0 )"),
        ("color:!important", "color:!important"),
        ("color:red ! ImPortant ", "color:red!important"),
        ("color:", "color:"),
        ("margin:.5em +1.5e3px -2E+2% 1e", "margin:.5em +1.5e3px -2E+2% 1e"),
        ("font-family:'日本語'", "font-family:\"日本語\""),
        ("color:#FFF;background-color:#abc123", "color:#FFF;background-color:#abc123"),
        ("x:-webkit-box _a --b", "x:-webkit-box _a --b"),
        ("a:b\r\n\t\u{0C}c", "a:b c"),
        ("x:1e2e", "x:1e2e"),
        ("x:a -b", "x:a -b"),
        ("x:1 -1", "x:1 -1"),
        ("width:calc(100% - 2px)", "width:calc(100% - 2px)"),
    ])
    func keptStylesMatchTheFullPath(_ input: String, _ expected: String) {
        #expect(CSSStyleFastPath.sanitize(input) == .kept(expected))
        let (full, report) = Self.fullStyle(input)
        #expect(full == expected)
        #expect(report == SanitizationReport())
    }

    @Test func unchangedStylesAreReturnedAsTheSameString() {
        let input = "padding:10px 20px;font-family:Arial,Helvetica,sans-serif"
        guard case .kept(let output) = CSSStyleFastPath.sanitize(input) else { Issue.record("not handled"); return }
        #expect(output == input)
    }

    @Test(arguments: ["", "   ", ";", " ; ;"])
    func emptyStylesAreEmpty(_ input: String) {
        #expect(CSSStyleFastPath.sanitize(input) == .empty)
        #expect(Self.fullStyle(input).0 == nil)
    }

    /// Everything the full path rewrites, drops, reports or escapes is left to it.
    @Test(arguments: [
        "background:url(https://t.example/a.png)", "background:URL( 'x' )", "background:u\\72l(x)", "background-image:image-set('a' 1x)",
        "color:var(--x)", "--x:1", "behavior:x", "ZOOM:1", "position:fixed", "z-index:5", "color:red/**/", "c\\6flor:red",
        "color:\\72 ed", "x:'a\\'b'", "x:'a:b'", "x:\"(\"", "x:'<'", "x:'\"'", "x:'a\nb'", "x:'a\tb'", "x:'open", "x:a+1", "x:1-2",
        "x:#a+1", "x:5%a", "x:1e-x", "x:a -", "x:(1)-", "x:1px(", "x:(a)", "x:[a]", "x:{a}", "x:a)", "x:rgb(a", "x:rgb(a;b)", "x:-->", "x:<!--",
        "x:@a", "x:a!b", "x:!importantx", "x:!important y", "x:!important(", "x:é", "é:a", "x:a.b", "x:*", "x:\u{0}", "x:%",
        "color red", ":red", "1x:red", "x(:a", "x:expression(1)", "x:a:b", "-:a", "x:\u{7F}",
    ])
    func unusualStylesTakeTheFullPath(_ input: String) {
        #expect(CSSStyleFastPath.sanitize(input) == .unhandled, "\(input.debugDescription)")
    }

    /// Random declarations built from CSS-significant pieces: whenever the fast path answers,
    /// the full path gives the same text and reports nothing.
    @Test func fastStylePathAgreesWithTheFullPath() {
        let pieces = [
            "color", "COLOR", "margin", "font-family", "-webkit-box", "--x", "position", "z-index", "behavior", ":", ":", " ", " ", ";",
            "red", "Red", "#333", "#", "0", "1.5", "-2", "+.5", ".5", "1e3", "1e", "1E+2", "10px", "5%", "e-x", "px", "em", "rgb(", "RGBA(",
            "calc(", "var(", "url(", "image-set(", "expression(", ")", "(", ",", "/", "/*", "*/", "'Arial'", "\"Helvetica Neue\"", "'a:b'",
            "!important", "! IMPORTANT", "!", "important", "\\65", "\\", "é", "\t", "\n", "\r\n", "\u{0C}", "<", "-->", "<!--", "@media",
            "{", "}", "[", "]", "-", ".", "+", "_x", "'", "\"", "\u{0}", "*", "%", "a", "1",
        ]
        var random = LinearCongruential64(seed: 0x9E3779B97F4A7C15)
        func next(_ bound: Int) -> Int { random.next(bound) }
        let names = ["color", "COLOR", "margin", "font-family", "-webkit-box-shadow", "--x", "position", "z-index", "behavior", "zoom", "x"]
        let values = [
            "red", "Red", "#333", "#a1", "0", "1.5", "-2", "+.5", ".5", "1e3", "1e", "1E+2", "10px", "5%", "1e-x", "auto", "-webkit-box",
            "rgb(0,0,0)", "RGBA( 1 , 2 ,3, .5 )", "calc(100% - 2px)", "calc(1px+2px)", "var(--a)", "url(x)", "url('x')", "image-set('a' 1x)",
            "'Arial'", "\"Helvetica Neue\"", "'a:b'", "'日本'", "-", "/", "a/b", ",", "inherit", "1px(", "min(1px,max(2px,3px))",
        ]
        let separators = [" ", "", ",", " , ", "\t", "\r\n", " / "]
        var handled = 0
        func check(_ css: String) {
            let fast = CSSStyleFastPath.sanitize(css)
            if fast == .unhandled { return }
            handled += 1
            let (full, report) = Self.fullStyle(css)
            switch fast {
            case .kept(let text): #expect(full == text, "\(css.debugDescription)")
            case .empty: #expect(full == nil, "\(css.debugDescription)")
            case .unhandled: break
            }
            #expect(report == SanitizationReport(), "\(css.debugDescription)")
        }
        for _ in 0..<30_000 {
            // Pieces in random order.
            var css = ""
            for _ in 0..<(1 + next(12)) { css += pieces[next(pieces.count)] }
            check(css)
            // Declarations in the shape of mail, with a random piece inserted now and then.
            var structured = ""
            for d in 0..<(1 + next(3)) {
                if d > 0 || next(4) == 0 { structured += [";", " ; ", ";;"][next(3)] }
                structured += names[next(names.count)] + ["", " "][next(2)] + ":" + ["", " "][next(2)]
                for v in 0..<(1 + next(4)) {
                    if v > 0 { structured += separators[next(separators.count)] }
                    structured += values[next(values.count)]
                }
                if next(5) == 0 { structured += [" !important", "!IMPORTANT", "! important "][next(3)] }
            }
            if next(3) == 0 {
                let at = next(structured.count + 1)
                let index = structured.index(structured.startIndex, offsetBy: at)
                structured.insert(contentsOf: pieces[next(pieces.count)], at: index)
            }
            check(structured)
        }
        #expect(handled > 2_500)
    }

    /// `style` attributes with `url(…)`: the fast path with the gate as resolver (as
    /// `CSSSanitizer.sanitizeStyleAttribute` calls it) against the full path, on random
    /// declarations with URLs of every kind (remote, trackers, `data:`, `cid:`, `javascript:`,
    /// empty, quoted, escaped, with spaces, controls, `<`, non-ASCII) and random options: same
    /// text, same report (the gate's entries in the same order).
    @Test func fastStylePathWithURLsAgreesWithTheFullPath() {
        let urls = [
            "https://cdn.example.com/bg1.png", "HTTP://T.Example/a?utm_source=1", "//x.example/a.png", "data:image/png;base64,AAAA",
            "data:text/html,<b>", "cid:part1@mail", "CID:x", "javascript:alert(1)", "#frag", "", "x", "https://list-manage.com/track/open.php",
            "https://x.example/a<b", "https://x.example/é", "https://x.example/a\\29", "https://x.example/a b", " https://x.example/s ",
            "\thttps://x.example/t\n", "'https://x.example/q'", "\"https://x.example/d\"", "https://x.example/(p)", "https://x.example/\u{7F}",
            "https://x.example/\u{1}", "https://x.example/\r", "https://x.example/\u{0C}", "mailto:a@b", "https://a.example/1.png",
            "https://a.example/1.png",
        ]
        let names = ["background", "background-image", "BACKGROUND", "list-style", "color", "border-image", "--x", "position", "behavior"]
        let values = ["red", "no-repeat", "0", "10px", "center", "rgb(0,0,0)", "calc(100% - 2px)", "'Arial'", "!", "url(", ")", ",", "/"]
        var random = LinearCongruential64(seed: 0xA4093822299F31D0)
        var withURLs = 0
        var loaded = 0
        var droppedSome = 0
        for round in 0..<30_000 {
            // Every other attribute from the pieces the fast path handles, so that it answers often.
            let plain = round % 2 == 1
            var css = ""
            for d in 0..<(1 + random.next(4)) {
                if d > 0 { css += [";", " ; ", ";;"][random.next(3)] }
                css += names[random.next(plain ? 5 : names.count)] + ["", " "][random.next(2)] + ":" + ["", " "][random.next(2)]
                for v in 0..<(1 + random.next(4)) {
                    if v > 0 { css += [" ", ",", " , ", "\t", "\n"][random.next(5)] }
                    if random.next(2) == 0 {
                        let url = urls[random.next(urls.count)]
                        switch random.next(11) {
                        case 0: css += "url('" + url + "')"
                        case 5: css += "url(\"" + url + "\")"
                        case 6: css += "URL( '" + url + "'\t)"
                        case 7: css += "url('" + url + "' x)"
                        case 1: css += "URL( " + url + " )"
                        case 2: css += "url(\t" + url + "\n)"
                        case 3: css += "rgb(url(" + url + "))"
                        case 4: css += "u\\72l(" + url + ")"
                        default: css += "url(" + url + ")"
                        }
                    } else {
                        css += values[random.next(plain ? 8 : values.count)]
                    }
                }
                if random.next(6) == 0 { css += "!important" }
            }
            var options = SanitizerOptions()
            options.remote = RemoteContentPolicy.allCases[random.next(RemoteContentPolicy.allCases.count)]
            options.attachments = random.next(2) == 0 ? [:] : ["part1@mail": EmbeddedAttachment(mimeType: "image/png", bytes: Data([1, 2, 3]))]
            options.embeddedImages = random.next(3) == 0 ? .appScheme("rampart-cid") : .dataURI
            let fastGate = ResourceGate(options: options)
            let fast = CSSStyleFastPath.sanitize(css, resolve: { raw, quoted in
                if case .load(let url) = fastGate.resource(raw, kind: .cssBackground) { return url }
                if quoted { fastGate.findings.note(.cssDeclaration) }
                return nil
            })
            let fullGate = ResourceGate(options: options)
            let full = CSSSanitizer(gate: fullGate, scopeID: "rampart-message").sanitizeStyleAttributeFully(css)
            switch fast {
            case .unhandled:
                // Nothing was asked of the gate before giving up.
                #expect(fastGate.report == SanitizationReport(), "\(css.debugDescription)")
                continue
            case .kept(let text): #expect(full == text, "\(css.debugDescription)")
            case .empty: #expect(full == nil, "\(css.debugDescription)")
            }
            #expect(fastGate.report == fullGate.report, "\(css.debugDescription)")
            // And through the sanitizer's entry point.
            let viaEntry = ResourceGate(options: options)
            #expect(CSSSanitizer(gate: viaEntry, scopeID: "rampart-message").sanitizeStyleAttribute(css) == full)
            #expect(viaEntry.report == fullGate.report, "\(css.debugDescription)")
            if css.lowercased().contains("url(") {
                withURLs += 1
                if case .kept(let text) = fast, text.contains("url(") { loaded += 1 }
                if fullGate.report != SanitizationReport() { droppedSome += 1 }
            }
        }
        #expect(withURLs > 2_000)
        #expect(loaded > 300)
        #expect(droppedSome > 1_000)
    }

    /// The byte-level scoping of plain selector lists against `CSSSanitizer.scopedSelector` on
    /// the tokens, on random preludes (type and class names in any case, `html`/`body`/`:root`,
    /// the scope's id, `host`/`part`/`slotted`, combinators, commas, whitespace of every kind,
    /// digits, `-`, `_`, escapes, non-ASCII): whenever the byte path answers, the token path
    /// gives the same selector (and it answers for the usual shapes).
    @Test func plainSelectorsScopeAsTheTokenPath() {
        let pieces = [
            "td", "TD", ".cell", ".Cell", "a", "h2", "html", "HTML", "body", "Body", "bodyx", ".body", "host", ".host", "PART", ".slotted",
            " ", "  ", "\t", "\n", "\r\n", "\u{0C}", ",", " , ", ".", "..", ">", " > ", "+", "~", "*", ":root", ":hover", "#rampart-message",
            "#x", "[x]", "_x", "-x", "x-", "x1", "1x", ".5", "\\41", "é", "(", ")", "a.b.c", "table.wrap td.cell", "#outlook a", "a#b.c", "#1", "#_",
            "::before", ":checked", ":ROOT", "::part", "+*", "*+", "a>b", "html>", "html > p", "body+p", "html + p", "*a", "**", "a*", ":not(", "+5",
            "[type=\"checkbox\"]", "[x=y]", "[x=\"a b\"]", "[x='y']", "[host]", "[x=host]", "[x=\"host\"]", "[x=1]", "[x= y]", "[x~=y]",
            "[x=\"<\"]", "[x=\"\"]", "[-x]", "[", "]", "\"", "[x=\"a]\"]", "[X=Y]", "[x=\"a\"b]", "[x]y", "[x][y]", "[x]*", "*[x]",
        ]
        var random = LinearCongruential64(seed: 0x082EFA98EC4E6C89)
        func next(_ bound: Int) -> Int { random.next(bound) }
        let css = CSSSanitizer(gate: ResourceGate(options: SanitizerOptions()), scopeID: "rampart-message")
        var handled = 0
        var mapped = 0
        for round in 0..<40_000 {
            var prelude = ""
            let plain = round % 2 == 0
            for _ in 0..<(1 + next(6)) {
                prelude += plain ? ["td", ".cell", "TD.Cell", "body", "html", " ", ",", "a", ".x.y", "\t", "host", "#outlook", "#x.y", "#rampart-message", ">", " > ", "+*+", "~", ":checked", "*", "::x", "[type=\"checkbox\"]", "[x]"][next(23)] : pieces[next(pieces.count)]
            }
            let bytes = Array(prelude.utf8)
            // The byte path runs on preludes the sheet pre-check passed (ASCII, no escapes).
            guard bytes.allSatisfy({ $0 < 0x80 && $0 != 0x5C }) else { continue }
            let fast = bytes.withUnsafeBufferPointer { CSSSheetFastPath.scopedSelector($0, 0..<$0.count, scope: css.scope) }
            guard let fast else { continue }
            handled += 1
            if fast.hasPrefix("#rampart-message") && !fast.contains(" ") { mapped += 1 }
            #expect(fast == css.scopedSelector(CSSParser.components(prelude)), "\(prelude.debugDescription)")
        }
        #expect(handled > 8_000)
        #expect(mapped > 500)
    }

    // MARK: The re-parse check's tree comparison

    /// `SameTree.sameChildren` against the string check it short-cuts: on random markup (with
    /// entities, `&`, `<`, NBSP, non-ASCII, mixed case, whitespace, control characters, raw
    /// text, comments, templates, SVG and MathML, void elements, misnested tags), whenever it
    /// says two trees are the same, their serializations are byte for byte the same; and for the
    /// sanitizer's own use — the cleaned tree against the re-parse of its output — whenever it
    /// says yes, `innerHTMLEquals` says yes. It must also say yes for most plain messages.
    @Test func sameTreeAnswersYesOnlyWhenTheSerializationsAgree() {
        let pieces = [
            "<p>", "</p>", "<div class=a>", "</div>", "<b>", "</b>", "<i>", "<table>", "<tr>", "<td style='color:red'>", "</table>",
            "<a href='https://x.example/?a=1&amp;utm_source=2'>", "</a>", "<img src=https://x.example/p.png width=1>", "<br>", "<hr/>",
            "text", " ", "\n", "\t", "&amp;", "&lt;", "&gt;", "&nbsp;", "\u{A0}", "é", "e\u{301}", "\u{1}", "&#0;", "<", ">", "&", "\"",
            "'", "<!-- c -->", "<!--x", "<style>p{color:red}</style>", "<style>", "</style>", "<template><p>t</template>", "<svg><circle r=1>",
            "</svg>", "<math><mi>x</mi></math>", "<noscript><p>n</noscript>", "<textarea>x</textarea>", "<P ID=X>", "<select><option>o",
            "<xmp><b></xmp>", "<script>s</script>", "<form><form>", "<ul><li>a<li>b</ul>", "<title>t</title>", "<a><a>", "<p><div></p>",
        ]
        var random = LinearCongruential64(seed: 0x452821E638D01377)
        var sameSaidYes = 0
        var cleanedSaidYes = 0
        var cleanedTotal = 0
        for _ in 0..<6_000 {
            var html = ""
            for _ in 0..<(1 + random.next(14)) { html += pieces[random.next(pieces.count)] }
            // The same markup twice, or with one piece changed.
            var other = html
            if random.next(2) == 0 { other = html + pieces[random.next(pieces.count)] }
            if random.next(4) == 0, let at = html.indices.dropFirst(random.next(max(html.count, 1))).first {
                other = String(html[..<at]) + pieces[random.next(pieces.count)] + String(html[at...])
            }
            let a = MessageParsing.parseFragment(html)
            let b = MessageParsing.parseFragment(other)
            let legacyAB = LegacySameTree.sameChildren(a, b)
            if legacyAB { #expect(SameTree.sameChildren(a, b), "\(html.debugDescription) / \(other.debugDescription)") }
            if SameTree.sameChildren(a, b) {
                sameSaidYes += 1
                #expect(Array(a.innerHTML.utf8) == Array(b.innerHTML.utf8), "\(html.debugDescription) / \(other.debugDescription)")
            }
            // As the sanitizer uses it.
            let gate = ResourceGate(options: SanitizerOptions())
            var cleaner = TreeCleaner(gate: gate, css: CSSSanitizer(gate: gate, scopeID: "rampart-message"), options: SanitizerOptions())
            cleaner.clean(a)
            let output = a.innerHTML
            let reparsed = MessageParsing.parseFragment(output)
            cleanedTotal += 1
            let legacyYes = LegacySameTree.sameChildren(a, reparsed)
            if legacyYes { #expect(SameTree.sameChildren(a, reparsed), "\(html.debugDescription)") }
            if SameTree.sameChildren(a, reparsed) {
                cleanedSaidYes += 1
                #expect(reparsed.innerHTMLEquals(output), "\(html.debugDescription)")
            }
        }
        #expect(sameSaidYes > 2_000)
        #expect(cleanedSaidYes > cleanedTotal / 2)
    }

    // MARK: Style sheets

    private static func sheets(_ css: String) -> (fast: String?, fastReport: SanitizationReport, full: String, fullReport: SanitizationReport) {
        let fastGate = ResourceGate(options: SanitizerOptions())
        let fast = CSSSheetFastPath.sanitize(css, css: CSSSanitizer(gate: fastGate, scopeID: "rampart-message"))
        let fullGate = ResourceGate(options: SanitizerOptions())
        let full = CSSSanitizer(gate: fullGate, scopeID: "rampart-message").sanitizeStyleSheetFully(css)
        return (fast, fastGate.report, full, fullGate.report)
    }

    @Test(arguments: [
        "body{margin:0;padding:0;font-family:Arial,sans-serif}.wrap{width:600px;margin:0 auto}"
            + "td.cell{padding:8px 12px;color:#333}a{color:#06c}@media (max-width:600px){.wrap{width:100%!important}}",
        "", "  \n ", "a{}", "a{;}", " a , b , a { color : red } ", "html>body p{x:1}", ":root{x:1}", "a:hover{color:red}",
        "@MEDIA screen and (max-width:600px){a{color:red}b{}}", "@media(max-width:1px){}", "@media screen{a{color:red}}",
        "p:not(.a){x:1}", "a[x=y]{x:1}", "#rampart-message{x:1}", "a;b{x:1}", "a@b{x:1}", ":host{x:1}", "+a{x:1}",
        "@media (min-width:1px){:host{x:1}a{y:2}}", "a{x:1}b{}", "h1,h2{font-size:20px}", "a{color:red;}\n\tb{color:blue}",
        "#outlook a{padding:0}", "#a.b #c{x:1}", "td#x,#y.z{x:1}", "#rampart-messagex p{x:1}", "#rampart-message p{x:1}", "#-x{y:1}",
        "#1x{y:1}", "input.c:checked+* .d,.e img+div{x:1}", "html>body>p,body ~p{x:1}", "a::before{x:1}",
        "\n    @import url(https://fonts.googleapis.com/css?family=Ubuntu:300,400,500,700);\n  ",
        "@import url(a);@import\turl(b) ;a{x:1}", "@import url(data:text/css,a{x:1});#x{y:2}",
        // At-rules the full path drops whole, and attribute selectors with strings (MJML's
        // accordion and navbar sheets).
        "\n    .a{display:block}\n    @goodbye {\n      @gmail\n    }\n  ", "a{x:1}@page{x:1}", "@mediax{a{x:1}}", "@charset \"utf-8\";a{x:1}",
        "@x;", "@-x-y{z}", "@--x{}", "@keyframes k{0%{x:1}to{x:2}}", "@media x{@goodbye{@gmail}a{y:1}}", "@media x{@goodbye{@gmail}}",
        ".m[type=\"checkbox\"]~.l{display:none}", "@media only screen and (max-width:479px){.m[type=\"checkbox\"]:checked~.t .i{display:block!important}}",
        "<!--\n.a{x:1}\n.b:hover{y:2}\n-->", "<!-- a{x:1} --> <!-- b{y:2} -->", "@media x{<!--a{x:1}-->}", "<!---->a{x:1}", "a{x:1}<!--", "<!--a{x:1}-->", "a{x:1}-->",
        "a<!--{x:1}", "--->{x:1}", "a-->{x:1}", "a{x:1}\n-->\n", "a[x=\"-->\"]{x:1}",
        "a[x]{y:1}", "a[x=y]{y:1}", "*[x=\"\"]{y:1}", "[x=\"a b\"][y]{y:1}", "a[x='y']{y:1}", "a[host]{y:1}", "a{font-family:\"Open Sans\",Arial}", "a{x:'y'}",
    ])
    func sheetsMatchTheFullPath(_ css: String) {
        let r = Self.sheets(css)
        #expect(r.fast != nil, "\(css.debugDescription)")
        #expect(r.fast == r.full, "\(css.debugDescription)")
        #expect(r.fastReport == r.fullReport, "\(css.debugDescription)")
    }

    /// Everything outside the plain shape is left to the full path (and the report untouched).
    @Test(arguments: [
        "a{background:url(x)}", "a{x:1}/**/", "a{x:\\31}", "@import 'x';", "@font-face{src:x}",
        "@supports (x:y){a{x:1}}", "@media x;", "@media x{@media y{a{x:1}}}", "a{b{x:1}}", "a{x:1", "a{x:1}}", "a", "a{x:1}b",
        "a{position:fixed}", "a{behavior:x}", "a{x:é}", "é{x:1}", "a{x:(1}", "a[{]{x:1}", "a(;){x:1}",
        "a{x:\u{0}}", "a{x:1}@media{a{x:1}b{@x}}", "@import 'x';a{x:1}", "@x{a{b{}}}", "a[x=\"{\"]{x:1}", "a{x:\"a\nb\"}", "@ x{y:1}",
        "@1x{y:1}", "a{x:1}@font-face{src:x}", "@media x{@supports y{}}", "@x}", "a{@x}", "a{x:1;@y}", "@x{", "a[x=\"y]{x:1}",
        "<a{x:1}", "<!-a{x:1}", "a{<!--x:1}", "a{x:<}", "@import url(a);@media{a{x:1}b{@x}}", "@import url(a)", "@import url(a) screen;",
        "@import url( a);", "@import url('a');", "@IMPORT url(a);", "@importurl(a);", "@import URL(a);", "@import url(a\\);",
        "a{x:1}@import url(a);",
    ])
    func unusualSheetsTakeTheFullPath(_ css: String) {
        let gate = ResourceGate(options: SanitizerOptions())
        #expect(CSSSheetFastPath.sanitize(css, css: CSSSanitizer(gate: gate, scopeID: "rampart-message")) == nil, "\(css.debugDescription)")
        #expect(gate.report == SanitizationReport())
    }

    /// Random sheets built from rule pieces: whenever the fast path answers, the full path gives
    /// the same text and the same report.
    @Test func fastSheetPathAgreesWithTheFullPath() {
        let selectors = [
            "body", "BODY", "html", "html body", "html>body", ":root", "a", "td.cell", ".wrap", "#x", "#rampart-message", "p a", "a>b", "a+b",
            "a~b", "+a", ">a", "a,b", "a, a", ":not(.x)", ":host", "a::part(x)", "a:hover", "[x=y]", "a;b", "@x", "*", "1a", "", " ",
            "#outlook a", "#a.b", "a#b", "#a#b", ".a#b.c", "#rampart-message a", "#rampart-messagex", "#Rampart-message", "#-x", "#_x",
            ".m[type=\"checkbox\"]~.l", "[x]", "a[x=y]:hover", "[x=\"a b\"]", "[x='y']", "[host]", "a[x=\"<\"]", "a \"x\"", "html[x]",
        ]
        let blocks = [
            "", ";", "color:red", "margin:0 auto;padding:0", "width:100%!important", "position:fixed", "z-index:5", "--x:1",
            "behavior:x", "x", "x:rgb(0,0,0)", "font:12px/1.5 Arial", "a:b;c", ":x", "@x", "x:1 ; ",
            "font-family:\"Open Sans\",Arial", "x:'y'", "x:\"javascript:y\"", "@gmail",
        ]
        // At-rules the full path drops whole (or not), in place of a rule.
        let atRules = ["@goodbye{@gmail}", "@goodbye {\n  @gmail\n}", "@page{x:1}", "@x;", "@charset \"x\";", "@-x{}", "@1x{}", "@ x{}",
                       "@keyframes k{0%{x:1}}", "@font-face{src:x}", "@import url(x);", "@supports (x:1){a{x:1}}", "@x y", "@x{a{b{}}}",
                       "<!--", "-->", "<!-- -->", "\n-->\n", "--->", "<!-"]
        let preludes = [" screen", " (max-width:600px)", "(min-width:1px) and (max-width:2px)", "", " x y", " (a:b),(c:d)", " [x]", " fn(x)", " @x", " #x",
                        " only screen and (max-width:600px)", " screen  and (x:1)", " screen and(x:1)", " (x:1e3)", " (x:1em)", " (x:1e)",
                        " (x-:1)", " (-x:1)", "\t(x:1)\n", " (x:1.5px)", " (x:-1)", " (x: 1)", " (X:1)", " (x:1)(y:2)", " (x:1%)", " x,y"]
        let noise = ["", " ", "\n", ";", "}", "{", "(", ")", "[", "]", "@media", "@page", "/", "-", "-->", "'", "\\", "é", ",", ":", "url(x)", "\"", "@", "=\"x\"", "<!--", "<"]
        var random = LinearCongruential64(seed: 0x2545F4914F6CDD1D)
        func next(_ bound: Int) -> Int { random.next(bound) }
        func rule() -> String {
            next(8) == 0 ? atRules[next(atRules.count)] : selectors[next(selectors.count)] + ["", " "][next(2)] + "{" + blocks[next(blocks.count)] + "}"
        }
        var handled = 0
        let imports = ["@import url(https://fonts.example/css?family=A:300,400);", "@import url(x) ;", "@import\turl(x);", "@import url(x)",
                       "@import url(\"x\");", "@import url(x)y;", "@import  url(a;b);", "@import url(x);\n"]
        for _ in 0..<20_000 {
            var css = ""
            for _ in 0..<next(3) where next(2) == 0 { css += ["", " ", "\n  "][next(3)] + imports[next(imports.count)] }
            for _ in 0..<(1 + next(4)) {
                css += ["", " ", "\n"][next(3)]
                if next(4) == 0 {
                    css += ["@media", "@MEDIA", "@supports"][next(3)] + preludes[next(preludes.count)] + "{"
                    for _ in 0..<next(3) { css += rule() }
                    css += "}"
                } else {
                    css += rule()
                }
            }
            if next(3) == 0 {
                let index = css.index(css.startIndex, offsetBy: next(css.count + 1))
                css.insert(contentsOf: noise[next(noise.count)], at: index)
            }
            let r = Self.sheets(css)
            guard let fast = r.fast else { continue }
            handled += 1
            #expect(fast == r.full, "\(css.debugDescription)")
            #expect(r.fastReport == r.fullReport, "\(css.debugDescription)")
        }
        #expect(handled > 3_000)
    }

    // MARK: CSS tokenizer

    /// Names and unquoted URLs are copied as runs of scalars between escapes: escapes at the
    /// start, middle and end of a run, non-ASCII before and after them, and plain ASCII (the
    /// byte copy) give the scalars the escape rules say.
    @Test(arguments: [
        ("color", CSSToken.ident("color")),
        ("a\\62 c", .ident("abc")),
        ("\\41 bc", .ident("Abc")),
        ("na\\mé", .ident("namé")),
        ("日本", .ident("日本")),
        ("--x\\30", .ident("--x0")),
        ("#a\\2d b", .hash("a-b", isID: true)),
        ("@me\\64 ia", .atKeyword("media")),
        ("url(https://a.example/p.png)", .url("https://a.example/p.png")),
        ("url(  https://x.example/a\\29 b  )", .url("https://x.example/a)b")),
        ("url(é\\41)", .url("éA")),
        ("url(\\41)", .url("A")),
        ("url(abc", .url("abc")),
        ("url(a b)", .badURL),
    ])
    func namesAndURLsAreReadAsRuns(_ css: String, _ expected: CSSToken) {
        #expect(CSSTokenizer.tokenize(css) == [expected], "\(css.debugDescription)")
    }

    /// Identifiers the plain-name shortcut returns as they are, and ones it must leave to the
    /// scalar loop (leading digits, `-` before a digit, `-` alone, escapes, non-ASCII, NUL):
    /// both give the scalar loop's text.
    @Test func plainIdentifiersSerializeAsTheScalarLoopDoes() {
        let pieces = ["a", "Z", "_", "-", "--", "0", "9", "e", "E", "px", "rampart-message", " ", "<", "\\", ".", "é", "\u{80}", "\u{0}", "#", "(", ""]
        var random = LinearCongruential64(seed: 0xA4093822299F31D0)
        func next(_ bound: Int) -> Int { random.next(bound) }
        var plain = 0
        for _ in 0..<20_000 {
            var name = ""
            for _ in 0..<next(5) { name += pieces[next(pieces.count)] }
            if CSSSerializer.isPlainIdentifier(name) { plain += 1 }
            #expect(CSSSerializer.identifier(name) == CSSSerializer.identifierByScalars(name), "\(name.debugDescription)")
        }
        #expect(plain > 2_000)
        for name in ["-", "0a", "-1", "a0", "-a1", "--1", ""] {
            #expect(CSSSerializer.identifier(name) == CSSSerializer.identifierByScalars(name), "\(name.debugDescription)")
        }
        #expect(!CSSSerializer.isPlainIdentifier("-") && !CSSSerializer.isPlainIdentifier("0a") && !CSSSerializer.isPlainIdentifier("-1"))
        #expect(CSSSerializer.isPlainIdentifier("--1") && CSSSerializer.isPlainIdentifier("rampart-message"))
    }

    // MARK: URLs

    /// Random URLs from pieces that matter to the parse (schemes, `\\`, userinfo, ports, IP
    /// literals, percent-encoding, non-ASCII hosts, queries with tracking names, `?` in the
    /// fragment): the byte parses give what the `Character` parses give.
    @Test func urlByteParsesAgreeWithTheCharacterParses() {
        let pieces = [
            "http:", "HTTPS:", "https://", "//", "\\\\", "/\\", "\\", "/", "///", "user@", "a:b@", "@", "[::1]", "[FE80::1]", ":8080", ":", "%41",
            "%", "%zz", "%2e", "%2E%2e", "%C3%A9", ".", "..", "Example.COM", "t.example", "x", "é", "ü", "例え.jp", "\u{301}", "?", "#", "&",
            "=", "&&", "utm_source=x", "UTM_Medium=y", "mc_eid=1", "fbclid", "%75tm_source=1", "MKT_TOK=", "pk_x", "hsa_", "utm", "ref=1",
            "?utm_x=1#?utm_y=2", " ", "a b", "cid:", "data:", "mailto:x", "\u{212A}", "\u{0}",
            "list-manage.com", "/track/open.php", "T.Example", "/a/b", "/o/abc", "/wf/open?upn=", "facebook.com/tr?",
            "google-analytics.com", "track.hubspot.com", ".x",
        ]
        var random = LinearCongruential64(seed: 0x243F6A8885A308D3)
        func next(_ bound: Int) -> Int { random.next(bound) }
        let trackers = TrackerList.builtIn.merging(TrackerList(vendors: [
            TrackerList.Vendor(name: "Example", hosts: ["t.example", "Example.COM", "x"], patterns: ["/a/b", "utm_[a-z]+=1"]),
        ]))
        var asciiParsed = 0
        var vendorHits = 0
        for _ in 0..<40_000 {
            var url = ["http:", "https://", "HTTP://", "//", ""][next(5)]
            for _ in 0..<(1 + next(10)) { url += pieces[next(pieces.count)] }
            let bytes = URLComponentsLite(url: url)
            #expect(bytes == URLComponentsLite(characters: url), "\(url.debugDescription)")
            if bytes != nil && url.utf8.allSatisfy({ $0 < 0x80 }) { asciiParsed += 1 }
            if let bytes {
                let vendor = trackers.vendor(for: bytes)
                #expect(vendor == trackers.vendorByCharacters(for: bytes), "\(url.debugDescription)")
                if vendor != nil { vendorHits += 1 }
            }
            let stripped = TrackingParameters.strip(url)
            let reference = TrackingParameters.stripByCharacters(url)
            #expect(stripped.url == reference.url && stripped.removed == reference.removed, "\(url.debugDescription)")
            #expect(URLPolicy.scheme(of: url) == URLPolicy.schemeByScalars(url), "\(url.debugDescription)")
        }
        #expect(asciiParsed > 10_000)
        #expect(vendorHits > 1_000)
    }

    /// The host lookup by bytes (short all-ASCII host lists) answers as the dictionary: a host
    /// listed by two vendors goes to the later one, long lists and lists with a non-ASCII host
    /// keep the dictionary, and every suffix of a host is tried.
    @Test func hostLookupByBytesAnswersAsTheDictionary() {
        let lists = [
            TrackerList(vendors: [TrackerList.Vendor(name: "A", hosts: ["a.example", "B.example"], patterns: []),
                                  TrackerList.Vendor(name: "B", hosts: ["b.example", "x"], patterns: [])]),
            TrackerList(vendors: (0..<12).map { TrackerList.Vendor(name: "V\($0)", hosts: ["h\($0).example"], patterns: []) }),
            TrackerList(vendors: [TrackerList.Vendor(name: "C", hosts: ["caf\u{E9}.example", "c.example"], patterns: [])]),
            TrackerList.builtIn,
        ]
        let hosts = ["a.example", "A.EXAMPLE", "sub.a.example", "b.example", "x.b.example", "x", "y.x", "h3.example", "h11.example",
                     "h12.example", "c.example", "caf\u{E9}.example", "t.hubspotemail.net", "x.track.hubspot.com", "list-manage.com",
                     "ist-manage.com", "example", "a.example.", "xx"]
        // And random hosts made of the keys' labels (suffixes that are keys, or keys but for a
        // label boundary, at every depth).
        let labels = ["a", "b", "x", "example", "h3", "h11", "t", "track", "hubspot", "hubspotemail", "net", "com", "list-manage", "manage", "ist", "A", "X"]
        var rng = SystemRandomNumberGenerator()
        let randomHosts = (0..<2000).map { _ in
            (0..<Int.random(in: 1...5, using: &rng)).map { _ in labels.randomElement(using: &rng)! }.joined(separator: Bool.random(using: &rng) ? "." : "-")
        }
        for list in lists {
            for host in hosts + randomHosts {
                guard let url = URLComponentsLite(url: "https://" + host + "/p?q=1") else { continue }
                #expect(list.vendor(for: url) == list.vendorByCharacters(for: url), "\(host)")
            }
        }
        let first = lists[0]
        #expect(first.vendor(for: URLComponentsLite(url: "https://b.example/")!) == "B")
        #expect(first.vendor(for: URLComponentsLite(url: "https://q.a.example/")!) == "A")
    }

    /// The link and resource fast paths (URLs read from their bytes) against the full paths
    /// through `URLPolicy` and `URLComponentsLite`, on random URLs (with the tricky pieces:
    /// control characters, spaces, `\\`, `%`, userinfo, ports, IP literals, non-ASCII, mixed
    /// case, tracking names, `?` in the fragment) and random options: whenever a fast path
    /// answers, the answer and the report are those of the full path.
    @Test func linkAndResourceFastPathsAgreeWithTheFullPaths() {
        let pieces = [
            "http:", "HTTPS:", "https://", "hTtP://", "//", "\\\\", "/\\", "\\", "/", "///", "user@", "a:b@", "@", "[::1]", "[FE80::1]", ":8080",
            ":", "%41", "%", "%2e", "%C3%A9", ".", "..", "Example.COM", "t.example", "x", "é", "例え.jp", "\u{301}", "?", "#", "&", "=", "&&",
            "utm_source=x", "UTM_Medium=y", "mc_eid=1", "fbclid", "%75tm_source=1", "MKT_TOK=", "pk_x", "hsa_", "utm", "ref=1",
            "?utm_x=1#?utm_y=2", " ", "\t", "\n", "\r", "\u{0}", "\u{1F}", "\u{7F}", "\u{85}", "\u{A0}", "a b", "cid:", "data:", "mailto:",
            "MailTo:", "tel:", "TEL:", "javascript:", "httpx:", "http", "https", "s:", "\u{212A}", "list-manage.com", "/track/open.php",
            "T.Example", "/a/b", "/o/abc", "/wf/open?upn=", "facebook.com/tr?", "google-analytics.com", "track.hubspot.com", ".x", "x.",
            "EXAMPLE.com.", "sub.t.example", "cdn.example.com", "/img/1.png",
        ]
        // Half of the URLs from pieces the fast paths handle, so that they answer often.
        let plainPieces = [
            "t.example", "x", "Example.COM", "/a/b", "/img/1.png", "?", "&", "=", "utm_source=x", "UTM_Medium=y", "mc_eid=1", "fbclid",
            "%75tm_source=1", "ref=1", "#", ":8080", "user@", ".", "sub.t.example", "/o/abc", "/wf/open?upn=", "list-manage.com",
            "/track/open.php", "&&", "pk_x", "hsa_", "\u{7F}",
        ]
        var random = LinearCongruential64(seed: 0x13198A2E03707344)
        func next(_ bound: Int) -> Int { random.next(bound) }
        let trackers = [TrackerList.builtIn, TrackerList.builtIn.merging(TrackerList(vendors: [
            TrackerList.Vendor(name: "Example", hosts: ["t.example", "Example.COM", "x"], patterns: ["/a/b", "utm_[a-z]+=1"]),
        ])), TrackerList.empty]
        let kinds: [RemoteResourceKind] = [.image, .srcset, .cssBackground, .font, .stylesheet, .poster, .media, .inputImage, .svgImage,
                                           .svgUse, .background]
        let styles: [EmbeddedImageStyle] = [.dataURI, .appScheme("rampart-cid"), .appScheme("HTTPS"), .appScheme("tel"), .appScheme("CID")]
        var linksHandled = 0
        var resourcesHandled = 0
        var stripped = 0
        var vendorHits = 0
        for round in 0..<40_000 {
            var url = ["https://", "http://", "HTTP://", "", "#", "mailto:", "cid:", "CID:part1@mail", "https://shop.example.com/item/1?"][round % 2 == 0 ? next(8) : 8]
            let source = round % 2 == 0 ? pieces : plainPieces
            for _ in 0..<(1 + next(10)) { url += source[next(source.count)] }
            var options = SanitizerOptions()
            options.trackers = trackers[next(trackers.count)]
            options.remote = RemoteContentPolicy.allCases[next(RemoteContentPolicy.allCases.count)]
            options.stripTrackingParameters = next(4) != 0
            options.embeddedImages = styles[next(styles.count)]
            if next(3) == 0 { options.attachments = ["part1@mail": EmbeddedAttachment(mimeType: "image/png", bytes: Data([1, 2, 3]))] }
            // Some findings before the URL, so de-duplication against earlier entries is covered.
            let earlier = round % 3 == 0 ? url : nil
            func gate() -> ResourceGate {
                let gate = ResourceGate(options: options)
                if let earlier { gate.tracker(earlier, .linkParameters); gate.block(earlier, .image) }
                return gate
            }
            let fast = gate()
            let full = gate()
            if let answer = fast.linkFastPath(url) {
                linksHandled += 1
                #expect(answer == full.linkByParts(url), "\(url.debugDescription)")
                #expect(fast.report == full.report, "\(url.debugDescription)")
                if fast.report.count(.trackingParameter) > 0 { stripped += 1 }
                if fast.report.trackers.contains(where: { $0.reason == .knownTracker }) { vendorHits += 1 }
            }
            let kind = kinds[next(kinds.count)]
            let isPixel = next(3) == 0
            let fastResource = gate()
            let fullResource = gate()
            if let decision = fastResource.resourceFastPath(url, kind: kind, isPixel: isPixel) {
                resourcesHandled += 1
                #expect(decision == fullResource.resourceByParts(url, kind: kind, isPixel: isPixel), "\(url.debugDescription) \(kind)")
                #expect(fastResource.report == fullResource.report, "\(url.debugDescription) \(kind)")
            }
            // The public entry points answer as the full paths whether or not a fast path did.
            let viaLink = gate()
            let viaFull = gate()
            #expect(viaLink.link(url) == viaFull.linkByParts(url) && viaLink.report == viaFull.report, "\(url.debugDescription)")
            #expect(viaLink.resource(url, kind: kind, isPixel: isPixel) == viaFull.resourceByParts(url, kind: kind, isPixel: isPixel)
                && viaLink.report == viaFull.report, "\(url.debugDescription)")
        }
        #expect(linksHandled > 8_000)
        #expect(resourcesHandled > 8_000)
        #expect(stripped > 1_000)
        #expect(vendorHits > 500)
    }

    /// The byte fast path's hand-picked edges.
    @Test(arguments: [
        "https://x.example", "HTTPS://User:pw@WWW.Example.COM.:8443/a/B?x=1&utm_source=n#frag?utm_medium=m", "http:x.example",
        "http:///x.example/?utm_source=1", "https://x.example/a?&utm_source=1", "https://x.example/a?utm_source=1&", "https://x.example/a?",
        "https://x.example?utm_source=1#", "https://x.example/a?UTM_Source=1&k=2&&%6Dc_eid=3#f", "#", "#x", "mailto:a@b", "tel:1",
        "https://.", "https://@", "https://a@", "https://:80", "https://x.example\u{7F}", "https://t.example.", "https://sub.T.Example/x",
        "https://list-manage.com/track/open.php?u=1", "https://x.example/wf/open?upn=1", "https://x.example/o/abc",
    ])
    func linkFastPathEdges(_ url: String) {
        let trackers = TrackerList.builtIn.merging(TrackerList(vendors: [TrackerList.Vendor(name: "Example", hosts: ["t.example"], patterns: [])]))
        var options = SanitizerOptions()
        options.trackers = trackers
        let fast = ResourceGate(options: options)
        let full = ResourceGate(options: options)
        #expect(fast.link(url) == full.linkByParts(url))
        #expect(fast.report == full.report)
        let fastResource = ResourceGate(options: options)
        let fullResource = ResourceGate(options: options)
        #expect(fastResource.resource(url, kind: .image) == fullResource.resourceByParts(url, kind: .image))
        #expect(fastResource.report == fullResource.report)
    }

    @Test func urlEdgeCases() {
        let parts = URLComponentsLite(url: "HTTPS://User:pw@WWW.Example.COM.:8443/a/B?x=1&utm_source=n#frag?utm_medium=m")
        #expect(parts?.scheme == "https")
        #expect(parts?.host == "www.example.com")
        #expect(parts?.pathAndQuery == "/a/B?x=1&utm_source=n")
        #expect(parts?.fragment == "frag?utm_medium=m")
        #expect(URLComponentsLite(url: "http:\\\\t.example\\p")?.host == "t.example")
        #expect(URLComponentsLite(url: "http:///t.example")?.host == "t.example")
        #expect(URLComponentsLite(url: "http://[FE80::1]:80/")?.host == "[fe80::1]:80")
        #expect(URLComponentsLite(url: "http://%54.example/")?.host == "t.example")
        #expect(URLComponentsLite(url: "http://b%C3%BCcher.example/")?.host == "bücher.example")
        #expect(URLComponentsLite(url: "http://BÜCHER.example/")?.host == "bücher.example")
        #expect(URLComponentsLite(url: "http://") == nil)
        #expect(URLComponentsLite(url: "http://user@:80/") == nil)
        #expect(URLComponentsLite(url: "nocolon") == nil)
        // A `?` in the fragment starts no query; removing the query keeps the fragment.
        #expect(TrackingParameters.strip("https://x.example/a#b?utm_source=1").removed.isEmpty)
        #expect(TrackingParameters.strip("https://x.example/a ?utm_source=n").url == "https://x.example/a ")
        #expect(TrackingParameters.strip("https://x.example/a?UTM_Source=1&k=2&&%6Dc_eid=3#f") == ("https://x.example/a?k=2&#f", ["UTM_Source", "%6Dc_eid"]))
        #expect(TrackingParameters.strip("https://x.example/a?&utm_source=1").url == "https://x.example/a")
        #expect(TrackingParameters.strip("https://x.example/a?utm_source=1&").url == "https://x.example/a")
        #expect(URLPolicy.scheme(of: "HtTp+x.1-:y") == "http+x.1-")
        #expect(URLPolicy.scheme(of: "1http:") == nil)
        #expect(URLPolicy.scheme(of: ":x") == nil)
        #expect(URLPolicy.scheme(of: "é:x") == nil)
        #expect(URLPolicy.scheme(of: "x") == nil)
    }

    // MARK: Name tables and prefixes

    @Test func nameTablesAnswerAsTheSetsDo() {
        let sets: [Set<String>] = [Allowlist.htmlElements, Allowlist.htmlAttributes, Allowlist.svgAttributes, Allowlist.clobberingNames,
                                   CSSSanitizer.allowedFunctions, CSSSanitizer.forbiddenProperties, TrackingParameters.names]
        let probes = ["", "a", "A", "STYLE", "style", "Style", "viewBox", "viewbox", "nodeName", "nodename", "\u{212A}", "mkt_to\u{212A}",
                      "caf\u{E9}", "cafe\u{301}", "x-very-long-attribute-name-over-16", "background-color", "repeating-linear-gradient",
                      "REPEATING-LINEAR-GRADIENT", "abcdefgh", "abcdefghi", "-webkit-linear-gradient", "é"]
        for set in sets {
            let table = ASCIINameTable(set)
            for name in set { #expect(table.contains(name), "\(name)") }
            for probe in probes + set.map({ $0.uppercased() }) + set.map({ $0 + "x" }) + set.map({ String($0.dropLast()) }) {
                #expect(table.contains(probe) == set.contains(probe), "\(probe.debugDescription)")
                #expect(table.contains(probe, lowercasing: true) == set.contains(probe.lowercased()), "\(probe.debugDescription)")
                let bytes = Array(probe.utf8)
                bytes.withUnsafeBufferPointer { p in
                    #expect((table.value(p, 0..<p.count, lowercasing: true) != nil) == set.contains(probe.lowercased()), "\(probe.debugDescription)")
                }
                // Inside other bytes (a name in a CSS declaration): only the range is read.
                let framed = Array("a-b:".utf8) + bytes + Array("-mx;".utf8)
                framed.withUnsafeBufferPointer { p in
                    #expect((table.value(p, 4..<(4 + bytes.count)) != nil) == set.contains(probe), "\(probe.debugDescription)")
                }
            }
        }
    }

    /// The byte searches answer as a plain scan: needles of every length up to 5 over a small
    /// alphabet (so candidates whose first bytes match but not the rest are common), at every
    /// offset, matches at the very end included; and the first of two bytes, in and out of
    /// eight-byte words.
    @Test func byteSearchesAnswerAsAPlainScan() {
        var rng = SystemRandomNumberGenerator()
        let alphabet: [UInt8] = Array("ab/=%".utf8)
        for _ in 0..<2_000 {
            let haystack = (0..<Int.random(in: 0...40, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }
            let needle = (0..<Int.random(in: 0...5, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }
            let expected = needle.isEmpty || (0..<max(haystack.count - needle.count + 1, 0)).contains { at in
                Array(haystack[at..<(at + needle.count)]) == needle
            }
            #expect(ByteSearch.contains(haystack, needle) == expected, "\(haystack) \(needle)")
            haystack.withUnsafeBufferPointer { bytes in
                let start = Int.random(in: 0...haystack.count, using: &rng)
                let end = Int.random(in: start...haystack.count, using: &rng)
                let first = (start..<end).first { bytes[$0] == 0x3D || bytes[$0] == 0x25 } ?? end
                #expect(ASCIIWords.firstIndex(of: 0x3D, or: 0x25, in: bytes, from: start, to: end) == first, "\(haystack) \(start) \(end)")
            }
        }
    }

    /// A packed name answers the cleaner's questions as its `String` does: case, the `on`
    /// prefix, the table entry of the lowercased name; names it cannot hold are refused.
    @Test func packedNamesAnswerAsTheirStrings() {
        var probes = ["", "o", "on", "ON", "oN", "onclick", "OnClick", "href", "HREF", "data-rampart-src", "xlink:href", "a\u{301}",
                      "\u{212A}", "caf\u{E9}", "exactly16bytes!!", "seventeen-bytes!!", "Z", "@[`{", "aria-LABEL", "viewBox"]
        probes += Array(Allowlist.htmlAttributes) + Array(Allowlist.svgAttributes) + Allowlist.htmlAttributes.map { $0.uppercased() }
        var rng = SystemRandomNumberGenerator()
        let letters = Array("onONhrefHREF-:@[`{Zz\u{7F}")
        for _ in 0..<3000 { probes.append(String((0..<Int.random(in: 0...18, using: &rng)).map { _ in letters.randomElement(using: &rng)! })) }
        for probe in probes {
            let ascii = probe.utf8.count <= 16 && probe.utf8.allSatisfy { $0 < 0x80 }
            guard let packed = PackedASCIIName(probe) else { #expect(!ascii, "\(probe.debugDescription)"); continue }
            #expect(ascii, "\(probe.debugDescription)")
            let lower = packed.lowercased
            #expect((lower != packed) == probe.containsASCIIUppercase, "\(probe.debugDescription)")
            #expect(lower.hasPrefix("on") == probe.lowercased().hasASCIIPrefix("on"), "\(probe.debugDescription)")
            #expect(lower == PackedASCIIName(probe.lowercased()), "\(probe.debugDescription)")
            #expect((Allowlist.attributeInfo.value(lower) != nil) == (Allowlist.attributeInfo.value(probe.lowercased()) != nil), "\(probe.debugDescription)")
        }
    }

    /// The cleaner takes an HTML attribute's URL rule from its ``Allowlist/AttributeInfo`` entry
    /// when the name has one: that entry must answer as the URL table for every such name.
    @Test func attributeInfoHoldsTheURLTablesAnswer() {
        var probes = ["", "a", "href", "HREF", "Href", "src", "srcset", "poster", "background", "cite", "action", "ping", "data",
                      "srcdoc", "style", "id", "name", "target", "rel", "class", "title", "width", "hre\u{301}f", "\u{212A}", "caf\u{E9}",
                      "x-very-long-attribute-name-over-16", "attributionsrc", "attributionsrcx"]
        probes += Array(Allowlist.htmlAttributes)
        probes += Array(Allowlist.mathMLAttributes)
        probes += Array(Allowlist.svgAttributes)
        probes += Allowlist.htmlURLAttributeNames.map(\.0)
        var rng = SystemRandomNumberGenerator()
        let letters = Array("hrefsciantop-HRS\u{301}")
        for _ in 0..<2000 { probes.append(String((0..<Int.random(in: 0...8, using: &rng)).map { _ in letters.randomElement(using: &rng)! })) }
        for probe in probes {
            let url = Allowlist.htmlURLAttributes.value(probe)
            if let info = Allowlist.attributeInfo.value(probe) {
                #expect(info.urlName == url, "\(probe.debugDescription)")
            } else {
                #expect(url == nil, "\(probe.debugDescription)")
            }
        }
        for (name, _) in Allowlist.htmlURLAttributeNames { #expect(Allowlist.attributeInfo.value(name) != nil, "\(name)") }
    }

    /// The report collected by ``ResourceGate/Findings`` is the one ``SanitizationReport/note(_:_:)``
    /// makes from the same notes, dictionary order included.
    @Test func findingsMakeTheReportTheNotesMake() {
        #expect(RemovalKind.allCases.count == RemovalKind.indexCount)
        for (offset, kind) in RemovalKind.allCases.enumerated() { #expect(kind.index == offset) }
        let deterministic = ProcessInfo.processInfo.environment["SWIFT_DETERMINISTIC_HASHING"] != nil
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            var findings = ResourceGate.Findings()
            var reference = SanitizationReport()
            for _ in 0..<Int.random(in: 0...40, using: &rng) {
                let kind = RemovalKind.allCases.randomElement(using: &rng)!
                let count = Int.random(in: 0...3, using: &rng)
                findings.note(kind, count)
                reference.note(kind, count)
            }
            let made = findings.report
            #expect(made == reference)
            // The order of a dictionary's keys is fixed only with deterministic hashing (else
            // each dictionary storage gets its own seed, in the old code as in the new).
            if deterministic {
                #expect(Array(made.removed.keys) == Array(reference.removed.keys))
                #expect(String(reflecting: made) == String(reflecting: reference))
            }
        }
    }

    @Test(arguments: ["on", "onclick", "o", "", "onn", "on\u{301}", "o\u{301}n", "\u{212A}on", "data-rampart-src", "data-rampart-\u{301}",
                      "data-rampart", "data-", "data-x", "aria-\u{301}", "/\u{301}", "//\u{301}", "#", "#\u{301}", "\\\\"])
    func asciiPrefixesAnswerAsHasPrefix(_ s: String) {
        #expect(s.hasASCIIPrefix("on") == s.hasPrefix("on"))
        #expect(s.hasASCIIPrefix("data-rampart-") == s.hasPrefix("data-rampart-"))
        #expect(s.hasASCIIPrefix("data-") == s.hasPrefix("data-"))
        #expect(s.hasASCIIPrefix("aria-") == s.hasPrefix("aria-"))
        #expect(s.hasASCIIPrefix("//") == s.hasPrefix("//"))
        #expect(s.hasASCIIPrefix("#") == s.hasPrefix("#"))
        #expect(s.hasASCIIPrefix("\\\\") == s.hasPrefix("\\\\"))
    }

    @Test func clobberingNamesAreFoundWhateverTheirCase() throws {
        let html = try MailSanitizer().sanitize("<p id=LOCATION>a</p><p name=Rampart-x>b</p><p id=RAMPART-MESSAGE>c</p><p id=rampart-messages>d</p><p id=ok>e</p>").html
        #expect(html == "<p>a</p><p>b</p><p>c</p><p>d</p><p id=\"ok\">e</p>")
    }

    // MARK: Serializer escaping

    /// Special characters at every offset around the 8-byte words, next to look-alike bytes
    /// (`©` is C2 A9, `Â` is C3 82).
    @Test func serializerEscapingMatchesTheScalarReference() {
        let pieces = ["a", "bcdefgh", "&", "\u{A0}", "\"", "<", ">", "©", "Â", "é", "日本", "😀", "\u{0}", "'", "=", "        "]
        var random = LinearCongruential64(seed: 0x13198A2E03707344)
        func next(_ bound: Int) -> Int { random.next(bound) }
        for _ in 0..<20_000 {
            var text = ""
            for _ in 0..<next(24) { text += pieces[next(pieces.count)] }
            for attributeMode in [false, true] {
                var out = "prefix"
                HTMLSerializer.escape(text, attributeMode: attributeMode, into: &out)
                #expect(out == "prefix" + referenceHTMLEscape(text, attributeMode: attributeMode), "\(text.debugDescription)")
            }
        }
        let element = Element(localName: "p", attributes: [Attribute(name: "title", value: "a\"b&c<d>\u{A0}")])
        element.appendChild(Text("1234567<8>&\u{A0}\"x"))
        #expect(element.outerHTML == "<p title=\"a&quot;b&amp;c<d>&nbsp;\">1234567&lt;8&gt;&amp;&nbsp;\"x</p>")
        let fragment = DocumentFragment()
        fragment.appendChild(element)
        #expect(fragment.innerHTMLEquals(fragment.innerHTML))
        #expect(!fragment.innerHTMLEquals(fragment.innerHTML + " "))
        #expect(!fragment.innerHTMLEquals(String(fragment.innerHTML.dropLast()) + "x"))
        #expect(DocumentFragment().innerHTMLEquals(""))
        #expect(!DocumentFragment().innerHTMLEquals("a"))
        // Past the buffer's first capacity (it grows).
        let big = DocumentFragment()
        for index in 0..<3_000 { big.appendChild(Text("\(index) & ")) }
        #expect(big.innerHTMLEquals(big.innerHTML))
        #expect(big.innerHTML.utf8.count > 20_000)
    }

    @Test func internedElementNamesAnswerAsTheSets() {
        let names = HTMLSerializer.voidElements.union(HTMLSerializer.rawTextParents)
        for name in names.union(["", "b", "a", "div", "noscript", "template", "plaintex", "plaintextx", "BR", "Br", "brx", "é", "basefonts", "textarea", "title"])
            .union(names.map { $0.uppercased() }).union(names.map { String($0.dropLast()) }) {
            // The interned sets the serializer tests elements with.
            let tag = HTMLTag(localName: name)
            #expect(HTMLSerializer.voidTags.contains(tag) == HTMLSerializer.voidElements.contains(name), "\(name)")
            #expect(HTMLSerializer.rawTextParentTags.contains(tag) == HTMLSerializer.rawTextParents.contains(name), "\(name)")
            #expect(HTMLSerializer.isVoid(Element(localName: name)) == HTMLSerializer.voidElements.contains(name), "\(name)")
        }
        #expect(!HTMLSerializer.isVoid(Element(localName: "br", namespace: .svg)))
    }
}

/// The re-parse check's tree comparison as MailSafety did it before it moved into HTML5
/// (`Node.hasSameChildren(as:)`): the reference the new walk must agree with wherever this one
/// said yes (the new one also takes adjacent text nodes as one run).
private enum LegacySameTree {
    static func sameChildren(_ rootA: Node, _ rootB: Node) -> Bool {
        var a = rootA.firstChild
        var b = rootB.firstChild
        // A walk in pre-order over both trees at once (iterative: deep trees cannot overflow).
        while true {
            guard let x = a, let y = b else { return a == nil && b == nil }
            guard sameNode(x, y) else { return false }
            if let childX = x.firstChild {
                guard let childY = y.firstChild else { return false }
                a = childX
                b = childY
                continue
            }
            guard y.firstChild == nil else { return false }
            // The next node: the next sibling of `x` or of its nearest ancestor that has one.
            var upX = x
            var upY = y
            while true {
                let nextX = upX.nextSibling
                let nextY = upY.nextSibling
                if nextX != nil || nextY != nil {
                    guard nextX != nil && nextY != nil else { return false }
                    a = nextX
                    b = nextY
                    break
                }
                guard let parentX = upX.parent, let parentY = upY.parent else { return false }
                // Both walks went down in step, so they reach their roots together.
                if parentX === rootA || parentY === rootB { return parentX === rootA && parentY === rootB }
                upX = parentX
                upY = parentY
            }
        }
    }

    /// The same node for the serializer (children aside). The kinds are compared by their
    /// exact class first (the node classes are final), then each is cast to it.
    static func sameNode(_ x: Node, _ y: Node) -> Bool {
        let kind = ObjectIdentifier(type(of: x))
        guard kind == ObjectIdentifier(type(of: y)) else { return false }
        if kind == ObjectIdentifier(Element.self) {
            let ex = unsafeDowncast(x, to: Element.self)  // (the exact class was checked above)
            let ey = unsafeDowncast(y, to: Element.self)
            // A known tag stands for exactly its name (`Element.tag` always agrees with
            // `localName`); unknown ones are compared by name. Only `<template>` has contents
            // of its own (`templateContent`), which are not compared here.
            guard ex.tag == ey.tag, ex.namespace == ey.namespace, ex.tag != .template,
                  ex.tag != .unknown || SameTree.sameBytes(ex.localName, ey.localName)
            else { return false }
            return ex.attributes.withUnsafeBufferPointer { ax in
                ey.attributes.withUnsafeBufferPointer { ay in
                    guard ax.count == ay.count else { return false }
                    for k in 0..<ax.count {
                        guard ax[k].namespace == ay[k].namespace, SameTree.sameBytes(ax[k].name, ay[k].name),
                              SameTree.sameBytes(ax[k].value, ay[k].value)
                        else { return false }
                    }
                    return true
                }
            }
        }
        if kind == ObjectIdentifier(Text.self) {
            return SameTree.sameBytes(unsafeDowncast(x, to: Text.self).data, unsafeDowncast(y, to: Text.self).data)
        }
        if kind == ObjectIdentifier(Comment.self) {
            return SameTree.sameBytes(unsafeDowncast(x, to: Comment.self).data, unsafeDowncast(y, to: Comment.self).data)
        }
        // (A fragment holds no doctype; any other kind: not shown here.)
        return false
    }

}
