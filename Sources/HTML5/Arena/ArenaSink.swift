// The arena tree (`HTMLTree`) as the tree builder's sink: element handles are pointers to rows,
// and every insertion is a few integer stores, with no allocation per node beyond the row (and
// the chunk of 1 024 rows it lands in) and no reference counting per node.
//
// Trust-model row: inbox (incoming mail). The builder decides every step (the one algorithm the
// html5lib suite checks); this sink does to the rows exactly what `DOMSink` does to the class
// nodes, so both trees have the same shape on the same hostile bytes. Every walk here is
// iterative and bounded (the `<selectedcontent>` search by its budget, the copy by the size of
// the copied subtree, the context import by the depth of the caller's tree), and every link is
// a row index into rows that live as long as the tree.

/// An element of an ``HTMLTree`` as the tree builder holds it: a pointer to the element's row.
///
/// A handle is valid only while its tree lives: the tree's chunks never move, so the pointer
/// stays good until the tree is freed. Handles never leave the parse: the builder holds them on
/// its stack and lists while the ``ArenaSink`` (which owns the tree) lives, and outside the parse
/// a node is named by its row index. Reads and writes through a handle are direct loads and
/// stores (no bounds check: the handle was made from a checked row).
struct ArenaElement: TreeElement {
    /// The row index identifies the element in its tree.
    typealias Identity = Int32
    /// A handle is a pointer: borrowing one is copying it.
    typealias Borrowed = ArenaElement

    /// The element's row.
    let row: UnsafeMutablePointer<HTMLTree.Row>

    /// A handle on the element in `row` (which must be an element row of a living tree).
    @inline(__always) init(row: UnsafeMutablePointer<HTMLTree.Row>) {
        assert(row.pointee.kind == .element)
        self.row = row
    }

    /// The element's row index.
    @inline(__always) var index: Int32 { row.pointee.index }
    /// The element's namespace.
    @inline(__always) var namespace: Namespace { row.pointee.namespace }
    /// The element's interned name.
    @inline(__always) var tag: HTMLTag { row.pointee.tag }
    /// The local name: the interned tag's name, the stored name for ``HTMLTag/unknown``.
    @inline(__always) var localName: String {
        let tag = row.pointee.tag
        return tag == .unknown ? row.pointee.payload : tag.internedName
    }
    /// The row index (``Identity``).
    @inline(__always) var identity: Int32 { row.pointee.index }
    /// The builder's count of this element's entries on the stack of open elements.
    @inline(__always) var stackCount: Int32 {
        get { row.pointee.stackCount }
        nonmutating set { row.pointee.stackCount = newValue }
    }
    /// The builder's Noah's Ark digest of the attributes, 0 until taken.
    @inline(__always) var formattingDigest: UInt32 {
        get { row.pointee.formattingDigest }
        nonmutating set { row.pointee.formattingDigest = newValue }
    }
    /// `true` for an HTML `<template>` (it has a fragment row as its contents).
    @inline(__always) var hasTemplateContents: Bool { row.pointee.templateContents >= 0 }

    /// The value of the non-namespaced attribute `name`, or `nil`.
    func attributeValue(_ name: String) -> String? {
        withAttributeBuffer { attributes in attributes.first { $0.namespace == nil && $0.name == name }?.value }
    }

    /// The attributes in source order, read in place in the row.
    @inline(__always) func withAttributeBuffer<R>(_ body: (UnsafeBufferPointer<Attribute>) -> R) -> R {
        row.pointee.attributes.withUnsafeBufferPointer(body)
    }

    /// The entry at `index` of `list` (a copy of the pointer; `nil`: a marker).
    @inline(__always)
    static func borrowEntry(at index: Int, of list: UnsafeBufferPointer<ArenaElement?>) -> ArenaElement? { list[index] }

    /// Runs `body` on the handle.
    @inline(__always) static func withBorrowed<R>(_ borrowed: ArenaElement, _ body: (ArenaElement) -> R) -> R { body(borrowed) }
}

/// An ``HTMLTree`` as the tree builder's sink: a node is its row index (`Int32`), an element is an
/// ``ArenaElement``. Every step does to the rows what ``DOMSink`` does to the class nodes; with a
/// ``verifier`` set (``HTML5Parser/parsesBack(_:to:root:context:options:)``) the insertion steps
/// match the nodes they would create against another arena tree instead, and every insertion at
/// a place (a parent row and a reference row) fails the verification: in a verifying parse the
/// builder's element handles point into the expected tree, whose row indexes are not this tree's.
struct ArenaSink: TreeSink {
    /// A node is its row index.
    typealias NodeRef = Int32
    /// An element is a pointer to its row.
    typealias ElementRef = ArenaElement

    /// The tree being built (row 0 is the document). The handles the builder holds point into it.
    let tree = HTMLTree()
    /// Set when this parse only verifies a tree (the re-parse check on the arena).
    var verifier: ReparseVerifier<ArenaExpectedTree>?

    /// A sink over a new, empty tree.
    init() {}

    /// The element's row index.
    @inline(__always) static func node(_ element: ArenaElement) -> Int32 { element.index }
    /// Row 0.
    @inline(__always) var document: Int32 { 0 }
    /// The tree's compatibility mode.
    var quirksMode: Document.QuirksMode {
        get { tree.quirksMode }
        nonmutating set { tree.quirksMode = newValue }
    }

    // MARK: Creating elements

    /// A new detached element row; while verifying, the expected tree's matching element (a
    /// fresh row, never inserted, when there is none: the verification has failed then).
    @inline(__always)
    mutating func makeElement(tag: HTMLTag, localName: String, namespace: Namespace, attributes: [Attribute]) -> ArenaElement {
        if verifier != nil, let row = verifier!.matchRef(tag: tag, localName: localName, namespace: namespace, attributes: attributes) {
            return ArenaElement(row: row)
        }
        return ArenaElement(row: tree.newElementRow(tag: tag, localName: localName, namespace: namespace, attributes: attributes))
    }

    /// A new detached element with the name, namespace and attributes of `element` (while
    /// verifying, matched as ``makeElement(tag:localName:namespace:attributes:)``: `element` may
    /// be a row of the expected tree).
    mutating func makeElement(copying element: ArenaElement) -> ArenaElement {
        if verifier != nil {
            return makeElement(tag: element.tag, localName: element.localName, namespace: element.namespace, attributes: element.row.pointee.attributes)
        }
        return newElement(copying: element)
    }

    /// A new detached element row (the name and attributes are moved in).
    @inline(__always)
    mutating func newElement(tag: HTMLTag, localName: consuming String, namespace: Namespace, attributes: consuming [Attribute]) -> ArenaElement {
        ArenaElement(row: tree.newElementRow(tag: tag, localName: localName, namespace: namespace, attributes: attributes))
    }

    /// A new detached element with the name, namespace and attributes of `element`.
    mutating func newElement(copying element: ArenaElement) -> ArenaElement {
        ArenaElement(row: tree.shallowCopy(of: element.index))
    }

    /// A detached row copy of `context` and, when `context` or one of its ancestors (in the
    /// caller's class DOM) is an HTML `<form>`, the nearest one: the context's own row when it is
    /// that form, else a detached row copy of it. The walk is bounded by the caller's tree's
    /// depth.
    mutating func importContext(_ context: Element) -> (context: ArenaElement, form: ArenaElement?) {
        let imported = importElement(context)
        var node: Node? = context
        while let n = node {
            if let element = n as? Element, element.isHTML(.form) {
                return (imported, element === context ? imported : importElement(element))
            }
            node = n.parent
        }
        return (imported, nil)
    }

    /// A detached row with the name, namespace and attributes of the class element `element`.
    private func importElement(_ element: Element) -> ArenaElement {
        ArenaElement(row: tree.newElementRow(tag: element.tag, localName: element.localName,
                                             namespace: element.namespace, attributes: element.attributes))
    }

    // MARK: Inserting new nodes

    /// Links the new element as the last child of `parent`.
    @inline(__always) mutating func appendElement(_ element: consuming ArenaElement, to parent: inout ArenaElement) {
        if verifier != nil { verifier!.insert(element.row, into: parent.row); return }
        tree.appendDetached(element.row, to: parent.row)
    }

    /// Inserts `element` into `parent` before `before` (`nil`: at the end), detaching it first.
    mutating func insertElement(_ element: ArenaElement, into parent: Int32, before: Int32?) {
        if verifier != nil { verifier!.fail(); return }
        tree.insert(element.index, into: parent, before: before)
    }

    /// To `parent`'s last child if that is a text (the string is appended in place), else as a
    /// new text row that takes the (moved) string.
    @inline(__always) mutating func appendText(_ text: consuming String, to parent: inout ArenaElement) {
        if verifier != nil { verifier!.appendText(text, to: parent.row); return }
        let last = parent.row.pointee.lastChild
        if last >= 0 {
            let lastRow = tree.row(last)
            if lastRow.pointee.kind == .text { tree.appendText(text, to: lastRow); return }
        }
        tree.appendDetached(tree.newRow(kind: .text, namespace: .html, tag: .unknown, payload: text, attributes: []), to: parent.row)
    }

    /// The arena stores text as bytes (``HTMLTree/textPool``).
    static var takesTextBytes: Bool { true }

    /// ``appendText(_:to:)`` from the tokenizer's bytes: no `String` is made.
    @inline(__always) mutating func appendText(bytes: UnsafeBufferPointer<UInt8>, to parent: inout ArenaElement) {
        if verifier != nil { verifier!.appendText(bytes: bytes, to: parent.row); return }
        let last = parent.row.pointee.lastChild
        if last >= 0 {
            let lastRow = tree.row(last)
            if lastRow.pointee.kind == .text { tree.appendText(bytes: bytes, to: lastRow); return }
        }
        tree.appendDetached(tree.newTextRow(bytes: bytes), to: parent.row)
    }

    /// To the text just before the place (`before`'s previous sibling, or `parent`'s last child),
    /// else as a new text row inserted there.
    mutating func insertText(_ text: consuming String, into parent: Int32, before: Int32?) {
        if verifier != nil { verifier!.fail(); return }
        let previous = before.map { tree.row($0).pointee.previousSibling } ?? tree.row(parent).pointee.lastChild
        if previous >= 0 {
            let previousRow = tree.row(previous)
            if previousRow.pointee.kind == .text { tree.appendText(text, to: previousRow); return }
        }
        let textRow = tree.newRow(kind: .text, namespace: .html, tag: .unknown, payload: text, attributes: [])
        tree.insert(textRow.pointee.index, into: parent, before: before)
    }

    /// Links a new comment row as the last child of `parent`.
    @inline(__always) mutating func appendComment(_ data: String, to parent: inout ArenaElement) {
        if verifier != nil { verifier!.appendComment(data, to: parent.row); return }
        tree.appendDetached(tree.newRow(kind: .comment, namespace: .html, tag: .unknown, payload: data, attributes: []), to: parent.row)
    }

    /// Inserts a new comment row into `parent` before `before` (`nil`: at the end).
    mutating func insertComment(_ data: String, into parent: Int32, before: Int32?) {
        if verifier != nil { verifier!.fail(); return }
        let comment = tree.newRow(kind: .comment, namespace: .html, tag: .unknown, payload: data, attributes: [])
        tree.insert(comment.pointee.index, into: parent, before: before)
    }

    /// Appends a new doctype row to the document.
    mutating func appendDoctype(name: String, publicId: String, systemId: String) {
        if verifier != nil { verifier!.fail(); return }
        tree.appendDetached(tree.newDoctypeRow(name: name, publicId: publicId, systemId: systemId), to: tree.row(0))
    }

    /// Moves `element` to the end of the document (detaching it first, as `appendChild`).
    mutating func appendToDocument(_ element: ArenaElement) {
        if verifier != nil { verifier!.fail(); return }
        tree.append(element.index, to: 0)
    }

    // MARK: Changing nodes already in the tree

    /// Moves `child` (with its subtree) to the end of `parent`.
    mutating func appendChild(_ child: ArenaElement, to parent: ArenaElement) { tree.append(child.index, to: parent.index) }
    /// Moves every child of `element` to the end of `newParent`.
    mutating func moveChildren(of element: ArenaElement, to newParent: ArenaElement) {
        tree.moveChildren(of: element.index, to: newParent.index)
    }
    /// Detaches `element` (with its subtree); nothing if it is detached.
    mutating func remove(_ element: ArenaElement) { tree.detach(element.row) }
    /// Adds each attribute whose (non-namespaced) name `element` has no attribute of yet.
    mutating func mergeAttributes(_ attributes: [Attribute], into element: ArenaElement) {
        for attribute in attributes where element.attributeValue(attribute.name) == nil {
            element.row.pointee.attributes.append(attribute)
        }
    }

    // MARK: Reading the tree

    /// `true` for row 0.
    @inline(__always) func isDocument(_ node: Int32) -> Bool { node == 0 }
    /// The parent's row, or `nil` when the element is detached.
    @inline(__always) func parent(of element: ArenaElement) -> Int32? {
        let parent = element.row.pointee.parent
        return parent >= 0 ? parent : nil
    }
    /// The fragment row of an HTML `<template>`, else `nil`.
    @inline(__always) func templateContents(of element: ArenaElement) -> Int32? {
        let contents = element.row.pointee.templateContents
        return contents >= 0 ? contents : nil
    }

    // MARK: <selectedcontent>

    /// The `<select>` ancestor of `option` and its first `<selectedcontent>` in tree order
    /// (template contents are not entered), the same walks as ``DOMSink``'s with the same budget:
    /// one per ancestor passed and one per descendant visited, `.limited` below 0.
    mutating func findSelectedContent(for option: ArenaElement, budget: inout Int) -> SelectedContentSearch<ArenaElement> {
        var node = option.row.pointee.parent
        while node >= 0, !isHTMLElement(node, .select) {
            budget -= 1
            if budget < 0 { return .limited }
            node = tree.row(node).pointee.parent
        }
        guard node >= 0 else { return .notFound }
        let select = node
        var current = tree.row(select).pointee.firstChild
        walk: while current >= 0 {
            budget -= 1
            if budget < 0 { return .limited }
            let currentRow = tree.row(current)
            if isHTMLElement(currentRow, .selectedcontent) {
                return .found(select: select, target: ArenaElement(row: currentRow))
            }
            let child = currentRow.pointee.firstChild
            if child >= 0 { current = child; continue }
            var up = current
            while up >= 0 && up != select {
                let upRow = tree.row(up)
                if upRow.pointee.nextSibling >= 0 { current = upRow.pointee.nextSibling; continue walk }
                up = upRow.pointee.parent
            }
            current = -1
        }
        return .notFound
    }

    /// `true` if the row at `index` is the HTML element `tag`.
    @inline(__always) private func isHTMLElement(_ index: Int32, _ tag: HTMLTag) -> Bool { isHTMLElement(tree.row(index), tag) }

    /// `true` if `row` is the HTML element `tag`.
    @inline(__always) private func isHTMLElement(_ row: UnsafeMutablePointer<HTMLTree.Row>, _ tag: HTMLTag) -> Bool {
        row.pointee.kind == .element && row.pointee.namespace == .html && row.pointee.tag == tag
    }

    /// Detaches the children of `target`, then appends deep copies (template contents included)
    /// of the children of `option`, iteratively.
    mutating func replaceChildren(of target: ArenaElement, withCopiesOfChildrenOf option: ArenaElement) {
        tree.removeAllChildren(of: target.index)
        tree.copyChildren(of: option.index, into: target.index)
    }

    // MARK: Verification

    @inline(__always) var isVerifying: Bool { verifier != nil }
    var verificationFailed: Bool { verifier?.failed ?? false }
    mutating func failVerification() { if verifier != nil { verifier!.fail() } }
    /// `nil`: the tokenizer's substitution of the expected node's strings reads class nodes only.
    var expectedNode: Unmanaged<Node>? { nil }
}
