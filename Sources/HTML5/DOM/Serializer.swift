// The WHATWG "HTML fragment serialization algorithm": serialize -> parse gives the same tree.
//
// Performance: the tree is written as UTF-8 bytes into one growing buffer of raw memory
// (``UTF8Buffer``: an append is a capacity check and a copy; escaping scans for the few special
// bytes and copies the runs between them), and turned into a `String` once at the end. Element-name
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
        withUTF8Bytes(of: string) { append($0) }
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
                if isVoid(element) {
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
            if isVoid(element) { return }
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
        return rawTextParentTags.contains(element.tag) || (scripting && element.tag == .noscript)
    }

    /// ``voidElements`` and ``rawTextParents`` as interned names (all of them are in the
    /// ``HTMLTag`` table, and `Element.tag` always agrees with `localName`): the serializer tests
    /// one bit per element instead of the name's bytes.
    static let voidTags: HTMLTagSet = [
        .area, .base, .basefont, .bgsound, .br, .col, .embed, .frame, .hr, .img, .input, .keygen, .link, .meta,
        .param, .source, .track, .wbr,
    ]
    static let rawTextParentTags: HTMLTagSet = [.style, .script, .xmp, .iframe, .noembed, .noframes, .plaintext]

    /// `element` is an HTML void element (no end tag, no children written).
    @inline(__always)
    static func isVoid(_ element: Element) -> Bool { element.namespace == .html && voidTags.contains(element.tag) }

    static func openTag(_ element: Element, into out: inout UTF8Buffer) {
        out.append(0x3C)
        appendUTF8(element.localName, to: &out)
        // Through the array's buffer: the attributes are read in place, not copied out one by one
        // (a copy retains and releases the name and the value).
        element.attributes.withUnsafeBufferPointer { attributes in
            for index in attributes.indices {
                out.append(0x20)
                if attributes[index].namespace == nil {
                    appendUTF8(attributes[index].name, to: &out)
                } else {
                    appendUTF8(attributes[index].qualifiedName, to: &out)
                }
                out.append(0x3D); out.append(0x22)  // ="
                escape(attributes[index].value, attributeMode: true, into: &out)
                out.append(0x22)
            }
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
        withUTF8Bytes(of: string) { escape($0, attributeMode: attributeMode, into: &out) }
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
        // Eight bytes at a time: skip words holding none of the special bytes (``SWAR``).
        let mAmp = SWAR.broadcast(0x26), mC2 = SWAR.broadcast(0xC2)
        let mQuote = SWAR.broadcast(quote), mLess = SWAR.broadcast(less), mGreater = SWAR.broadcast(greater)
        while i < n {
            if i + 8 <= n {
                let word = UInt64(littleEndian: UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
                let found = SWAR.matches(word, mAmp) | SWAR.matches(word, mC2) | SWAR.matches(word, mQuote)
                    | SWAR.matches(word, mLess) | SWAR.matches(word, mGreater)
                if found == 0 {
                    i += 8
                    continue
                }
                i += SWAR.firstMatch(found)  // a special byte (checked again below)
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
}
