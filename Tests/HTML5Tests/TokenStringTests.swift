import Testing
@testable import HTML5
import RampartTestSupport

/// The tokenizer makes the strings of a well-formed input without validating them again when it
/// can prove them well-formed (a run cut on scalar boundaries, or ASCII bytes and whole encoded
/// scalars: `ByteAccumulator.stringFromValidUTF8`). A wrong proof would put ill-formed UTF-8, or
/// a wrong ASCII flag, in a `String` — so these tests tokenize the same inputs both ways
/// (`inputIsValidUTF8` true and false) and require the same tokens, every string well-formed
/// and flagged ASCII exactly when it is.
@Suite struct TokenStringTests {
    /// Every string a token carries, in order (tag names, attribute names and values, text,
    /// comments, doctype fields), tokenized from `state`.
    static func strings(_ input: [UInt8], state: Tokenizer.State, validInput: Bool, textAsBytes: Bool = false) -> [String] {
        var tokenizer = Tokenizer(input: input, inputIsValidUTF8: validInput)
        tokenizer.textAsBytes = textAsBytes
        tokenizer.state = state
        tokenizer.lastStartTagName = "script"
        tokenizer.allowCDATA = true
        var out: [String] = []
        while true {
            switch tokenizer.nextToken() {
            case .doctype(let d): out += [d.name, d.publicId, d.systemId].compactMap { $0 }
            case .startTag(let t), .endTag(let t):
                out.append(t.name)
                for a in t.attributes { out += [a.name, a.value] }
            case .comment(let c): out.append(c)
            case .characters(let s): out.append(s)
            case .characterBytes(let range, let inInput): out.append(tokenizer.string(ofTextBytes: range, inInput: inInput))
            case .eof: return out
            }
        }
    }

    /// Pieces that make the tokenizer cut, buffer and rebuild strings in every way it can:
    /// non-ASCII text (2-, 3- and 4-byte scalars), character references whose values are not
    /// ASCII (named, numeric, replaced: `&#0;`, surrogates, C1 controls, out of range), NUL
    /// (U+FFFD), upper-case names, unquoted and quoted values, comments, CDATA, script data.
    static let pieces = [
        "café ", "größe", "日本語", "😀", "naïve", "&nbsp;", "&eacute;", "&eacute", "&notin;", "&not", "&#x1F600;",
        "&#233;", "&#0;", "&#xD800;", "&#x80;", "&#x110000;", "&#", "&amp", "&", "\u{0}", "<", "</", ">", "\"", "'", "=",
        "<p title=", "<A HREF=", "<img alt='", "<td style=\"", " class=", "x=é&eacute;y ", "</p>", "<!--", "-->",
        "<!DOCTYPE html PUBLIC \"é\" 'ü'>", "<![CDATA[", "]]>", "<script>", "</script>", "<!--<script>", " ", "\n",
        "\r\n", "<svg><![CDATA[é]]></svg>", "-", "--", "ü", "<Ünknown attr=ü>", "<b é=1 Ü='2'>",
    ]

    static func sample(_ g: inout SplitMix64) -> [UInt8] {
        var html = ""
        for _ in 0..<(1 + g.next(24)) { html += pieces[g.next(pieces.count)] }
        return InputStream.preprocess(Array(html.utf8))
    }

    static func isWellFormedAndRightlyFlagged(_ string: String) -> Bool {
        let bytes = Array(string.utf8)
        guard String(validating: bytes, as: UTF8.self) == string else { return false }
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            return string.utf8Span.isKnownASCII == bytes.allSatisfy { $0 < 0x80 }
        }
        return true
    }

    @Test func stringsOfAWellFormedInputMatchTheValidatingPathInEveryState() {
        var g = SplitMix64(seed: 24)
        let states: [Tokenizer.State] = [.data, .rcdata, .rawtext, .scriptData, .plaintext, .cdataSection]
        var checked = 0, nonASCII = 0
        for _ in 0..<4000 {
            let input = Self.sample(&g)
            for state in states {
                let fast = Self.strings(input, state: state, validInput: true)
                let checkedPath = Self.strings(input, state: state, validInput: false)
                #expect(fast == checkedPath, "\(String(decoding: input, as: UTF8.self).debugDescription) in \(state)")
                for string in fast {
                    #expect(Self.isWellFormedAndRightlyFlagged(string), "\(string.debugDescription)")
                    checked += 1
                    if string.utf8.contains(where: { $0 >= 0x80 }) { nonASCII += 1 }
                }
            }
        }
        // The inputs reach both kinds of string often.
        #expect(checked > 50_000 && nonASCII > 10_000)
    }

    /// Character runs handed over as bytes (`textAsBytes`, the arena tree's path: a range of the
    /// input, or bytes copied aside) are the same text as the strings, in every state, whether
    /// the input is known to be well-formed or not (then only runs proven well-formed come as
    /// bytes, and the others as repaired strings).
    @Test func textAsBytesGivesTheSameTextInEveryState() {
        var g = SplitMix64(seed: 25)
        let states: [Tokenizer.State] = [.data, .rcdata, .rawtext, .scriptData, .plaintext, .cdataSection]
        var compared = 0
        for _ in 0..<3000 {
            let input = Self.sample(&g)
            for state in states {
                for valid in [true, false] {
                    let strings = Self.strings(input, state: state, validInput: valid)
                    let viaBytes = Self.strings(input, state: state, validInput: valid, textAsBytes: true)
                    #expect(strings == viaBytes, "\(String(decoding: input, as: UTF8.self).debugDescription) in \(state), valid \(valid)")
                    for string in viaBytes { #expect(Self.isWellFormedAndRightlyFlagged(string)) }
                    compared += strings.count
                }
            }
        }
        #expect(compared > 50_000)
    }

    /// A run as bytes stays readable while later tokens are queued behind it (the character run
    /// before an end of file, a run split by a character reference), and the tokenizer's own
    /// buffer is emptied only once nothing is queued.
    @Test func queuedByteRunsStayValid() {
        var tokenizer = Tokenizer(input: Array("a&amp;b<p>c&lt;".utf8), inputIsValidUTF8: true)
        tokenizer.textAsBytes = true
        var texts: [String] = []
        var tags: [String] = []
        while true {
            let token = tokenizer.nextToken()
            if case .characterBytes(let range, let inInput) = token { texts.append(tokenizer.string(ofTextBytes: range, inInput: inInput)) }
            if case .characters(let s) = token { texts.append(s) }
            if case .startTag(let t) = token { tags.append(t.name) }
            if case .eof = token { break }
        }
        #expect(texts.joined() == "a&b" + "c<")
        #expect(tags == ["p"])
    }

    /// The five references recognized from one word of input (`&nbsp;`, `&quot;`, `&amp;`,
    /// `&lt;`, `&gt;`) decode as the table does, in text and in attribute values, with eight
    /// bytes or more after the `&` (the word) and fewer (the general path); and near misses
    /// (no semicolon, another name sharing the start) go through the general path unchanged.
    @Test func commonReferencesReadFromOneWordMatchTheTable() {
        // (name, in an attribute value, in text): a legacy name without its semicolon followed by
        // an alphanumeric is not a reference in an attribute value, and is one in text.
        let cases: [(String, String, String)] = [
            ("nbsp;", "\u{A0}", "\u{A0}"), ("quot;", "\"", "\""), ("amp;", "&", "&"), ("lt;", "<", "<"), ("gt;", ">", ">"),
            ("nbsp", "\u{A0}", "\u{A0}"), ("amp", "&", "&"), ("lt", "<", "<"), ("gtx;", "&gtx;", ">x;"), ("ampx", "&ampx", "&x"),
            ("nbs;", "&nbs;", "&nbs;"), ("quo;", "&quo;", "&quo;"), ("quota;", "&quota;", "\"a;"), ("ltimes;", "\u{22C9}", "\u{22C9}"),
        ]
        for (name, inAttribute, inText) in cases {
            for tail in ["", "........"] {
                let strings = Self.strings(Array("<p title=\"&\(name)\">&\(name)\(tail)".utf8), state: .data, validInput: true)
                #expect(strings == ["p", "title", inAttribute, inText + tail], "&\(name) with \(tail.count) bytes after")
            }
        }
    }

    @Test func runsCutInsideAScalarAreNotTrusted() {
        // A run that ends in the middle of a scalar cannot come from the tokenizer's cuts, which
        // are at ASCII bytes; the accumulator still checks both ends, and falls back to
        // validating (U+FFFD for the cut scalar) rather than trusting such a run.
        let input = Array("aé".utf8)  // 61 C3 A9
        input.withUnsafeBufferPointer { all in
            #expect(ByteAccumulator.isScalarBoundary(0, in: all))
            #expect(ByteAccumulator.isScalarBoundary(1, in: all))
            #expect(!ByteAccumulator.isScalarBoundary(2, in: all))
            #expect(ByteAccumulator.isScalarBoundary(3, in: all))
        }
        var accumulator = ByteAccumulator()
        accumulator.inputIsValidUTF8 = true
        accumulator.appendRun(0, 2, from: input)
        #expect(accumulator.makeString(from: input) == "a\u{FFFD}")
        accumulator.reset()
        accumulator.appendRun(2, 3, from: input)
        #expect(accumulator.makeString(from: input) == "\u{FFFD}")
        accumulator.reset()
        // Buffered: a run cut inside a scalar, then an ASCII byte.
        accumulator.appendRun(0, 2, from: input)
        accumulator.append(0x62, from: input)
        #expect(accumulator.makeString(from: input) == "a\u{FFFD}b")
        accumulator.reset()
        // A lone non-ASCII byte appended on its own is not trusted either.
        accumulator.append(0xC3, from: input)
        #expect(accumulator.makeString(from: input) == "\u{FFFD}")
        accumulator.reset()
        // Whole runs and whole scalars are.
        accumulator.appendRun(0, 3, from: input)
        for byte in "€".utf8 { accumulator.appendEncodedScalarByte(byte, from: input) }
        let string = accumulator.makeString(from: input)
        #expect(string == "aé€" && Self.isWellFormedAndRightlyFlagged(string))
    }

    @Test func documentsFromIllFormedBytesGiveWellFormedStrings() throws {
        // The parser's byte entry point repairs (or transcodes) before tokenizing, so the
        // tokenizer's well-formed-input promise holds for any bytes.
        var g = SplitMix64(seed: 77)
        for _ in 0..<500 {
            var bytes = Self.sample(&g)
            for _ in 0..<(1 + g.next(4)) where !bytes.isEmpty {
                bytes[g.next(bytes.count)] = UInt8(truncatingIfNeeded: g.next()) | 0x80
            }
            let result = try HTML5Parser.parseDocument(bytes)
            for node in result.root.descendants {
                if let text = node as? Text { #expect(Self.isWellFormedAndRightlyFlagged(text.data)) }
                if let element = node as? Element {
                    for a in element.attributes { #expect(Self.isWellFormedAndRightlyFlagged(a.value) && Self.isWellFormedAndRightlyFlagged(a.name)) }
                }
            }
        }
    }

    @Test func serializationsAreWellFormedAndRightlyFlagged() throws {
        // The serializer's output is made into a `String` without a second validation
        // (`UTF8Buffer.string()`): it must be well-formed with the right ASCII flag for every
        // entry point, around U+00A0 (escaped, cut around) and its look-alikes (C2 + another byte).
        var g = SplitMix64(seed: 91)
        let extra = ["\u{A0}", "a\u{A0}b", "\u{A9}", "\u{80}", "&#xA0;", "<p title=\"\u{A0}&\u{A9}\">", "\u{C2}"]
        var checked = 0, nonASCII = 0
        for _ in 0..<1500 {
            var html = String(decoding: Self.sample(&g), as: UTF8.self)
            for _ in 0..<g.next(3) { html += extra[g.next(extra.count)] }
            let document = try HTML5Parser.parseDocument(html).root
            let fragment = try HTML5Parser.parseFragment(html, contextName: "div").root
            var serialized = ""
            HTMLSerializer.serialize(document, into: &serialized)
            var escaped = ""
            HTMLSerializer.escape(html, attributeMode: g.next(2) == 0, into: &escaped)
            for output in [document.outerHTML, document.serialized(scripting: true), fragment.innerHTML, serialized, escaped] {
                #expect(Self.isWellFormedAndRightlyFlagged(output), "\(output.debugDescription)")
                checked += 1
                if output.utf8.contains(where: { $0 >= 0x80 }) { nonASCII += 1 }
            }
        }
        #expect(checked == 7500 && nonASCII > 2000)
    }
}
