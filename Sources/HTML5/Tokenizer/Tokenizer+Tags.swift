// Tags under construction: start, attribute names and values (with the attribute-section and
// value caches), and the "appropriate end tag" test.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Tokenizer {
    // MARK: Tag helpers

    @inline(__always) mutating func startTag(end: Bool) {
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
    mutating func cacheAttributeSection(_ attributes: [Attribute]) {
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
    mutating func replayAttributeSection() -> Bool {
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

    mutating func startAttribute() {
        finishAttribute()
        attrName.reset()
        attrValue.reset()
        hasAttr = true
    }

    /// Inlined test, out-of-line work (as `flushText`): a tag without attributes has none to finish.
    @inline(__always) mutating func finishAttribute() {
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

    mutating func isAppropriateEndTag() -> Bool {
        if lastStartTag != .unknown { return tagName.withBytes(from: input) { HTMLTag.lookup($0) } == lastStartTag }
        guard let last = lastStartTagOtherName else { return false }
        return tagName.withBytes(from: input) { last.utf8.elementsEqual($0) }
    }
}
