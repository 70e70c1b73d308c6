// The WHATWG "HTML fragment serialization algorithm": serialize -> parse gives the same tree.
//
// Performance: the tree is written as UTF-8 bytes into one growing buffer of raw memory
// (``UTF8Buffer``: an append is a capacity check and a copy; escaping scans for the few special
// bytes sixteen at a time and copies the runs between them whole), and turned into a `String` once at the end. Element-name
// checks (void elements, raw-text parents) test the interned name (`Element.tag`) in a bit set.

import Foundation  // memcmp

extension Node {
    /// The serialized children of this node (the spec's fragment serialization, like
    /// `innerHTML`). Template contents are serialized for `<template>`.
    public var innerHTML: String {
        var buffer = UTF8Buffer(capacity: 4096)
        HTMLSerializer.serializeChildren(of: self, into: &buffer, scripting: false)
        return buffer.string()
    }

    /// Whether ``innerHTML`` is exactly `text` (byte for byte), without making a `String` of the
    /// serialization: the sanitizer's re-parse check.
    public func innerHTMLEquals(_ text: String) -> Bool {
        var buffer = UTF8Buffer(capacity: max(text.utf8.count, 64))
        HTMLSerializer.serializeChildren(of: self, into: &buffer, scripting: false)
        return buffer.equals(text)
    }

    /// This node and its subtree serialized (like `outerHTML`; for a document, the children).
    public var outerHTML: String { serialized(scripting: false) }

    /// The serialization; with `scripting`, `<noscript>` text is written raw (as it was parsed
    /// with the scripting flag on).
    public func serialized(scripting: Bool) -> String {
        var buffer = UTF8Buffer(capacity: 1024)
        if self is Document || self is DocumentFragment {
            HTMLSerializer.serializeChildren(of: self, into: &buffer, scripting: scripting)
        } else {
            HTMLSerializer.serialize(self, into: &buffer, scripting: scripting)
        }
        return buffer.string()
    }
}

/// Calls `body` with the UTF-8 of `string`, read in place for native and small strings (no copy
/// of the `String` value, so no retain and release of its storage); other strings are made
/// contiguous first.
@inline(__always)
func withUTF8Bytes<R>(of string: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    if let result = string.utf8.withContiguousStorageIfAvailable(body) { return result }
    var copy = string
    return copy.withUTF8(body)
}

/// Calls `body` with the UTF-8 of the string stored at `string` (a class's property, an array
/// element), read where it is stored: no retain and release of its storage. Reading a `var`
/// property of a class, or an element through an unsafe pointer, copies the `String` out (a
/// retain), because the optimizer cannot prove that nothing overwrites the property while
/// `body` runs; an `inout` access is exclusive, so the string is borrowed in place instead.
///
/// It never writes: `withUTF8` is mutating only to make a non-contiguous string contiguous
/// first, and such a string (none the parser makes: its strings are native) is read through a
/// copy instead. So `string` may be memory that is not to be mutated, reached through
/// `UnsafeMutablePointer(mutating:)`.
@inline(__always)
func withUTF8Bytes<R>(inPlace string: inout String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    if string.isContiguousUTF8 { return string.withUTF8(body) }
    return withUTF8Bytes(of: string, body)
}

/// Calls `body` with the elements of the array stored at `array` (a class's property), read in
/// its buffer: an `inout` access borrows the array in place, where reading the property would
/// copy it out (a retain and release of its buffer; see ``withUTF8Bytes(inPlace:_:)``). Never
/// writes: no mutating method of the array is called, so no uniqueness check or copy either.
@inline(__always)
func withBuffer<Element, R>(inPlace array: inout [Element], _ body: (UnsafeBufferPointer<Element>) -> R) -> R {
    array.withUnsafeBufferPointer(body)
}

/// A growable buffer of UTF-8 bytes in raw memory, for the serializer: an append is a capacity
/// check and a copy (no uniqueness check or generic sequence copy as with `[UInt8]`). Not
/// copyable; it frees its memory when it goes out of scope.
struct UTF8Buffer: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int
    /// When set, a full buffer is handed to it and emptied instead of grown (a serialization
    /// streamed out in pieces of `capacity` bytes); the bytes left at the end are the caller's.
    private let drain: ((UnsafeBufferPointer<UInt8>) -> Void)?

    init(capacity: Int, drain: ((UnsafeBufferPointer<UInt8>) -> Void)? = nil) {
        self.capacity = max(capacity, 16)
        self.drain = drain
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        if count == capacity { grow(to: count + 1) }
        base[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        if bytes.count > capacity - count { grow(to: count + bytes.count) }
        (base + count).initialize(from: source, count: bytes.count)
        count += bytes.count
    }

    @inline(__always)
    mutating func append(_ literal: StaticString) {
        append(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// The UTF-8 of `string`.
    @inline(__always)
    mutating func append(_ string: String) {
        withUTF8Bytes(of: string) { append($0) }
    }

    private mutating func grow(to needed: Int) {
        if let drain, count > 0 {
            // Hand the full buffer over and start again at its beginning (every append cuts on
            // the same boundaries as `string()` relies on: each piece is well-formed UTF-8).
            let extra = needed - count
            drain(UnsafeBufferPointer(start: base, count: count))
            count = 0
            if extra <= capacity { return }
            return grow(to: extra)
        }
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.initialize(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    /// The bytes as a `String`, copied without validating them again.
    ///
    /// Trust-model row: inbox (incoming mail) — a `String` holding ill-formed UTF-8 would break
    /// the standard library's invariants, so this relies on what every append puts here being
    /// well-formed: ASCII bytes and ASCII literals, whole strings (a `String`'s UTF-8 is
    /// well-formed), and runs of a string cut only before an ASCII byte, before the lead byte
    /// C2 of U+00A0 or after its A0 (the escaping's cuts, `escapeRuns`): all on scalar
    /// boundaries, so every run is well-formed too. Debug builds validate the bytes here again
    /// (every test serialization), `TokenStringTests` checks serializations of generated
    /// non-ASCII documents, and the `html5` fuzz target checks every serialization it makes.
    func string() -> String {
        let bytes = UnsafeBufferPointer(start: base, count: count)
        assert(String(validating: bytes, as: UTF8.self) != nil, "the serializer wrote ill-formed UTF-8")
        return ByteAccumulator.stringFromValidUTF8(bytes)
    }

    /// The bytes, valid only during `body`.
    func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: base, count: count))
    }

    /// Whether the bytes are exactly the UTF-8 of `text`.
    func equals(_ text: String) -> Bool {
        guard count == text.utf8.count else { return false }
        var copy = text
        return copy.withUTF8 { other in
            guard let otherBase = other.baseAddress else { return count == 0 }
            return memcmp(base, otherBase, count) == 0
        }
    }
}

/// The spec's HTML serialization of a tree.
///
/// Trust-model row: inbox — the sanitized tree goes to the web view as this text; it re-parses to
/// the same tree.
public enum HTMLSerializer {
    static let voidElements: Set<String> = [
        "area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr", "img", "input",
        "keygen", "link", "meta", "param", "source", "track", "wbr",
    ]
    static let rawTextParents: Set<String> = ["style", "script", "xmp", "iframe", "noembed", "noframes", "plaintext"]

    /// Serializes the children of `node` (template contents for a template element).
    public static func serializeChildren(of node: Node, into out: inout String, scripting: Bool = false) {
        var buffer = UTF8Buffer(capacity: 1024)
        serializeChildren(of: node, into: &buffer, scripting: scripting)
        out += buffer.string()
    }

    /// Serializes one node (with its subtree).
    public static func serialize(_ node: Node, into out: inout String, scripting: Bool = false) {
        var buffer = UTF8Buffer(capacity: 1024)
        serialize(node, into: &buffer, scripting: scripting)
        out += buffer.string()
    }

    /// Serializes the children of `node` as UTF-8 (template contents for a template element).
    ///
    /// The walk holds no strong reference to the nodes it visits: it goes through the links as
    /// `Unmanaged` references (``UnretainedLinks``) and reads each node through
    /// `_withUnsafeGuaranteedRef`, and it keeps its stack of open elements as `Unmanaged` too, so
    /// a node costs no retain and release (each an atomic read-modify-write; reference counting
    /// was a fifth of the sanitizer's time). That is sound because the caller holds `node`, which
    /// holds its whole subtree (children, siblings and template contents are strong links), and
    /// nothing changes the tree while the walk runs: it is one synchronous call on one thread,
    /// nodes are not `Sendable`, and the serializer only reads. The strings are read in place
    /// too (``withUTF8Bytes(inPlace:_:)``).
    ///
    /// Trust-model row: inbox — this is the text of the sanitized tree that the web view gets.
    static func serializeChildren(of node: Node, into out: inout UTF8Buffer, scripting: Bool) {
        let root = UnretainedLinks.Ref.passUnretained(node)
        // The children of the template contents for a `<template>`; a text child of an element
        // is written raw when the element is a raw-text element.
        var parent = root
        var rawAtRoot = false
        if let element = UnretainedLinks.element(root) {
            if let content = UnretainedLinks.templateContent(element) {
                parent = content
            } else {
                rawAtRoot = rawTextChildren(element, scripting: scripting)
            }
        }
        // Iterative walk over the sibling links: the stack holds the open elements whose end tags
        // are pending (and whether their text children are raw), so deep trees cannot overflow.
        var open: [(element: Unmanaged<Element>, raw: Bool)] = []
        var next = UnretainedLinks.firstChild(parent)
        while true {
            guard let current = next else {
                guard let (element, _) = open.popLast() else { return }
                endTag(element, into: &out)
                next = UnretainedLinks.nextSibling(UnretainedLinks.node(element))
                continue
            }
            if let element = UnretainedLinks.element(current) {
                openTag(element, into: &out)
                if isVoid(element) {
                    next = UnretainedLinks.nextSibling(current)
                    continue
                }
                open.append((element, rawTextChildren(element, scripting: scripting)))
                next = UnretainedLinks.firstChild(UnretainedLinks.templateContent(element) ?? current)
                continue
            }
            leaf(current, raw: open.last?.raw ?? rawAtRoot, into: &out)
            next = UnretainedLinks.nextSibling(current)
        }
    }

    /// Serializes one node (with its subtree) as UTF-8. Reads the node as
    /// ``serializeChildren(of:into:scripting:)`` does: the caller holds it.
    static func serialize(_ node: Node, into out: inout UTF8Buffer, scripting: Bool) {
        let ref = UnretainedLinks.Ref.passUnretained(node)
        if let element = UnretainedLinks.element(ref) {
            openTag(element, into: &out)
            if isVoid(element) { return }
            serializeChildren(of: node, into: &out, scripting: scripting)
            endTag(element, into: &out)
        } else {
            let raw = UnretainedLinks.parent(ref).flatMap(UnretainedLinks.element)
                .map { rawTextChildren($0, scripting: scripting) } ?? false
            leaf(ref, raw: raw, into: &out)
        }
    }

    /// Whether the text children of `element` are written without escaping (raw-text elements,
    /// and `<noscript>` when parsed with scripting on).
    @inline(__always)
    private static func rawTextChildren(_ element: Unmanaged<Element>, scripting: Bool) -> Bool {
        element._withUnsafeGuaranteedRef { rawTextChildren(namespace: $0.namespace, tag: $0.tag, scripting: scripting) }
    }

    /// The rule behind ``rawTextChildren(_:scripting:)`` on an element's namespace and interned
    /// name (the arena tree's serializer asks it of its rows).
    @inline(__always)
    static func rawTextChildren(namespace: Namespace, tag: HTMLTag, scripting: Bool) -> Bool {
        namespace == .html && (rawTextParentTags.contains(tag) || (scripting && tag == .noscript))
    }

    /// ``voidElements`` and ``rawTextParents`` as interned names (all of them are in the
    /// ``HTMLTag`` table, and `Element.tag` always agrees with `localName`): the serializer tests
    /// one bit per element instead of the name's bytes. Written as mask words, like the parser's
    /// name sets: statically initialized, so the walk's test per element costs no lazy-global
    /// check (`swift_once`). `HTMLTagTests` checks them against their lists.
    ///
    /// .area, .base, .basefont, .bgsound, .br, .col, .embed, .frame, .hr, .img, .input, .keygen,
    /// .link, .meta, .param, .source, .track, .wbr
    static let voidTags = HTMLTagSet(words: 0x1002020008109840, 0x0040000200040446, 0x0000000000010400, 0x0000000000000000)
    /// .style, .script, .xmp, .iframe, .noembed, .noframes, .plaintext
    static let rawTextParentTags = HTMLTagSet(words: 0x8000000000000000, 0x0800800803000000, 0x0000000000020000, 0x0000000000000000)

    /// `element` is an HTML void element (no end tag, no children written).
    @inline(__always)
    static func isVoid(_ element: Element) -> Bool { isVoid(namespace: element.namespace, tag: element.tag) }

    /// The rule behind ``isVoid(_:)`` on a namespace and an interned name (also the arena tree's).
    @inline(__always)
    static func isVoid(namespace: Namespace, tag: HTMLTag) -> Bool { namespace == .html && voidTags.contains(tag) }

    /// ``isVoid(_:)`` on an element read without a retain (the walk's).
    @inline(__always)
    static func isVoid(_ element: Unmanaged<Element>) -> Bool { element._withUnsafeGuaranteedRef { isVoid($0) } }

    /// `<name attr="value"...>`. The element is read without a retain; its name is a `let`, read
    /// in place, and the attributes are read in place in the array's buffer, each name and value
    /// with ``withUTF8Bytes(inPlace:_:)`` (a copy would retain and release both strings).
    static func openTag(_ element: Unmanaged<Element>, into out: inout UTF8Buffer) {
        element._withUnsafeGuaranteedRef { element in
            out.append(0x3C)
            appendUTF8(element.localName, to: &out)
            withBuffer(inPlace: &element.storedAttributes) { attributes in
                guard let base = attributes.baseAddress else { return }
                // Mutable only for the type: ``withUTF8Bytes(inPlace:_:)`` never writes.
                let attribute = UnsafeMutablePointer(mutating: base)
                for index in 0..<attributes.count {
                    out.append(0x20)
                    if attribute[index].namespace == nil {
                        withUTF8Bytes(inPlace: &attribute[index].name) { out.append($0) }
                    } else {
                        appendUTF8(attribute[index].qualifiedName, to: &out)
                    }
                    out.append(0x3D); out.append(0x22)  // ="
                    withUTF8Bytes(inPlace: &attribute[index].value) { escapeAttributeValue($0, into: &out) }
                    out.append(0x22)
                }
            }
            out.append(0x3E)
        }
    }

    /// `</name>`.
    @inline(__always)
    private static func endTag(_ element: Unmanaged<Element>, into out: inout UTF8Buffer) {
        out.append(0x3C); out.append(0x2F)  // </
        element._withUnsafeGuaranteedRef { appendUTF8($0.localName, to: &out) }
        out.append(0x3E)
    }

    /// A text (escaped, or raw under a raw-text element), comment or doctype; nothing for the
    /// other kinds. The node is read without a retain and its string in place.
    private static func leaf(_ node: UnretainedLinks.Ref, raw: Bool, into out: inout UTF8Buffer) {
        node._withUnsafeGuaranteedRef { node in
            switch ObjectIdentifier(type(of: node)) {
            case ObjectIdentifier(Text.self):
                let text = unsafeDowncast(node, to: Text.self)
                if raw {
                    withUTF8Bytes(inPlace: &text.storedData) { out.append($0) }
                } else {
                    withUTF8Bytes(inPlace: &text.storedData) { escapeText($0, into: &out) }
                }
            case ObjectIdentifier(Comment.self):
                out.append("<!--" as StaticString)
                withUTF8Bytes(inPlace: &unsafeDowncast(node, to: Comment.self).storedData) { out.append($0) }
                out.append("-->" as StaticString)
            case ObjectIdentifier(DocumentType.self):
                out.append("<!DOCTYPE " as StaticString)
                appendUTF8(unsafeDowncast(node, to: DocumentType.self).name, to: &out)
                out.append(0x3E)
            default:
                break
            }
        }
    }

    @inline(__always)
    private static func appendUTF8(_ string: String, to out: inout UTF8Buffer) {
        out.append(string)
    }

    /// Escapes text (`&`, NBSP, `<`, `>`) or an attribute value (`&`, NBSP, `"`), as the spec says.
    public static func escape(_ string: String, attributeMode: Bool, into out: inout String) {
        var buffer = UTF8Buffer(capacity: string.utf8.count + 16)
        escape(string, attributeMode: attributeMode, into: &buffer)
        out += buffer.string()
    }

    /// The same escaping, as UTF-8: scans for the special bytes and copies the runs between them.
    static func escape(_ string: String, attributeMode: Bool, into out: inout UTF8Buffer) {
        withUTF8Bytes(of: string) { escape($0, attributeMode: attributeMode, into: &out) }
    }

    private static func escape(_ p: UnsafeBufferPointer<UInt8>, attributeMode: Bool, into out: inout UTF8Buffer) {
        if attributeMode { escapeAttributeValue(p, into: &out) } else { escapeText(p, into: &out) }
    }

    // One copy of the loop per mode, each with its byte set as constants.
    @inline(never)
    static func escapeText(_ p: UnsafeBufferPointer<UInt8>, into out: inout UTF8Buffer) {
        escapeRuns(p, attributeMode: false, into: &out)
    }

    @inline(never)
    static func escapeAttributeValue(_ p: UnsafeBufferPointer<UInt8>, into out: inout UTF8Buffer) {
        escapeRuns(p, attributeMode: true, into: &out)
    }

    /// Finds each special byte (``firstSpecial(in:from:attributeMode:)``), copies the run of plain
    /// bytes before it whole and writes its replacement.
    @inline(__always)
    private static func escapeRuns(_ p: UnsafeBufferPointer<UInt8>, attributeMode: Bool, into out: inout UTF8Buffer) {
        let n = p.count
        guard n > 0 else { return }
        var runStart = 0
        var i = 0
        while true {
            i = firstSpecial(in: p, from: i, attributeMode: attributeMode)
            guard i < n else { break }
            let replacement: StaticString
            var width = 1
            switch p[i] {
            case 0x26: replacement = "&amp;"
            case 0xC2:
                guard i + 1 < n, p[i + 1] == 0xA0 else { i += 1; continue }  // another U+0080-U+00BF
                replacement = "&nbsp;"
                width = 2
            case 0x22: replacement = "&quot;"
            case 0x3C: replacement = "&lt;"
            default: replacement = "&gt;"
            }
            if runStart < i { out.append(UnsafeBufferPointer(rebasing: p[runStart..<i])) }
            out.append(replacement)
            i += width
            runStart = i
        }
        if runStart < n { out.append(UnsafeBufferPointer(rebasing: p[runStart..<n])) }
    }

    /// Whether `b` is a byte the escaping stops at: `&` and C2 (the lead byte of U+00A0) in both
    /// modes, `"` in attribute mode, `<` and `>` in text mode. `"` (22) and `&` (26) differ only
    /// in bit 2, `<` (3C) and `>` (3E) only in bit 1: one compare each pair.
    @inline(__always)
    private static func isSpecial(_ b: UInt8, attributeMode: Bool) -> Bool {
        attributeMode ? ((b | 0x04) == 0x26 || b == 0xC2) : (b == 0x26 || b == 0xC2 || (b | 0x02) == 0x3E)
    }

    /// The index of the first special byte (``isSpecial(_:attributeMode:)``) at or after `start`,
    /// or `p.count`. Sixteen bytes at a time with vector compares (`SIMD16<UInt8>`, as the
    /// tokenizer's `firstStop`); the last 1 to 15 bytes of a longer run are tested as the final
    /// sixteen bytes of the input (the lanes before them were already found plain). A run of 4 to
    /// 15 bytes is tested as one or two words with ``SWAR`` (its first and last eight bytes, or its
    /// first and last four in one word), a shorter one byte by byte. Loads stay inside `p`: each
    /// is guarded by the count of bytes left.
    @inline(__always)
    private static func firstSpecial(in p: UnsafeBufferPointer<UInt8>, from start: Int, attributeMode: Bool) -> Int {
        let n = p.count
        var i = start
        guard i < n, let base = p.baseAddress else { return n }
        let raw = UnsafeRawPointer(base)
        if n &- i >= 16 {
            let amp = SIMD16<UInt8>(repeating: 0x26), c2 = SIMD16<UInt8>(repeating: 0xC2)
            let bit = SIMD16<UInt8>(repeating: attributeMode ? 0x04 : 0x02)
            let pair = SIMD16<UInt8>(repeating: attributeMode ? 0x26 : 0x3E)
            @inline(__always) func hits(at offset: Int) -> SIMDMask<SIMD16<Int8>> {
                let block = raw.loadUnaligned(fromByteOffset: offset, as: SIMD16<UInt8>.self)
                return attributeMode ? ((block | bit) .== pair) .| (block .== c2)
                    : (block .== amp) .| (block .== c2) .| ((block | bit) .== pair)
            }
            // The index of the first hit of a block at `offset`, or `n` when it has none.
            @inline(__always) func firstHit(_ hit: SIMDMask<SIMD16<Int8>>, at offset: Int) -> Int {
                let lanes = unsafeBitCast(SIMD16<UInt8>(repeating: 0).replacing(with: 0xFF, where: hit), to: SIMD2<UInt64>.self)
                let low = UInt64(littleEndian: lanes[0]), high = UInt64(littleEndian: lanes[1])
                if low != 0 { return offset &+ (low.trailingZeroBitCount &>> 3) }
                if high != 0 { return offset &+ 8 &+ (high.trailingZeroBitCount &>> 3) }
                return n
            }
            repeat {
                let hit = hits(at: i)
                if any(hit) { return firstHit(hit, at: i) }
                i &+= 16
            } while n &- i >= 16
            guard i < n else { return n }
            // The bytes from n - 16 up to i were scanned above (with `start <= n - 16`): no hit.
            return firstHit(hits(at: n &- 16), at: n &- 16)
        }
        if n &- i >= 4 {
            let amp = SWAR.broadcast(0x26), c2 = SWAR.broadcast(0xC2)
            let bit = SWAR.broadcast(attributeMode ? 0x04 : 0x02), pair = SWAR.broadcast(attributeMode ? 0x26 : 0x3E)
            @inline(__always) func found(_ word: UInt64) -> UInt64 {
                attributeMode ? SWAR.matches(word | bit, pair) | SWAR.matches(word, c2)
                    : SWAR.matches(word, amp) | SWAR.matches(word, c2) | SWAR.matches(word | bit, pair)
            }
            @inline(__always) func load<T: FixedWidthInteger & UnsignedInteger>(_ offset: Int, as: T.Type) -> UInt64 {
                UInt64(T(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: T.self)))
            }
            if n &- i >= 8 {
                let first = found(load(i, as: UInt64.self))
                if first != 0 { return i &+ SWAR.firstMatch(first) }
                // The last eight bytes: those before i + 8 are plain (no match, so no false flag
                // borrowed upward from them either), so the lowest flagged lane is the first special.
                let second = found(load(n &- 8, as: UInt64.self))
                return second != 0 ? n &- 8 &+ SWAR.firstMatch(second) : n
            }
            // 4 to 7 bytes: lanes 0-3 are bytes i to i + 3, lanes 4-7 bytes n - 4 to n - 1 (the
            // same bytes again where they overlap). A hit in lanes 0-3 is the first; otherwise
            // lanes 0-3 are plain and flag nothing above them, and the lowest flagged lane of 4-7 is.
            let hit = found(load(i, as: UInt32.self) | load(n &- 4, as: UInt32.self) &<< 32)
            guard hit != 0 else { return n }
            let lane = SWAR.firstMatch(hit)
            return lane < 4 ? i &+ lane : n &- 8 &+ lane
        }
        while i < n {
            if isSpecial(p[i], attributeMode: attributeMode) { return i }
            i &+= 1
        }
        return n
    }
}
