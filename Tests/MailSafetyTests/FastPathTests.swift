import Foundation
import HTML5
import Testing
@testable import MailSafety

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
        var state: UInt64 = 0x9E3779B97F4A7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int(truncatingIfNeeded: state >> 33) % bound
        }
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
}
