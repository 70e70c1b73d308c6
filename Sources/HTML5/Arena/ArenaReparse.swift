// The re-parse check without a second tree, on the arena (docs/arena-tree.md, step 4): the tree
// builder runs over the serialized output with `ArenaSink`, and instead of creating rows it
// matches each node it would create against the arena tree the output was serialized from
// (`ReparseVerifier` over `ArenaExpectedTree`, the matching the class DOM's check uses).
//
// Trust-model row: inbox (incoming mail) — the mail sanitizer's mutation-XSS guard. A wrong
// "yes" would let a mutated tree through, so the check errs only towards "no".

import Foundation  // memcmp

/// The arena tree as the verifier's expected tree: a node is a pointer to its row (rows never
/// move while the tree lives), so the parse's own root element (a row of the parse's tree) and the
/// expected tree's rows are compared by identity alike. Links are read through the expected
/// tree's bounds-checked lookups.
struct ArenaExpectedTree: ReparseExpectedTree {
    typealias Ref = UnsafeMutablePointer<HTMLTree.Row>
    let tree: HTMLTree

    @inline(__always) static func same(_ a: Ref, _ b: Ref) -> Bool { a == b }
    @inline(__always) private func link(_ index: Int32) -> Ref? { index >= 0 ? tree.row(index) : nil }
    @inline(__always) func firstChild(_ node: Ref) -> Ref? { link(node.pointee.firstChild) }
    @inline(__always) func nextSibling(_ node: Ref) -> Ref? { link(node.pointee.nextSibling) }
    @inline(__always) func parent(_ node: Ref) -> Ref? { link(node.pointee.parent) }
    @inline(__always) func isText(_ node: Ref) -> Bool { node.pointee.kind == .text }
    @inline(__always) func isElement(_ node: Ref) -> Bool { node.pointee.kind == .element }
    @inline(__always) func isComment(_ node: Ref) -> Bool { node.pointee.kind == .comment }

    @inline(__always) func textCount(_ node: Ref) -> Int { tree.textByteCount(node) }

    @inline(__always) func withTextBytes<R>(_ node: Ref, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        tree.withTextBytes(node, body)
    }

    func elementMatches(_ node: Ref, tag: HTMLTag, localName: String, namespace: Namespace, attributes: [Attribute]) -> Bool {
        // As the parser's new element it must be on no stack yet (the parser reads the count).
        guard node.pointee.tag == tag && node.pointee.namespace == namespace && node.pointee.stackCount == 0
            && node.pointee.templateContents < 0 && !(namespace == .html && tag == .template)
            && (tag != .unknown || UTF8Bytes.equal(node.pointee.payload, localName))
        else { return false }
        return node.pointee.attributes.withUnsafeBufferPointer { ax in
            attributes.withUnsafeBufferPointer { ay in TreeComparison.sameAttributes(ax, ay) }
        }
    }

    func commentMatches(_ node: Ref, _ data: String) -> Bool { UTF8Bytes.equal(node.pointee.payload, data) }
}

extension HTML5Parser {
    /// Whether parsing `html` as a fragment in `context` gives, node for node, the children of the
    /// row `root` of `tree` — decided while parsing, without building a second tree (as
    /// ``parsesBack(_:to:context:options:)`` for the class DOM, with the same matching); and
    /// whether that parse reached one of the parser's bounds for hostile input that make its tree
    /// depart from the spec's (formatting elements, the `<selectedcontent>` search).
    ///
    /// `true` only when every insertion was an append of the expected tree's next node and the
    /// whole subtree was matched; then the fragment the parser would have built is that tree up
    /// to the splitting of text runs, so it serializes to `root`'s serialization. Besides what the
    /// class check refuses (foster parenting, the adoption agency, merged attributes, templates,
    /// an option closing once a `<selectedcontent>` exists), it refuses every insertion at a place
    /// (a parent and a reference node) rather than at the end of an open element: `false` means
    /// only "not shown here". `tree` is read, not changed, but for the parser's bookkeeping on its
    /// element rows (the stack count, cleared again; the Noah's Ark digest).
    ///
    /// Trust-model row: inbox (incoming mail) — the mail sanitizer's re-parse check on the arena.
    package static func parsesBack(_ html: String, to tree: HTMLTree, root: Int32, context: Element,
                                   options: HTML5ParserOptions = .init()) -> (matched: Bool, limited: Bool) {
        guard html.utf8.count <= options.maxInputBytes else { return (false, false) }
        var tokenizer = Tokenizer(input: InputStream.preprocess(html), maxAttributes: options.maxAttributesPerElement, inputIsValidUTF8: true)
        tokenizer.recordErrors = false
        var builder = TreeBuilder(tokenizer: consume tokenizer, sink: ArenaSink(), scripting: options.scripting, maxDepth: options.maxNestingDepth)
        builder.maxReconstructedElements = options.maxReconstructedElements
        builder.prepareFragment(context: context)
        guard let rootElement = builder.openElements.first else { return (false, false) }
        builder.sink.verifier = ReparseVerifier(expected: ArenaExpectedTree(tree: tree), root: tree.row(root), rootElement: rootElement.row)
        builder.run()
        // An early stop leaves expected rows counted as open: clear the parser's bookkeeping.
        for element in builder.openElements { element.stackCount = 0 }
        let limited = builder.formattingLimited || builder.selectedContentLimited
        return (builder.sink.verifier?.finished ?? false, limited)
    }
}
