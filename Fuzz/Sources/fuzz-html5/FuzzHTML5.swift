// Fuzz target: the HTML5 tokenizer and tree builder (document and fragment parsing, encoding
// sniffing from bytes), and the serializer.
//
// Oracles:
// - no crash, no hang, no unbounded memory (libFuzzer's -timeout / -rss_limit_mb);
// - every string of the tree parsed from the bytes, and every serialization this target makes,
//   is well-formed UTF-8 with the right ASCII flag (token strings and the serializer's output are
//   made without a second validation);
// - idempotence: serialize(parse(x)) parses to the same tree, i.e. serialize(parse(s)) == s for
//   s = serialize(parse(x)), in the sanitizer's context (the innerHTML of a <div>) and, for whole
//   documents, once the doctype has been normalized by one round (the serializer writes only
//   `<!DOCTYPE name>`, by the spec, which may change the quirks mode of the first parse).
//   Trees the spec itself cannot serialize faithfully are skipped (see `isSpecNonRoundTrip`).
// - the re-parse check without a second tree (`HTML5Parser.parsesBack`, which the sanitizer
//   decides with) says yes only when the real parse of the markup serializes as the tree does
//   (the output against the first tree, the input against the re-parsed tree, ...), and it
//   leaves the tree it checks against as it was.
// - the arena tree (`HTML5Parser.parseTree`, the tree builder's second sink; docs/arena-tree.md)
//   is the class DOM's tree node for node: same html5lib dump, for the bytes and for the fragment,
//   and the same serialization byte for byte (the fragment).
import FuzzSupport
import HTML5

let target = "html5"

func parseFragment(_ html: String) -> DocumentFragment? {
    var options = HTML5ParserOptions(scripting: false)
    options.recordParseErrors = false
    return try? HTML5Parser.parseFragment(html, context: Element(localName: "div"), options: options).root
}

func parseDocument(_ html: String) -> Document? {
    var options = HTML5ParserOptions(scripting: false)
    options.recordParseErrors = false
    return try? HTML5Parser.parseDocument(html, options: options).root
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTML5(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Fuzz.bytes(data, size)

    // 1. Bytes: encoding sniffing, parse errors recorded, scripting flag from the input's length.
    var options = HTML5ParserOptions(scripting: bytes.count % 2 == 1)
    options.maxNestingDepth = 128
    guard let result = try? HTML5Parser.parseDocument(bytes, options: options) else { return 0 }
    let truncated = result.depthTruncated || result.attributesTruncated
    let dump = result.root.html5libTreeDump
    // 1a. The arena tree: the same bytes and options, the same tree.
    if let arena = try? HTML5Parser.parseTree(bytes, options: options), arena.html5libTreeDump != dump {
        Fuzz.violation(target, "the arena tree differs from the class DOM (document)\n class=\(dump.debugDescription)\n arena=\(arena.html5libTreeDump.debugDescription)")
    }
    // 1b. Every string of the tree is well-formed UTF-8 and flagged ASCII exactly when it is: the
    // tokenizer makes strings of its (decoded, well-formed) input without validating them again.
    for node in result.root.descendants {
        if let text = node as? Text { checkWellFormed(text.data) }
        if let comment = node as? Comment { checkWellFormed(comment.data) }
        if let element = node as? Element {
            checkWellFormed(element.localName)
            for attribute in element.attributes { checkWellFormed(attribute.name); checkWellFormed(attribute.value) }
        }
    }

    // 2. Fragment idempotence (what the sanitizer relies on).
    let text = fuzzText(bytes)
    if let first = parseFragment(text) {
        var fragmentOptions = HTML5ParserOptions(scripting: false)
        fragmentOptions.recordParseErrors = false
        let arena = try? HTML5Parser.parseTreeFragment(text, context: Element(localName: "div"), options: fragmentOptions)
        if let arena, arena.html5libTreeDump != first.html5libTreeDump {
            Fuzz.violation(target, "the arena tree differs from the class DOM (fragment)\n class=\(first.html5libTreeDump.debugDescription)\n arena=\(arena.html5libTreeDump.debugDescription)")
        }
        let s1 = first.innerHTML
        checkWellFormed(s1, "a serialization")
        if let arena {
            let arenaHTML = arena.innerHTML
            checkWellFormed(arenaHTML, "the arena tree's serialization")
            if Array(arenaHTML.utf8) != Array(s1.utf8) {
                Fuzz.violation(target, "the arena tree serializes otherwise than the class DOM\n class=\(s1.debugDescription)\n arena=\(arenaHTML.debugDescription)")
            }
        }
        if let second = parseFragment(s1) {
            let s2 = second.innerHTML
            if s2 != s1 && !truncated && !SpecRoundTrip.isSpecNonRoundTrip(first) {
                Fuzz.violation(target, "fragment: serialize(parse(x)) does not reparse to the same tree\n s1=\(s1.debugDescription)\n s2=\(s2.debugDescription)")
            }
            // 2b. The verifying re-parse: a yes must be backed by the real re-parse. The output
            // against the first tree, the input against the second tree, the second output
            // against the first tree (each a yes exactly when the round trip is stable).
            for (markup, tree) in [(s1, first), (text, second), (s2, first)] {
                guard HTML5Parser.parsesBack(markup, to: tree, context: Element(localName: "div")) else { continue }
                let expected = tree.innerHTML
                let actual = markup == s1 ? s2 : (parseFragment(markup)?.innerHTML ?? "")
                if Array(actual.utf8) != Array(expected.utf8) {
                    Fuzz.violation(target, "parsesBack said yes but the markup parses to another serialization\n markup=\(markup.debugDescription)\n tree=\(expected.debugDescription)\n parse=\(actual.debugDescription)")
                }
            }
            if first.innerHTML != s1 {
                Fuzz.violation(target, "parsesBack changed the tree it checked against")
            }
        }
    }

    // 3. Document idempotence after one normalizing round.
    if let d1 = parseDocument(text), let d2 = parseDocument(d1.outerHTML) {
        let s2 = d2.outerHTML
        checkWellFormed(s2, "a serialization")
        checkWellFormed(result.root.serialized(scripting: options.scripting), "a serialization")
        if let d3 = parseDocument(s2) {
            let s3 = d3.outerHTML
            if s3 != s2 && !truncated && !SpecRoundTrip.isSpecNonRoundTrip(d2) {
                Fuzz.violation(target, "document: serialization is not stable\n s2=\(s2.debugDescription)\n s3=\(s3.debugDescription)")
            }
        }
    }
    return 0
}

func checkWellFormed(_ string: String, _ what: String = "a string of the tree") {
    Fuzz.checkWellFormed(string, target, what)
}

/// The process entry point (see `Fuzz.main`).
@_cdecl("fuzz_html5_main")
public func fuzzHTML5Main(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Fuzz.main(argc, argv, fuzzHTML5)
}
