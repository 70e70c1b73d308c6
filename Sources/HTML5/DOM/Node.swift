// The document object model the parser builds and the mail sanitizer walks and rewrites.
//
// Trust-model row: "inbox (incoming mail) — mail can carry malicious HTML". The sanitizer sees
// exactly the tree a browser engine would build from the same bytes (spec-exact parsing), so no
// markup can be hidden from it by parser differentials.
//
// Design: nodes are final classes linked as a doubly linked sibling list under a parent, so
// removal, replacement and insertion are O(1) and iteration needs no array copies. The parent and
// previous-sibling links are `unowned(unsafe)`, and freeing a node clears the links of every
// descendant that someone else still holds (only the nodes freed with it keep theirs, never to be
// read again), so a link never dangles; it recurses only to a bounded depth, with a worklist
// below, so freeing a 100 000-deep tree (or 100 000 nested templates) cannot overflow the stack.

/// The namespace of an element.
///
/// Trust-model row: inbox — the sanitizer must know whether `<script>` or `<a>` is HTML, SVG or
/// MathML, because the three are handled differently by the web view.
public enum Namespace: Sendable, Hashable {
    case html, svg, mathml

    /// The namespace URI, e.g. `http://www.w3.org/1999/xhtml`.
    public var uri: String {
        switch self {
        case .html: "http://www.w3.org/1999/xhtml"
        case .svg: "http://www.w3.org/2000/svg"
        case .mathml: "http://www.w3.org/1998/Math/MathML"
        }
    }
}

/// The namespace of a foreign attribute (`xlink:href`, `xml:lang`, `xmlns:xlink`).
///
/// Trust-model row: inbox — `xlink:href` on SVG is a link the sanitizer must see as such.
public enum AttributeNamespace: Sendable, Hashable {
    case xlink, xml, xmlns

    /// The conventional prefix, e.g. `xlink`.
    public var prefix: String {
        switch self {
        case .xlink: "xlink"
        case .xml: "xml"
        case .xmlns: "xmlns"
        }
    }
}

/// One attribute of an element. `name` is the local name (lowercased for HTML elements, with the
/// spec's case adjustments for SVG and MathML); `namespace` is set only for the adjusted foreign
/// attributes (`xlink:href` has `name == "href"`, `namespace == .xlink`).
///
/// Trust-model row: inbox — event-handler and URL attributes are what the sanitizer edits.
public struct Attribute: Sendable, Hashable {
    public var namespace: AttributeNamespace?
    public var name: String
    public var value: String

    public init(name: String, value: String, namespace: AttributeNamespace? = nil) {
        self.name = name
        self.value = value
        self.namespace = namespace
    }

    /// The qualified name as serialized: `xlink:href`, `xmlns`, `class`.
    public var qualifiedName: String {
        guard let namespace else { return name }
        if namespace == .xmlns && name == "xmlns" { return name }
        return namespace.prefix + ":" + name
    }
}

/// A node of the tree: ``Document``, ``DocumentFragment``, ``Element``, ``Text``, ``Comment`` or
/// ``DocumentType``. Children form a doubly linked list: use ``firstChild``/``nextSibling`` (or
/// ``children``) to iterate, ``remove()``, ``replace(with:)``, ``appendChild(_:)`` and
/// ``insertBefore(_:_:)`` to rewrite, all O(1).
///
/// Trust-model row: inbox (incoming mail) — the tree the sanitizer walks and rewrites.
public class Node {
    // The links are stored in internal properties behind public read-only accessors: nothing
    // outside this module can take a long-lived (inout) access to them, so the optimizer can
    // prove that no two accesses overlap and drops the dynamic exclusivity checks that cost
    // ~8 % of parsing and freeing a tree (every link store in `appendChild` and `deinit`).
    //
    // The three links that do not own their node (parent, last child, previous sibling) are kept
    // as `Unmanaged` values: reading one as an `unowned(unsafe)` reference made a strong copy
    // (a retain and a release, both atomic) even where the reader wanted no reference at all;
    // ``UnretainedLinks`` reads the stored value as it is.
    internal var parentLink: Unmanaged<Node>?
    internal var storedFirstChild: Node?
    internal var lastChildLink: Unmanaged<Node>?
    internal var storedNextSibling: Node?
    internal var previousSiblingLink: Unmanaged<Node>?

    internal var storedParent: Node? {
        @inline(__always) get { parentLink?.takeUnretainedValue() }
        @inline(__always) set { parentLink = newValue.map { Unmanaged.passUnretained($0) } }
    }
    internal var storedLastChild: Node? {
        @inline(__always) get { lastChildLink?.takeUnretainedValue() }
        @inline(__always) set { lastChildLink = newValue.map { Unmanaged.passUnretained($0) } }
    }
    internal var storedPreviousSibling: Node? {
        @inline(__always) get { previousSiblingLink?.takeUnretainedValue() }
        @inline(__always) set { previousSiblingLink = newValue.map { Unmanaged.passUnretained($0) } }
    }

    /// The parent, or `nil` for a root or a detached node.
    public internal(set) var parent: Node? {
        @inline(__always) get { storedParent }
        @inline(__always) set { storedParent = newValue }
    }
    /// The first child, or `nil`.
    public internal(set) var firstChild: Node? {
        @inline(__always) get { storedFirstChild }
        @inline(__always) set { storedFirstChild = newValue }
    }
    /// The last child, or `nil`.
    public internal(set) var lastChild: Node? {
        @inline(__always) get { storedLastChild }
        @inline(__always) set { storedLastChild = newValue }
    }
    /// The next sibling, or `nil`.
    public internal(set) var nextSibling: Node? {
        @inline(__always) get { storedNextSibling }
        @inline(__always) set { storedNextSibling = newValue }
    }
    /// The previous sibling, or `nil`.
    public internal(set) var previousSibling: Node? {
        @inline(__always) get { storedPreviousSibling }
        @inline(__always) set { storedPreviousSibling = newValue }
    }

    init() {}

    deinit {
        // Detach every child so none keeps a dangling parent/sibling link, and free deep subtrees
        // without unbounded recursion.
        guard storedFirstChild != nil else { return }
        // Subtrees are freed by recursion down to `freeingDepthLimit` (cheaper than a worklist's
        // append and pop per inner node, and mail trees rarely go deeper, so the list is usually
        // never allocated); the nodes below go to a worklist, taken last in first out, which keeps
        // it short (no large allocation, each of which made malloc consolidate the chunks freed so
        // far) and releases nodes as it goes.
        var pending: [Node] = []
        Node.freeChildren(of: self, depth: 0, pending: &pending)
        while var node = pending.popLast() {
            if isKnownUniquelyReferenced(&node) { Node.freeChildren(of: node, depth: 0, pending: &pending) }
        }
    }

    /// How deep `freeChildren` recurses before handing subtrees to the worklist: a few kilobytes
    /// of stack at most.
    private static let freeingDepthLimit = 32

    private static func freeChildren(of node: Node, depth: Int, pending: inout [Node]) {
        // The strong links are moved out (`take()`), not copied: freeing a tree does no retain
        // per node, only the release that frees it.
        var next = node.storedFirstChild.take()
        node.storedLastChild = nil
        while var current = next.take() {
            next = current.storedNextSibling.take()
            // Only a test, no retain: most nodes are not templates.
            let hasContent = (current as? Element)?.storedTemplateContent != nil
            if current.storedFirstChild == nil && !hasContent {
                // A leaf: clearing its links is cheaper than asking whether someone holds it.
                current.storedParent = nil
                current.storedPreviousSibling = nil
            } else if isKnownUniquelyReferenced(&current) {
                // Nobody else holds it, so it is freed at the end of this iteration, and its
                // parent/previous links are never read again: they are left as they are. Its
                // children and template content are freed here, not by its own deinit (which
                // would start over at depth 0: nested templates would recurse without bound).
                if hasContent {
                    var fragment = unsafeDowncast(current, to: Element.self).storedTemplateContent.take()!
                    if isKnownUniquelyReferenced(&fragment) && fragment.storedFirstChild != nil {
                        if depth < freeingDepthLimit {
                            freeChildren(of: fragment, depth: depth + 1, pending: &pending)
                        } else {
                            pending.append(fragment)
                        }
                    }
                }
                if current.storedFirstChild != nil {
                    if depth < freeingDepthLimit {
                        freeChildren(of: current, depth: depth + 1, pending: &pending)
                    } else {
                        // It waits in the list after its parent is gone: no stale link.
                        current.storedParent = nil
                        current.storedPreviousSibling = nil
                        pending.append(current)
                    }
                }
            } else {
                // Someone holds it (and so its subtree): it becomes a detached root.
                current.storedParent = nil
                current.storedPreviousSibling = nil
            }
        }
    }

    /// `true` if the node has at least one child.
    public var hasChildNodes: Bool { firstChild != nil }

    /// The children in order. Safe to use while removing the child being visited, because the
    /// iterator reads `nextSibling` before yielding.
    public var children: ChildSequence { ChildSequence(first: firstChild) }

    /// Child elements only.
    public var childElements: [Element] { children.compactMap { $0 as? Element } }

    /// The number of children (O(n)).
    public var childCount: Int { var count = 0; var node = firstChild; while let n = node { count += 1; node = n.nextSibling }; return count }

    /// Appends `child` (detaching it first from wherever it was).
    public func appendChild(_ child: Node) {
        child.remove()
        child.parent = self
        if let last = lastChild {
            last.nextSibling = child
            child.previousSibling = last
        } else {
            firstChild = child
        }
        lastChild = child
    }

    /// Appends a node that has no parent and no siblings (one the parser has just created): the
    /// parser's common insertion, without the detaching step of ``appendChild(_:)`` and without
    /// retaining the current last child. `package` for the perf lab's `lab floor`
    /// (scripts/perf-lab.sh), which links nodes as the parser does to measure what they cost.
    @inline(__always) package final func appendDetached(_ child: consuming Node) {
        assert(child.storedParent == nil && child.storedNextSibling == nil && child.storedPreviousSibling == nil)
        child.storedParent = self
        // The strong link is stored last, so the caller's reference can move into it.
        let previous = storedLastChild
        storedLastChild = child
        if let previous {
            child.storedPreviousSibling = previous
            previous.storedNextSibling = child
        } else {
            storedFirstChild = child
        }
    }

    /// Inserts `child` before `reference` (a child of this node), or at the end when `reference`
    /// is `nil`.
    public func insertBefore(_ child: Node, _ reference: Node?) {
        guard let reference else { appendChild(child); return }
        precondition(reference.parent === self, "reference is not a child of this node")
        if child === reference { return }
        child.remove()
        child.parent = self
        child.nextSibling = reference
        child.previousSibling = reference.previousSibling
        if let previous = reference.previousSibling { previous.nextSibling = child } else { firstChild = child }
        reference.previousSibling = child
    }

    /// Detaches this node (with its subtree) from its parent. No-op if detached.
    public func remove() {
        guard let parent else { return }
        let keep = self  // keep alive while unlinking
        if let previous = previousSibling { previous.nextSibling = nextSibling } else { parent.firstChild = nextSibling }
        if let next = nextSibling { next.previousSibling = previousSibling } else { parent.lastChild = previousSibling }
        keep.parent = nil
        keep.previousSibling = nil
        keep.nextSibling = nil
    }

    /// Puts `replacement` where this node is and detaches this node.
    public func replace(with replacement: Node) {
        guard let parent, replacement !== self else { return }
        parent.insertBefore(replacement, self)
        remove()
    }

    /// Replaces this node by its children (keeps the content, drops the tag) — the sanitizer's
    /// "unwrap".
    public func unwrap() {
        guard let parent else { return }
        while let child = firstChild { parent.insertBefore(child, self) }
        remove()
    }

    /// Moves every child of this node to the end of `newParent` (nothing when it is this node;
    /// it must not be one of this node's descendants).
    ///
    /// The children move as one chain: each gets its new parent, and the chain is linked after
    /// `newParent`'s last child, with no reference count touched but the first child's (moved,
    /// not copied) — a fragment parse moves every top-level node of the message this way.
    public func moveChildren(to newParent: Node) {
        guard newParent !== self, let last = lastChildLink, let first = storedFirstChild.take() else { return }
        lastChildLink = nil
        let parentLink = Unmanaged.passUnretained(newParent)
        var child: Unmanaged<Node>? = Unmanaged.passUnretained(first)
        while let current = child {
            child = current._withUnsafeGuaranteedRef { node in
                node.parentLink = parentLink
                return node.storedNextSibling.map { Unmanaged.passUnretained($0) }
            }
        }
        if let previous = newParent.lastChildLink {
            first.previousSiblingLink = previous
            previous._withUnsafeGuaranteedRef { $0.storedNextSibling = first }
        } else {
            newParent.storedFirstChild = first
        }
        newParent.lastChildLink = last
    }

    /// Removes every child.
    public func removeAllChildren() {
        while let child = firstChild { child.remove() }
    }

    /// Pre-order traversal of the descendants (not including this node); iterative, so deep trees
    /// are safe. Template contents are not entered (walk ``Element/templateContent`` yourself).
    public var descendants: DescendantSequence { DescendantSequence(root: self) }

    /// The concatenated text of all descendant text nodes.
    public var textContent: String {
        if let text = self as? Text { return text.data }
        var result = ""
        for node in descendants { if let text = node as? Text { result += text.data } }
        return result
    }

    /// A copy of this node; with `deep`, of its whole subtree. The template contents of every
    /// copied `<template>` are copied whole (also those of this node when `deep` is `false`).
    ///
    /// Trust-model row: inbox (incoming mail) — the parser copies an `<option>`'s subtree into
    /// `<selectedcontent>`, and that subtree is the mail's: the copy is one walk with a worklist,
    /// through children and template contents alike, so no nesting (not even 100 000 nested
    /// `<template>`s, each a level of template contents) makes it recurse.
    public func clone(deep: Bool) -> Node {
        let copy = shallowClone()
        // Pairs (original, copy) whose children are still to be copied; a copy has no children
        // yet when its pair is taken, and gets them all, in order, at once.
        var pending: [(source: Node, target: Node)] = []
        if deep && firstChild != nil { pending.append((self, copy)) }
        Node.queueTemplateContent(of: self, copy: copy, into: &pending)
        while let (source, target) = pending.popLast() {
            var child = source.firstChild
            while let original = child {
                let childCopy = original.shallowClone()
                target.appendDetached(childCopy)
                if original.firstChild != nil { pending.append((original, childCopy)) }
                Node.queueTemplateContent(of: original, copy: childCopy, into: &pending)
                child = original.nextSibling
            }
        }
        return copy
    }

    /// If `source` is an element with non-empty template contents, queues them to be copied into
    /// the template contents of `copy` (its ``shallowClone()``).
    @inline(__always)
    private static func queueTemplateContent(of source: Node, copy: Node, into pending: inout [(source: Node, target: Node)]) {
        guard let element = source as? Element, let content = element.storedTemplateContent,
              content.storedFirstChild != nil else { return }
        let elementCopy = unsafeDowncast(copy, to: Element.self)
        if elementCopy.storedTemplateContent == nil { elementCopy.storedTemplateContent = DocumentFragment() }
        pending.append((content, elementCopy.storedTemplateContent!))
    }

    /// A copy of this node alone: no children, and for a `<template>` empty template contents
    /// (``clone(deep:)`` fills them).
    func shallowClone() -> Node { fatalError("abstract") }
}

/// Iterates the children of a node.
public struct ChildSequence: Sequence, IteratorProtocol {
    var next_: Node?
    init(first: Node?) { next_ = first }
    public mutating func next() -> Node? {
        guard let node = next_ else { return nil }
        next_ = node.nextSibling
        return node
    }
}

/// Iterates the descendants of a node in document order (pre-order). The node just returned may
/// be removed or replaced during iteration: the walk then continues after the place it occupied,
/// without visiting its subtree or the replacement. Call ``skipChildren()`` to not descend into
/// the node just returned.
public struct DescendantSequence: Sequence, IteratorProtocol {
    let root: Node
    var current: Node?
    var started = false
    var skip = false
    var savedParent: Node?
    var savedNext: Node?
    init(root: Node) { self.root = root }

    /// Do not descend into the children of the node last returned.
    public mutating func skipChildren() { skip = true }

    public mutating func next() -> Node? {
        let result: Node?
        if !started {
            started = true
            result = root.firstChild
        } else if let node = current {
            if node.parent != nil {
                if !skip, let child = node.firstChild { result = child } else { result = ascend(from: node) }
            } else if let saved = savedNext, saved.parent != nil, saved.parent === savedParent {
                result = saved
            } else if let parent = savedParent, parent !== root {
                result = parent.parent == nil && parent !== root ? nil : ascend(from: parent)
            } else {
                result = nil
            }
        } else {
            result = nil
        }
        skip = false
        current = result
        savedParent = result?.parent
        savedNext = result?.nextSibling
        return result
    }

    private func ascend(from node: Node) -> Node? {
        var n: Node? = node
        while let x = n, x !== root {
            if let sibling = x.nextSibling { return sibling }
            n = x.parent
        }
        return nil
    }
}

/// The root of a parsed document.
///
/// Trust-model row: inbox — the whole message body as the web view would see it.
public final class Document: Node {
    /// The document's compatibility mode, set from the doctype.
    public enum QuirksMode: Sendable { case noQuirks, limitedQuirks, quirks }
    public internal(set) var quirksMode: QuirksMode = .noQuirks
    public override init() { super.init() }
    override func shallowClone() -> Node { let d = Document(); d.quirksMode = quirksMode; return d }

    /// The `<html>` element, if any.
    public var documentElement: Element? { children.lazy.compactMap { $0 as? Element }.first }
}

/// A fragment: the result of fragment parsing, and the content of a `<template>`.
///
/// Trust-model row: inbox — template contents are inert but still sanitized.
public final class DocumentFragment: Node {
    public override init() { super.init() }
    override func shallowClone() -> Node { DocumentFragment() }
}

/// An element: namespace, local name, attributes, children.
///
/// Trust-model row: inbox — the unit the sanitizer allows, rewrites or drops.
public final class Element: Node {
    public let namespace: Namespace
    /// The interned local name: `.div`, `.foreignObject`, or ``HTMLTag/unknown`` when the name is
    /// outside the table (then only ``localName`` tells it). Always agrees with ``localName``:
    /// `tag == .div` exactly when `localName == "div"`.
    public let tag: HTMLTag
    /// The local name: lowercase for HTML, case-adjusted for SVG (`foreignObject`).
    public let localName: String
    /// Attributes in source order; names are unique.
    ///
    /// A plain get and set: a change through it (`element.attributes.append(...)`) copies the
    /// array, so whatever the caller's code does meanwhile (even reading the attributes from a
    /// closure) it never overlaps an access to the storage, `storedAttributes`. Each such change
    /// costs a copy of the array (build a new array and assign it once when changing many).
    public var attributes: [Attribute] {
        get { storedAttributes }
        set { storedAttributes = newValue }
    }
    /// The storage behind ``attributes``, for this package's in-place reads and changes.
    ///
    /// No dynamic exclusivity check (`@exclusivity(unchecked)`, as ``Text/storedData`` and
    /// ``Comment/storedData``): the serializer, the re-parse check and the sanitizer read the
    /// array in place through an `inout` access (a plain read copies it out, a retain and
    /// release), and each such access of a checked property was a `swift_beginAccess` call
    /// (163 000 per mail-sanitizer bench round over the three properties, ~13 M instructions).
    /// Accesses still must not overlap, which now nothing checks at run time, so every access
    /// that runs other code while it lasts runs only code that does not touch the same property:
    /// the serializer's and the re-parse check's in-place reads call byte copies and comparisons;
    /// MailSafety's `TreeCleaner` cleans the attributes inside one access, with code that reads
    /// the element's name, namespace and parent but its attributes only through the buffer it was
    /// given (it moves each one out and back). Only this package's code reaches the
    /// storage (the public property is a get and a set, which cannot overlap), and the tree is
    /// used by one thread at a time (nodes are not `Sendable`).
    @exclusivity(unchecked) package var storedAttributes: [Attribute]
    /// The contents of a `<template>` element (HTML namespace), else `nil`.
    public internal(set) var templateContent: DocumentFragment? {
        @inline(__always) get { storedTemplateContent }
        @inline(__always) set { storedTemplateContent = newValue }
    }
    // Internal storage behind a public accessor, like the links of `Node` (no dynamic
    // exclusivity check on the tree builder's read per insertion).
    internal var storedTemplateContent: DocumentFragment?
    /// How many times the element is on the parser's stack of open elements (0 or 1 in
    /// practice; 0 once parsing has finished, since stopping pops everything). Makes "is in the
    /// stack of open elements" O(1): reconstructing the active formatting elements asks it for
    /// every character run, and a `<font>` around a whole layout table sits deep in the stack.
    internal var stackCount: Int32 = 0
    /// A digest of the attributes (as a set) while the element is in the parser's list of active
    /// formatting elements, 0 until Noah's Ark first needs it (``TreeBuilder/formattingEntry(_:)``,
    /// ``TreeBuilder/formattingDigest(of:)``): it compares digests before the attributes
    /// themselves. Fits in the padding after ``stackCount`` (no larger allocation).
    internal var formattingDigest: UInt32 = 0

    public init(localName: String, namespace: Namespace = .html, attributes: [Attribute] = []) {
        let tag = HTMLTag(localName: localName)
        self.tag = tag
        self.localName = tag == .unknown ? localName : tag.name
        self.namespace = namespace
        self.storedAttributes = attributes
        if namespace == .html && tag == .template { storedTemplateContent = DocumentFragment() }
        super.init()
    }

    /// The parser's initializer: `tag` is already interned (``HTMLTag/unknown`` or the identifier
    /// of `localName`). `package` for the perf lab's `lab floor`, as ``Node/appendDetached(_:)``.
    package init(tag: HTMLTag, localName: String, namespace: Namespace, attributes: [Attribute]) {
        assert(tag == .unknown ? HTMLTag(localName: localName) == .unknown : tag.name == localName)
        self.tag = tag
        self.localName = localName
        self.namespace = namespace
        self.storedAttributes = attributes
        if namespace == .html && tag == .template { storedTemplateContent = DocumentFragment() }
        super.init()
    }

    override func shallowClone() -> Node {
        // A `<template>` copy is made with empty contents (the initializer's); `clone(deep:)`
        // copies the contents in its walk, not by recursion.
        Element(tag: tag, localName: localName, namespace: namespace, attributes: attributes)
    }

    /// `true` if this is the HTML element named `name`.
    @inlinable public func isHTML(_ name: String) -> Bool { namespace == .html && localName == name }

    /// `true` if this is the HTML element with the interned name `tag` (one integer compare;
    /// never `true` for ``HTMLTag/unknown``).
    @inlinable public func isHTML(_ tag: HTMLTag) -> Bool { namespace == .html && self.tag == tag && tag != .unknown }

    /// `true` if this is an HTML element whose name is in `tags`.
    @inlinable public func isHTML(in tags: HTMLTagSet) -> Bool { namespace == .html && tags.contains(tag) }

    /// The value of the attribute with this (non-namespaced) name, or `nil`.
    public subscript(attribute name: String) -> String? {
        get { attributes.first { $0.namespace == nil && $0.name == name }?.value }
        set {
            if let index = attributes.firstIndex(where: { $0.namespace == nil && $0.name == name }) {
                if let newValue { attributes[index].value = newValue } else { attributes.remove(at: index) }
            } else if let newValue {
                attributes.append(Attribute(name: name, value: newValue))
            }
        }
    }

    /// Returns the value of an attribute, or `nil`.
    public func attribute(_ name: String, namespace: AttributeNamespace? = nil) -> String? {
        attributes.first { $0.namespace == namespace && $0.name == name }?.value
    }

    /// Sets (adds or replaces) an attribute.
    public func setAttribute(_ name: String, _ value: String, namespace: AttributeNamespace? = nil) {
        if let index = attributes.firstIndex(where: { $0.namespace == namespace && $0.name == name }) {
            attributes[index].value = value
        } else {
            attributes.append(Attribute(name: name, value: value, namespace: namespace))
        }
    }

    /// Removes an attribute; returns whether it existed.
    @discardableResult
    public func removeAttribute(_ name: String, namespace: AttributeNamespace? = nil) -> Bool {
        guard let index = attributes.firstIndex(where: { $0.namespace == namespace && $0.name == name }) else { return false }
        attributes.remove(at: index)
        return true
    }

    /// Keeps only the attributes for which `keep` returns `true` (`keep` may read them).
    public func filterAttributes(_ keep: (Attribute) -> Bool) {
        let kept = attributes.filter(keep)
        if kept.count != attributes.count { attributes = kept }
    }
}

/// A node that holds text: ``Text`` and ``Comment`` (the DOM's `CharacterData`).
public class CharacterData: Node {
    /// The text. A plain get and set over `storedData` (see ``Element/attributes``).
    public final var data: String {
        get { storedData }
        set { storedData = newValue }
    }
    /// The storage behind ``data``: no dynamic exclusivity check, for this package's in-place
    /// reads (the serializer, the re-parse check) and appends (the parser): see
    /// ``Element/storedAttributes``.
    @exclusivity(unchecked) package final var storedData: String
    init(data: String) { self.storedData = data; super.init() }
}

/// A run of text.
///
/// Trust-model row: inbox — text is what the user reads; it is escaped when serialized.
public final class Text: CharacterData {
    /// A text node holding `data`.
    public init(_ data: String) { super.init(data: data) }
    override func shallowClone() -> Node { Text(data) }
}

/// A comment.
///
/// Trust-model row: inbox — comments can hide conditional-comment tricks; sanitizers drop them.
public final class Comment: CharacterData {
    /// A comment holding `data`.
    public init(_ data: String) { super.init(data: data) }
    override func shallowClone() -> Node { Comment(data) }
}

/// A `<!DOCTYPE>`.
///
/// Trust-model row: inbox — decides quirks mode, which changes how the message renders.
public final class DocumentType: Node {
    public let name: String
    public let publicId: String
    public let systemId: String
    public init(name: String, publicId: String = "", systemId: String = "") {
        self.name = name
        self.publicId = publicId
        self.systemId = systemId
        super.init()
    }
    override func shallowClone() -> Node { DocumentType(name: name, publicId: publicId, systemId: systemId) }
}

/// Reading a tree's links without retaining and releasing each node: for walks over a tree that
/// something else holds and that nothing changes while they run (the parser's searches, the
/// re-parse check, the serializer, the sanitizer's tree walk). Each retain and release is an
/// atomic read-modify-write: on the sanitizer's path they were a fifth of the time (perf,
/// 2026-11-27) though a tenth of the instructions.
///
/// For this package's modules only (`package`): a `Ref` is valid only while the tree that holds
/// the node is alive and unchanged, which the caller has to know. Not `@inlinable`: that would
/// need the stored links to be `@usableFromInline`, and then the optimizer could no longer prove
/// that no two accesses to them overlap; the dynamic exclusivity checks it drops today came back
/// (`swift_beginAccess` 11.7 M → 39.9 M instructions per bench round). From another module a read
/// is a call, not an atomic operation.
package enum UnretainedLinks {
    package typealias Ref = Unmanaged<Node>

    @inline(__always) package static func firstChild(_ node: Ref) -> Ref? {
        node._withUnsafeGuaranteedRef { n in n.storedFirstChild.map { Ref.passUnretained($0) } }
    }

    @inline(__always) package static func nextSibling(_ node: Ref) -> Ref? {
        node._withUnsafeGuaranteedRef { n in n.storedNextSibling.map { Ref.passUnretained($0) } }
    }

    @inline(__always) package static func lastChild(_ node: Ref) -> Ref? {
        node._withUnsafeGuaranteedRef { n in n.lastChildLink }
    }

    @inline(__always) package static func previousSibling(_ node: Ref) -> Ref? {
        node._withUnsafeGuaranteedRef { n in n.previousSiblingLink }
    }

    @inline(__always) package static func parent(_ node: Ref) -> Ref? {
        node._withUnsafeGuaranteedRef { n in n.parentLink }
    }

    /// The node as an element, by an exact class check (`Element` is final; no dynamic cast).
    ///
    /// The result is made from the node's address, not from the reference the check reads: made
    /// from that reference, a later `_withUnsafeGuaranteedRef` on the result is folded back to it
    /// by the optimizer, and since its borrow has ended by then, the optimizer retains it to keep
    /// it alive in between (a retain and release per element in the serializer's walk).
    @inline(__always) package static func element(_ node: Ref) -> Unmanaged<Element>? {
        node._withUnsafeGuaranteedRef { ObjectIdentifier(type(of: $0)) == ObjectIdentifier(Element.self) }
            ? Unmanaged<Element>.fromOpaque(node.toOpaque()) : nil
    }

    /// The element as a node (an upcast, from the address as in ``element(_:)``; no retain).
    @inline(__always) package static func node(_ element: Unmanaged<Element>) -> Ref {
        Ref.fromOpaque(element.toOpaque())
    }

    /// Whether the node is a `Text` (an exact class check).
    @inline(__always) package static func isText(_ node: Ref) -> Bool {
        node._withUnsafeGuaranteedRef { n in ObjectIdentifier(type(of: n)) == ObjectIdentifier(Text.self) }
    }

    /// Whether the node is a `Comment` (an exact class check).
    @inline(__always) package static func isComment(_ node: Ref) -> Bool {
        node._withUnsafeGuaranteedRef { n in ObjectIdentifier(type(of: n)) == ObjectIdentifier(Comment.self) }
    }

    /// The template contents of an element (HTML `<template>`), else `nil`.
    @inline(__always) package static func templateContent(_ element: Unmanaged<Element>) -> Ref? {
        element._withUnsafeGuaranteedRef { e in e.storedTemplateContent.map { Ref.passUnretained($0) } }
    }

    /// `true` if the node is the HTML element `tag` (an exact class check, no dynamic cast).
    @inline(__always) package static func isHTMLElement(_ node: Ref, _ tag: HTMLTag) -> Bool {
        node._withUnsafeGuaranteedRef { n in
            ObjectIdentifier(type(of: n)) == ObjectIdentifier(Element.self) && unsafeDowncast(n, to: Element.self).isHTML(tag)
        }
    }
}
