// The class DOM (`Node`, `Element`, `Text`, ...) as a tree sink: what the parser built before the
// sink seam existed, with the same steps, and the re-parse check (`ReparseVerifier`) riding on
// it as before.
//
// Trust-model row: inbox (incoming mail) — the tree the sanitizer walks and rewrites today.

extension Element: TreeElement {
    typealias Identity = ObjectIdentifier
    typealias Borrowed = Unmanaged<Element>

    @inline(__always) var identity: ObjectIdentifier { ObjectIdentifier(self) }
    @inline(__always) var hasTemplateContents: Bool { storedTemplateContent != nil }
    @inline(__always) func attributeValue(_ name: String) -> String? { attribute(name) }
    @inline(__always) func withAttributeBuffer<R>(_ body: (UnsafeBufferPointer<Attribute>) -> R) -> R {
        withBuffer(inPlace: &storedAttributes, body)
    }

    /// The entry read as the bits of its reference (an `Optional` of a class is a nullable
    /// pointer; `nil` is a marker), without a retain: the list holds it while `list` is borrowed.
    @inline(__always)
    static func borrowEntry(at index: Int, of list: UnsafeBufferPointer<Element?>) -> Unmanaged<Element>? {
        UnsafeRawPointer(list.baseAddress!).load(fromByteOffset: index * MemoryLayout<Element?>.stride, as: UnsafeRawPointer?.self)
            .map { Unmanaged<Element>.fromOpaque($0) }
    }

    @inline(__always) static func withBorrowed<R>(_ borrowed: Unmanaged<Element>, _ body: (Element) -> R) -> R {
        borrowed._withUnsafeGuaranteedRef(body)
    }
}

/// The class DOM as the tree builder's sink (``HTML5Parser/parseDocument(_:options:)`` and the
/// fragment parsers build it), and the re-parse check's: with a ``ReparseVerifier`` set, the
/// insertion steps match the nodes they would create against the expected tree instead.
struct DOMSink: TreeSink {
    typealias NodeRef = Node
    typealias ElementRef = Element

    let documentNode = Document()
    /// Set when this parse only verifies a tree (``HTML5Parser/parsesBack(_:to:context:options:)``).
    var verifier: ReparseVerifier<ClassExpectedTree>?

    @inline(__always) static func node(_ element: Element) -> Node { element }
    @inline(__always) var document: Node { documentNode }
    var quirksMode: Document.QuirksMode {
        get { documentNode.quirksMode }
        set { documentNode.quirksMode = newValue }
    }

    // MARK: Creating elements

    mutating func makeElement(tag: HTMLTag, localName: String, namespace: Namespace, attributes: [Attribute]) -> Element {
        if verifier != nil, let element = verifier!.match(tag: tag, localName: localName, namespace: namespace, attributes: attributes) {
            return element
        }
        return Element(tag: tag, localName: localName, namespace: namespace, attributes: attributes)
    }

    mutating func makeElement(copying element: Element) -> Element {
        makeElement(tag: element.tag, localName: element.localName, namespace: element.namespace, attributes: element.attributes)
    }

    @inline(__always)
    mutating func newElement(tag: HTMLTag, localName: consuming String, namespace: Namespace, attributes: consuming [Attribute]) -> Element {
        Element(tag: tag, localName: localName, namespace: namespace, attributes: attributes)
    }

    mutating func newElement(copying element: Element) -> Element {
        Element(tag: element.tag, localName: element.localName, namespace: element.namespace, attributes: element.attributes)
    }

    mutating func importContext(_ context: Element) -> (context: Element, form: Element?) {
        var node: Node? = context
        while let n = node {
            if let e = n as? Element, e.isHTML(.form) { return (context, e) }
            node = n.parent
        }
        return (context, nil)
    }

    // MARK: Inserting new nodes

    /// The parent is reached through an `inout` access to the builder's stack slot: the access is
    /// exclusive, so the compiler uses the stack's own reference instead of retaining and
    /// releasing the current node around the call. The new node moves into its parent's child
    /// link.
    @inline(__always) mutating func appendElement(_ element: consuming Element, to parent: inout Element) {
        if verifier != nil {
            verifier!.insert(Unmanaged.passUnretained(element), into: Unmanaged.passUnretained(parent))
            return
        }
        parent.appendDetached(element)
    }

    /// The re-parse check's append: the element is matched by identity, not referenced.
    @inline(__always) mutating func appendBorrowedElement(_ element: borrowing Element, to parent: inout Element) {
        if verifier != nil {
            verifier!.insert(Unmanaged.passUnretained(element), into: Unmanaged.passUnretained(parent))
            return
        }
        parent.appendDetached(copy element)
    }

    mutating func insertElement(_ element: Element, into parent: Node, before: Node?) {
        if verifier != nil { verifier!.insert(element, into: parent, before: before); return }
        parent.insertBefore(element, before)
    }

    /// To the last child if that is a Text, else as a new Text that takes the (moved) string.
    /// The last child is looked at through an unretained reference and an exact class check
    /// (`Text` is final): no retain, release or dynamic cast per character run.
    @inline(__always) mutating func appendText(_ text: consuming String, to parent: inout Element) {
        if verifier != nil {
            verifier!.appendText(text, to: Unmanaged.passUnretained(parent))
            return
        }
        if let last = UnretainedLinks.lastChild(Unmanaged.passUnretained(parent)), UnretainedLinks.isText(last) {
            last._withUnsafeGuaranteedRef { unsafeDowncast($0, to: Text.self).storedData += text }
        } else {
            parent.appendDetached(Text(text))
        }
    }

    mutating func insertText(_ text: consuming String, into parent: Node, before: Node?) {
        if verifier != nil {
            if before == nil { verifier!.appendText(text, to: Unmanaged.passUnretained(parent)) } else { verifier!.fail() }
            return
        }
        let previous = before == nil ? parent.lastChild : before!.previousSibling
        if let previousText = previous as? Text { previousText.storedData += text; return }
        parent.insertBefore(Text(text), before)
    }

    @inline(__always) mutating func appendComment(_ data: String, to parent: inout Element) {
        if verifier != nil { verifier!.appendComment(data, to: parent); return }
        parent.appendDetached(Comment(data))
    }

    mutating func insertComment(_ data: String, into parent: Node, before: Node?) {
        if verifier != nil {
            if before == nil { verifier!.appendComment(data, to: parent) } else { verifier!.fail() }
            return
        }
        parent.insertBefore(Comment(data), before)
    }

    mutating func appendDoctype(name: String, publicId: String, systemId: String) {
        documentNode.appendChild(DocumentType(name: name, publicId: publicId, systemId: systemId))
    }

    mutating func appendToDocument(_ element: Element) { documentNode.appendChild(element) }

    // MARK: Changing nodes already in the tree

    mutating func appendChild(_ child: Element, to parent: Element) { parent.appendChild(child) }
    mutating func moveChildren(of element: Element, to newParent: Element) { element.moveChildren(to: newParent) }
    mutating func remove(_ element: Element) { element.remove() }
    mutating func mergeAttributes(_ attributes: [Attribute], into element: Element) {
        for attribute in attributes where element.attribute(attribute.name) == nil { element.storedAttributes.append(attribute) }
    }

    // MARK: Reading the tree

    @inline(__always) func isDocument(_ node: Node) -> Bool { node === documentNode }
    @inline(__always) func parent(of element: Element) -> Node? { element.parent }
    @inline(__always) func templateContents(of element: Element) -> Node? { element.storedTemplateContent }

    // MARK: <selectedcontent>

    mutating func findSelectedContent(for option: Element, budget: inout Int) -> SelectedContentSearch<Element> {
        // The walks read the links without reference counting (`UnretainedLinks`): the tree holds
        // every node they visit, and nothing changes it while they run.
        typealias Links = UnretainedLinks
        var node = Links.parent(Unmanaged.passUnretained(option))
        while let n = node, !Links.isHTMLElement(n, .select) {
            budget -= 1
            if budget < 0 { return .limited }
            node = Links.parent(n)
        }
        guard let selectRef = node else { return .notFound }
        // The first <selectedcontent> among the select's descendants in tree order (an iterative
        // walk over the links, within the budget).
        var current = Links.firstChild(selectRef)
        walk: while let n = current {
            budget -= 1
            if budget < 0 { return .limited }
            if Links.isHTMLElement(n, .selectedcontent) {
                let select = selectRef._withUnsafeGuaranteedRef { ObjectIdentifier($0) }
                return .found(select: select, target: unsafeDowncast(n.takeUnretainedValue(), to: Element.self))
            }
            if let child = Links.firstChild(n) { current = child; continue }
            var up: Unmanaged<Node>? = n
            while let u = up, u.toOpaque() != selectRef.toOpaque() {
                if let sibling = Links.nextSibling(u) { current = sibling; continue walk }
                up = Links.parent(u)
            }
            current = nil
        }
        return .notFound
    }

    mutating func replaceChildren(of target: Element, withCopiesOfChildrenOf option: Element) {
        target.removeAllChildren()
        for child in option.children { target.appendChild(child.clone(deep: true)) }
    }

    // MARK: Verification

    @inline(__always) var isVerifying: Bool { verifier != nil }
    var verificationFailed: Bool { verifier?.failed ?? false }
    mutating func failVerification() { if verifier != nil { verifier!.fail() } }
    var expectedNode: Unmanaged<Node>? { verifier?.expectedNode }
}
