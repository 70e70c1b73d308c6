import HTML5

/// What the cleaner reads and changes of an element: one view over the class DOM's ``HTML5/Element``
/// and the arena tree's element rows, so the allowlist's element and attribute decisions exist
/// once (``TreeCleaner``'s generic methods, specialised for each tree).
///
/// Trust-model row: inbox (incoming mail) — the allowlist with namespace checks decides the same
/// on either tree (the arena path's output is checked byte for byte against the class path's:
/// `ArenaPathTests` and the `sanitizer` fuzz target's oracle).
protocol CleanableElement {
    var namespace: Namespace { get }
    /// The interned name (always agrees with ``localName``).
    var tag: HTMLTag { get }
    var localName: String { get }
    /// Whether the parent is an element named `picture` (a `<source>`'s `src` is an image there).
    var isInPicture: Bool { get }
    /// The value of the attribute `name` in `namespace`, or `nil`.
    func attribute(_ name: String, namespace: AttributeNamespace?) -> String?
    /// Calls `body` with the attributes where the element stores them, for the cleaner's
    /// in-place reads (each attribute moved out and back: see ``TreeCleaner``); `body` must not
    /// reach this element's attributes any other way.
    func withAttributesInPlace<R>(_ body: (UnsafeMutableBufferPointer<Attribute>) -> R) -> R
    /// Replaces the attributes.
    func setAttributes(_ attributes: [Attribute])
}

/// What a node is, for the cleaner.
enum CleanableKind { case element, text, comment, other }

/// The tree the cleaner walks and edits (a handle per node, with no reference counting): the
/// class DOM (``ClassCleanableTree``, the reference) or the arena tree (``ArenaCleanableTree``).
///
/// Trust-model row: inbox (incoming mail) — every edit the walk makes goes through here, and
/// both trees do what the class DOM's methods of the same name do.
protocol CleanableTree {
    associatedtype NodeRef
    associatedtype ElementView: CleanableElement

    func firstChild(_ node: NodeRef) -> NodeRef?
    func nextSibling(_ node: NodeRef) -> NodeRef?
    func kind(_ node: NodeRef) -> CleanableKind
    /// The namespace of an element node, `nil` for any other node.
    func elementNamespace(_ node: NodeRef) -> Namespace?
    /// Calls `body` with the element view of an element node.
    func withElement<R>(_ node: NodeRef, _ body: (ElementView) -> R) -> R
    /// Detaches the node with its subtree; the handle is not used again.
    func remove(_ node: NodeRef)
    /// Replaces the node by its children where it stood, then detaches it.
    func unwrap(_ node: NodeRef)
    /// The concatenated text below an element (its `textContent`).
    func textContent(_ node: NodeRef) -> String
    /// Replaces the element's children with one text holding `text` and drops its attributes
    /// (a `<style>` with its sanitized sheet).
    func replaceContent(of node: NodeRef, withText text: String)
    /// Calls `body` with the UTF-8 of a text node's data.
    func withTextBytes<R>(_ node: NodeRef, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R
    /// Replaces a text node's data.
    func setText(_ node: NodeRef, _ data: String)
}

// MARK: The class DOM

extension Element: CleanableElement {
    /// Unretained read (trust-model row: inbox): asked for every `<source src>`; the parent link
    /// is read as the node stores it (a parent is alive while its child is attached) and the
    /// class by an exact check, with no retain, cast or copy of the name.
    var isInPicture: Bool {
        guard let parent = UnretainedLinks.parent(Unmanaged<Node>.passUnretained(self)),
              let parentElement = UnretainedLinks.element(parent) else { return false }
        return parentElement._withUnsafeGuaranteedRef { $0.tag == .picture }
    }

    /// Calls `body` with the array's buffer, writable only for ``TreeCleaner``'s moves (which put
    /// back the very bits they take): an `inout` access (the storage is unchecked for
    /// exclusivity: ``HTML5/Element/storedAttributes``), but no mutating method of the array, so
    /// no uniqueness check and no copy of a shared array.
    @inline(__always)
    func withAttributesInPlace<R>(_ body: (UnsafeMutableBufferPointer<Attribute>) -> R) -> R {
        Self.inPlace(&storedAttributes, body)
    }

    @inline(__always)
    private static func inPlace<R>(_ attributes: inout [Attribute], _ body: (UnsafeMutableBufferPointer<Attribute>) -> R) -> R {
        attributes.withUnsafeBufferPointer { body(UnsafeMutableBufferPointer(mutating: $0)) }
    }

    func setAttributes(_ attributes: [Attribute]) { self.attributes = attributes }
}

/// The class DOM as the cleaner's tree: a node is an unretained reference (see
/// ``TreeCleaner/clean(_:)`` for why that is sound). The reference the ``MailSanitizer`` output
/// is checked against (``MailSanitizer/referenceSanitize(_:)``).
struct ClassCleanableTree: CleanableTree {
    typealias NodeRef = Unmanaged<Node>
    typealias ElementView = Element

    @inline(__always) func firstChild(_ node: NodeRef) -> NodeRef? { UnretainedLinks.firstChild(node) }
    @inline(__always) func nextSibling(_ node: NodeRef) -> NodeRef? { UnretainedLinks.nextSibling(node) }
    @inline(__always) func kind(_ node: NodeRef) -> CleanableKind {
        if UnretainedLinks.element(node) != nil { return .element }
        if UnretainedLinks.isText(node) { return .text }
        if UnretainedLinks.isComment(node) { return .comment }
        return .other
    }
    @inline(__always) func elementNamespace(_ node: NodeRef) -> Namespace? {
        UnretainedLinks.element(node).map { element in element._withUnsafeGuaranteedRef { $0.namespace } }
    }
    @inline(__always) func withElement<R>(_ node: NodeRef, _ body: (Element) -> R) -> R {
        UnretainedLinks.element(node)!._withUnsafeGuaranteedRef(body)
    }

    /// The one place the walk holds a strong reference: the tree's reference to the node goes
    /// while the call runs, so the call needs its own, and its release after the call frees the
    /// node (with what is still under it) unless someone else holds it.
    func remove(_ node: NodeRef) {
        let strong = node.takeUnretainedValue()
        withExtendedLifetime(strong) { strong.remove() }
    }

    func unwrap(_ node: NodeRef) {
        let strong = node.takeUnretainedValue()
        withExtendedLifetime(strong) { strong.unwrap() }
    }

    func textContent(_ node: NodeRef) -> String { node._withUnsafeGuaranteedRef { $0.textContent } }

    func replaceContent(of node: NodeRef, withText text: String) {
        node._withUnsafeGuaranteedRef { node in
            let element = unsafeDowncast(node, to: Element.self)
            element.removeAllChildren()
            element.appendChild(Text(text))
            element.attributes = []
        }
    }

    func withTextBytes<R>(_ node: NodeRef, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        node._withUnsafeGuaranteedRef { node in
            var data = unsafeDowncast(node, to: Text.self).storedData
            return data.withUTF8(body)
        }
    }

    func setText(_ node: NodeRef, _ data: String) {
        node._withUnsafeGuaranteedRef { unsafeDowncast($0, to: Text.self).storedData = data }
    }
}

// MARK: The arena tree

/// An element row of an ``HTML5/HTMLTree`` as the cleaner reads it.
struct ArenaCleanableElement: CleanableElement {
    let tree: HTMLTree
    let index: Int32

    var namespace: Namespace { tree.namespace(index) }
    var tag: HTMLTag { tree.tag(index) }
    var localName: String { tree.localName(index) }
    var isInPicture: Bool {
        guard let parent = tree.parent(index) else { return false }
        return tree.kind(parent) == .element && tree.tag(parent) == .picture
    }
    func attribute(_ name: String, namespace: AttributeNamespace?) -> String? {
        tree.withAttributesInPlace(index) { attributes in
            attributes.first { $0.namespace == namespace && $0.name == name }?.value
        }
    }
    @inline(__always)
    func withAttributesInPlace<R>(_ body: (UnsafeMutableBufferPointer<Attribute>) -> R) -> R {
        tree.withAttributesInPlace(index, body)
    }
    func setAttributes(_ attributes: [Attribute]) { tree.setAttributes(index, attributes) }
}

/// The arena tree as the cleaner's tree: a node is its row. Removed rows stay in the tree,
/// unlinked, so a handle never dangles.
struct ArenaCleanableTree: CleanableTree {
    typealias NodeRef = Int32
    typealias ElementView = ArenaCleanableElement
    let tree: HTMLTree

    @inline(__always) func firstChild(_ node: Int32) -> Int32? { tree.firstChild(node) }
    @inline(__always) func nextSibling(_ node: Int32) -> Int32? { tree.nextSibling(node) }
    @inline(__always) func kind(_ node: Int32) -> CleanableKind {
        switch tree.kind(node) {
        case .element: .element
        case .text: .text
        case .comment: .comment
        case .document, .fragment, .doctype: .other
        }
    }
    @inline(__always) func elementNamespace(_ node: Int32) -> Namespace? {
        tree.kind(node) == .element ? tree.namespace(node) : nil
    }
    @inline(__always) func withElement<R>(_ node: Int32, _ body: (ArenaCleanableElement) -> R) -> R {
        body(ArenaCleanableElement(tree: tree, index: node))
    }
    func remove(_ node: Int32) { tree.remove(node) }
    func unwrap(_ node: Int32) { tree.unwrap(node) }
    func textContent(_ node: Int32) -> String { tree.textContent(of: node) }
    func replaceContent(of node: Int32, withText text: String) {
        tree.removeAllChildren(of: node)
        tree.appendNewText(text, to: node)
        tree.setAttributes(node, [])
    }
    func withTextBytes<R>(_ node: Int32, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R { tree.withData(node, body) }
    func setText(_ node: Int32, _ data: String) { tree.setData(node, data) }
}
