import Testing
@testable import HTML5
import RampartTestSupport

/// `Node.hasSameChildren(as:)` against the serialization it stands for: whenever it says yes,
/// the two `innerHTML`s are byte for byte the same — on random trees built through the DOM API
/// (adjacent and empty text nodes, raw-text parents, void elements with children, templates,
/// foreign and unknown elements, namespaced attributes, canonically equivalent texts) and on
/// parsed markup. It must also say yes where it should (split text runs, re-parsed output).
@Suite struct TreeComparisonTests {
    private static let texts = [
        "", "a", "text", " ", "\n", "&", "<", ">", "\"", "\u{A0}", "a\u{A0}b", "é", "e\u{301}", "日本", "&amp;", "x<y", "\u{1}",
    ]
    private static let elements: [(String, Namespace)] = [
        ("div", .html), ("p", .html), ("b", .html), ("style", .html), ("script", .html), ("xmp", .html),
        ("noscript", .html), ("br", .html), ("img", .html), ("template", .html), ("x-foo", .html), ("x-bar", .html),
        ("circle", .svg), ("foreignObject", .svg), ("style", .svg), ("mi", .mathml), ("template", .svg),
    ]
    private static let attributes: [Attribute] = [
        Attribute(name: "class", value: "a"), Attribute(name: "class", value: "b"), Attribute(name: "id", value: "a&b"),
        Attribute(name: "title", value: "\u{A0}\""), Attribute(name: "title", value: "é"), Attribute(name: "title", value: "e\u{301}"),
        Attribute(name: "href", value: "x", namespace: .xlink), Attribute(name: "href", value: "x"),
        Attribute(name: "lang", value: "en", namespace: .xml),
    ]

    /// A random tree under `root`, `depth` levels at most.
    private static func fill(_ root: Node, depth: Int, _ random: inout LinearCongruential64) {
        for _ in 0..<random.next(5) {
            switch random.next(10) {
            case 0...3:
                root.appendChild(Text(texts[random.next(texts.count)]))
            case 4:
                root.appendChild(HTML5.Comment(texts[random.next(texts.count)]))
            default:
                let (name, namespace) = elements[random.next(elements.count)]
                var list: [Attribute] = []
                for _ in 0..<random.next(3) { list.append(attributes[random.next(attributes.count)]) }
                let element = Element(localName: name, namespace: namespace, attributes: list)
                if depth > 0 { fill(element, depth: depth - 1, &random) }
                if let content = element.templateContent, random.next(2) == 0 { fill(content, depth: 0, &random) }
                root.appendChild(element)
            }
        }
    }

    /// A copy of `tree` with random changes: text nodes split or merged, a text changed, a node
    /// added or removed, an attribute changed.
    private static func variant(of tree: DocumentFragment, _ random: inout LinearCongruential64) -> DocumentFragment {
        let copy = tree.clone(deep: true) as! DocumentFragment
        let nodes = Array(copy.descendants)
        guard !nodes.isEmpty else { return copy }
        for _ in 0..<(1 + random.next(2)) {
            let node = nodes[random.next(nodes.count)]
            guard node.parent != nil else { continue }
            switch random.next(7) {
            case 0, 1:
                // Split a text into two adjacent nodes (the same serialization).
                if let text = node as? Text, !text.data.isEmpty {
                    let cut = text.data.index(text.data.startIndex, offsetBy: random.next(text.data.count + 1))
                    let rest = Text(String(text.data[cut...]))
                    text.data = String(text.data[..<cut])
                    text.parent?.insertBefore(rest, text.nextSibling)
                }
            case 2:
                // An empty text node beside it (nothing is written for it).
                node.parent?.insertBefore(Text(""), random.next(2) == 0 ? node : node.nextSibling)
            case 3:
                if let text = node as? Text { text.data = texts[random.next(texts.count)] }
                else if let comment = node as? HTML5.Comment { comment.data = texts[random.next(texts.count)] }
            case 4:
                node.remove()
            case 5:
                node.parent?.insertBefore(Text(texts[random.next(texts.count)]), node)
            default:
                if let element = node as? Element { element.attributes = Array(element.attributes.reversed().dropLast(random.next(2))) }
            }
        }
        return copy
    }

    @Test func yesOnlyWhenTheSerializationsAgree() {
        var random = LinearCongruential64(seed: 0x9E3779B97F4A7C15)
        var yes = 0
        var yesWithRuns = 0
        var differentSerializations = 0
        for round in 0..<6_000 {
            let a = DocumentFragment()
            Self.fill(a, depth: 3, &random)
            let b = round % 5 == 0 ? {
                let other = DocumentFragment()
                Self.fill(other, depth: 3, &random)
                return other
            }() : Self.variant(of: a, &random)
            let same = Array(a.innerHTML.utf8) == Array(b.innerHTML.utf8)
            if !same { differentSerializations += 1 }
            let answer = a.hasSameChildren(as: b)
            #expect(answer == b.hasSameChildren(as: a))
            if answer {
                yes += 1
                #expect(same, "\(a.innerHTML.debugDescription) / \(b.innerHTML.debugDescription)")
                if b.descendants.contains(where: { $0 is Text && $0.nextSibling is Text }) { yesWithRuns += 1 }
            }
            // As children of elements: the same answer when the two parents are alike, and only
            // a yes that the serializations back when they are not.
            let (name, namespace) = Self.elements[random.next(Self.elements.count)]
            let (otherName, otherNamespace) = random.next(3) == 0 ? Self.elements[random.next(Self.elements.count)] : (name, namespace)
            let pa = Element(localName: name, namespace: namespace)
            let pb = Element(localName: otherName, namespace: otherNamespace)
            a.moveChildren(to: pa)
            b.moveChildren(to: pb)
            if pa.hasSameChildren(as: pb) {
                #expect(Array(pa.innerHTML.utf8) == Array(pb.innerHTML.utf8))
            }
        }
        #expect(yes > 1_500)
        #expect(yesWithRuns > 300)
        #expect(differentSerializations > 1_000)
    }

    @Test func parsedMarkupAgainstItsReparse() throws {
        let pieces = [
            "<p>", "</p>", "<div class=a>", "</div>", "<b>", "</b>", "<table>", "<tr>", "<td>", "</table>", "text", " ", "&amp;", "&lt;",
            "&nbsp;", "é", "<", ">", "<!-- c -->", "<style>p{}</style>", "<template><p>t</template>", "<svg><circle r=1>", "</svg>",
            "<math><mi>x</mi></math>", "<textarea>\nx</textarea>", "<pre>\n\nx</pre>", "<xmp><b></xmp>", "<a><a>", "<p><div></p>",
            "<select><option>o", "<br>", "<form><form>", "<noscript><p>n</noscript>",
        ]
        var random = LinearCongruential64(seed: 0x243F6A8885A308D3)
        var yes = 0
        for _ in 0..<3_000 {
            var html = ""
            for _ in 0..<(1 + random.next(12)) { html += pieces[random.next(pieces.count)] }
            let context = Element(localName: "div")
            let tree = try HTML5Parser.parseFragment(html, context: context).root
            let output = tree.innerHTML
            let reparsed = try HTML5Parser.parseFragment(output, context: Element(localName: "div")).root
            if tree.hasSameChildren(as: reparsed) {
                yes += 1
                #expect(reparsed.innerHTMLEquals(output), "\(html.debugDescription)")
            }
        }
        #expect(yes > 1_500)
    }

    @Test func edgeCases() {
        let a = DocumentFragment(), b = DocumentFragment()
        #expect(a.hasSameChildren(as: b))
        a.appendChild(Text("ab")); b.appendChild(Text("a")); b.appendChild(Text("b"))
        #expect(a.hasSameChildren(as: b) && b.hasSameChildren(as: a))
        b.appendChild(Text(""))
        #expect(a.hasSameChildren(as: b))
        // Canonically equivalent but different bytes: not the same.
        let c = DocumentFragment(), d = DocumentFragment()
        c.appendChild(Text("é")); d.appendChild(Text("e\u{301}"))
        #expect(!c.hasSameChildren(as: d))
        // Template contents are not compared: no.
        let t1 = DocumentFragment(), t2 = DocumentFragment()
        t1.appendChild(Element(localName: "template")); t2.appendChild(Element(localName: "template"))
        #expect(!t1.hasSameChildren(as: t2))
        // Raw-text and ordinary parents write "<" differently: no.
        let style = Element(localName: "style"), div = Element(localName: "div")
        style.appendChild(Text("<")); div.appendChild(Text("<"))
        #expect(!style.hasSameChildren(as: div))
        #expect(style.hasSameChildren(as: style))
        // An element root against a fragment root: no.
        let fragment = DocumentFragment()
        fragment.appendChild(Text("<"))
        #expect(!div.hasSameChildren(as: fragment))
    }

    /// `UTF8Bytes.equal` is byte equality, not `String ==`: canonically equivalent texts differ,
    /// and every pair of the sample texts (small and large, ASCII and not, a substring and a
    /// bridged-free native copy) answers as comparing their `[UInt8]` would.
    @Test func utf8BytesEqualIsByteEquality() {
        #expect("é" == "e\u{301}")
        #expect(!UTF8Bytes.equal("é", "e\u{301}"))
        #expect(!UTF8Bytes.equal("\u{212B}", "\u{C5}"))  // Angstrom sign and Å: equal as String
        let long = String(repeating: "Grüße, 日本 ", count: 40)
        var samples = Self.texts + [long, long + "x", String(long.dropLast()) + "y", String(long.prefix(15)), String(long.prefix(16))]
        samples.append(String(Substring(long)))  // another storage with the same bytes
        for a in samples {
            for b in samples {
                #expect(UTF8Bytes.equal(a, b) == (Array(a.utf8) == Array(b.utf8)), "\(a.debugDescription) vs \(b.debugDescription)")
            }
        }
    }
}
