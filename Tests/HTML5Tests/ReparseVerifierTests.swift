import Foundation
import Testing
@testable import HTML5
import RampartTestSupport

/// `HTML5Parser.parsesBack(_:to:context:options:)` against what it stands for: whenever it says
/// yes, parsing the markup (as a `<div>` fragment) really gives a tree whose `innerHTML` is byte
/// for byte the expected tree's — on random trees built through the DOM API (shapes the parser
/// cannot make: `<p>` in `<p>`, text in tables, `<a>` in `<a>`, options under `<select>` with a
/// `<selectedcontent>`, templates, foreign content, adjacent and empty texts), on random variants
/// of their markup, on parsed markup and on every input of the html5lib tree-construction suite.
/// It must say yes where the trees simply match, and leave the expected tree as it was.
@Suite struct ReparseVerifierTests {
    private static func div() -> Element { Element(localName: "div") }

    private static func parse(_ html: String) -> DocumentFragment {
        (try? HTML5Parser.parseFragment(html, context: div()).root) ?? DocumentFragment()
    }

    /// What the check stands for: `html` parses to a tree that serializes as `tree` does.
    private static func reparsesAs(_ html: String, _ tree: Node) -> Bool {
        Array(parse(html).innerHTML.utf8) == Array(tree.innerHTML.utf8)
    }

    /// Every element of the tree (template contents included) has the parser's stack count at 0.
    private static func bookkeepingIsClear(_ root: Node) -> Bool {
        var pending: [Node] = [root]
        while let node = pending.popLast() {
            if let element = node as? Element {
                if element.stackCount != 0 { return false }
                if let content = element.templateContent { pending.append(content) }
            }
            var child = node.firstChild
            while let c = child { pending.append(c); child = c.nextSibling }
        }
        return true
    }

    private static let texts = ["", "a", "text", " ", "\n", "\n\nx", "&", "<", "\u{A0}", "é", "e\u{301}", "\u{0}", "x<y"]
    private static let elements: [(String, Namespace)] = [
        ("div", .html), ("p", .html), ("b", .html), ("a", .html), ("i", .html), ("span", .html), ("table", .html),
        ("tbody", .html), ("tr", .html), ("td", .html), ("caption", .html), ("li", .html), ("ul", .html), ("dd", .html),
        ("h1", .html), ("form", .html), ("select", .html), ("option", .html), ("selectedcontent", .html), ("button", .html),
        ("style", .html), ("textarea", .html), ("pre", .html), ("xmp", .html), ("noscript", .html), ("br", .html),
        ("img", .html), ("template", .html), ("html", .html), ("body", .html), ("head", .html), ("frameset", .html),
        ("x-foo", .html), ("font", .html), ("nobr", .html), ("svg", .svg), ("circle", .svg), ("foreignObject", .svg),
        ("desc", .svg), ("math", .mathml), ("mi", .mathml), ("annotation-xml", .mathml),
    ]
    private static let attributes: [Attribute] = [
        Attribute(name: "class", value: "a"), Attribute(name: "id", value: "a&b"), Attribute(name: "title", value: "\u{A0}\""),
        Attribute(name: "title", value: "é"), Attribute(name: "href", value: "x", namespace: .xlink), Attribute(name: "color", value: "red"),
        Attribute(name: "encoding", value: "text/html"), Attribute(name: "selected", value: ""), Attribute(name: "type", value: "hidden"),
        Attribute(name: "viewBox", value: "0 0 1 1"), Attribute(name: "definitionurl", value: "u"),
    ]

    /// A random tree under `root`, `depth` levels at most.
    private static func fill(_ root: Node, depth: Int, _ random: inout LinearCongruential64) {
        for _ in 0..<random.next(5) {
            switch random.next(10) {
            case 0...3: root.appendChild(Text(texts[random.next(texts.count)]))
            case 4: root.appendChild(HTML5.Comment(texts[random.next(texts.count)]))
            default:
                let (name, namespace) = elements[random.next(elements.count)]
                var list: [Attribute] = []
                for _ in 0..<random.next(3) {
                    let attribute = attributes[random.next(attributes.count)]
                    if !list.contains(where: { $0.name == attribute.name && $0.namespace == attribute.namespace }) { list.append(attribute) }
                }
                let element = Element(localName: name, namespace: namespace, attributes: list)
                if depth > 0 { fill(element, depth: depth - 1, &random) }
                if let content = element.templateContent, random.next(2) == 0 { fill(content, depth: 0, &random) }
                root.appendChild(element)
            }
        }
    }

    /// Random trees built through the DOM API: a yes is always backed by the real re-parse, the
    /// tree is left as it was, and trees the parser makes as they are (the re-parse of a parsed
    /// tree's output) get a yes.
    @Test func yesOnlyWhenTheReparseSerializesTheSame() {
        var random = LinearCongruential64(seed: 0x9E3779B97F4A7C15)
        var yes = 0, stable = 0, stableButNo = 0
        for _ in 0..<4_000 {
            let tree = DocumentFragment()
            Self.fill(tree, depth: 4, &random)
            let output = tree.innerHTML
            let answer = HTML5Parser.parsesBack(output, to: tree, context: Self.div())
            #expect(Array(tree.innerHTML.utf8) == Array(output.utf8), "the expected tree was changed")
            #expect(Self.bookkeepingIsClear(tree))
            let truth = Self.reparsesAs(output, tree)
            if truth { stable += 1 }
            if answer {
                yes += 1
                #expect(truth, "\(output.debugDescription)")
            } else if truth && !output.contains("<template") {
                stableButNo += 1
            }
        }
        // The random trees are mostly shapes the parser would not make; a good share still are.
        #expect(yes > 400)
        #expect(stable > yes)
        // Stable outputs it cannot show: almost only those whose text runs are split
        // differently by a mismatching step (few).
        #expect(stableButNo * 4 < stable)
    }

    /// The markup of other trees (random variants and unrelated trees) against a tree: a yes only
    /// when that markup really parses to the tree's serialization.
    @Test func otherMarkupAgainstATree() {
        var random = LinearCongruential64(seed: 0x243F6A8885A308D3)
        var yes = 0, differentYes = 0
        for round in 0..<4_000 {
            let tree = DocumentFragment()
            Self.fill(tree, depth: 3, &random)
            // Parsed once, so that most trees are shapes the parser makes.
            let parsed = Self.parse(tree.innerHTML)
            let other: String
            if round % 4 == 0 {
                let unrelated = DocumentFragment()
                Self.fill(unrelated, depth: 3, &random)
                other = unrelated.innerHTML
            } else {
                other = Self.mutate(parsed.innerHTML, &random)
            }
            if HTML5Parser.parsesBack(other, to: parsed, context: Self.div()) {
                yes += 1
                #expect(Self.reparsesAs(other, parsed), "\(other.debugDescription) against \(parsed.innerHTML.debugDescription)")
                if Array(other.utf8) != Array(parsed.innerHTML.utf8) { differentYes += 1 }
            }
            #expect(Self.bookkeepingIsClear(parsed))
        }
        #expect(yes > 500)
        // Different markup for the same tree (an entity for a character, a quote changed) does
        // get a yes: it compares trees, not text.
        #expect(differentYes > 20)
    }

    /// A small random edit of markup: a byte dropped, doubled or replaced, a tag closed early, an
    /// entity written for a character, a quote style changed.
    private static func mutate(_ html: String, _ random: inout LinearCongruential64) -> String {
        var bytes = Array(html.utf8)
        guard !bytes.isEmpty else { return "x" }
        let at = random.next(bytes.count)
        switch random.next(10) {
        case 0: bytes.remove(at: at)
        case 1: bytes.insert(bytes[at], at: at)
        case 2: bytes[at] = Array("<>/&\"'= ax\n".utf8)[random.next(11)]
        case 3: bytes.insert(contentsOf: Array("</p>".utf8), at: at)
        case 4: if let i = bytes.firstIndex(of: 0x61) { bytes.replaceSubrange(i...i, with: Array("&#97;".utf8)) }
        case 5: if let i = bytes.firstIndex(of: 0x22) { bytes[i] = 0x27; if let j = bytes[(i + 1)...].firstIndex(of: 0x22) { bytes[j] = 0x27 } }
        case 6: bytes.append(contentsOf: Array(" ".utf8))
        case 7, 8:
            // An end tag moved past the text that follows it: `<table></table>x` becomes
            // `<table>x</table>`, where the text is foster-parented before the table.
            let ends = bytes.indices.filter { bytes[$0] == 0x3C && $0 + 1 < bytes.count && bytes[$0 + 1] == 0x2F }
            guard !ends.isEmpty else { break }
            let start = ends[random.next(ends.count)]
            guard let close = bytes[start...].firstIndex(of: 0x3E) else { break }
            let tag = Array(bytes[start...close])
            let textEnd = bytes[(close + 1)...].firstIndex(of: 0x3C) ?? bytes.count
            guard textEnd > close + 1 else { break }
            let text = Array(bytes[(close + 1)..<textEnd])
            bytes.replaceSubrange(start..<textEnd, with: text + tag)
        default: break  // unchanged: must be a yes when the tree is stable
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Parsed markup (shapes from the parser, hostile ones included) against the re-parse of its
    /// output: a yes is backed by the string check, and it agrees with the tree comparison of a
    /// real re-parse wherever no template is involved.
    @Test func parsedMarkupAgainstItsOutput() {
        let pieces = [
            "<p>", "</p>", "<div class=a>", "</div>", "<b>", "</b>", "<table>", "<tr>", "<td>", "</table>", "text", " ", "&amp;", "&lt;",
            "&nbsp;", "é", "<", ">", "<!-- c -->", "<style>p{}</style>", "<template><p>t</template>", "<svg><circle r=1>", "</svg>",
            "<math><mi>x</mi></math>", "<textarea>\nx</textarea>", "<pre>\n\nx</pre>", "<xmp><b></xmp>", "<a><a>", "<p><div></p>",
            "<select><option>o", "<br>", "<form><form>", "<noscript><p>n</noscript>", "<font color=red>", "</font>", "<li>", "<dd>",
            "<svg><foreignObject><p>f</svg>", "<math><annotation-xml encoding=text/html><div>d</math>", "<nobr>", "<i>", "</b></i>",
            "<select><button><selectedcontent></selectedcontent></button><option selected>s</option></select>", "<h1><h2>",
        ]
        var random = LinearCongruential64(seed: 0x13198A2E03707344)
        var yes = 0, agree = 0, sameTreeYes = 0
        for _ in 0..<4_000 {
            var html = ""
            for _ in 0..<(1 + random.next(12)) { html += pieces[random.next(pieces.count)] }
            let tree = Self.parse(html)
            let output = tree.innerHTML
            let answer = HTML5Parser.parsesBack(output, to: tree, context: Self.div())
            let reparsed = Self.parse(output)
            let sameTree = tree.hasSameChildren(as: reparsed)
            if sameTree { sameTreeYes += 1 }
            if answer {
                yes += 1
                #expect(reparsed.innerHTMLEquals(output), "\(html.debugDescription)")
            }
            if answer == sameTree || output.contains("<template") || output.contains("selectedcontent") { agree += 1 }
            #expect(Self.bookkeepingIsClear(tree))
        }
        #expect(yes > 2_000)
        #expect(sameTreeYes >= yes)
        // Outside templates and `<selectedcontent>` (which it leaves to the full check) it says
        // yes wherever the trees are the same (0 exceptions in these 4 000 when written).
        #expect(agree > 3_960)
    }

    /// Every input of the html5lib tree-construction suite, parsed as a `<div>` fragment: its
    /// output against the tree (a yes is backed by the string check), and the raw input against
    /// the tree too (a yes only when the input parses to that tree, which it does).
    @Test func html5libInputs() throws {
        guard let files = Html5libSuite.filesOrSkip("tree-construction", ext: "dat") else { return }
        var total = 0, yes = 0, inputYes = 0
        for file in files {
            for test in DatParser.parse(try String(contentsOf: file, encoding: .utf8)) {
                total += 1
                let tree = Self.parse(test.data)
                let output = tree.innerHTML
                if HTML5Parser.parsesBack(output, to: tree, context: Self.div()) {
                    yes += 1
                    #expect(Self.reparsesAs(output, tree), "\(file.lastPathComponent) #\(test.index)")
                }
                // The input itself: templates, foster parenting and adoption make many a no.
                if HTML5Parser.parsesBack(test.data, to: tree, context: Self.div()) {
                    inputYes += 1
                    #expect(Self.reparsesAs(test.data, tree), "\(file.lastPathComponent) #\(test.index) (input)")
                }
                #expect(Self.bookkeepingIsClear(tree))
            }
        }
        #expect(total > 1_000)
        #expect(yes * 2 > total)
        #expect(inputYes > 100)
    }

    @Test func simpleCases() throws {
        func check(_ html: String, _ expected: Bool, against markup: String? = nil) {
            let tree = Self.parse(markup ?? html)
            #expect(HTML5Parser.parsesBack(html, to: tree, context: Self.div()) == expected, "\(html.debugDescription)")
        }
        check("", true)
        check("<p>Hi <b class=\"x\">there</b></p>", true)
        check("a &amp; b<br><!--c-->", true)
        check("<svg viewBox=\"0 0 1 1\"><circle r=\"1\"></circle></svg><math><mi>x</mi></math>", true)
        check("<table><tbody><tr><td>1</td></tr></tbody></table>", true)
        check("<style>p>b{}</style><textarea>&lt;b&gt;</textarea>", true)
        // Options are copied into a <selectedcontent> only once one exists.
        check("<select><option>a</option><option selected=\"\">b</option></select>", true)
        check("<select><option>a</option></select><div><selectedcontent></selectedcontent></div>", true)
        // Markup that differs from the tree's output but parses to the same tree.
        check("<p>a&#98;c</p>", true, against: "<p>abc</p>")
        check("<P CLASS='x'>a", true, against: "<p class=x>a</p>")
        check("<b>a</b>", true, against: "<b>a</B>")
        // A different tree.
        check("<p>ab</p>", false, against: "<p>abc</p>")
        check("<p>abc</p>x", false, against: "<p>abc</p>")
        check("<p>abc</p>", false, against: "<p>abc</p>x")
        check("<p class=\"x\">a</p>", false, against: "<p class=\"y\">a</p>")
        check("<p a=\"1\" b=\"2\"></p>", false, against: "<p b=2 a=1></p>")
        check("<p>é</p>", false, against: "<p>e\u{301}</p>")
        check("<i>a</i>", false, against: "<b>a</b>")
        check("<x-a></x-a>", false, against: "<x-b></x-b>")
        check("<!--a-->", false, against: "<!--b-->")
        check("<svg><circle></circle></svg>", false, against: "<circle></circle>")
        // Steps other than appending: no, even where the tree would come out the same.
        check("<template>a</template>", false)
        check("<table>x<tr><td>1</td></tr></table>", false)
        check("<b><p>x</b>y</p>", false)
        // Text the parser foster-parents (before the table) against a tree with it after.
        check("<table>x</table>", false, against: "<table></table>x")
        check("<table><tbody><tr>x</tr></tbody></table>", false, against: "<table><tbody><tr></tr></tbody></table>x")
        check("<table><tbody><tr><td>a</td></tr></tbody>x</table>", false, against: "<table><tbody><tr><td>a</td></tr></tbody></table>x")
        check("<div><table>x</table></div>", false, against: "<div><table></table>x</div>")
        check("<div><table><b>y</b></table></div>", false, against: "<div><table></table><b>y</b></div>")
    }

    /// Trees with adjacent and empty text nodes: written as one text, and the check takes them so.
    @Test func textRunsAndEmptyTexts() {
        let tree = DocumentFragment()
        let p = Element(localName: "p")
        p.appendChild(Text(""))
        p.appendChild(Text("ab"))
        p.appendChild(Text(""))
        p.appendChild(Text("c"))
        tree.appendChild(p)
        tree.appendChild(Text(""))
        #expect(HTML5Parser.parsesBack("<p>abc</p>", to: tree, context: Self.div()))
        #expect(HTML5Parser.parsesBack("<p>a&#98;c</p>", to: tree, context: Self.div()))
        #expect(!HTML5Parser.parsesBack("<p>ab</p>", to: tree, context: Self.div()))
        #expect(!HTML5Parser.parsesBack("<p>abcd</p>", to: tree, context: Self.div()))
        #expect(!HTML5Parser.parsesBack("<p>ab</p>c", to: tree, context: Self.div()))
        // A text the parser splits differently from the tree (a character reference) is one text.
        let split = DocumentFragment()
        split.appendChild(Text("a<"))
        split.appendChild(Text("b"))
        #expect(HTML5Parser.parsesBack("a&lt;b", to: split, context: Self.div()))
    }

    /// A check that fails half-way leaves the tree and its bookkeeping as they were.
    @Test func failingHalfWayLeavesTheTree() {
        let select = "<select><button><selectedcontent></selectedcontent></button><option>a</option></select>"
        for (markup, other) in [
            ("<b>x<p>y</p></b><i>z</i>", "<b>x<p>y</b>z</p>"),  // the adoption agency would move nodes
            ("<table><tbody><tr><td>a</td></tr></tbody></table>", "<table>a<tr><td>a</td></tr></table>"),  // foster parenting
            (select, select),  // the option's clone into <selectedcontent> changes a node in the tree
            ("<p>a</p>", "<p>a</p><html class=x>"),  // attributes merged into an element in the tree
            ("<template><p>a</p></template>", "<template><p>a</p></template>"),
        ] {
            let tree = Self.parse(markup)
            let before = tree.innerHTML
            #expect(!HTML5Parser.parsesBack(other, to: tree, context: Self.div()), "\(other)")
            #expect(Array(tree.innerHTML.utf8) == Array(before.utf8))
            #expect(Self.bookkeepingIsClear(tree))
        }
    }
}
