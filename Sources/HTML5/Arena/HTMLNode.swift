// The public read API of the arena tree (docs/arena-tree.md, step 5, reading half): a node is a
// handle, the tree and a row, with the reads of the class DOM's `Node`, `Element` and `Text`.
//
// Trust-model row: inbox (incoming mail) — a reader of a tree built from hostile bytes. Every
// handle names a row of its own tree (handles are only made by the tree and by other handles),
// every row read is bounds-checked, and the walks (`textContent`, serialization) are iterative,
// so a 100 000-deep tree reads without recursion.

/// A node of an ``HTMLTree``: the tree and the node's row.
///
/// A value with the read API of the class DOM's nodes: kind, name, namespace, attributes, text,
/// links to parent, children and siblings, serialization. Two handles are equal when they name
/// the same node of the same tree. A handle keeps its tree alive.
///
/// ```swift
/// let result = try HTML5Parser.parseTree("<p class=lead>Hello <b>world</b></p>")
/// for node in result.root.descendants where node.tag == .p {
///     print(node.attribute("class") ?? "", node.textContent)  // lead Hello world
/// }
/// ```
///
/// Not `Sendable`, like the tree: a tree is used by one thread at a time.
public struct HTMLNode: Hashable {
    /// The tree the node belongs to.
    public let tree: HTMLTree
    /// The node's row in its tree: stable while the tree lives (row 0 is the document).
    public let index: Int32

    /// A handle on row `index` of `tree`, which must exist.
    init(_ tree: HTMLTree, _ index: Int32) {
        precondition(index >= 0 && Int(index) < tree.count, "HTMLNode: no row \(index)")
        self.tree = tree
        self.index = index
    }

    public static func == (a: HTMLNode, b: HTMLNode) -> Bool { a.tree === b.tree && a.index == b.index }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(tree))
        hasher.combine(index)
    }

    // MARK: What the node is

    /// What the node stands for: document, fragment (a template's contents), element, text,
    /// comment or doctype.
    public var kind: HTMLTree.Kind { tree.kind(index) }
    /// `true` for an element.
    public var isElement: Bool { kind == .element }
    /// An element's interned name (``HTMLTag/unknown`` for a name outside the table, and for a
    /// node that is not an element).
    public var tag: HTMLTag { tree.tag(index) }
    /// An element's namespace (`.html` for a node that is not an element).
    public var namespace: Namespace { tree.namespace(index) }
    /// An element's local name (`""` for a node that is not an element).
    public var localName: String { tree.localName(index) }
    /// `true` if this is the HTML element with the interned name `tag`.
    public func isHTML(_ tag: HTMLTag) -> Bool { kind == .element && self.tag == tag && namespace == .html }

    // MARK: Content

    /// An element's attributes in source order (empty for a node that is not an element).
    public var attributes: [Attribute] { tree.attributes(index) }
    /// The value of the attribute named `name` in `namespace` (none by default; the parser
    /// lower-cases HTML attribute names), if the element has one (as ``Element/attribute(_:namespace:)``).
    public func attribute(_ name: String, namespace: AttributeNamespace? = nil) -> String? {
        tree.attributes(index).first { $0.namespace == namespace && $0.name == name }?.value
    }
    /// The data of a text or comment node, else `nil`.
    public var data: String? { tree.text(index) }
    /// A doctype's name and public and system identifiers, else `nil`.
    public var doctype: (name: String, publicId: String, systemId: String)? { tree.doctype(index) }
    /// A text's data; for any other node, the concatenated data of every text descendant in
    /// document order, not inside template contents (as the class DOM's ``Node/textContent``).
    public var textContent: String {
        if kind == .text { return data ?? "" }
        var out = ""
        for node in descendants where node.kind == .text { out += node.data ?? "" }
        return out
    }

    // MARK: Links

    /// The parent node (`nil` for the document, a template's contents, a removed node).
    public var parent: HTMLNode? { tree.parent(index).map { HTMLNode(tree, $0) } }
    public var firstChild: HTMLNode? { tree.firstChild(index).map { HTMLNode(tree, $0) } }
    public var lastChild: HTMLNode? { tree.lastChild(index).map { HTMLNode(tree, $0) } }
    public var nextSibling: HTMLNode? { tree.nextSibling(index).map { HTMLNode(tree, $0) } }
    public var previousSibling: HTMLNode? { tree.previousSibling(index).map { HTMLNode(tree, $0) } }
    /// An HTML `<template>`'s contents (a fragment node), else `nil`.
    public var templateContents: HTMLNode? { tree.templateContents(index).map { HTMLNode(tree, $0) } }

    /// The children, first to last.
    public var children: Children { Children(tree: tree, first: tree.firstChild(index)) }
    /// Every node below this one in document order (children before their following siblings),
    /// not entering template contents. Iterative: no recursion however deep the tree.
    public var descendants: Descendants { Descendants(tree: tree, root: index) }

    /// The children of a node as a sequence (following `nextSibling`).
    public struct Children: Sequence, IteratorProtocol {
        let tree: HTMLTree
        var upcoming: Int32?
        init(tree: HTMLTree, first: Int32?) { self.tree = tree; self.upcoming = first }
        public mutating func next() -> HTMLNode? {
            guard let current = upcoming else { return nil }
            upcoming = tree.nextSibling(current)
            return HTMLNode(tree, current)
        }
    }

    /// The descendants of a node in document order, as a sequence.
    public struct Descendants: Sequence, IteratorProtocol {
        let tree: HTMLTree
        let root: Int32
        var current: Int32?
        init(tree: HTMLTree, root: Int32) {
            self.tree = tree
            self.root = root
            self.current = tree.firstChild(root)
        }
        public mutating func next() -> HTMLNode? {
            guard let node = current else { return nil }
            // Down to the first child, else to the next sibling of the nearest node (up to the
            // root, excluded) that has one.
            if let child = tree.firstChild(node) {
                current = child
            } else {
                var up: Int32? = node
                current = nil
                while let n = up, n != root {
                    if let sibling = tree.nextSibling(n) { current = sibling; break }
                    up = tree.parent(n)
                }
            }
            return HTMLNode(tree, node)
        }
    }

    // MARK: Serialization and the class DOM

    /// The HTML serialization of the node's children (the WHATWG fragment serialization, byte
    /// for byte what the class DOM's ``Node/innerHTML`` gives for the same tree; a template's
    /// contents for a `<template>`).
    public var innerHTML: String { tree.innerHTML(of: index) }
    /// The node and its subtree serialized (for the document or a fragment, its children).
    public func serialized(scripting: Bool = false) -> String { tree.serialized(index, scripting: scripting) }
    /// The node and its subtree serialized (as ``serialized(scripting:)``), handed to `body` as
    /// UTF-8 bytes that are valid only during the call: for writing a serialization out (a file,
    /// standard output) without making a `String` of it. `capacity`: the bytes to reserve at
    /// first (the input's size saves the buffer's copies as it grows).
    public func withSerializedBytes<R>(scripting: Bool = false, capacity: Int = 64 * 1024, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try tree.withSerialization(index, scripting: scripting, capacity: capacity) { buffer in try buffer.withBytes(body) }
    }
    /// The node and its subtree serialized (as ``serialized(scripting:)``) and handed to `write`
    /// in pieces of at most `chunk` bytes, in order, as the serializer makes them (each piece
    /// well-formed UTF-8, valid only during its call): a serialization written out (standard
    /// output, a file) without holding all of it in memory.
    public func writeSerialization(scripting: Bool = false, chunk: Int = 1 << 20, to write: (UnsafeBufferPointer<UInt8>) -> Void) {
        withoutActuallyEscaping(write) { write in
            tree.withSerialization(index, scripting: scripting, capacity: chunk, drain: write) { buffer in buffer.withBytes(write) }
        }
    }
    /// The subtree as class DOM nodes (detached copies), for code written against ``Node``.
    public func materialize() -> Node { tree.materialize(index) }
    /// The subtree in html5lib-tests' format (as ``Node/html5libTreeDump``).
    public var html5libTreeDump: String { tree.html5libTreeDump(of: index) }
}

extension HTMLTree {
    /// The document node (row 0).
    public var document: HTMLNode { HTMLNode(self, 0) }
    /// The node at row `index`, if the tree has that row.
    public func node(_ index: Int32) -> HTMLNode? { index >= 0 && Int(index) < count ? HTMLNode(self, index) : nil }
}
