import Foundation
import HTML5
import PropertyBased
import Testing
@testable import MailSafety
import RampartTestSupport

/// Pieces random HTML is assembled from: tags of all three namespaces, raw-text and
/// foreign-content switches, attributes with URLs and handlers, comments, entities and stray
/// characters that change tokenizer states.
private let pieces: [String] = [
    "<p>", "</p>", "<div>", "</div>", "<a href=\"javascript:alert(1)\">", "<a href=https://e.example/?utm_source=x>", "</a>",
    "<img src=x onerror=alert(1)>", "<img src=\"https://t.example/p.gif\" width=1>", "<svg>", "</svg>", "<math>", "</math>",
    "<mtext>", "<mglyph>", "<malignmark>", "<annotation-xml encoding=text/html>", "<foreignObject>", "<desc>", "<title>",
    "<style>", "</style>", "<script>", "</script>", "<noscript>", "</noscript>", "<template>", "</template>", "<table>",
    "</table>", "<tr>", "<td>", "<select>", "<option>", "<form>", "</form>", "<textarea>", "<xmp>", "<iframe>", "<noembed>",
    "<!--", "-->", "<!-- x -->", "<![CDATA[", "]]>", "<?x>", "<!x>", "\"", "'", "=", ">", "<", "/", "&lt;", "&amp;", "&#x3c;",
    "&quot;", " ", "\n", "\t", "\u{0}", "text", "é", "p{color:red}", "@import url(https://t.example/a.css);",
    "background:url(https://t.example/b.png)", "<b style=\"position:fixed;z-index:99999\">", "</b>", "<use href=#a>",
    "<image href=https://t.example/i.png>", "<font color=red>", "<h1>", "<li>", "<ul>", "<pre>", "<plaintext>",
    "<body onload=alert(1)>", "<html>", "<head>", "<frameset>", "<button>", "<input>", "<img src=cid:logo@example>",
    "<style>p{background:url(https://t.example/c.png)}</style>", "<div style=\"color:red;background:url(javascript:x)\">",
]

private let randomHTML = Gen<String?>.element(of: pieces).compactMap { $0 }.array(of: 0...40).map { $0.joined() }

/// A vector of the corpus with deterministic random edits (insert a piece, delete a span,
/// duplicate a span, swap a byte for a tokenizer-significant character).
private func mutate(_ vector: String, seed: UInt64) -> String {
    var random = LinearCongruential64(seed: seed | 1)
    func next() -> Int { random.next() }
    var scalars = Array(vector.unicodeScalars)
    for _ in 0..<(1 + next() % 4) {
        let at = scalars.isEmpty ? 0 : next() % (scalars.count + 1)
        switch next() % 4 {
        case 0: scalars.insert(contentsOf: pieces[next() % pieces.count].unicodeScalars, at: at)
        case 1: if at < scalars.count { scalars.removeSubrange(at..<min(scalars.count, at + 1 + next() % 8)) }
        case 2: if at < scalars.count { scalars.insert(contentsOf: scalars[at..<min(scalars.count, at + 1 + next() % 16)], at: at) }
        default:
            let specials: [Unicode.Scalar] = ["<", ">", "\"", "'", "/", "=", "-", "!", "&", " ", "\u{0}"]
            if at < scalars.count { scalars[at] = specials[next() % specials.count] }
        }
    }
    var out = String.UnicodeScalarView()
    out.append(contentsOf: scalars)
    return String(out)
}

private let mutatedVector = Gen<Int>.int(in: 0...Int.max).map { seed in
    mutate(Corpus.vectors.isEmpty ? "" : Corpus.vectors[seed % Corpus.vectors.count], seed: UInt64(truncatingIfNeeded: seed / 7))
}

private func checkProperties(_ html: String) throws {
    let sanitizer = MailSanitizer(options: SanitizerOptions(attachments: Corpus.attachments))
    let once = try sanitizer.sanitize(html)
    // Idempotence: sanitizing the output changes nothing.
    let twice = try sanitizer.sanitize(once.html)
    #expect(twice.html == once.html, "not idempotent: \(html.debugDescription)")
    // The output re-parses (in the rendering context) to a tree that serializes to itself.
    let reparsed = MessageParsing.parseFragment(once.html)
    #expect(reparsed.innerHTML == once.html, "re-parse differs: \(html.debugDescription)")
    for node in reparsed.descendants {
        guard let element = node as? HTML5.Element else { continue }
        #expect(element.localName != "script")
        #expect(!element.attributes.contains { $0.name.lowercased().hasPrefix("on") })
    }
}

/// How many inputs each property sees: the default keeps the suite quick; set
/// `RAMPART_PROPERTY_SCALE` (e.g. 50) for a long stress run.
private func scaled(_ count: Int) -> Int {
    let scale = ProcessInfo.processInfo.environment["RAMPART_PROPERTY_SCALE"].flatMap(Int.init) ?? 1
    return count * max(1, scale)
}

@Suite struct PropertyTests {
    @Test func randomMarkupIsSanitizedStablyWithoutCrashing() async {
        await propertyCheck(count: scaled(400), input: randomHTML) { html in
            try checkProperties(html)
        }
    }

    @Test func mutatedVectorsAreSanitizedStablyWithoutCrashing() async {
        await propertyCheck(count: scaled(400), input: mutatedVector.withoutShrink()) { html in
            try checkProperties(html)
        }
    }

    @Test func arbitraryBytesGiveAResultOrATypedError() async {
        await propertyCheck(count: scaled(300), input: Gen<UInt8>.value(in: 0...255).array(of: 0...200)) { bytes in
            do {
                let result = try MailSanitizer().sanitize(bytes: bytes)
                #expect(try MailSanitizer().sanitize(result.html).html == result.html)
            } catch MailSafetyError.invalidEncoding(let offset) {
                #expect(offset >= 0 && offset < bytes.count)
            }
        }
    }

    @Test func randomCSSIsStableAndNeverLeaksAngleBrackets() async {
        let cssPieces = ["p", "{", "}", ";", ":", "color", "red", "url(", ")", "'", "\"", "\\", "<", "/", "*", "@media", "@import",
                         "expression(", "!important", " ", "-", "1e3", ".5", "#x", "--v", "var(", "position", "fixed", "z-index",
                         "99999", ",", ">", "~", "+", "body", "html", ":root", "\\3c", "</style>", "<!--", "-->"]
        let gen = Gen<String?>.element(of: cssPieces).compactMap { $0 }.array(of: 0...30).map { $0.joined() }
        await propertyCheck(count: scaled(300), input: gen) { css in
            let html = "<style>\(css)</style><p style=\"\(css.replacingOccurrences(of: "\"", with: "&quot;"))\">x</p>"
            try checkProperties(html)
            let result = try MailSanitizer().sanitize(html)
            for node in MessageParsing.parseFragment(result.html).descendants {
                if let element = node as? HTML5.Element, element.localName == "style" {
                    #expect(!element.textContent.contains("<"))
                }
            }
        }
    }
}
