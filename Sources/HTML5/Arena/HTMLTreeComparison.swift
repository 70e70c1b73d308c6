// The re-parse check's comparisons over the arena tree (docs/arena-tree.md, step 4): whether two
// subtrees serialize to the same text, decided row by row (as the class DOM's
// `Node.hasSameChildren(as:)`), and whether a subtree serializes to a given text (as
// `Node.innerHTMLEquals(_:)`).
//
// Trust-model row: inbox (incoming mail) — the mail sanitizer's mutation-XSS guard (its output
// must parse back to the tree it cleaned). The row comparison errs only towards "not shown".

import Foundation  // memcmp

extension HTMLTree {
    /// Whether the children of `node` and those of `otherNode` in `other` (another tree or this
    /// one) are the same for the serializer, so that their ``innerHTML(of:)`` is byte for byte the
    /// same text.
    ///
    /// Node for node, in order: the same kinds (element, text, comment); elements with the same
    /// namespace, local name and attributes in the same order (namespace, name and value as
    /// UTF-8 bytes), and no template contents on either side (written instead of the children,
    /// not compared here); comments with the same data bytes; and each run of adjacent text
    /// nodes with the same bytes once concatenated (the serializer escapes text byte by byte, and
    /// a run is written as one node holding its concatenation would be). The two roots must be
    /// the same kind of shell too (their name decides raw or escaped text).
    ///
    /// Conservative: `true` guarantees the same serialization; `false` means only "not shown
    /// here" (a template, a doctype among the children, a run of empty texts facing nothing).
    /// Iterative: no depth overflows the stack.
    ///
    /// Trust-model row: inbox (incoming mail) — the sanitizer's re-parse check on the arena.
    package func hasSameChildren(_ node: Int32, as otherNode: Int32, in other: HTMLTree) -> Bool {
        let rootA = row(node), rootB = other.row(otherNode)
        guard rootA.pointee.kind == rootB.pointee.kind else { return false }
        if rootA.pointee.kind == .element {
            guard Self.sameShell(rootA, rootB) else { return false }
        }
        var parentA = node, parentB = otherNode
        var a = rootA.pointee.firstChild, b = rootB.pointee.firstChild
        // A walk in pre-order over both trees at once: `a` and `b` are the next rows to compare
        // under `parentA` and `parentB` (-1: the end of the parent's children).
        while true {
            if a >= 0 && b >= 0 {
                let x = row(a), y = other.row(b)
                let kind = x.pointee.kind
                if kind == .text {
                    guard y.pointee.kind == .text else { return false }
                    let nextX = x.pointee.nextSibling, nextY = y.pointee.nextSibling
                    if !isTextRow(nextX) && !other.isTextRow(nextY) {
                        // The common case: one text node on each side.
                        let same = withTextBytes(x) { bx in other.withTextBytes(y) { by in Self.sameBytes(bx, by) } }
                        guard same else { return false }
                        a = nextX
                        b = nextY
                    } else {
                        guard let (afterA, afterB) = sameTextRun(from: a, as: b, in: other) else { return false }
                        a = afterA
                        b = afterB
                    }
                    continue
                }
                guard kind == y.pointee.kind else { return false }
                switch kind {
                case .element:
                    guard Self.sameShell(x, y) else { return false }
                    let sameAttributes = x.pointee.attributes.withUnsafeBufferPointer { ax in
                        y.pointee.attributes.withUnsafeBufferPointer { ay in TreeComparison.sameAttributes(ax, ay) }
                    }
                    guard sameAttributes else { return false }
                    parentA = a
                    parentB = b
                    a = x.pointee.firstChild
                    b = y.pointee.firstChild
                case .comment:
                    guard UTF8Bytes.equal(x.pointee.payload, y.pointee.payload) else { return false }
                    a = x.pointee.nextSibling
                    b = y.pointee.nextSibling
                case .text, .doctype, .document, .fragment:
                    return false
                }
                continue
            }
            // One side has more children than the other: not the same.
            guard a < 0 && b < 0 else { return false }
            // Both parents' children are done: up to their next siblings (both walks went down in
            // step, so they reach their roots together).
            if parentA == node || parentB == otherNode { return parentA == node && parentB == otherNode }
            let upA = row(parentA), upB = other.row(parentB)
            a = upA.pointee.nextSibling
            b = upB.pointee.nextSibling
            guard upA.pointee.parent >= 0, upB.pointee.parent >= 0 else { return false }
            parentA = upA.pointee.parent
            parentB = upB.pointee.parent
        }
    }

    /// Whether ``innerHTML(of:)`` of `node` is exactly `text` (byte for byte), without making a
    /// `String` of the serialization (as ``Node/innerHTMLEquals(_:)``).
    package func innerHTMLEquals(of node: Int32, _ text: String) -> Bool {
        var buffer = UTF8Buffer(capacity: max(text.utf8.count, 64))
        serializeChildren(of: node, into: &buffer, scripting: false)
        return buffer.equals(text)
    }

    /// Same namespace and name, and neither holds template contents.
    @inline(__always)
    private static func sameShell(_ x: UnsafeMutablePointer<Row>, _ y: UnsafeMutablePointer<Row>) -> Bool {
        x.pointee.tag == y.pointee.tag && x.pointee.namespace == y.pointee.namespace
            && x.pointee.templateContents < 0 && y.pointee.templateContents < 0
            && (x.pointee.tag != .unknown || UTF8Bytes.equal(x.pointee.payload, y.pointee.payload))
    }

    @inline(__always)
    private static func sameBytes(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Bool {
        guard x.count == y.count else { return false }
        guard let bx = x.baseAddress, let by = y.baseAddress else { return true }  // both empty
        return bx == by || memcmp(bx, by, x.count) == 0
    }

    @inline(__always)
    private func isTextRow(_ index: Int32) -> Bool { index >= 0 && row(index).pointee.kind == .text }

    /// Whether the run of adjacent text nodes starting at `first` has the same bytes, once
    /// concatenated, as the run starting at `otherFirst` in `other`, compared piece by piece (no
    /// copy); the rows after the two runs (-1: none) when it does.
    private func sameTextRun(from first: Int32, as otherFirst: Int32, in other: HTMLTree) -> (Int32, Int32)? {
        var x = first, y = otherFirst
        // Bytes of the current node of each run already compared.
        var offsetX = 0, offsetY = 0
        while true {
            while isTextRow(x) && offsetX == textByteCount(row(x)) { x = row(x).pointee.nextSibling; offsetX = 0 }
            while other.isTextRow(y) && offsetY == other.textByteCount(other.row(y)) { y = other.row(y).pointee.nextSibling; offsetY = 0 }
            let endX = !isTextRow(x), endY = !other.isTextRow(y)
            if endX || endY { return endX && endY ? (x, y) : nil }
            let (fromX, fromY) = (offsetX, offsetY)
            let matched = withTextBytes(row(x)) { bx in
                other.withTextBytes(other.row(y)) { by -> Int in
                    let n = min(bx.count - fromX, by.count - fromY)
                    guard let px = bx.baseAddress, let py = by.baseAddress else { return -1 }
                    return memcmp(px + fromX, py + fromY, n) == 0 ? n : -1
                }
            }
            guard matched > 0 else { return nil }
            offsetX += matched
            offsetY += matched
        }
    }
}
