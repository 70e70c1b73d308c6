// The WHATWG HTML tokenizer (§13.2.5), over preprocessed UTF-8 bytes. Every special character of
// the spec is ASCII, so non-ASCII bytes flow through runs untouched; character tokens are batched
// into one string per run.
//
// The type is split by concern: this file holds its state (stored properties are internal, not
// private, because the extensions in the other files read and write them), the initializer, error
// recording and the input reads; Tokenizer+Emitting.swift the token queue and `nextToken()`;
// Tokenizer+Tags.swift tags and attributes with their caches; Tokenizer+CharacterReferences.swift
// the character references; Tokenizer+StateMachine.swift the state loop and `runState()`. A
// release build optimizes the module as a whole, so the split changes no inlining.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

struct Tokenizer {
    enum State {
        case data, rcdata, rawtext, scriptData, plaintext, tagOpen, endTagOpen, tagName
        case rcdataLessThan, rcdataEndTagOpen, rcdataEndTagName
        case rawtextLessThan, rawtextEndTagOpen, rawtextEndTagName
        case scriptDataLessThan, scriptDataEndTagOpen, scriptDataEndTagName
        case scriptDataEscapeStart, scriptDataEscapeStartDash, scriptDataEscaped, scriptDataEscapedDash
        case scriptDataEscapedDashDash, scriptDataEscapedLessThan, scriptDataEscapedEndTagOpen
        case scriptDataEscapedEndTagName, scriptDataDoubleEscapeStart, scriptDataDoubleEscaped
        case scriptDataDoubleEscapedDash, scriptDataDoubleEscapedDashDash, scriptDataDoubleEscapedLessThan
        case scriptDataDoubleEscapeEnd
        case beforeAttributeName, attributeName, afterAttributeName, beforeAttributeValue
        case attributeValueDoubleQuoted, attributeValueSingleQuoted, attributeValueUnquoted
        case afterAttributeValueQuoted, selfClosingStartTag, bogusComment, markupDeclarationOpen
        case commentStart, commentStartDash, comment, commentLessThan, commentLessThanBang
        case commentLessThanBangDash, commentLessThanBangDashDash, commentEndDash, commentEnd, commentEndBang
        case doctype, beforeDoctypeName, doctypeName, afterDoctypeName, afterDoctypePublicKeyword
        case beforeDoctypePublicIdentifier, doctypePublicIdentifierDoubleQuoted, doctypePublicIdentifierSingleQuoted
        case afterDoctypePublicIdentifier, betweenDoctypePublicAndSystemIdentifiers, afterDoctypeSystemKeyword
        case beforeDoctypeSystemIdentifier, doctypeSystemIdentifierDoubleQuoted, doctypeSystemIdentifierSingleQuoted
        case afterDoctypeSystemIdentifier, bogusDoctype, cdataSection, cdataSectionBracket, cdataSectionEnd
    }

    let input: [UInt8]
    /// `input.count`, read at every byte (Array's `count` getter was not inlined into the state
    /// machine).
    let inputCount: Int
    /// `true` if the input holds a U+0000 byte. When it does not, no token string can hold one
    /// either (token strings are input bytes, U+FFFD, or character reference values, none of
    /// which is U+0000: `&#0;` becomes U+FFFD), so the tree builder skips its per-token search.
    let inputHasNUL: Bool
    var pos = 0
    var state: State = .data
    /// Set by the tree builder: the adjusted current node is not in the HTML namespace.
    var allowCDATA = false
    /// The name of the last start tag emitted (for "appropriate end tag" in RCDATA, RAWTEXT and
    /// script data): kept interned, with the string only for a name outside the table, so
    /// emitting a start tag stores one byte.
    var lastStartTagName: String? {
        get { lastStartTag != .unknown ? lastStartTag.name : lastStartTagOtherName }
        set {
            lastStartTag = newValue.map { HTMLTag(localName: $0) } ?? .unknown
            lastStartTagOtherName = lastStartTag == .unknown ? newValue : nil
        }
    }
    var lastStartTag: HTMLTag = .unknown
    /// Parse errors found so far, recorded or not (a tag whose attributes raised one is never
    /// replayed from the attribute cache, so replaying never hides an error).
    var errorTally = 0
    /// Start of the current start tag's attribute section (the whitespace after its name), or -1.
    var attributesStart = -1
    var attributesErrorMark = 0
    /// The end of the section ``replayAttributeSection()`` looked up for the current tag (from
    /// ``attributesStart`` to the first `>`), or -1, and its cache slot: when the tag ends at that
    /// `>`, ``cacheAttributeSection()`` stores it there without hashing the same bytes again.
    var lookedUpSectionEnd = -1
    var lookedUpSectionSlot = 0

    /// A start tag's attribute section seen earlier in this input: its bytes (from the
    /// whitespace after the tag name up to the closing `>`), the attributes it produced and
    /// whether it ended in `/`.
    struct CachedAttributes {
        let range: Range<Int>
        let attributes: [Attribute]
        let selfClosing: Bool
    }
    /// Direct-mapped cache of recent attribute sections. Mail markup repeats whole tags
    /// (`<td class="x" style="...">` on every cell); the tokenizer is a left-to-right state
    /// machine that reads nothing past the `>` that ends a tag, so the same bytes up to that `>`,
    /// entered in the same state, produce the same attributes: a repeated section reuses the
    /// earlier array (shared storage, copy on write) instead of tokenizing it again.
    ///
    /// Trust-model row: inbox (incoming mail) — linear on hostile input: a lookup reads at most
    /// up to the first `>` after the tag name, which the tag's own tokenization reads anyway.
    var attributeSections: [CachedAttributes] = []
    /// Per slot of the attribute-section cache (0-63) and of the value cache (64-127): the
    /// slot's index in `attributeSections` or `values` plus one, 0 while empty. Made on the first
    /// store, so a message without attributes never makes it; the entries themselves live in
    /// arrays that grow with use, so a parse makes and frees no per-slot values.
    var cacheSlots: [UInt8] = []
    var lastStartTagOtherName: String?
    var errors: [ParseError] = []
    var recordErrors = true
    let maxAttributes: Int
    var truncatedAttributes = false

    /// While the parse only verifies a tree (``HTML5Parser/parsesBack(_:to:context:options:)``):
    /// the node of that tree which the next token is expected to produce, set by the tree
    /// builder before each token. A character run of exactly a text node's bytes is given that
    /// node's string, and an attribute value of exactly the bytes of the value at the same
    /// position in an element's attributes that value (a retain, or for a short string a copy of
    /// two words), instead of a new string (an allocation, a copy and a UTF-8 check for a long
    /// one): the same value, since decoding those bytes gives that very string. Likewise a start
    /// tag whose attributes are exactly the element's gets the element's array, and the
    /// tokenizer keeps its own for the next tag. A cache of one entry, not a shortcut of the
    /// check: the verifier still compares the token with the tree, and anything else is
    /// decoded as usual. The node is read without a retain: the caller of
    /// `parsesBack` holds the expected tree, whose nodes, attributes and texts nothing changes
    /// while the parse runs.
    var expectedNode: Unmanaged<Node>?

    /// Set by a tree builder whose sink stores text as bytes (the arena tree): character runs
    /// then come as ``Token/characterBytes(_:inInput:)``, a range of the input or of bytes copied into ``textBytes``, instead of a
    /// `String` each (an allocation, a copy, and a release when the tree is freed).
    var textAsBytes = false
    /// The bytes of the ``Token/characterBytes(_:inInput:)`` tokens not in the input handed out since the queue was last
    /// empty (emptied, keeping its capacity, when ``nextToken()`` finds no token pending, so the
    /// ranges of the tokens still queued stay valid). Always well-formed UTF-8.
    let textBytes = ByteStore()

    /// The run of a ``Token/characterBytes(_:inInput:)`` token as a `String`.
    func string(ofTextBytes range: Range<Int>, inInput: Bool) -> String {
        withTextBytes(range, inInput: inInput) { ByteAccumulator.stringFromValidUTF8($0) }
    }

    /// Calls `body` with the bytes of a ``Token/characterBytes(_:inInput:)`` token.
    @inline(__always) func withTextBytes<R>(_ range: Range<Int>, inInput: Bool, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        Tokenizer.withTextBytes(range, inInput: inInput, input: input, textBytes: textBytes, body)
    }

    /// ``withTextBytes(_:inInput:_:)`` given the tokenizer's input and ``textBytes`` (for a caller
    /// whose `body` changes the value that holds the tokenizer: the tree builder).
    @inline(__always) static func withTextBytes<R>(_ range: Range<Int>, inInput: Bool, input: [UInt8], textBytes: ByteStore,
                                                   _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        guard inInput else { return textBytes.withBytes(range, body) }
        return input.withUnsafeBufferPointer { all in
            precondition(range.lowerBound >= 0 && range.upperBound <= all.count, "text run outside the input")
            return body(UnsafeBufferPointer(rebasing: all[range]))
        }
    }

    // Token under construction.
    var text = ByteAccumulator()
    /// The next token, when one is pending (the common case: one token per step; a character run
    /// is flushed as soon as a tag, comment or doctype starts).
    var slot: Token? = nil
    /// Tokens queued behind `slot` in the same step (e.g. characters and then EOF).
    var overflow: [Token] = []
    var overflowHead = 0
    var eofEmitted = false
    var tagName = ByteAccumulator()
    var isEndTag = false
    var selfClosing = false
    /// The tag's attributes so far; handed to the token when the tag is emitted (the first
    /// attribute reserves room for four, so a typical tag makes one allocation and no copy).
    var attributes: [Attribute] = []
    /// `true` once `attributes` may be non-empty (set where attributes are stored, cleared where
    /// the array is handed over or emptied): `startTag` tests this flag rather than
    /// `attributes.isEmpty`, which stayed an out-of-line call in the large state function.
    var attributesStored = false
    var attributeNames: Set<String> = []
    var attrName = ByteAccumulator()
    /// Short token strings seen so far (text runs, attribute names and values).
    var shortStrings = ShortStringCache()
    var attrValue = ByteAccumulator()
    var hasAttr = false
    var commentData: [UInt8] = []
    var doctypeName: [UInt8]? = nil
    var publicId: [UInt8]? = nil
    var systemId: [UInt8]? = nil
    var forceQuirks = false
    var temp: [UInt8] = []

    /// A value seen earlier in this input: its bytes (a range of the input) and its string.
    struct CachedValue {
        let range: Range<Int>
        let value: String
    }
    /// Direct-mapped cache of recent long attribute values. Newsletter markup repeats the same
    /// inline styles on every row and cell; a repeated value reuses the earlier `String` (one
    /// retain) instead of allocating, copying and validating it again, and the elements share
    /// its storage (strings are values: the sharing is invisible, a later edit copies).
    ///
    /// Trust-model row: inbox (incoming mail) — stays linear on hostile input: a lookup costs at
    /// most one comparison of the value's bytes, no more than building the string it replaces.
    var values: [CachedValue] = []

    static let eof = -1
    /// `nbsp;`, `quot;`, `amp;`, `lt;` and `gt;` as little-endian words (the bytes after `&`).
    static let nbspWord: UInt64 = 0x3B_7073_626E, quotWord: UInt64 = 0x3B_746F_7571
    static let ampWord: UInt64 = 0x3B70_6D61, ltWord: UInt64 = 0x3B_746C, gtWord: UInt64 = 0x3B_7467
    /// U+FFFD in UTF-8 (also what ``ByteAccumulator`` knows to be well-formed when appended).
    static let replacement: [UInt8] = [0xEF, 0xBF, 0xBD]

    /// - Parameter inputIsValidUTF8: `true` only when `input` is known to be well-formed UTF-8
    ///   (the parser's decoded bytes, a `String`'s UTF-8): token strings cut from it on scalar
    ///   boundaries are then made without validating them again (checked in debug builds).
    init(input: [UInt8], maxAttributes: Int = .max, inputIsValidUTF8: Bool = false) {
        assert(!inputIsValidUTF8 || EncodingSniffer.isValidUTF8(input), "the tokenizer's input was said to be well-formed UTF-8 and is not")
        text.inputIsValidUTF8 = inputIsValidUTF8
        tagName.inputIsValidUTF8 = inputIsValidUTF8
        attrName.inputIsValidUTF8 = inputIsValidUTF8
        attrValue.inputIsValidUTF8 = inputIsValidUTF8
        self.input = input
        self.inputCount = input.count
        self.inputHasNUL = input.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress, buffer.count > 0 else { return false }
            return memchr(base, 0, buffer.count) != nil
        }
        self.maxAttributes = maxAttributes
    }

    /// The code is a `StaticString` and its `String` is made out of line, only when errors are
    /// recorded: with `String` literals inlined at each of the ~70 sites, the optimizer hoisted
    /// their constants out of the state loop and every pass through it paid for them.
    @inline(__always) mutating func error(_ code: StaticString) {
        errorTally &+= 1
        if recordErrors { record(code) }
    }

    @inline(never) private mutating func record(_ code: StaticString) {
        errors.append(ParseError(code: code.description, offset: pos))
    }

    // MARK: Reading the input

    /// The input byte at `i`. The state machine reads a byte per step; through the array
    /// subscript that was an outlined call, so the read goes through the buffer pointer, with
    /// the bounds check kept (one unsigned compare).
    @inline(__always) func byte(_ i: Int) -> UInt8 {
        input.withUnsafeBufferPointer { buffer in
            precondition(UInt(bitPattern: i) < UInt(bitPattern: buffer.count), "tokenizer read out of bounds")
            return buffer[i]
        }
    }

    @inline(__always) mutating func peek() -> Int { pos < inputCount ? Int(byte(pos)) : Tokenizer.eof }
    @inline(__always) mutating func consume() -> Int {
        if pos < inputCount { let c = Int(byte(pos)); pos += 1; return c }
        pos += 1
        return Tokenizer.eof
    }
    /// Reconsume: step back one (also after EOF, which advanced `pos` past the end).
    @inline(__always) mutating func reconsume(_ newState: State) { pos -= 1; state = newState }

    @inline(__always) static func isWhitespace(_ c: Int) -> Bool { c == 0x09 || c == 0x0A || c == 0x0C || c == 0x20 }
    @inline(__always) static func isAlpha(_ c: Int) -> Bool { (c | 0x20) >= 0x61 && (c | 0x20) <= 0x7A }
    @inline(__always) private static func isUpper(_ c: Int) -> Bool { c >= 0x41 && c <= 0x5A }
    @inline(__always) static func isAlnum(_ c: Int) -> Bool { isAlpha(c) || (c >= 0x30 && c <= 0x39) }
    @inline(__always) static func lower(_ c: Int) -> UInt8 { UInt8(isUpper(c) ? c + 0x20 : c) }

    mutating func matchesCaseInsensitive(_ word: String) -> Bool {
        var i = pos
        for b in word.utf8 {
            guard i < inputCount else { return false }
            var c = byte(i)
            if c >= 0x41 && c <= 0x5A { c += 0x20 }
            if c != b { return false }
            i += 1
        }
        return true
    }

    mutating func matchesExactly(_ word: String) -> Bool {
        var i = pos
        for b in word.utf8 {
            guard i < inputCount, byte(i) == b else { return false }
            i += 1
        }
        return true
    }
}
