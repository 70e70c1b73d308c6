// The WHATWG HTML tokenizer (§13.2.5), over preprocessed UTF-8 bytes. Every special character of
// the spec is ASCII, so non-ASCII bytes flow through runs untouched; character tokens are batched
// into one string per run.

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
    private var lastStartTag: HTMLTag = .unknown
    /// Parse errors found so far, recorded or not (a tag whose attributes raised one is never
    /// replayed from the attribute cache, so replaying never hides an error).
    private var errorTally = 0
    /// Start of the current start tag's attribute section (the whitespace after its name), or -1.
    private var attributesStart = -1
    private var attributesErrorMark = 0
    /// The end of the section ``replayAttributeSection()`` looked up for the current tag (from
    /// ``attributesStart`` to the first `>`), or -1, and its cache slot: when the tag ends at that
    /// `>`, ``cacheAttributeSection()`` stores it there without hashing the same bytes again.
    private var lookedUpSectionEnd = -1
    private var lookedUpSectionSlot = 0

    /// A start tag's attribute section seen earlier in this input: its bytes (from the
    /// whitespace after the tag name up to the closing `>`), the attributes it produced and
    /// whether it ended in `/`.
    private struct CachedAttributes {
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
    private var attributeSections: [CachedAttributes] = []
    /// Per slot of the attribute-section cache (0-63) and of the value cache (64-127): the
    /// slot's index in `attributeSections` or `values` plus one, 0 while empty. Made on the first
    /// store, so a message without attributes never makes it; the entries themselves live in
    /// arrays that grow with use, so a parse makes and frees no per-slot values.
    private var cacheSlots: [UInt8] = []
    private var lastStartTagOtherName: String?
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
    private var text = ByteAccumulator()
    /// The next token, when one is pending (the common case: one token per step; a character run
    /// is flushed as soon as a tag, comment or doctype starts).
    private var slot: Token? = nil
    /// Tokens queued behind `slot` in the same step (e.g. characters and then EOF).
    private var overflow: [Token] = []
    private var overflowHead = 0
    private var eofEmitted = false
    private var tagName = ByteAccumulator()
    private var isEndTag = false
    private var selfClosing = false
    /// The tag's attributes so far; handed to the token when the tag is emitted (the first
    /// attribute reserves room for four, so a typical tag makes one allocation and no copy).
    private var attributes: [Attribute] = []
    /// `true` once `attributes` may be non-empty (set where attributes are stored, cleared where
    /// the array is handed over or emptied): `startTag` tests this flag rather than
    /// `attributes.isEmpty`, which stayed an out-of-line call in the large state function.
    private var attributesStored = false
    private var attributeNames: Set<String> = []
    private var attrName = ByteAccumulator()
    /// Short token strings seen so far (text runs, attribute names and values).
    private var shortStrings = ShortStringCache()
    private var attrValue = ByteAccumulator()
    private var hasAttr = false
    private var commentData: [UInt8] = []
    private var doctypeName: [UInt8]? = nil
    private var publicId: [UInt8]? = nil
    private var systemId: [UInt8]? = nil
    private var forceQuirks = false
    private var temp: [UInt8] = []

    private static let eof = -1
    /// `nbsp;`, `quot;`, `amp;`, `lt;` and `gt;` as little-endian words (the bytes after `&`).
    private static let nbspWord: UInt64 = 0x3B_7073_626E, quotWord: UInt64 = 0x3B_746F_7571
    private static let ampWord: UInt64 = 0x3B70_6D61, ltWord: UInt64 = 0x3B_746C, gtWord: UInt64 = 0x3B_7467
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
    @inline(__always) private mutating func error(_ code: StaticString) {
        errorTally &+= 1
        if recordErrors { record(code) }
    }

    @inline(never) private mutating func record(_ code: StaticString) {
        errors.append(ParseError(code: code.description, offset: pos))
    }

    // MARK: Emitting

    /// Inlined test, out-of-line work: most calls (every tag's `emit`) find no pending text, and
    /// as a call each of them cost a prologue and an epilogue.
    @inline(__always) private mutating func flushText() {
        if !text.isEmpty { flushPendingText() }
    }

    private mutating func flushPendingText() {
        if textAsBytes && expectedNode == nil {
            if let range = text.wellFormedInputRun(of: input) {
                enqueue(.characterBytes(range, inInput: true))
                text.reset()
                return
            }
            let start = textBytes.count
            if text.copyBufferedIfWellFormed(into: textBytes, from: input) {
                enqueue(.characterBytes(start..<textBytes.count, inInput: false))
                text.reset()
                return
            }
        }
        let string = expectedNode != nil ? expectedText() : nil
        enqueue(.characters(string ?? text.makeString(from: input, cache: &shortStrings)))
        text.reset()
    }

    /// The data of the expected text node when the pending run holds exactly its bytes
    /// (``expectedNode``).
    private mutating func expectedText() -> String? {
        guard let node = expectedNode, UnretainedLinks.isText(node) else { return nil }
        return node._withUnsafeGuaranteedRef { node -> String? in
            let expected = unsafeDowncast(node, to: Text.self)
            return withUTF8Bytes(inPlace: &expected.storedData) { text.holds(exactly: $0, from: input) } ? expected.data : nil
        }
    }

    /// The expected element's attributes when they are exactly the tag's ``attributes``
    /// (namespace, name and value, byte for byte, in order; ``expectedNode``).
    private mutating func expectedAttributes() -> [Attribute]? {
        guard let node = expectedNode, let element = UnretainedLinks.element(node) else { return nil }
        return element._withUnsafeGuaranteedRef { element -> [Attribute]? in
            let same = withBuffer(inPlace: &element.storedAttributes) { expected in
                attributes.withUnsafeBufferPointer { TreeComparison.sameAttributes(expected, $0) }
            }
            return same ? element.attributes : nil
        }
    }

    /// The value at the position of the attribute being finished in the expected element's
    /// attributes, when the pending value holds exactly its bytes (``expectedNode``).
    private mutating func expectedAttributeValue() -> String? {
        guard let node = expectedNode, let element = UnretainedLinks.element(node) else { return nil }
        let index = attributes.count
        return element._withUnsafeGuaranteedRef { element -> String? in
            withBuffer(inPlace: &element.storedAttributes) { expected -> String? in
                guard index < expected.count, let base = expected.baseAddress else { return nil }
                // Mutable only for the type: ``withUTF8Bytes(inPlace:_:)`` never writes.
                let attribute = UnsafeMutablePointer(mutating: base + index)
                let same = withUTF8Bytes(inPlace: &attribute.pointee.value) { attrValue.holds(exactly: $0, from: input) }
                return same ? attribute.pointee.value : nil
            }
        }
    }

    @inline(__always) private mutating func emit(_ token: consuming Token) {
        flushText()
        enqueue(token)
    }

    /// Takes ownership of the token (no copy of its strings and attributes on the way in).
    @inline(__always) private mutating func enqueue(_ token: consuming Token) {
        if slot == nil && overflowHead >= overflow.count { slot = token } else { overflow.append(token) }
    }

    private var hasPendingToken: Bool { slot != nil || overflowHead < overflow.count }

    @inline(__always) private mutating func appendText(_ byte: UInt8) { text.append(byte, from: input) }
    @inline(__always) private mutating func appendText(_ bytes: [UInt8]) { text.append(contentsOf: bytes, from: input) }

    /// Emits the tag being tokenized, with its attributes, or with `replayed` (a cached
    /// section's, ``replayAttributeSection()``; the tokenizer's own array is then left as it is).
    private mutating func emitTag(replaying replayed: [Attribute]? = nil) {
        finishAttribute()
        // Known names come from the interned table (no string is built or validated).
        let id = tagName.withBytes(from: input) { HTMLTag.lookup($0) }
        let name = id == .unknown ? tagName.makeString(from: input) : id.internedName
        // The attributes move into the token (swapped out, leaving `attributes` empty): no
        // retain for the token and release for the tokenizer's copy.
        // (Without attributes, `attributes` is empty: it stays, with any buffer it has.)
        var taken: [Attribute] = []
        if let replayed {
            taken = replayed
        } else if attributesStored {
            if expectedNode != nil && attributesStart >= 0 && !isEndTag, let expected = expectedAttributes() {
                // Verifying, and the attributes just tokenized (the array is the tokenizer's
                // own) are exactly the expected element's: the token gets that element's array
                // (a retain), and the tokenizer keeps its buffer for the next tag's attributes
                // instead of allocating one per tag.
                taken = expected
                attributes.removeAll(keepingCapacity: true)
            } else {
                swap(&taken, &attributes)
            }
            attributesStored = false
        }
        if !isEndTag && attributesStart >= 0 { cacheAttributeSection(taken) }
        let tag = TagToken(tag: id, name: name, attributes: taken, selfClosing: selfClosing)
        if isEndTag {
            if !tag.attributes.isEmpty { error("end-tag-with-attributes") }
            if selfClosing { error("end-tag-with-trailing-solidus") }
            emit(.endTag(tag))
        } else {
            lastStartTag = id
            if id == .unknown { lastStartTagOtherName = name } else if lastStartTagOtherName != nil { lastStartTagOtherName = nil }
            emit(.startTag(tag))
        }
        if !attributeNames.isEmpty { attributeNames.removeAll() }
    }

    private mutating func emitComment() {
        emit(.comment(String(decoding: commentData, as: UTF8.self)))
    }

    private mutating func emitDoctype() {
        emit(.doctype(DoctypeToken(
            name: doctypeName.map { String(decoding: $0, as: UTF8.self) },
            publicId: publicId.map { String(decoding: $0, as: UTF8.self) },
            systemId: systemId.map { String(decoding: $0, as: UTF8.self) },
            forceQuirks: forceQuirks)))
    }

    private mutating func emitEOF() {
        emit(.eof)
        eofEmitted = true
    }

    /// The next token (`.eof` forever once the input is exhausted).
    mutating func nextToken() -> Token {
        // The bytes of the character runs handed out are no longer read once no token is queued.
        if textAsBytes && textBytes.count > 0 && !hasPendingToken { textBytes.removeAll() }
        // The previous call took the pending token, so there is usually none now: run the states
        // first instead of emptying an empty slot (the loop below checks everything again).
        step()
        while true {
            if let token = slot.take() { return token }
            if overflowHead < overflow.count {
                let token = overflow[overflowHead]
                overflowHead += 1
                return token
            }
            if !overflow.isEmpty { overflow.removeAll(keepingCapacity: true); overflowHead = 0 }
            if eofEmitted { return .eof }
            step()
        }
    }

    // MARK: Tag helpers

    @inline(__always) private mutating func startTag(end: Bool) {
        tagName.reset()
        isEndTag = end
        selfClosing = false
        assert(attributesStored || attributes.isEmpty)
        if attributesStored { attributes = []; attributesStored = false }
        hasAttr = false
        attributesStart = -1
    }

    /// The hash slot of the attribute section `input[range]` (eight bytes at a time).
    // `mutating` although it only reads: a non-mutating call copied the whole tokenizer (376
    // bytes) to the stack first; a mutating one is passed its address.
    private mutating func attributeSectionSlot(_ range: Range<Int>) -> Int {
        input.withUnsafeBufferPointer { buffer -> Int in
            precondition(range.lowerBound >= 0 && range.upperBound <= buffer.count)
            let raw = UnsafeRawBufferPointer(buffer)
            var h: UInt64 = 0x9E37_79B9_7F4A_7C15 &* UInt64(range.count &+ 1)
            var i = range.lowerBound
            while i + 8 <= range.upperBound {
                h = (h ^ raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
                i += 8
            }
            // The last 1-7 bytes: when the section has at least eight, as the (overlapping)
            // word that ends it, one step instead of one per byte; the load lies inside the
            // section (it starts at `upperBound - 8 >= lowerBound`).
            if i < range.upperBound && range.count >= 8 {
                h = (h ^ raw.loadUnaligned(fromByteOffset: range.upperBound - 8, as: UInt64.self)) &* 0xC4CE_B9FE_1A85_EC53
            } else {
                while i < range.upperBound { h = (h ^ UInt64(buffer[i])) &* 0xC4CE_B9FE_1A85_EC53; i += 1 }
            }
            return Int(truncatingIfNeeded: (h ^ (h >> 33)) & 63)
        }
    }

    /// Called for a start tag as it is emitted, with its attributes: remembers its attribute
    /// section when the section produced attributes without a parse error and ended at the `>`
    /// just consumed.
    private mutating func cacheAttributeSection(_ attributes: [Attribute]) {
        guard !attributes.isEmpty, errorTally == attributesErrorMark, pos >= 1, pos <= inputCount,
              pos - 1 > attributesStart, byte(pos - 1) == 0x3E else { return }
        let range = attributesStart..<(pos - 1)
        let entry = CachedAttributes(range: range, attributes: attributes, selfClosing: selfClosing)
        let slot = range.upperBound == lookedUpSectionEnd ? lookedUpSectionSlot : attributeSectionSlot(range)
        Tokenizer.storeInCache(slot: slot, entry, in: &attributeSections, cacheSlots: &cacheSlots)
    }

    /// Puts `entry` in cache slot `slot` (0-127) of `cacheSlots`, in `entries` (the pool of
    /// that slot's cache).
    @inline(__always) private static func storeInCache<Entry>(slot: Int, _ entry: Entry, in entries: inout [Entry], cacheSlots: inout [UInt8]) {
        if cacheSlots.isEmpty { cacheSlots = ZeroTables.bytes128 }
        let index = Int(cacheSlots[slot])
        if index == 0 {
            if entries.isEmpty { entries.reserveCapacity(64) }
            entries.append(entry)
            // At most 64 entries per pool: a slot gets one when it is first filled.
            cacheSlots[slot] = UInt8(entries.count)
        } else {
            entries[index - 1] = entry
        }
    }

    /// The entry in cache slot `slot` of `entries`' cache, if any.
    @inline(__always) private func cached<Entry>(slot: Int, in entries: [Entry]) -> Entry? {
        // (Before the first store the table is empty: every slot misses.)
        guard slot < cacheSlots.count else { return nil }
        let index = Int(cacheSlots[slot])
        guard index != 0 else { return nil }
        return entries[index &- 1]
    }

    /// In the tag name state, just after the whitespace that ends a start tag's name: if the
    /// bytes from that whitespace to the next `>` are a cached attribute section, emits the tag
    /// with the cached attributes and returns `true`.
    private mutating func replayAttributeSection() -> Bool {
        lookedUpSectionEnd = -1
        let start = pos - 1
        guard start >= 0, pos < inputCount else { return false }
        let end = input.withUnsafeBufferPointer { buffer -> Int? in
            guard let base = buffer.baseAddress, let found = memchr(base + pos, 0x3E, buffer.count - pos) else { return nil }
            return UnsafeRawPointer(found) - UnsafeRawPointer(base)
        }
        guard let end else { return false }
        let range = start..<end
        let slot = attributeSectionSlot(range)
        lookedUpSectionEnd = end
        lookedUpSectionSlot = slot
        guard let cached = cached(slot: slot, in: attributeSections), cached.range.count == range.count,
              input.withUnsafeBufferPointer({ buffer -> Bool in
                  // Both ranges lie inside this input (the cache lives with the tokenizer).
                  precondition(cached.range.upperBound <= buffer.count && range.upperBound <= buffer.count)
                  guard let base = buffer.baseAddress else { return false }
                  return memcmp(base + cached.range.lowerBound, base + range.lowerBound, range.count) == 0
              }) else { return false }
        selfClosing = cached.selfClosing
        pos = end + 1
        state = .data
        emitTag(replaying: cached.attributes)
        return true
    }

    private mutating func startAttribute() {
        finishAttribute()
        attrName.reset()
        attrValue.reset()
        hasAttr = true
    }

    /// Inlined test, out-of-line work (as `flushText`): a tag without attributes has none to finish.
    @inline(__always) private mutating func finishAttribute() {
        if hasAttr { finishPendingAttribute() }
    }

    private mutating func finishPendingAttribute() {
        hasAttr = false
        let name = attrName.makeString(from: input, cache: &shortStrings)
        if attributes.count < 8 && attributeNames.isEmpty {
            for attribute in attributes where attribute.name == name { error("duplicate-attribute"); return }
        } else {
            if attributeNames.isEmpty { for attribute in attributes { attributeNames.insert(attribute.name) } }
            if attributeNames.contains(name) { error("duplicate-attribute"); return }
        }
        if attributes.count >= maxAttributes { truncatedAttributes = true; error("too-many-attributes"); return }
        if !attributeNames.isEmpty { attributeNames.insert(name) }
        if attributes.isEmpty { attributes.reserveCapacity(4) }
        attributes.append(Attribute(name: name, value: makeAttributeValue()))
        attributesStored = true
    }

    /// A value seen earlier in this input: its bytes (a range of the input) and its string.
    private struct CachedValue {
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
    private var values: [CachedValue] = []

    private mutating func makeAttributeValue() -> String {
        if expectedNode != nil, let value = expectedAttributeValue() { return value }
        // Values of up to 15 bytes are stored inline in the `String` (no allocation to save).
        guard let range = attrValue.inputRange, range.count > 15 else { return attrValue.makeString(from: input, cache: &shortStrings) }
        let slot = input.withUnsafeBufferPointer { buffer -> Int in
            precondition(range.upperBound <= buffer.count)
            let raw = UnsafeRawBufferPointer(buffer)
            // `range` lies inside the input (the accumulator's run), and is longer than 8 bytes.
            let first = raw.loadUnaligned(fromByteOffset: range.lowerBound, as: UInt64.self)
            let last = raw.loadUnaligned(fromByteOffset: range.upperBound - 8, as: UInt64.self)
            var h = (first &* 0x9E37_79B9_7F4A_7C15) ^ (last &* 0xC2B2_AE3D_27D4_EB4F) ^ UInt64(range.count)
            h ^= h >> 29
            return 64 + Int(truncatingIfNeeded: h & 63)
        }
        if let cached = cached(slot: slot, in: values), cached.range.count == range.count,
           input.withUnsafeBufferPointer({ buffer -> Bool in
               // Both ranges are runs of this same input (the cache lives with the tokenizer).
               precondition(cached.range.upperBound <= buffer.count && range.upperBound <= buffer.count)
               guard let base = buffer.baseAddress else { return false }
               return memcmp(base + cached.range.lowerBound, base + range.lowerBound, range.count) == 0
           }) {
            return cached.value
        }
        let value = attrValue.makeString(from: input)
        Tokenizer.storeInCache(slot: slot, CachedValue(range: range, value: value), in: &values, cacheSlots: &cacheSlots)
        return value
    }

    private mutating func isAppropriateEndTag() -> Bool {
        if lastStartTag != .unknown { return tagName.withBytes(from: input) { HTMLTag.lookup($0) } == lastStartTag }
        guard let last = lastStartTagOtherName else { return false }
        return tagName.withBytes(from: input) { last.utf8.elementsEqual($0) }
    }

    /// The input byte at `i`. The state machine reads a byte per step; through the array
    /// subscript that was an outlined call, so the read goes through the buffer pointer, with
    /// the bounds check kept (one unsigned compare).
    @inline(__always) private func byte(_ i: Int) -> UInt8 {
        input.withUnsafeBufferPointer { buffer in
            precondition(UInt(bitPattern: i) < UInt(bitPattern: buffer.count), "tokenizer read out of bounds")
            return buffer[i]
        }
    }

    @inline(__always) private mutating func peek() -> Int { pos < inputCount ? Int(byte(pos)) : Tokenizer.eof }
    @inline(__always) private mutating func consume() -> Int {
        if pos < inputCount { let c = Int(byte(pos)); pos += 1; return c }
        pos += 1
        return Tokenizer.eof
    }
    /// Reconsume: step back one (also after EOF, which advanced `pos` past the end).
    @inline(__always) private mutating func reconsume(_ newState: State) { pos -= 1; state = newState }

    @inline(__always) private static func isWhitespace(_ c: Int) -> Bool { c == 0x09 || c == 0x0A || c == 0x0C || c == 0x20 }
    @inline(__always) private static func isAlpha(_ c: Int) -> Bool { (c | 0x20) >= 0x61 && (c | 0x20) <= 0x7A }
    @inline(__always) private static func isUpper(_ c: Int) -> Bool { c >= 0x41 && c <= 0x5A }
    @inline(__always) private static func isAlnum(_ c: Int) -> Bool { isAlpha(c) || (c >= 0x30 && c <= 0x39) }
    @inline(__always) private static func lower(_ c: Int) -> UInt8 { UInt8(isUpper(c) ? c + 0x20 : c) }

    private mutating func matchesCaseInsensitive(_ word: String) -> Bool {
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

    private mutating func matchesExactly(_ word: String) -> Bool {
        var i = pos
        for b in word.utf8 {
            guard i < inputCount, byte(i) == b else { return false }
            i += 1
        }
        return true
    }

    // MARK: Character references (§13.2.5.72-80), as one routine

    /// Called with `pos` just after `&`. Appends the result to the text buffer or, when
    /// `inAttribute`, to the attribute value.
    private mutating func consumeCharacterReference(inAttribute: Bool) {
        @inline(__always) func put(_ byte: UInt8) {
            if inAttribute { attrValue.append(byte, from: input) } else { appendText(byte) }
        }
        @inline(__always) func put(_ bytes: ArraySlice<UInt8>) {
            for byte in bytes { put(byte) }
        }
        /// The replacement for the name `input[range]`, if it is one (read in place: no
        /// `ArraySlice` of the input and no copy of the table, each of which costs retains).
        @inline(__always) func lookup(_ range: Range<Int>) -> Range<Int>? {
            input.withUnsafeBufferPointer { buffer in
                precondition(range.lowerBound >= 0 && range.upperBound <= buffer.count)
                return NamedCharacterReferences.index.lookup(UnsafeBufferPointer(rebasing: buffer[range]))
            }
        }
        // A reference's value goes in whole scalars (the table's values are encoded scalars):
        // the pending bytes stay well-formed UTF-8 (``ByteAccumulator/appendEncodedScalarByte``).
        @inline(__always) func putEncoded(_ byte: UInt8) {
            if inAttribute { attrValue.appendEncodedScalarByte(byte, from: input) } else { text.appendEncodedScalarByte(byte, from: input) }
        }
        @inline(__always) func putValue(_ value: Range<Int>) {
            NamedCharacterReferences.index.values.withUnsafeBufferPointer { values in
                precondition(value.lowerBound >= 0 && value.upperBound <= values.count)
                for i in value { putEncoded(values[i]) }
            }
        }
        // The five references mail is full of, recognized from one word of the input: each is a
        // name with its semicolon, which the general path below would find in the table and
        // replace the same way (a name ending in `;` is never subject to the attribute rule).
        if pos + 8 <= inputCount {
            let word = input.withUnsafeBufferPointer { buffer in
                precondition(pos >= 0 && pos + 8 <= buffer.count, "tokenizer read out of bounds")
                return UInt64(littleEndian: UnsafeRawPointer(buffer.baseAddress! + pos).loadUnaligned(as: UInt64.self))
            }
            switch word & 0xFF_FFFF_FFFF {
            case Tokenizer.nbspWord: pos += 5; putEncoded(0xC2); putEncoded(0xA0); return
            case Tokenizer.quotWord: pos += 5; put(0x22); return
            default: break
            }
            switch word & 0xFFFF_FFFF {
            case Tokenizer.ampWord: pos += 4; put(0x26); return
            default: break
            }
            switch word & 0xFF_FFFF {
            case Tokenizer.ltWord: pos += 3; put(0x3C); return
            case Tokenizer.gtWord: pos += 3; put(0x3E); return
            default: break
            }
        }
        let c = peek()
        if Tokenizer.isAlnum(c) {
            var end = pos
            while end < inputCount, end - pos < NamedCharacterReferences.longest, Tokenizer.isAlnum(Int(byte(end))) { end += 1 }
            if end < inputCount, byte(end) == 0x3B, let value = lookup(pos..<(end + 1)) {
                pos = end + 1
                putValue(value)
                return
            }
            var length = min(end - pos, NamedCharacterReferences.longestLegacy)
            while length >= 2 {
                if let value = lookup(pos..<(pos + length)) {
                    let next = pos + length < inputCount ? Int(byte(pos + length)) : Tokenizer.eof
                    if inAttribute && (next == 0x3D || Tokenizer.isAlnum(next)) {
                        put(0x26)  // not a reference: the name is consumed as ordinary characters
                        return
                    }
                    error("missing-semicolon-after-character-reference")
                    pos += length
                    putValue(value)
                    return
                }
                length -= 1
            }
            // No match: `&` as text; the alphanumerics are consumed normally by the caller.
            if end < inputCount, byte(end) == 0x3B, end > pos { error("unknown-named-character-reference") }
            put(0x26)
            return
        }
        if c == 0x23 {  // '#'
            let start = pos
            pos += 1
            var hex = false
            if pos < inputCount, byte(pos) | 0x20 == 0x78 { hex = true; pos += 1 }
            var value: UInt32 = 0
            var digits = 0
            while pos < inputCount {
                let d = Int(byte(pos))
                var digit: Int
                if d >= 0x30 && d <= 0x39 { digit = d - 0x30 }
                else if hex && (d | 0x20) >= 0x61 && (d | 0x20) <= 0x66 { digit = (d | 0x20) - 0x61 + 10 }
                else { break }
                value = value > 0x10FFFF ? value : value * (hex ? 16 : 10) + UInt32(digit)
                digits += 1
                pos += 1
            }
            if digits == 0 {
                error("absence-of-digits-in-numeric-character-reference")
                put(0x26); put(input[start..<pos])
                return
            }
            if pos < inputCount, byte(pos) == 0x3B { pos += 1 } else { error("missing-semicolon-after-character-reference") }
            var code = value
            if code == 0 { error("null-character-reference"); code = 0xFFFD }
            else if code > 0x10FFFF { error("character-reference-outside-unicode-range"); code = 0xFFFD }
            else if code >= 0xD800 && code <= 0xDFFF { error("surrogate-character-reference"); code = 0xFFFD }
            else if code >= 0x80 && code <= 0x9F, let mapped = Tokenizer.c1Replacements[Int(code - 0x80)] {
                error("control-character-reference"); code = mapped
            }
            // `code` is a scalar value here: surrogates and values above U+10FFFF became U+FFFD.
            UTF8.encode(Unicode.Scalar(code) ?? "\u{FFFD}") { putEncoded($0) }
            return
        }
        put(0x26)
    }

    private static let c1Replacements: [UInt32?] = [
        0x20AC, nil, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, nil, 0x017D, nil,
        nil, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, nil, 0x017E, 0x0178,
    ]

    // MARK: The state machine

    /// Runs states until at least one token is queued.
    private mutating func step() {
        if !hasPendingToken && !eofEmitted { runStates() }
    }

    /// The state loop: one state after another until a token is queued or the end of input was
    /// emitted. The loop is here, around an inlined `runState()`, so that a change of state (about
    /// 2.5 per token) is a branch rather than a call with its prologue; a `return` in a state just
    /// ends that state, as before.
    private mutating func runStates() {
        repeat { runState() } while !hasPendingToken && !eofEmitted
    }

    /// Copies the run of ordinary bytes up to the next byte the current state must look at (NUL,
    /// and `<` / `&` when asked) into the pending text, so the state machine sees one byte per run.
    @inline(__always)
    private mutating func copyTextRun(stopAtLess: Bool, stopAtAmpersand: Bool) {
        let start = pos
        if stopAtAmpersand { pos = firstStop(from: pos, 0x3C, 0x26, 0x00) }
        else if stopAtLess { pos = firstStop(from: pos, 0x3C, 0x00, 0x00) }
        else { pos = firstStop(from: pos, 0x00, 0x00, 0x00) }
        if pos > start { text.appendRun(start, pos, from: input) }
    }

    /// The index of the first byte at or after `start` equal to `s0`, `s1` or `s2`, or
    /// `input.count`. Text and attribute values are most of a message's bytes, so they are
    /// scanned sixteen at a time with vector compares (`SIMD16<UInt8>`: SSE2 or NEON, three
    /// compares and one mask test per block; the matching lanes, read as two little-endian
    /// words, tell which byte is the first stop). Only the last 15 bytes of the input, where no
    /// whole block is left, are scanned byte by byte.
    /// Reads only inside the input: block loads are guarded by `count - i >= 16`, bytes by
    /// `i < count` (and `start <= i`, with `start >= 0`).
    // `mutating` although it only reads: where it was not inlined, a non-mutating call copied
    // the whole tokenizer to the stack first; a mutating one is passed its address.
    @inline(__always)
    private mutating func firstStop(from start: Int, _ s0: UInt8, _ s1: UInt8, _ s2: UInt8) -> Int {
        input.withUnsafeBufferPointer { Tokenizer.firstStop(in: $0, from: start, s0, s1, s2) }
    }

    /// ``firstStop(from:_:_:_:)`` over `buffer`. Static, so that no call site copies the
    /// tokenizer to pass it `self` (a non-mutating method on the 400-byte tokenizer did).
    @inline(__always)
    private static func firstStop(in buffer: UnsafeBufferPointer<UInt8>, from start: Int, _ s0: UInt8, _ s1: UInt8, _ s2: UInt8) -> Int {
        let count = buffer.count
        var i = start
        guard i >= 0, i < count, let base = buffer.baseAddress else { return i }
        let raw = UnsafeRawPointer(base)
        let v0 = SIMD16<UInt8>(repeating: s0), v1 = SIMD16<UInt8>(repeating: s1), v2 = SIMD16<UInt8>(repeating: s2)
        while count &- i >= 16 {
            let block = raw.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self)
            let hit = (block .== v0) .| (block .== v1) .| (block .== v2)
            if any(hit) {
                let lanes = unsafeBitCast(SIMD16<UInt8>(repeating: 0).replacing(with: 0xFF, where: hit), to: SIMD2<UInt64>.self)
                let low = UInt64(littleEndian: lanes[0])
                if low != 0 { return i &+ (low.trailingZeroBitCount &>> 3) }
                return i &+ 8 &+ (UInt64(littleEndian: lanes[1]).trailingZeroBitCount &>> 3)
            }
            i &+= 16
        }
        while i < count {
            let b = buffer[i]
            if b == s0 || b == s1 || b == s2 { break }
            i += 1
        }
        return i
    }

    /// In the before-attribute-name state at `pos`: if the input there is `name="value"` or
    /// `name='value'` with a name of `a`-`z` and `-` and a value without `&` or NUL, does what
    /// the attribute name, before attribute value and quoted value states would do with it (no
    /// parse error is possible on that path) and leaves `pos` after the closing quote in the
    /// after-attribute-value-(quoted) state. Otherwise changes nothing and returns `false`.
    private mutating func scanSimpleAttribute() -> Bool {
        let nameStart = pos
        var i = pos
        while i < inputCount {
            let b = byte(i)
            if (b >= 0x61 && b <= 0x7A) || b == 0x2D { i += 1 } else { break }
        }
        guard i > nameStart, i + 1 < inputCount, byte(i) == 0x3D else { return false }
        let quote = byte(i + 1)
        guard quote == 0x22 || quote == 0x27 else { return false }
        let valueStart = i + 2
        let valueEnd = firstStop(from: valueStart, quote, 0x26, 0x00)
        guard valueEnd < inputCount, byte(valueEnd) == quote else { return false }
        startAttribute()
        attrName.appendRun(nameStart, i, from: input)
        attrValue.appendRun(valueStart, valueEnd, from: input)
        pos = valueEnd + 1
        state = .afterAttributeValueQuoted
        return true
    }

    /// The script data escaped and double escaped states with their dash and dash-dash states
    /// (`dashes`: 0, 1, 2): the spec gives both families the same steps, except that a double
    /// escaped `<` is text while an escaped one may start the end tag.
    private mutating func scriptDataEscaped(double: Bool, dashes: Int) {
        let c = consume()
        switch c {
        case 0x2D:
            appendText(0x2D)
            switch (double, dashes) {
            case (false, 0): state = .scriptDataEscapedDash
            case (false, _): state = .scriptDataEscapedDashDash
            case (true, 0): state = .scriptDataDoubleEscapedDash
            case (true, _): state = .scriptDataDoubleEscapedDashDash
            }
        case 0x3C where double: state = .scriptDataDoubleEscapedLessThan; appendText(0x3C)
        case 0x3C: state = .scriptDataEscapedLessThan
        case 0x3E where dashes == 2: state = .scriptData; appendText(0x3E)
        case 0x00:
            error("unexpected-null-character")
            state = double ? .scriptDataDoubleEscaped : .scriptDataEscaped
            appendText(Tokenizer.replacement)
        case Tokenizer.eof: error("eof-in-script-html-comment-like-text"); emitEOF()
        default:
            state = double ? .scriptDataDoubleEscaped : .scriptDataEscaped
            appendText(UInt8(c))
        }
    }

    /// Where a DOCTYPE's public or system identifier may start (after its keyword, or after the
    /// whitespace that follows it): a quote opens the identifier; `>`, EOF or anything else end
    /// the DOCTYPE in quirks mode.
    private mutating func doctypeIdentifierStart(_ c: Int, isPublic: Bool) {
        if c == 0x22 || c == 0x27 {
            if isPublic { publicId = []; state = c == 0x22 ? .doctypePublicIdentifierDoubleQuoted : .doctypePublicIdentifierSingleQuoted }
            else { systemId = []; state = c == 0x22 ? .doctypeSystemIdentifierDoubleQuoted : .doctypeSystemIdentifierSingleQuoted }
        } else if c == 0x3E {
            error(isPublic ? "missing-doctype-public-identifier" : "missing-doctype-system-identifier")
            forceQuirks = true; state = .data; emitDoctype()
        } else if c == Tokenizer.eof { error("eof-in-doctype"); forceQuirks = true; emitDoctype(); emitEOF() }
        else { error("missing-quote-before-doctype-identifier"); forceQuirks = true; reconsume(.bogusDoctype) }
    }

    @inline(__always) private mutating func runState() {
        switch state {
        case .data, .rcdata:
            // Fast path: copy the run up to the next special byte.
            copyTextRun(stopAtLess: true, stopAtAmpersand: true)
            let c = consume()
            switch c {
            case 0x26: consumeCharacterReference(inAttribute: false)
            case 0x3C: state = state == .data ? .tagOpen : .rcdataLessThan
            case 0x00:
                // The data state passes U+0000 on (the tree builder decides); RCDATA replaces it.
                error("unexpected-null-character")
                if state == .data { appendText(0) } else { appendText(Tokenizer.replacement) }
            case Tokenizer.eof: emitEOF()
            default: appendText(UInt8(c))
            }
        case .rawtext, .scriptData, .plaintext:
            copyTextRun(stopAtLess: state != .plaintext, stopAtAmpersand: false)
            let c = consume()
            switch c {
            case 0x3C: state = state == .rawtext ? .rawtextLessThan : .scriptDataLessThan
            case 0x00: error("unexpected-null-character"); appendText(Tokenizer.replacement)
            case Tokenizer.eof: emitEOF()
            default: appendText(UInt8(c))
            }
        case .tagOpen:
            let c = consume()
            if c == 0x21 { state = .markupDeclarationOpen }
            else if c == 0x2F { state = .endTagOpen }
            else if Tokenizer.isAlpha(c) { flushText(); startTag(end: false); reconsume(.tagName) }
            else if c == 0x3F {
                error("unexpected-question-mark-instead-of-tag-name")
                commentData.removeAll(keepingCapacity: true); reconsume(.bogusComment)
            } else if c == Tokenizer.eof {
                error("eof-before-tag-name"); appendText(0x3C); emitEOF()
            } else {
                error("invalid-first-character-of-tag-name"); appendText(0x3C); reconsume(.data)
            }
        case .endTagOpen:
            let c = consume()
            if Tokenizer.isAlpha(c) { flushText(); startTag(end: true); reconsume(.tagName) }
            else if c == 0x3E { error("missing-end-tag-name"); state = .data }
            else if c == Tokenizer.eof { error("eof-before-tag-name"); appendText([0x3C, 0x2F]); emitEOF() }
            else {
                error("invalid-first-character-of-tag-name")
                commentData.removeAll(keepingCapacity: true); reconsume(.bogusComment)
            }
        case .tagName:
            // Fast path for the common lowercase run.
            let nameStart = pos
            while pos < inputCount {
                let b = byte(pos)
                if b >= 0x61 && b <= 0x7A { pos += 1 } else { break }
            }
            tagName.appendRun(nameStart, pos, from: input)
            let c = consume()
            if Tokenizer.isWhitespace(c) {
                if !isEndTag {
                    if replayAttributeSection() { return }
                    attributesStart = pos - 1
                    attributesErrorMark = errorTally
                }
                state = .beforeAttributeName
            }
            else if c == 0x2F { state = .selfClosingStartTag }
            else if c == 0x3E { state = .data; emitTag() }
            else if c == 0x00 { error("unexpected-null-character"); tagName.append(contentsOf: Tokenizer.replacement, from: input) }
            else if c == Tokenizer.eof { error("eof-in-tag"); emitEOF() }
            else { tagName.append(Tokenizer.lower(c), from: input) }
        case .rcdataLessThan, .rawtextLessThan:
            let c = consume()
            if c == 0x2F { temp.removeAll(keepingCapacity: true); state = state == .rcdataLessThan ? .rcdataEndTagOpen : .rawtextEndTagOpen }
            else { appendText(0x3C); reconsume(state == .rcdataLessThan ? .rcdata : .rawtext) }
        case .rcdataEndTagOpen, .rawtextEndTagOpen, .scriptDataEndTagOpen, .scriptDataEscapedEndTagOpen:
            let c = consume()
            let (nameState, back): (State, State) = switch state {
            case .rcdataEndTagOpen: (.rcdataEndTagName, .rcdata)
            case .rawtextEndTagOpen: (.rawtextEndTagName, .rawtext)
            case .scriptDataEndTagOpen: (.scriptDataEndTagName, .scriptData)
            default: (.scriptDataEscapedEndTagName, .scriptDataEscaped)
            }
            if Tokenizer.isAlpha(c) { startTag(end: true); reconsume(nameState) }
            else { appendText([0x3C, 0x2F]); reconsume(back) }
        case .rcdataEndTagName, .rawtextEndTagName, .scriptDataEndTagName, .scriptDataEscapedEndTagName:
            let back: State = switch state {
            case .rcdataEndTagName: .rcdata
            case .rawtextEndTagName: .rawtext
            case .scriptDataEndTagName: .scriptData
            default: .scriptDataEscaped
            }
            let c = consume()
            if Tokenizer.isWhitespace(c) && isAppropriateEndTag() { state = .beforeAttributeName }
            else if c == 0x2F && isAppropriateEndTag() { state = .selfClosingStartTag }
            else if c == 0x3E && isAppropriateEndTag() { state = .data; emitTag() }
            else if Tokenizer.isAlpha(c) { tagName.append(Tokenizer.lower(c), from: input); temp.append(UInt8(c)) }
            else {
                appendText([0x3C, 0x2F]); appendText(temp)
                reconsume(back)
            }
        case .scriptDataLessThan:
            let c = consume()
            if c == 0x2F { temp.removeAll(keepingCapacity: true); state = .scriptDataEndTagOpen }
            else if c == 0x21 { state = .scriptDataEscapeStart; appendText([0x3C, 0x21]) }
            else { appendText(0x3C); reconsume(.scriptData) }
        case .scriptDataEscapeStart:
            let c = consume()
            if c == 0x2D { state = .scriptDataEscapeStartDash; appendText(0x2D) } else { reconsume(.scriptData) }
        case .scriptDataEscapeStartDash:
            let c = consume()
            if c == 0x2D { state = .scriptDataEscapedDashDash; appendText(0x2D) } else { reconsume(.scriptData) }
        case .scriptDataEscaped: scriptDataEscaped(double: false, dashes: 0)
        case .scriptDataEscapedDash: scriptDataEscaped(double: false, dashes: 1)
        case .scriptDataEscapedDashDash: scriptDataEscaped(double: false, dashes: 2)
        case .scriptDataEscapedLessThan:
            let c = consume()
            if c == 0x2F { temp.removeAll(keepingCapacity: true); state = .scriptDataEscapedEndTagOpen }
            else if Tokenizer.isAlpha(c) { temp.removeAll(keepingCapacity: true); appendText(0x3C); reconsume(.scriptDataDoubleEscapeStart) }
            else { appendText(0x3C); reconsume(.scriptDataEscaped) }
        case .scriptDataDoubleEscapeStart, .scriptDataDoubleEscapeEnd:
            let c = consume()
            let start = state == .scriptDataDoubleEscapeStart
            if Tokenizer.isWhitespace(c) || c == 0x2F || c == 0x3E {
                let isScript = temp == Array("script".utf8)
                if start { state = isScript ? .scriptDataDoubleEscaped : .scriptDataEscaped }
                else { state = isScript ? .scriptDataEscaped : .scriptDataDoubleEscaped }
                appendText(UInt8(c))
            } else if Tokenizer.isAlpha(c) {
                temp.append(Tokenizer.lower(c)); appendText(UInt8(c))
            } else {
                reconsume(start ? .scriptDataEscaped : .scriptDataDoubleEscaped)
            }
        case .scriptDataDoubleEscaped: scriptDataEscaped(double: true, dashes: 0)
        case .scriptDataDoubleEscapedDash: scriptDataEscaped(double: true, dashes: 1)
        case .scriptDataDoubleEscapedDashDash: scriptDataEscaped(double: true, dashes: 2)
        case .scriptDataDoubleEscapedLessThan:
            let c = consume()
            if c == 0x2F { temp.removeAll(keepingCapacity: true); state = .scriptDataDoubleEscapeEnd; appendText(0x2F) }
            else { reconsume(.scriptDataDoubleEscaped) }
        case .beforeAttributeName:
            // The common shape — whitespace, then `name="value"` with a lowercase name and a
            // value without `&` or NUL — is taken in one step; anything else falls through to
            // the spec's states from the same position.
            while pos < inputCount, Tokenizer.isWhitespace(Int(byte(pos))) { pos += 1 }
            while scanSimpleAttribute() {
                guard pos < inputCount else { return }  // EOF: afterAttributeValueQuoted reports it
                let next = byte(pos)
                if next == 0x3E { pos += 1; state = .data; emitTag(); return }
                guard Tokenizer.isWhitespace(Int(next)) else { return }  // afterAttributeValueQuoted decides
                while pos < inputCount, Tokenizer.isWhitespace(Int(byte(pos))) { pos += 1 }
                state = .beforeAttributeName
            }
            let c = consume()
            if Tokenizer.isWhitespace(c) { break }
            if c == 0x2F || c == 0x3E || c == Tokenizer.eof { reconsume(.afterAttributeName) }
            else if c == 0x3D {
                error("unexpected-equals-sign-before-attribute-name")
                startAttribute(); attrName.append(0x3D, from: input); state = .attributeName
            } else { startAttribute(); reconsume(.attributeName) }
        case .attributeName:
            let nameStart = pos
            while pos < inputCount {
                let b = byte(pos)
                if (b >= 0x61 && b <= 0x7A) || b == 0x2D { pos += 1 } else { break }
            }
            attrName.appendRun(nameStart, pos, from: input)
            let c = consume()
            if Tokenizer.isWhitespace(c) || c == 0x2F || c == 0x3E || c == Tokenizer.eof { reconsume(.afterAttributeName) }
            else if c == 0x3D { state = .beforeAttributeValue }
            else if c == 0x00 { error("unexpected-null-character"); attrName.append(contentsOf: Tokenizer.replacement, from: input) }
            else {
                if c == 0x22 || c == 0x27 || c == 0x3C { error("unexpected-character-in-attribute-name") }
                attrName.append(Tokenizer.lower(c), from: input)
            }
        case .afterAttributeName:
            let c = consume()
            if Tokenizer.isWhitespace(c) { break }
            if c == 0x2F { state = .selfClosingStartTag }
            else if c == 0x3D { state = .beforeAttributeValue }
            else if c == 0x3E { state = .data; emitTag() }
            else if c == Tokenizer.eof { error("eof-in-tag"); emitEOF() }
            else { startAttribute(); reconsume(.attributeName) }
        case .beforeAttributeValue:
            let c = consume()
            if Tokenizer.isWhitespace(c) { break }
            if c == 0x22 { state = .attributeValueDoubleQuoted }
            else if c == 0x27 { state = .attributeValueSingleQuoted }
            else if c == 0x3E { error("missing-attribute-value"); state = .data; emitTag() }
            else { reconsume(.attributeValueUnquoted) }
        case .attributeValueDoubleQuoted, .attributeValueSingleQuoted:
            let quote: UInt8 = state == .attributeValueDoubleQuoted ? 0x22 : 0x27
            let start = pos
            pos = firstStop(from: pos, quote, 0x26, 0x00)
            if pos > start { attrValue.appendRun(start, pos, from: input) }
            let c = consume()
            if c == Int(quote) { state = .afterAttributeValueQuoted }
            else if c == 0x26 { consumeCharacterReference(inAttribute: true) }
            else if c == 0x00 { error("unexpected-null-character"); attrValue.append(contentsOf: Tokenizer.replacement, from: input) }
            else if c == Tokenizer.eof { error("eof-in-tag"); emitEOF() }
        case .attributeValueUnquoted:
            let c = consume()
            if Tokenizer.isWhitespace(c) { state = .beforeAttributeName }
            else if c == 0x26 { consumeCharacterReference(inAttribute: true) }
            else if c == 0x3E { state = .data; emitTag() }
            else if c == 0x00 { error("unexpected-null-character"); attrValue.append(contentsOf: Tokenizer.replacement, from: input) }
            else if c == Tokenizer.eof { error("eof-in-tag"); emitEOF() }
            else {
                if c == 0x22 || c == 0x27 || c == 0x3C || c == 0x3D || c == 0x60 { error("unexpected-character-in-unquoted-attribute-value") }
                attrValue.append(UInt8(c), from: input)
            }
        case .afterAttributeValueQuoted:
            let c = consume()
            if Tokenizer.isWhitespace(c) { state = .beforeAttributeName }
            else if c == 0x2F { state = .selfClosingStartTag }
            else if c == 0x3E { state = .data; emitTag() }
            else if c == Tokenizer.eof { error("eof-in-tag"); emitEOF() }
            else { error("missing-whitespace-between-attributes"); reconsume(.beforeAttributeName) }
        case .selfClosingStartTag:
            let c = consume()
            if c == 0x3E { selfClosing = true; state = .data; emitTag() }
            else if c == Tokenizer.eof { error("eof-in-tag"); emitEOF() }
            else { error("unexpected-solidus-in-tag"); reconsume(.beforeAttributeName) }
        case .bogusComment:
            let c = consume()
            if c == 0x3E { state = .data; emitComment() }
            else if c == Tokenizer.eof { emitComment(); emitEOF() }
            else if c == 0x00 { error("unexpected-null-character"); commentData.append(contentsOf: Tokenizer.replacement) }
            else { commentData.append(UInt8(c)) }
        case .markupDeclarationOpen:
            flushText()  // a comment, doctype or CDATA section starts: the run before it is complete
            if matchesExactly("--") {
                pos += 2; commentData.removeAll(keepingCapacity: true); state = .commentStart
            } else if matchesCaseInsensitive("doctype") {
                pos += 7; state = .doctype
            } else if matchesExactly("[CDATA[") {
                pos += 7
                if allowCDATA { state = .cdataSection }
                else {
                    error("cdata-in-html-content")
                    commentData = Array("[CDATA[".utf8); state = .bogusComment
                }
            } else {
                error("incorrectly-opened-comment")
                commentData.removeAll(keepingCapacity: true); state = .bogusComment
            }
        case .commentStart:
            let c = consume()
            if c == 0x2D { state = .commentStartDash }
            else if c == 0x3E { error("abrupt-closing-of-empty-comment"); state = .data; emitComment() }
            else { reconsume(.comment) }
        case .commentStartDash:
            let c = consume()
            if c == 0x2D { state = .commentEnd }
            else if c == 0x3E { error("abrupt-closing-of-empty-comment"); state = .data; emitComment() }
            else if c == Tokenizer.eof { error("eof-in-comment"); emitComment(); emitEOF() }
            else { commentData.append(0x2D); reconsume(.comment) }
        case .comment:
            let start = pos
            while pos < inputCount {
                let b = byte(pos)
                if b == 0x3C || b == 0x2D || b == 0x00 { break }
                pos += 1
            }
            if pos > start { commentData.append(contentsOf: input[start..<pos]) }
            let c = consume()
            switch c {
            case 0x3C: commentData.append(0x3C); state = .commentLessThan
            case 0x2D: state = .commentEndDash
            case 0x00: error("unexpected-null-character"); commentData.append(contentsOf: Tokenizer.replacement)
            case Tokenizer.eof: error("eof-in-comment"); emitComment(); emitEOF()
            default: commentData.append(UInt8(c))
            }
        case .commentLessThan:
            let c = consume()
            if c == 0x21 { commentData.append(0x21); state = .commentLessThanBang }
            else if c == 0x3C { commentData.append(0x3C) }
            else { reconsume(.comment) }
        case .commentLessThanBang:
            let c = consume()
            if c == 0x2D { state = .commentLessThanBangDash } else { reconsume(.comment) }
        case .commentLessThanBangDash:
            let c = consume()
            if c == 0x2D { state = .commentLessThanBangDashDash } else { reconsume(.commentEndDash) }
        case .commentLessThanBangDashDash:
            let c = consume()
            if c != 0x3E && c != Tokenizer.eof { error("nested-comment") }
            reconsume(.commentEnd)
        case .commentEndDash:
            let c = consume()
            if c == 0x2D { state = .commentEnd }
            else if c == Tokenizer.eof { error("eof-in-comment"); emitComment(); emitEOF() }
            else { commentData.append(0x2D); reconsume(.comment) }
        case .commentEnd:
            let c = consume()
            if c == 0x3E { state = .data; emitComment() }
            else if c == 0x21 { state = .commentEndBang }
            else if c == 0x2D { commentData.append(0x2D) }
            else if c == Tokenizer.eof { error("eof-in-comment"); emitComment(); emitEOF() }
            else { commentData.append(contentsOf: [0x2D, 0x2D]); reconsume(.comment) }
        case .commentEndBang:
            let c = consume()
            if c == 0x2D { commentData.append(contentsOf: [0x2D, 0x2D, 0x21]); state = .commentEndDash }
            else if c == 0x3E { error("incorrectly-closed-comment"); state = .data; emitComment() }
            else if c == Tokenizer.eof { error("eof-in-comment"); emitComment(); emitEOF() }
            else { commentData.append(contentsOf: [0x2D, 0x2D, 0x21]); reconsume(.comment) }
        case .doctype:
            let c = consume()
            doctypeName = nil; publicId = nil; systemId = nil; forceQuirks = false
            if Tokenizer.isWhitespace(c) { state = .beforeDoctypeName }
            else if c == 0x3E { reconsume(.beforeDoctypeName) }
            else if c == Tokenizer.eof { error("eof-in-doctype"); forceQuirks = true; emitDoctype(); emitEOF() }
            else { error("missing-whitespace-before-doctype-name"); reconsume(.beforeDoctypeName) }
        case .beforeDoctypeName:
            let c = consume()
            if Tokenizer.isWhitespace(c) { break }
            if c == 0x00 { error("unexpected-null-character"); doctypeName = Tokenizer.replacement; state = .doctypeName }
            else if c == 0x3E { error("missing-doctype-name"); forceQuirks = true; state = .data; emitDoctype() }
            else if c == Tokenizer.eof { error("eof-in-doctype"); forceQuirks = true; emitDoctype(); emitEOF() }
            else { doctypeName = [Tokenizer.lower(c)]; state = .doctypeName }
        case .doctypeName:
            let c = consume()
            if Tokenizer.isWhitespace(c) { state = .afterDoctypeName }
            else if c == 0x3E { state = .data; emitDoctype() }
            else if c == 0x00 { error("unexpected-null-character"); doctypeName!.append(contentsOf: Tokenizer.replacement) }
            else if c == Tokenizer.eof { error("eof-in-doctype"); forceQuirks = true; emitDoctype(); emitEOF() }
            else { doctypeName!.append(Tokenizer.lower(c)) }
        case .afterDoctypeName:
            let c = peek()
            if Tokenizer.isWhitespace(c) { pos += 1; break }
            if c == 0x3E { pos += 1; state = .data; emitDoctype() }
            else if c == Tokenizer.eof { pos += 1; error("eof-in-doctype"); forceQuirks = true; emitDoctype(); emitEOF() }
            else if matchesCaseInsensitive("public") { pos += 6; state = .afterDoctypePublicKeyword }
            else if matchesCaseInsensitive("system") { pos += 6; state = .afterDoctypeSystemKeyword }
            else { pos += 1; error("invalid-character-sequence-after-doctype-name"); forceQuirks = true; reconsume(.bogusDoctype) }
        case .afterDoctypePublicKeyword, .afterDoctypeSystemKeyword:
            let isPublic = state == .afterDoctypePublicKeyword
            let c = consume()
            if Tokenizer.isWhitespace(c) { state = isPublic ? .beforeDoctypePublicIdentifier : .beforeDoctypeSystemIdentifier }
            else {
                if c == 0x22 || c == 0x27 {
                    error(isPublic ? "missing-whitespace-after-doctype-public-keyword" : "missing-whitespace-after-doctype-system-keyword")
                }
                doctypeIdentifierStart(c, isPublic: isPublic)
            }
        case .beforeDoctypePublicIdentifier, .beforeDoctypeSystemIdentifier:
            let c = consume()
            if !Tokenizer.isWhitespace(c) { doctypeIdentifierStart(c, isPublic: state == .beforeDoctypePublicIdentifier) }
        case .doctypePublicIdentifierDoubleQuoted, .doctypePublicIdentifierSingleQuoted,
             .doctypeSystemIdentifierDoubleQuoted, .doctypeSystemIdentifierSingleQuoted:
            let isPublic = state == .doctypePublicIdentifierDoubleQuoted || state == .doctypePublicIdentifierSingleQuoted
            let quote = (state == .doctypePublicIdentifierDoubleQuoted || state == .doctypeSystemIdentifierDoubleQuoted) ? 0x22 : 0x27
            let c = consume()
            if c == quote { state = isPublic ? .afterDoctypePublicIdentifier : .afterDoctypeSystemIdentifier }
            else if c == 0x00 {
                error("unexpected-null-character")
                if isPublic { publicId!.append(contentsOf: Tokenizer.replacement) } else { systemId!.append(contentsOf: Tokenizer.replacement) }
            } else if c == 0x3E {
                error("abrupt-doctype-identifier"); forceQuirks = true; state = .data; emitDoctype()
            } else if c == Tokenizer.eof { error("eof-in-doctype"); forceQuirks = true; emitDoctype(); emitEOF() }
            else if isPublic { publicId!.append(UInt8(c)) } else { systemId!.append(UInt8(c)) }
        case .afterDoctypePublicIdentifier, .betweenDoctypePublicAndSystemIdentifiers:
            let between = state == .betweenDoctypePublicAndSystemIdentifiers
            let c = consume()
            if Tokenizer.isWhitespace(c) { if !between { state = .betweenDoctypePublicAndSystemIdentifiers } }
            else if c == 0x3E { state = .data; emitDoctype() }
            else if c == 0x22 || c == 0x27 {
                if !between { error("missing-whitespace-between-doctype-public-and-system-identifiers") }
                systemId = []; state = c == 0x22 ? .doctypeSystemIdentifierDoubleQuoted : .doctypeSystemIdentifierSingleQuoted
            } else if c == Tokenizer.eof { error("eof-in-doctype"); forceQuirks = true; emitDoctype(); emitEOF() }
            else { error("missing-quote-before-doctype-system-identifier"); forceQuirks = true; reconsume(.bogusDoctype) }
        case .afterDoctypeSystemIdentifier:
            let c = consume()
            if Tokenizer.isWhitespace(c) { break }
            if c == 0x3E { state = .data; emitDoctype() }
            else if c == Tokenizer.eof { error("eof-in-doctype"); forceQuirks = true; emitDoctype(); emitEOF() }
            else { error("unexpected-character-after-doctype-system-identifier"); reconsume(.bogusDoctype) }
        case .bogusDoctype:
            let c = consume()
            if c == 0x3E { state = .data; emitDoctype() }
            else if c == 0x00 { error("unexpected-null-character") }
            else if c == Tokenizer.eof { emitDoctype(); emitEOF() }
        case .cdataSection:
            let start = pos
            while pos < inputCount, byte(pos) != 0x5D { pos += 1 }
            if pos > start { text.appendRun(start, pos, from: input) }
            let c = consume()
            if c == 0x5D { state = .cdataSectionBracket }
            else if c == Tokenizer.eof { error("eof-in-cdata"); emitEOF() }
        case .cdataSectionBracket:
            let c = consume()
            if c == 0x5D { state = .cdataSectionEnd } else { appendText(0x5D); reconsume(.cdataSection) }
        case .cdataSectionEnd:
            let c = consume()
            if c == 0x5D { appendText(0x5D) }
            else if c == 0x3E { state = .data }
            else { appendText([0x5D, 0x5D]); reconsume(.cdataSection) }
        }
    }
}
