// The re-parse check without a second tree: the tree builder runs on the serialized output as
// usual, but instead of creating nodes it matches each node it would create against the tree the
// output was serialized from, in document order.

import Foundation  // memcmp

extension HTML5Parser {
    /// Whether parsing `html` as a fragment in `context` gives, node for node, the children of
    /// `root` — decided while parsing, without building a second tree.
    ///
    /// The parser runs its usual algorithm over `html` (same tokenizer, same insertion modes,
    /// same decisions), but every node it would create is looked up in `root`'s subtree instead:
    /// the next node there in document order must be of the same kind with the same namespace,
    /// local name, attributes (namespace, name and value, in order) or text, all compared as
    /// UTF-8 bytes, and must hang under the node the parser is inserting into. Adjacent text
    /// nodes of `root`'s tree count as one text, and empty ones as none (the serializer writes
    /// them so). The answer is `true` only when every insertion was such a match, appended at
    /// the end of its parent, and the whole of `root`'s subtree was matched; then the fragment
    /// the parser would have built is that tree up to the splitting of text runs, so its
    /// ``Node/innerHTML`` is byte for byte `root`'s. (`root` is a fragment, as the parser returns
    /// one: its children are written as they are, with no raw-text parent or template contents
    /// in between.)
    ///
    /// The answer is conservative: anything the parser would do other than append a new node at
    /// the end of its parent — foster parenting, the adoption agency's moves, attributes merged
    /// into an existing element, a `<template>` (its contents are a separate tree), an option
    /// closing once a `<selectedcontent>` exists (it may be copied into it) — makes it `false` at
    /// once, without touching `root`'s tree. `false` means only "not shown here": parse the fragment and compare as before.
    ///
    /// `root`'s nodes are used as the parser's own while it runs (they sit on its stack of open
    /// elements), so `root` must not be used from another thread meanwhile; none of its nodes,
    /// links, attributes or texts is changed (only the parser's bookkeeping on them: the stack
    /// count, cleared again, and the Noah's Ark digest, cleared whenever a node enters the list of
    /// active formatting elements).
    ///
    /// Trust-model row: inbox (incoming mail) — the mail sanitizer's re-parse check (the guard
    /// against mutation XSS: its output must parse, in the viewer's context, to the tree it
    /// cleaned) decides with this in one pass over the output instead of building, comparing and
    /// freeing a second tree. A wrong `true` would let a mutated tree through, so it errs only
    /// towards `false`.
    ///
    /// ```swift
    /// let fragment = try HTML5Parser.parseFragment("<p>Hi</p>", context: Element(localName: "div")).root
    /// HTML5Parser.parsesBack(fragment.innerHTML, to: fragment, context: Element(localName: "div"))  // true
    /// HTML5Parser.parsesBack("<p>Hi<p>there", to: fragment, context: Element(localName: "div"))   // false
    /// ```
    public static func parsesBack(_ html: String, to root: DocumentFragment, context: Element, options: HTML5ParserOptions = .init()) -> Bool {
        guard html.utf8.count <= options.maxInputBytes else { return false }
        var tokenizer = Tokenizer(input: InputStream.preprocess(html), maxAttributes: options.maxAttributesPerElement, inputIsValidUTF8: true)
        tokenizer.recordErrors = false
        var builder = TreeBuilder(tokenizer: consume tokenizer, sink: DOMSink(), scripting: options.scripting, maxDepth: options.maxNestingDepth)
        builder.maxReconstructedElements = options.maxReconstructedElements
        builder.prepareFragment(context: context)
        guard let rootElement = builder.openElements.first else { return false }
        builder.sink.verifier = ReparseVerifier(root: root, rootElement: rootElement)
        builder.run()
        // An early stop leaves `root`'s elements counted as open: clear the parser's bookkeeping.
        for element in builder.openElements { element.stackCount = 0 }
        return builder.sink.verifier?.finished ?? false
    }
}

/// The expected tree a ``ReparseVerifier`` walks: the class DOM (``ClassExpectedTree``) or the
/// arena tree (`ArenaExpectedTree`), read without reference counting. A node is a `Ref`, compared
/// by identity (``same(_:_:)``); a node of the parse that is not in the expected tree (its root
/// element) is a `Ref` too, so that the verifier can tell where the parser inserts.
protocol ReparseExpectedTree {
    associatedtype Ref
    static func same(_ a: Ref, _ b: Ref) -> Bool
    func firstChild(_ node: Ref) -> Ref?
    func nextSibling(_ node: Ref) -> Ref?
    func parent(_ node: Ref) -> Ref?
    func isText(_ node: Ref) -> Bool
    func isElement(_ node: Ref) -> Bool
    func isComment(_ node: Ref) -> Bool
    /// The UTF-8 length of a text node's data.
    func textCount(_ node: Ref) -> Int
    /// Calls `body` with the UTF-8 of a text node's data, read in place.
    func withTextBytes<R>(_ node: Ref, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R
    /// Whether the element node is the element the parser is about to create: the same name,
    /// namespace and attributes (byte for byte, in order), on no stack of open elements yet
    /// (`stackCount` 0), and not an HTML `<template>` (its contents are another tree).
    func elementMatches(_ node: Ref, tag: HTMLTag, localName: String, namespace: Namespace, attributes: [Attribute]) -> Bool
    /// Whether the comment node holds exactly `data` (bytes).
    func commentMatches(_ node: Ref, _ data: String) -> Bool
}

/// The class DOM as the verifier's expected tree: a node is an unretained reference (the caller
/// of ``HTML5Parser/parsesBack(_:to:context:options:)`` holds `root`, which holds every node, and
/// nothing changes them while the parse runs), so a step of the walk costs no retain and release.
struct ClassExpectedTree: ReparseExpectedTree {
    typealias Ref = Unmanaged<Node>

    @inline(__always) static func same(_ a: Ref, _ b: Ref) -> Bool { a.toOpaque() == b.toOpaque() }
    // The links, read without reference counting (shared with the parser's <selectedcontent> search).
    @inline(__always) func firstChild(_ node: Ref) -> Ref? { UnretainedLinks.firstChild(node) }
    @inline(__always) func nextSibling(_ node: Ref) -> Ref? { UnretainedLinks.nextSibling(node) }
    @inline(__always) func parent(_ node: Ref) -> Ref? { UnretainedLinks.parent(node) }

    @inline(__always) private static func isKind<T: Node>(_ node: Ref, _ kind: T.Type) -> Bool {
        node._withUnsafeGuaranteedRef { ObjectIdentifier(type(of: $0)) == ObjectIdentifier(kind) }
    }
    @inline(__always) func isText(_ node: Ref) -> Bool { Self.isKind(node, Text.self) }
    @inline(__always) func isElement(_ node: Ref) -> Bool { Self.isKind(node, Element.self) }
    @inline(__always) func isComment(_ node: Ref) -> Bool { Self.isKind(node, Comment.self) }

    @inline(__always) func textCount(_ node: Ref) -> Int {
        node._withUnsafeGuaranteedRef { unsafeDowncast($0, to: Text.self).data.utf8.count }
    }

    @inline(__always) func withTextBytes<R>(_ node: Ref, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        // The node's string read in place (a copy of it was a retain and a release).
        node._withUnsafeGuaranteedRef { withUTF8Bytes(inPlace: &unsafeDowncast($0, to: Text.self).storedData, body) }
    }

    func elementMatches(_ node: Ref, tag: HTMLTag, localName: String, namespace: Namespace, attributes: [Attribute]) -> Bool {
        // The element is read through `_withUnsafeGuaranteedRef` (a `takeUnretainedValue()` was
        // retained and released around the comparisons) and its attributes in place
        // (`withBuffer(inPlace:)`: reading the property copied the array out, one more retain).
        node._withUnsafeGuaranteedRef { n -> Bool in
            let element = unsafeDowncast(n, to: Element.self)
            // As the parser's new element it must be on no stack yet (the parser reads the count).
            guard element.tag == tag && element.namespace == namespace && element.stackCount == 0
                && element.storedTemplateContent == nil && !(namespace == .html && tag == .template)
                && (tag != .unknown || UTF8Bytes.equal(element.localName, localName))
            else { return false }
            return withBuffer(inPlace: &element.storedAttributes) { ax in
                attributes.withUnsafeBufferPointer { ay in TreeComparison.sameAttributes(ax, ay) }
            }
        }
    }

    func commentMatches(_ node: Ref, _ data: String) -> Bool {
        node._withUnsafeGuaranteedRef { UTF8Bytes.equal(unsafeDowncast($0, to: Comment.self).data, data) }
    }
}

/// The matching behind ``HTML5Parser/parsesBack(_:to:context:options:)`` (and its arena twin): a
/// cursor over the expected tree in document order. It rides on the parse's sink (``DOMSink/verifier``,
/// `ArenaSink.verifier`): the sink consults it at each of its insertion primitives (its
/// `makeElement`, the element, text and comment insertions), and the tree builder fails it at
/// every other place it would change the tree (``TreeSink/failVerification()``).
///
/// Why a match proves the trees equal: each accepted step appends, to a node the parser already
/// built, the next node of the expected tree in document order, whose parent there is that node.
/// The nodes accepted so far are a prefix of the expected tree in document order, and in such a
/// prefix the last-accepted node is the last child of its parent, which is exactly where an
/// append puts it; so after every step the parser's tree is that prefix, and at the end (the
/// cursor past the last node) the whole tree. The parser's decisions are the same as in a real
/// parse because everything it reads from its nodes is the same: names, namespaces and
/// attributes are compared equal, the stack bookkeeping (`stackCount`) must be zero when a node
/// is matched (as for a new element), a node's parent is read only once it is inserted (it is the
/// same node, except that the expected tree's root stands where the parse has its root element:
/// the parser asks of a parent only whether there is one, whether it is a document and whether it
/// is a `<select>`, and both roots answer the same), and reading a parent's last child (to extend a
/// text) is answered here from the prefix, not from the expected tree.
///
/// Trust-model row: inbox (incoming mail) — the re-parse check.
struct ReparseVerifier<Tree: ReparseExpectedTree> {
    typealias Ref = Tree.Ref

    /// The expected tree's reads.
    private let expected: Tree
    /// The expected tree: its children are matched against the children of the parse's root.
    private let rootRef: Ref
    /// The parse's own root `<html>` element (fragment parsing), which stands for the expected
    /// tree's root.
    private let rootElementRef: Ref
    /// The next node of the expected tree in document order, `nil` once all were matched.
    private var cursor: Ref?
    /// Bytes of the text run at ``cursor`` already matched (0 when not inside a text).
    private var textOffset = 0
    /// An element handed out by ``matchRef(tag:localName:namespace:attributes:)`` and not
    /// inserted yet.
    private var pending: Ref?
    /// Set at the first step that is not a match; the parse stops after the current token.
    private(set) var failed = false

    init(expected: Tree, root: Ref, rootElement: Ref) {
        self.expected = expected
        rootRef = root
        rootElementRef = rootElement
        cursor = expected.firstChild(root)
        skipEmptyTexts()
    }

    /// `true` when every step matched and the whole expected tree was consumed.
    var finished: Bool { !failed && pending == nil && textOffset == 0 && cursor == nil }

    mutating func fail() { failed = true }

    /// Whether `parent` (a node of the parse) is where `node` (of the expected tree) hangs.
    @inline(__always) private func hangs(_ node: Ref, under parent: Ref) -> Bool {
        guard let expectedParent = expected.parent(node) else { return false }
        return Tree.same(expectedParent, rootRef) ? Tree.same(parent, rootElementRef) : Tree.same(expectedParent, parent)
    }

    /// The node after `node` in document order (its first child when `descend`), within ``root``.
    @inline(__always) private func next(after node: Ref, descend: Bool) -> Ref? {
        if descend, let child = expected.firstChild(node) { return child }
        var current = node
        while !Tree.same(current, rootRef) {
            if let sibling = expected.nextSibling(current) { return sibling }
            guard let parent = expected.parent(current) else { return nil }
            current = parent
        }
        return nil
    }

    /// The node the next token should produce (for the tokenizer's ``Tokenizer/expectedNode``):
    /// the cursor, unless a text node there is partly matched or an element is pending.
    var expectedNode: Ref? { textOffset == 0 && pending == nil ? cursor : nil }

    /// Empty text nodes are written as nothing and never made by the parser: step over them.
    private mutating func skipEmptyTexts() {
        while let node = cursor, expected.isText(node), expected.textCount(node) == 0 {
            cursor = next(after: node, descend: false)
        }
    }

    /// The element the parser is about to create: the cursor's element when it has exactly these
    /// name, namespace and attributes (and is not an HTML `<template>`); `nil` (and failed) when
    /// not.
    mutating func matchRef(tag: HTMLTag, localName: String, namespace: Namespace, attributes: [Attribute]) -> Ref? {
        guard !failed, pending == nil, textOffset == 0, let node = cursor, expected.isElement(node),
              expected.elementMatches(node, tag: tag, localName: localName, namespace: namespace, attributes: attributes)
        else { failed = true; return nil }
        pending = node
        return node
    }

    /// The parser appends `node` at the end of `parent`.
    mutating func insert(_ node: Ref, into parent: Ref) {
        guard !failed, let element = pending, Tree.same(element, node), hangs(element, under: parent)
        else { failed = true; return }
        pending = nil
        cursor = next(after: element, descend: true)
        if let next = cursor, expected.isText(next) { skipEmptyTexts() }
    }

    /// The parser appends `text` at the end of `parent` (to its last child if that is a text).
    mutating func appendText(_ text: String, to parent: Ref) {
        guard !failed, pending == nil else { failed = true; return }
        if text.utf8.withContiguousStorageIfAvailable({ appendText(bytes: $0, to: parent) }) == nil {
            Array(text.utf8).withUnsafeBufferPointer { appendText(bytes: $0, to: parent) }
        }
    }

    /// ``appendText(_:to:)`` on the text's bytes: they must continue the run of text nodes at the
    /// cursor, under `parent`.
    mutating func appendText(bytes incoming: UnsafeBufferPointer<UInt8>, to parent: Ref) {
        guard !failed, pending == nil else { failed = true; return }
        var consumed = 0
        while consumed < incoming.count {
            guard let node = cursor, expected.isText(node), hangs(node, under: parent),
                  let source = incoming.baseAddress
            else { failed = true; return }
            let offset = textOffset, from = consumed
            // How many bytes of `incoming` this text node matches (-1: a difference; 0 cannot
            // happen, empty texts are skipped), and the node's length.
            let (matched, count) = expected.withTextBytes(node) { expectedBytes -> (Int, Int) in
                let count = expectedBytes.count
                let n = min(count - offset, incoming.count - from)
                guard n > 0, let base = expectedBytes.baseAddress else { return (-1, count) }
                // (The same memory when the tokenizer gave the run this node's own string.)
                let same = base + offset == source + from || memcmp(base + offset, source + from, n) == 0
                return (same ? n : -1, count)
            }
            guard matched > 0 else { failed = true; return }
            consumed += matched
            textOffset = offset + matched
            if textOffset == count {
                // This text node is done; a following text sibling continues the run.
                textOffset = 0
                cursor = next(after: node, descend: false)
                skipEmptyTexts()
            }
        }
    }

    /// The parser inserts a comment with `data` at the end of `parent`.
    mutating func appendComment(_ data: String, to parent: Ref) {
        guard !failed, pending == nil, textOffset == 0, let node = cursor, expected.isComment(node),
              hangs(node, under: parent), expected.commentMatches(node, data)
        else { failed = true; return }
        cursor = next(after: node, descend: false)
        skipEmptyTexts()
    }
}

extension ReparseVerifier where Tree == ClassExpectedTree {
    /// A verifier of the class tree under `root`, which the parse's `rootElement` stands for.
    init(root: Node, rootElement: Element) {
        self.init(expected: ClassExpectedTree(), root: Ref.passUnretained(root), rootElement: Ref.passUnretained(rootElement))
    }

    /// ``matchRef(tag:localName:namespace:attributes:)`` as the class element itself.
    mutating func match(tag: HTMLTag, localName: String, namespace: Namespace, attributes: [Attribute]) -> Element? {
        guard let node = matchRef(tag: tag, localName: localName, namespace: namespace, attributes: attributes) else { return nil }
        return unsafeDowncast(node.takeUnretainedValue(), to: Element.self)
    }

    /// The parser inserts `node` into `parent`, before `before` (`nil`: at the end).
    mutating func insert(_ node: Node, into parent: Node, before: Node?) {
        guard before == nil else { fail(); return }
        insert(Ref.passUnretained(node), into: Ref.passUnretained(parent))
    }

    /// The parser inserts a comment with `data` at the end of `parent`.
    mutating func appendComment(_ data: String, to parent: Node) {
        appendComment(data, to: Ref.passUnretained(parent))
    }
}
