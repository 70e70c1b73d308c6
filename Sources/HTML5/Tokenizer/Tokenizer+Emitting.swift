// The tokenizer's output: pending text flushed into character tokens, tags, comments and
// doctypes emitted into the one-token slot and its overflow queue, and `nextToken()`.

extension Tokenizer {
    // MARK: Emitting

    /// Inlined test, out-of-line work: most calls (every tag's `emit`) find no pending text, and
    /// as a call each of them cost a prologue and an epilogue.
    @inline(__always) mutating func flushText() {
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
    mutating func expectedAttributeValue() -> String? {
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

    /// Whether a token is queued. A `mutating get`, always inlined: the state loop asks it after
    /// every state, and as a plain getter left out of line it was handed a copy of the whole
    /// tokenizer (a 488-byte `memcpy` per state: 7 % of parsing real-world mail, callgrind).
    @inline(__always) var hasPendingToken: Bool {
        mutating get { slot != nil || overflowHead < overflow.count }
    }

    @inline(__always) mutating func appendText(_ byte: UInt8) { text.append(byte, from: input) }
    @inline(__always) mutating func appendText(_ bytes: [UInt8]) { text.append(contentsOf: bytes, from: input) }

    /// Emits the tag being tokenized, with its attributes, or with `replayed` (a cached
    /// section's, ``replayAttributeSection()``; the tokenizer's own array is then left as it is).
    mutating func emitTag(replaying replayed: [Attribute]? = nil) {
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

    mutating func emitComment() {
        emit(.comment(String(decoding: commentData, as: UTF8.self)))
    }

    mutating func emitDoctype() {
        emit(.doctype(DoctypeToken(
            name: doctypeName.map { String(decoding: $0, as: UTF8.self) },
            publicId: publicId.map { String(decoding: $0, as: UTF8.self) },
            systemId: systemId.map { String(decoding: $0, as: UTF8.self) },
            forceQuirks: forceQuirks)))
    }

    mutating func emitEOF() {
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
}
