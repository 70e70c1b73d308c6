// The seam between the tree-construction algorithm and the tree it builds (docs/arena-tree.md,
// step 1): the tree builder is generic over a `TreeSink`, specialised at compile time, so the
// same insertion modes can build today's class DOM (`DOMSink`) or a tree of rows in arrays
// (`ArenaSink`, `HTMLTree`) without a copy of the algorithm and without a dynamic call per node.
//
// Trust-model row: inbox (incoming mail). Whichever sink runs, the decisions are the spec's and
// are taken by the one algorithm the html5lib suite checks; a sink only stores what it is told.

/// An element as the tree builder holds it: on its stack of open elements, in its list of active
/// formatting elements, as the head, form or context element.
///
/// What the builder reads of an element is its name, namespace and attributes, and two counters
/// of its own bookkeeping (``stackCount``, ``formattingDigest``) that it writes too. A handle is
/// cheap to copy and compare (``identity``); a class element is its own handle.
protocol TreeElement {
    /// What identifies the element within its tree (`==` means "the same element").
    associatedtype Identity: Hashable
    /// A way to hold an element without owning it, for the in-place scans of the builder's lists
    /// (a class element: `Unmanaged`, so no retain and release per entry looked at).
    associatedtype Borrowed

    var namespace: Namespace { get }
    /// The interned local name (``HTMLTag/unknown`` outside the table).
    var tag: HTMLTag { get }
    /// The local name (``tag``'s name unless it is ``HTMLTag/unknown``).
    var localName: String { get }
    var identity: Identity { get }
    /// How many times the element is on the stack of open elements (see ``Element``).
    var stackCount: Int32 { get nonmutating set }
    /// The Noah's Ark digest of the attributes, 0 until taken (see ``Element``).
    var formattingDigest: UInt32 { get nonmutating set }
    /// `true` for an HTML `<template>` (which has template contents).
    var hasTemplateContents: Bool { get }
    /// The value of the non-namespaced attribute `name`, or `nil`.
    func attributeValue(_ name: String) -> String?
    /// The attributes in source order, read in place.
    func withAttributeBuffer<R>(_ body: (UnsafeBufferPointer<Attribute>) -> R) -> R

    /// The entry at `index` of a list read in place (`nil`: a marker), without owning it.
    static func borrowEntry(at index: Int, of list: UnsafeBufferPointer<Self?>) -> Borrowed?
    /// Runs `body` on a borrowed element.
    static func withBorrowed<R>(_ borrowed: Borrowed, _ body: (Self) -> R) -> R
}

extension TreeSink {
    static var takesTextBytes: Bool { false }

    mutating func appendText(bytes: UnsafeBufferPointer<UInt8>, to parent: inout ElementRef) {
        appendText(ByteAccumulator.stringFromValidUTF8(bytes), to: &parent)
    }

    mutating func appendBorrowedElement(_ element: borrowing ElementRef, to parent: inout ElementRef) {
        appendElement(copy element, to: &parent)
    }
}

extension TreeElement {
    /// `true` if this and `other` are the same element.
    @inline(__always) func isSame(_ other: Self) -> Bool { identity == other.identity }

    /// `true` if this is the HTML element with the interned name `tag` (never for
    /// ``HTMLTag/unknown``).
    @inline(__always) func isHTML(_ tag: HTMLTag) -> Bool { namespace == .html && self.tag == tag && tag != .unknown }

    /// `true` if this is an HTML element whose name is in `tags`.
    @inline(__always) func isHTML(in tags: HTMLTagSet) -> Bool { namespace == .html && tags.contains(tag) }
}

/// What the search for an option's `<selectedcontent>` found (``TreeSink/findSelectedContent(for:budget:)``).
enum SelectedContentSearch<ElementRef: TreeElement> {
    /// No `<select>` ancestor, or no `<selectedcontent>` in it.
    case notFound
    /// The search used up its budget (the caller marks the parse limited).
    case limited
    /// The option's select (its identity) and the select's first `<selectedcontent>`.
    case found(select: ElementRef.Identity, target: ElementRef)
}

/// The tree the builder builds. The builder decides; the sink creates, links and stores.
///
/// Every insertion of a node the builder has just created comes in two forms: at the end of an
/// open element (`inout`, the builder's stack slot: nearly every insertion, and the form a sink
/// can make cheapest) and at a place (a parent and an optional reference child: foster
/// parenting, templates, the document). The calls that change nodes already in the tree
/// (``appendChild(_:to:)``, ``moveChildren(of:to:)``, ``remove(_:)``,
/// ``mergeAttributes(_:into:)``, the `<selectedcontent>` copy) are never made while the sink
/// verifies (``isVerifying``): the builder fails the verification instead.
protocol TreeSink {
    /// A handle on any node of the tree (document, fragment, element, text, comment, doctype).
    associatedtype NodeRef
    /// A handle on an element.
    associatedtype ElementRef: TreeElement

    /// The element as a node.
    static func node(_ element: ElementRef) -> NodeRef
    /// The document node (the root; fragment parsing builds a document too).
    var document: NodeRef { get }
    /// The document's compatibility mode.
    var quirksMode: Document.QuirksMode { get set }

    // MARK: Creating elements

    /// A new element for the parser; a verifying sink answers with the expected tree's matching
    /// element instead (a fresh one, and the verification failed, when there is none).
    mutating func makeElement(tag: HTMLTag, localName: String, namespace: Namespace, attributes: [Attribute]) -> ElementRef
    /// ``makeElement(tag:localName:namespace:attributes:)`` with the name, namespace and
    /// attributes of `element` (reconstructing the active formatting elements).
    mutating func makeElement(copying element: ElementRef) -> ElementRef
    /// A new element, never a verification's match (the name and attributes are moved in).
    mutating func newElement(tag: HTMLTag, localName: consuming String, namespace: Namespace, attributes: consuming [Attribute]) -> ElementRef
    /// A new element with the name, namespace and attributes of `element` (the adoption agency).
    mutating func newElement(copying element: ElementRef) -> ElementRef
    /// An element standing for the fragment parsing context `context` (which belongs to the
    /// caller's class DOM), and the nearest `<form>` among `context` and its ancestors, if any.
    mutating func importContext(_ context: Element) -> (context: ElementRef, form: ElementRef?)

    // MARK: Inserting new nodes

    /// Appends a new, detached element at the end of the open element `parent`.
    mutating func appendElement(_ element: consuming ElementRef, to parent: inout ElementRef)
    /// ``appendElement(_:to:)`` on the re-parse check's path (``TreeBuilder/verifyElement(_:_:)``),
    /// where the element is borrowed: a verifying sink appends nothing, so it needs no reference
    /// of its own (for the class DOM a consumed element was a second retain per element there).
    /// The default appends a copy.
    mutating func appendBorrowedElement(_ element: borrowing ElementRef, to parent: inout ElementRef)
    /// Inserts an element into `parent` before `before` (`nil`: at the end), detaching it first
    /// from wherever it is (the adoption agency inserts an element that is already in the tree).
    mutating func insertElement(_ element: ElementRef, into parent: NodeRef, before: NodeRef?)
    /// Appends text at the end of the open element `parent`: to its last child if that is a
    /// text, else as a new text node.
    mutating func appendText(_ text: consuming String, to parent: inout ElementRef)
    /// Inserts text into `parent` (not the document) before `before` (`nil`: at the end): to the
    /// text node just before that place if there is one, else as a new text node.
    mutating func insertText(_ text: consuming String, into parent: NodeRef, before: NodeRef?)
    /// `true` when the sink stores text as bytes: the tokenizer then hands character runs over as
    /// bytes (``Token/characterBytes(_:inInput:)``), and the builder's common text path gives them to
    /// ``appendText(bytes:to:)`` without making a `String`. The default is `false`.
    static var takesTextBytes: Bool { get }
    /// ``appendText(_:to:)`` with the text as well-formed UTF-8 bytes (read during the call only).
    /// The default makes a `String`.
    mutating func appendText(bytes: UnsafeBufferPointer<UInt8>, to parent: inout ElementRef)
    /// Appends a comment at the end of the open element `parent`.
    mutating func appendComment(_ data: String, to parent: inout ElementRef)
    /// Inserts a comment into `parent` before `before` (`nil`: at the end).
    mutating func insertComment(_ data: String, into parent: NodeRef, before: NodeRef?)
    /// Appends a doctype to the document.
    mutating func appendDoctype(name: String, publicId: String, systemId: String)
    /// Appends a new element (the root `<html>`) to the document.
    mutating func appendToDocument(_ element: ElementRef)

    // MARK: Changing nodes already in the tree

    /// Moves `child` (with its subtree) to the end of `parent`.
    mutating func appendChild(_ child: ElementRef, to parent: ElementRef)
    /// Moves every child of `element` to the end of `newParent`.
    mutating func moveChildren(of element: ElementRef, to newParent: ElementRef)
    /// Detaches `element` (with its subtree) from its parent.
    mutating func remove(_ element: ElementRef)
    /// Adds each attribute `element` does not have yet (`<html>`, `<body>` start tags in body).
    mutating func mergeAttributes(_ attributes: [Attribute], into element: ElementRef)

    // MARK: Reading the tree

    /// `true` if `node` is the document.
    func isDocument(_ node: NodeRef) -> Bool
    /// The element's parent, or `nil` when it is detached.
    func parent(of element: ElementRef) -> NodeRef?
    /// The template contents of an HTML `<template>`, else `nil`.
    func templateContents(of element: ElementRef) -> NodeRef?

    // MARK: <selectedcontent>

    /// Looks for the `<select>` ancestor of `option` and that select's first `<selectedcontent>`
    /// in tree order, visiting at most `budget` nodes (`budget` is decreased by those visited).
    mutating func findSelectedContent(for option: ElementRef, budget: inout Int) -> SelectedContentSearch<ElementRef>
    /// Replaces the children of `target` with deep copies of the children of `option`.
    mutating func replaceChildren(of target: ElementRef, withCopiesOfChildrenOf option: ElementRef)

    // MARK: Verification (the re-parse check of `DOMSink`; other sinks never verify)

    /// `true` while the parse verifies a tree instead of building one.
    var isVerifying: Bool { get }
    /// `true` once a verification has failed (the parse stops after the current token).
    var verificationFailed: Bool { get }
    /// Fails the verification (a step that is not an append of the expected tree's next node).
    mutating func failVerification()
    /// The node the tokenizer may take its strings from (``Tokenizer/expectedNode``).
    var expectedNode: Unmanaged<Node>? { get }
}
