import Foundation  // memcmp
import HTML5

/// A shortcut for the re-parse check, decided on the trees: whether two trees are the same for
/// the serializer — node for node the same kinds, namespaces, local names, attributes
/// (namespace, name and value) and text, all compared byte for byte.
///
/// The serialization of a tree (`innerHTML`) is a function of exactly those: element names and
/// attributes, text and comment data (written raw or escaped by the parent's name and
/// namespace, which are compared too), void elements by name and namespace (`Element.tag`
/// always agrees with `localName`). So two such trees serialize to the same text, and when the
/// re-parsed output is the same tree as the one the cleaner produced (whose serialization the
/// output is), the check `reparsed.innerHTMLEquals(output)` holds without serializing again.
/// Whenever the trees differ in any way — merged text nodes, a `<template>` element (its
/// contents are not compared here), a node kind the serializer does not write — the answer is `false`, and
/// the caller runs that string check as before. The shortcut can only say yes when the string
/// check says yes: the decision is the same.
///
/// Trust-model row: inbox (incoming mail) — the mutation-XSS guard decides exactly as before.
enum SameTree {
    /// `true` only if the children of `rootA` and of `rootB` serialize identically because
    /// they are the same trees (see above); `false` means "not shown here".
    static func sameChildren(_ rootA: Node, _ rootB: Node) -> Bool {
        var a = rootA.firstChild
        var b = rootB.firstChild
        // A walk in pre-order over both trees at once (iterative: deep trees cannot overflow).
        while true {
            guard let x = a, let y = b else { return a == nil && b == nil }
            guard sameNode(x, y) else { return false }
            if let childX = x.firstChild {
                guard let childY = y.firstChild else { return false }
                a = childX
                b = childY
                continue
            }
            guard y.firstChild == nil else { return false }
            // The next node: the next sibling of `x` or of its nearest ancestor that has one.
            var upX = x
            var upY = y
            while true {
                let nextX = upX.nextSibling
                let nextY = upY.nextSibling
                if nextX != nil || nextY != nil {
                    guard nextX != nil && nextY != nil else { return false }
                    a = nextX
                    b = nextY
                    break
                }
                guard let parentX = upX.parent, let parentY = upY.parent else { return false }
                // Both walks went down in step, so they reach their roots together.
                if parentX === rootA || parentY === rootB { return parentX === rootA && parentY === rootB }
                upX = parentX
                upY = parentY
            }
        }
    }

    /// The same node for the serializer (children aside). The kinds are compared by their
    /// exact class first (the node classes are final), then each is cast to it.
    private static func sameNode(_ x: Node, _ y: Node) -> Bool {
        let kind = ObjectIdentifier(type(of: x))
        guard kind == ObjectIdentifier(type(of: y)) else { return false }
        if kind == ObjectIdentifier(Element.self) {
            let ex = unsafeDowncast(x, to: Element.self)  // (the exact class was checked above)
            let ey = unsafeDowncast(y, to: Element.self)
            // A known tag stands for exactly its name (`Element.tag` always agrees with
            // `localName`); unknown ones are compared by name. Only `<template>` has contents
            // of its own (`templateContent`), which are not compared here.
            guard ex.tag == ey.tag, ex.namespace == ey.namespace, ex.tag != .template,
                  ex.tag != .unknown || sameBytes(ex.localName, ey.localName)
            else { return false }
            return ex.attributes.withUnsafeBufferPointer { ax in
                ey.attributes.withUnsafeBufferPointer { ay in
                    guard ax.count == ay.count else { return false }
                    for k in 0..<ax.count {
                        guard ax[k].namespace == ay[k].namespace, sameBytes(ax[k].name, ay[k].name),
                              sameBytes(ax[k].value, ay[k].value)
                        else { return false }
                    }
                    return true
                }
            }
        }
        if kind == ObjectIdentifier(Text.self) {
            return sameBytes(unsafeDowncast(x, to: Text.self).data, unsafeDowncast(y, to: Text.self).data)
        }
        if kind == ObjectIdentifier(Comment.self) {
            return sameBytes(unsafeDowncast(x, to: Comment.self).data, unsafeDowncast(y, to: Comment.self).data)
        }
        // (A fragment holds no doctype; any other kind: not shown here.)
        return false
    }

    /// The same UTF-8 bytes (`==` on `String` is canonical equivalence, which would let two
    /// different texts pass).
    static func sameBytes(_ a: String, _ b: String) -> Bool {
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
