// The tokenizer's state machine (§13.2.5.1-71): the state loop, its text-run fast paths and
// one inlined switch over every state.

extension Tokenizer {
    // MARK: The state machine

    /// Runs states until at least one token is queued.
    mutating func step() {
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
