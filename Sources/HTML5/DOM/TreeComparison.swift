// Tree comparison for the serializer: whether two subtrees are written as the same text, decided
// on the trees themselves (node for node) instead of serializing both.
//
// Performance: the walk reads the nodes' internal storage (links, attributes, text) from inside
// this module, where the optimizer sees every access, instead of going through the public
// accessors from another module (a retain and release per link read, a dynamic exclusivity check
// per `attributes`/`data` read there).

import Foundation  // memcmp

extension Node {
    /// Whether the children of this node and those of `other` are the same for the serializer,
    /// so that their ``innerHTML`` is byte for byte the same text.
    ///
    /// "The same" means: node for node, in order, the same node kinds (element, text, comment);
    /// elements with the same namespace and local name and the same attributes in the same order
    /// (namespace, name and value, compared as UTF-8 bytes); comments with the same data bytes;
    /// and for text, each run of adjacent text nodes has the same bytes once concatenated (the
    /// serializer escapes text character by character, and a node's text is whole UTF-8, so a
    /// run is written exactly as one node holding its concatenation would be). When both nodes
    /// are elements they must have the same namespace and local name too (a raw-text parent such
    /// as `<style>` writes its text unescaped).
    ///
    /// The answer is conservative: `true` guarantees identical serializations; `false` means
    /// only "not shown here" — for instance any `<template>` with contents, a doctype or a
    /// document node among the children, or a run of empty text nodes facing no node at all. It
    /// never says `true` for trees that serialize differently.
    ///
    /// Trust-model row: inbox (incoming mail) — the mail sanitizer's re-parse check (the
    /// mutation-XSS guard) uses it to decide, without serializing again, that its output parses
    /// back to the tree it cleaned; a wrong `true` would let a mutated tree through, so it errs
    /// only towards `false`.
    public func hasSameChildren(as other: Node) -> Bool {
        TreeComparison.sameChildren(self, other)
    }
}

/// The walk behind ``Node/hasSameChildren(as:)``.
///
/// Trust-model row: inbox (incoming mail) — part of the re-parse check; says yes only for trees
/// whose serializations are identical.
enum TreeComparison {
    static func sameChildren(_ rootA: Node, _ rootB: Node) -> Bool {
        // The roots decide how their text children are escaped, and a template root writes its
        // contents instead of its children: compare them as element shells, templates excluded.
        let rootElementA = rootA as? Element
        let rootElementB = rootB as? Element
        if rootElementA != nil || rootElementB != nil {
            guard let ea = rootElementA, let eb = rootElementB, sameShell(ea, eb) else { return false }
        }
        var parentA = rootA
        var parentB = rootB
        var a = rootA.storedFirstChild
        var b = rootB.storedFirstChild
        // A walk in pre-order over both trees at once (iterative: deep trees cannot overflow).
        // `a` and `b` are the next nodes to compare under `parentA` and `parentB` (nil: the end
        // of the parent's children).
        while true {
            if let x = a, let y = b {
                let kind = ObjectIdentifier(type(of: x))
                if kind == ObjectIdentifier(Text.self) {
                    // A run of adjacent text nodes on each side, compared as their concatenation.
                    guard ObjectIdentifier(type(of: y)) == ObjectIdentifier(Text.self) else { return false }
                    let tx = unsafeDowncast(x, to: Text.self)  // (the exact class was checked above)
                    let ty = unsafeDowncast(y, to: Text.self)
                    let nextX = tx.storedNextSibling
                    let nextY = ty.storedNextSibling
                    if !isText(nextX) && !isText(nextY) {
                        // The common case: one text node on each side.
                        guard sameBytes(tx.data, ty.data) else { return false }
                        a = nextX
                        b = nextY
                    } else {
                        let (runA, afterA) = textRun(from: tx)
                        let (runB, afterB) = textRun(from: ty)
                        guard runA == runB else { return false }
                        a = afterA
                        b = afterB
                    }
                    continue
                }
                guard kind == ObjectIdentifier(type(of: y)) else { return false }
                if kind == ObjectIdentifier(Element.self) {
                    let ex = unsafeDowncast(x, to: Element.self)
                    let ey = unsafeDowncast(y, to: Element.self)
                    guard sameShell(ex, ey), sameAttributes(ex, ey) else { return false }
                    // Into the children (the serializer writes none for void elements; comparing
                    // them anyway is only stricter).
                    parentA = ex
                    parentB = ey
                    a = ex.storedFirstChild
                    b = ey.storedFirstChild
                    continue
                }
                if kind == ObjectIdentifier(Comment.self) {
                    guard sameBytes(unsafeDowncast(x, to: Comment.self).data, unsafeDowncast(y, to: Comment.self).data)
                    else { return false }
                    // (The serializer writes no children of a comment.)
                    a = x.storedNextSibling
                    b = y.storedNextSibling
                    continue
                }
                // A doctype, document or fragment among the children: not shown here.
                return false
            }
            // One side has more children than the other: not the same.
            guard a == nil && b == nil else { return false }
            // Both parents' children are done: up to the parents' next siblings. Both walks went
            // down in step, so they reach their roots together.
            if parentA === rootA || parentB === rootB { return parentA === rootA && parentB === rootB }
            a = parentA.storedNextSibling
            b = parentB.storedNextSibling
            guard let upA = parentA.storedParent, let upB = parentB.storedParent else { return false }
            parentA = upA
            parentB = upB
        }
    }

    @inline(__always)
    private static func isText(_ node: Node?) -> Bool {
        guard let node else { return false }
        return ObjectIdentifier(type(of: node)) == ObjectIdentifier(Text.self)
    }

    /// The concatenated UTF-8 of the run of adjacent text nodes starting at `first`, and the
    /// node after the run.
    private static func textRun(from first: Text) -> (bytes: [UInt8], after: Node?) {
        var bytes: [UInt8] = []
        var node: Node? = first
        while let current = node, ObjectIdentifier(type(of: current)) == ObjectIdentifier(Text.self) {
            bytes.append(contentsOf: unsafeDowncast(current, to: Text.self).data.utf8)
            node = current.storedNextSibling
        }
        return (bytes, node)
    }

    /// Same namespace and local name (a known tag stands for exactly its name, so unknown tags
    /// alone need their names compared), and neither has template contents (written instead of
    /// the children, and not compared here).
    @inline(__always)
    private static func sameShell(_ x: Element, _ y: Element) -> Bool {
        x.tag == y.tag && x.namespace == y.namespace
            && x.storedTemplateContent == nil && y.storedTemplateContent == nil
            && (x.tag != .unknown || sameBytes(x.localName, y.localName))
    }

    /// The same attributes in the same order: namespace, name and value byte for byte.
    @inline(__always)
    private static func sameAttributes(_ x: Element, _ y: Element) -> Bool {
        x.attributes.withUnsafeBufferPointer { ax in y.attributes.withUnsafeBufferPointer { ay in sameAttributes(ax, ay) } }
    }

    /// ``sameAttributes(_:_:)`` on attributes read in place (also the re-parse check's test).
    @inline(__always)
    static func sameAttributes(_ ax: UnsafeBufferPointer<Attribute>, _ ay: UnsafeBufferPointer<Attribute>) -> Bool {
        guard ax.count == ay.count else { return false }
        for k in 0..<ax.count {
            guard ax[k].namespace == ay[k].namespace, sameBytes(ax[k].name, ay[k].name),
                  sameBytes(ax[k].value, ay[k].value)
            else { return false }
        }
        return true
    }

    /// The same UTF-8 bytes (see ``UTF8Bytes/equal(_:_:)``).
    @inline(__always)
    static func sameBytes(_ a: String, _ b: String) -> Bool { UTF8Bytes.equal(a, b) }
}

/// Byte equality of texts, for code that must not treat two different texts as one.
///
/// Trust-model row: inbox (incoming mail) — the sanitizer's re-parse check and its "unchanged
/// attribute" shortcuts compare what the web view will receive, byte for byte: `==` on `String`
/// is canonical equivalence, under which `"e\u{301}"` and `"é"` are equal although they are
/// different bytes (and may render or match selectors differently).
public enum UTF8Bytes {
    /// Whether `a` and `b` have the same UTF-8 bytes (one `memcmp` when both are contiguous).
    ///
    /// ```swift
    /// UTF8Bytes.equal("é", "e\u{301}")  // false, though "é" == "e\u{301}"
    /// ```
    @inline(__always)
    public static func equal(_ a: String, _ b: String) -> Bool {
        // The same representation is the same string: the same bytes stored inline (a string of
        // up to 15 bytes), or the same storage with the same length (a shared, hence
        // unchanging, buffer). Most attribute names and values the re-parse check compares are
        // one or the other; any other pair is compared byte by byte.
        // (That test inline, the comparison out of line: `equal` as a whole was not inlined,
        // and each call paid a prologue and an epilogue even when the test settled it.) The bits
        // are read as two words where a `String` is two words (64-bit targets; the size test is
        // folded away), elsewhere every pair is compared by bytes.
        (MemoryLayout<String>.size == 16
            && unsafeBitCast(a, to: (UInt64, UInt64).self) == unsafeBitCast(b, to: (UInt64, UInt64).self)) || equalBytes(a, b)
    }

    /// ``equal(_:_:)`` byte by byte.
    @inline(never)
    static func equalBytes(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        let fast: Bool?? = a.utf8.withContiguousStorageIfAvailable { pa in
            b.utf8.withContiguousStorageIfAvailable { pb in
                guard let x = pa.baseAddress, let y = pb.baseAddress else { return true }  // both empty
                return memcmp(x, y, pa.count) == 0
            }
        }
        if let fast, let answer = fast { return answer }
        return a.utf8.elementsEqual(b.utf8)
    }
}
