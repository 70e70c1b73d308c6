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
/// Whenever the trees differ in any way — a `<template>` element (its contents are not
/// compared here), a node kind the serializer does not write — the answer is `false`, and
/// the caller runs that string check as before. The shortcut can only say yes when the string
/// check says yes: the decision is the same.
///
/// Trust-model row: inbox (incoming mail) — the mutation-XSS guard decides exactly as before.
enum SameTree {
    /// `true` only if the children of `rootA` and of `rootB` serialize identically because
    /// they are the same trees (see above); `false` means "not shown here".
    ///
    /// The walk is done inside HTML5 (`Node.hasSameChildren(as:)`, which reads the nodes'
    /// storage without a retain per link or an access check per attribute list). It compares the
    /// same things as this type's own walk did, and in addition takes a run of adjacent text
    /// nodes as one text (the serializer writes a run exactly as the node holding its
    /// concatenation; the re-parse merges such runs), so it says yes in every case the old walk
    /// did and in those too — still only when the serializations are the same.
    @inline(__always)
    static func sameChildren(_ rootA: Node, _ rootB: Node) -> Bool {
        rootA.hasSameChildren(as: rootB)
    }

    /// The same UTF-8 bytes (`==` on `String` is canonical equivalence, which would let two
    /// different texts pass): ``HTML5/UTF8Bytes/equal(_:_:)``, shared with HTML5's own walk.
    @inline(__always)
    static func sameBytes(_ a: String, _ b: String) -> Bool { UTF8Bytes.equal(a, b) }
}
