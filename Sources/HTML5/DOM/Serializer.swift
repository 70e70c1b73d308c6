// The WHATWG "HTML fragment serialization algorithm": serialize -> parse gives the same tree.
//
// Performance: the tree is written as UTF-8 bytes into one growing buffer of raw memory
// (``UTF8Buffer``: an append is a capacity check and a copy; escaping scans for the few special
// bytes and copies the runs between them), and turned into a `String` once at the end. Element-name checks (void
// elements, raw-text parents) compare packed ASCII bytes instead of hashing into a `Set<String>`.

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

/// A growable buffer of UTF-8 bytes in raw memory, for the serializer: an append is a capacity
/// check and a copy (no uniqueness check or generic sequence copy as with `[UInt8]`). Not
/// copyable; it frees its memory when it goes out of scope.
struct UTF8Buffer: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 16)
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
        var copy = string
        copy.withUTF8 { append($0) }
    }

    private mutating func grow(to needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.initialize(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    /// The bytes as a `String` (validated, as `String(decoding:as:)` does).
    func string() -> String {
        String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self)
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
    static func serializeChildren(of node: Node, into out: inout UTF8Buffer, scripting: Bool) {
        let parent: Node = (node as? Element)?.templateContent ?? node
        // A text child of `parent` is written raw when `parent` is a raw-text element.
        let rawAtRoot = (parent as? Element).map { rawTextChildren($0, scripting: scripting) } ?? false
        // Iterative walk over the sibling links: the stack holds the open elements whose end tags
        // are pending (and whether their text children are raw), so deep trees cannot overflow.
        var open: [(element: Element, raw: Bool)] = []
        var next = parent.firstChild
        while true {
            guard let current = next else {
                guard let (element, _) = open.popLast() else { return }
                out.append(0x3C); out.append(0x2F)  // </
                appendUTF8(element.localName, to: &out)
                out.append(0x3E)
                next = element.nextSibling
                continue
            }
            if let element = current as? Element {
                openTag(element, into: &out)
                if element.namespace == .html && isVoid(element.localName) {
                    next = element.nextSibling
                    continue
                }
                open.append((element, rawTextChildren(element, scripting: scripting)))
                next = (element.templateContent ?? element).firstChild
                continue
            }
            leaf(current, raw: open.last?.raw ?? rawAtRoot, into: &out)
            next = current.nextSibling
        }
    }

    /// Serializes one node (with its subtree) as UTF-8.
    static func serialize(_ node: Node, into out: inout UTF8Buffer, scripting: Bool) {
        if let element = node as? Element {
            openTag(element, into: &out)
            if element.namespace == .html && isVoid(element.localName) { return }
            serializeChildren(of: element, into: &out, scripting: scripting)
            out.append(0x3C); out.append(0x2F)
            appendUTF8(element.localName, to: &out)
            out.append(0x3E)
        } else {
            let raw = (node.parent as? Element).map { rawTextChildren($0, scripting: scripting) } ?? false
            leaf(node, raw: raw, into: &out)
        }
    }

    /// Whether the text children of `element` are written without escaping (raw-text elements,
    /// and `<noscript>` when parsed with scripting on).
    @inline(__always)
    private static func rawTextChildren(_ element: Element, scripting: Bool) -> Bool {
        guard element.namespace == .html else { return false }
        let name = element.localName
        return isRawTextParent(name) || (scripting && name == "noscript")
    }

    static func openTag(_ element: Element, into out: inout UTF8Buffer) {
        out.append(0x3C)
        appendUTF8(element.localName, to: &out)
        for attribute in element.attributes {
            out.append(0x20)
            if attribute.namespace == nil { appendUTF8(attribute.name, to: &out) } else { appendUTF8(attribute.qualifiedName, to: &out) }
            out.append(0x3D); out.append(0x22)  // ="
            escape(attribute.value, attributeMode: true, into: &out)
            out.append(0x22)
        }
        out.append(0x3E)
    }

    private static func leaf(_ node: Node, raw: Bool, into out: inout UTF8Buffer) {
        if let text = node as? Text {
            if raw { appendUTF8(text.data, to: &out) } else { escape(text.data, attributeMode: false, into: &out) }
        } else if let comment = node as? Comment {
            appendUTF8("<!--", to: &out); appendUTF8(comment.data, to: &out); appendUTF8("-->", to: &out)
        } else if let doctype = node as? DocumentType {
            appendUTF8("<!DOCTYPE ", to: &out); appendUTF8(doctype.name, to: &out); out.append(0x3E)
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
        var copy = string
        copy.withUTF8 { escape($0, attributeMode: attributeMode, into: &out) }
    }

    private static func escape(_ p: UnsafeBufferPointer<UInt8>, attributeMode: Bool, into out: inout UTF8Buffer) {
        let n = p.count
        guard n > 0, let base = p.baseAddress else { return }
        var runStart = 0
        var i = 0
        // `"` in attribute mode, `<` and `>` in text mode; `&` and U+00A0 (C2 A0) in both.
        let quote: UInt8 = attributeMode ? 0x22 : 0x26
        let less: UInt8 = attributeMode ? 0x26 : 0x3C
        let greater: UInt8 = attributeMode ? 0x26 : 0x3E
        // Eight bytes at a time: skip words holding none of the special bytes (SWAR "has a zero
        // byte" test on the word XOR each special byte repeated).
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func hasByte(_ word: UInt64, _ byte: UInt8) -> Bool {
            let x = word ^ (ones &* UInt64(byte))
            return (x &- ones) & ~x & highs != 0
        }
        while i < n {
            if i + 8 <= n {
                let word = UInt64(littleEndian: UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
                if !(hasByte(word, 0x26) || hasByte(word, 0xC2) || hasByte(word, quote) || hasByte(word, less) || hasByte(word, greater)) {
                    i += 8
                    continue
                }
            }
            let b = p[i]
            if b != 0x26 && b != 0xC2 && b != quote && b != less && b != greater {
                i += 1
                continue
            }
            let replacement: StaticString
            var width = 1
            switch b {
            case 0x26: replacement = "&amp;"
            case 0xC2:
                guard i + 1 < n, p[i + 1] == 0xA0 else { i += 1; continue }
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

    // MARK: Element names as packed ASCII

    /// Up to 8 ASCII bytes of `name` packed little-endian into a `UInt64` (0 when longer or not
    /// ASCII). Comparing packed names replaces hashing into a set.
    @inline(__always)
    private static func packed(_ name: String) -> UInt64 {
        let count = name.utf8.count
        guard count <= 8 else { return 0 }
        let value: UInt64? = name.utf8.withContiguousStorageIfAvailable { bytes in
            var value: UInt64 = 0
            for index in 0..<bytes.count { value |= UInt64(bytes[index]) << UInt64(8 * index) }
            return value
        }
        guard let value, value & 0x8080_8080_8080_8080 == 0 else { return 0 }
        return value
    }

    /// `name` is in ``voidElements`` (the packed names as literals; ``voidElements`` is the
    /// readable list, and SerializerConformanceTests and the sanitizer's tests cover both).
    static func isVoid(_ name: String) -> Bool {
        switch packed(name) {
        case 0x6165_7261 /* area */, 0x6573_6162 /* base */, 0x746E_6F66_6573_6162 /* basefont */, 0x64_6E75_6F73_6762 /* bgsound */,
             0x7262 /* br */, 0x6C_6F63 /* col */, 0x64_6562_6D65 /* embed */, 0x65_6D61_7266 /* frame */, 0x7268 /* hr */,
             0x67_6D69 /* img */, 0x74_7570_6E69 /* input */, 0x6E65_6779_656B /* keygen */, 0x6B6E_696C /* link */,
             0x6174_656D /* meta */, 0x6D_6172_6170 /* param */, 0x6563_7275_6F73 /* source */, 0x6B_6361_7274 /* track */,
             0x72_6277 /* wbr */:
            return true
        default:
            return false
        }
    }

    /// `name` is in ``rawTextParents``.
    static func isRawTextParent(_ name: String) -> Bool {
        switch packed(name) {
        case 0x65_6C79_7473 /* style */, 0x7470_6972_6373 /* script */, 0x70_6D78 /* xmp */, 0x656D_6172_6669 /* iframe */,
             0x64_6562_6D65_6F6E /* noembed */, 0x7365_6D61_7266_6F6E /* noframes */:
            return true
        case 0:
            return name == "plaintext"
        default:
            return false
        }
    }
}
