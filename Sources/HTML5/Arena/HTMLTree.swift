// An HTML tree as rows of integers in stable chunks (docs/arena-tree.md, step 2): one row per
// node, linked by `Int32` row indexes, with no class object and no reference count per node.
//
// Trust-model row: inbox (incoming mail). The tree is built from hostile bytes, so it keeps the
// properties the class DOM has: no dangling link (a link is a row index, every row lives as long
// as the tree, a removed node is unlinked and its row stays, never reused; reading a row by index
// is bounds-checked), bounded depth of every walk (the dump, the copy and `materialize` are
// iterative, with worklists, so a 100 000-deep tree cannot overflow the stack) and linear work
// (each walk visits each row a bounded number of times; freeing the tree is one pass over the
// rows and a deallocation per 1 024 rows).

/// An HTML document (or fragment) tree stored as rows, one per node, in chunks of
/// `HTMLTree/chunkSize` rows that are allocated as needed and never moved, so a pointer to a
/// row (an `ArenaElement`) stays valid while the tree lives.
///
/// Row 0 is the document. A node is named by its row index (`Int32`); a link that points nowhere
/// is `nil` in this API (`-1` in the rows). A `<template>` in the HTML namespace gets a fragment
/// row as its template contents when it is created, as ``Element`` does.
///
/// Made by ``HTML5Parser/parseTree(_:options:)-(String,_)`` and its siblings, and read through
/// ``HTMLNode`` handles (``document``, `HTMLTreeParseResult/root`): the same tree as the class
/// DOM's, 1.3–1.7× faster to build and free (docs/performance.md). Edited through ``HTMLNode``
/// (remove, unwrap, text and attribute changes: what the mail sanitizer's cleaner does to it).
///
/// Not `Sendable`: a tree is used by one thread at a time, like the class nodes.
public final class HTMLTree {
    /// What a row stands for.
    public enum Kind: UInt8, Sendable, Hashable {
        /// The document (row 0).
        case document
        /// A document fragment: the template contents of a `<template>`.
        case fragment
        /// An element.
        case element
        /// A run of text.
        case text
        /// A comment.
        case comment
        /// A `<!DOCTYPE>`.
        case doctype
    }

    /// One node. The links are row indexes, `-1` for none. 64 bytes (see `HTMLTreeTests`).
    struct Row {
        var parent: Int32
        var firstChild: Int32
        var lastChild: Int32
        var nextSibling: Int32
        var previousSibling: Int32
        /// The fragment row of an HTML `<template>`'s contents, `-1` for any other node.
        var templateContents: Int32
        /// The tree builder's count of this element's entries on the stack of open elements. For a
        /// text row whose bytes are in ``HTMLTree/textPool``: their start there.
        var stackCount: Int32
        /// The tree builder's Noah's Ark digest of the attributes (0 until taken). For a text row:
        /// the number of its bytes in ``HTMLTree/textPool``, 0 when its text is ``payload``.
        var formattingDigest: UInt32
        /// The row's own index (what an ``ArenaElement`` reports as its identity).
        let index: Int32
        var kind: Kind
        /// The element's namespace (`.html` for other kinds).
        var namespace: Namespace
        /// The element's interned name (`.unknown` for other kinds).
        var tag: HTMLTag
        /// An element's local name, a comment's data, a doctype's name; a text's data unless its
        /// bytes are in ``HTMLTree/textPool``.
        var payload: String
        /// An element's attributes in source order (empty for other kinds).
        var attributes: [Attribute]
    }

    /// log2 of ``chunkSize``.
    static let chunkShift = 10
    /// Rows per chunk.
    static let chunkSize = 1 << chunkShift

    /// The chunks of rows: chunk `i` holds rows `i << chunkShift ..< (i + 1) << chunkShift`; all
    /// but the last are full. A chunk is never moved or reallocated.
    ///
    /// No dynamic exclusivity check on this and ``count`` (`@exclusivity(unchecked)`, as the class
    /// DOM's ``Element/storedAttributes``): every row lookup reads both, and from the tree
    /// builder (another file) each read was a `swift_beginAccess` call, about 80 M instructions
    /// per pass over the bench corpus (callgrind, 2026-11-28) — a tenth of the parse. No access
    /// to either runs other code while it lasts (they are read, or `count` stored, or `chunks`
    /// appended to), and a tree is used by one thread at a time.
    @exclusivity(unchecked) private var chunks: [UnsafeMutablePointer<Row>] = []
    /// The number of rows (nodes, attached or not).
    @exclusivity(unchecked) package private(set) var count: Int = 0
    /// The document's compatibility mode.
    public package(set) var quirksMode: Document.QuirksMode = .noQuirks
    /// The bytes of the text rows made from the tokenizer's bytes (``newTextRow(bytes:)``), one
    /// run per row, well-formed UTF-8: a text costs no `String` of its own (an allocation and,
    /// when the tree is freed, a release). A run is only ever extended at the end of the pool
    /// (the text being parsed is the pool's last run); a text appended to elsewhere moves into
    /// its row's `payload` once, so building stays linear. Same exclusivity reasoning as
    /// ``chunks``.
    let textPool = ByteStore()
    /// The public and system identifiers of each doctype row (rare: one per document at most).
    private var doctypeIdentifiers: [Int32: (publicId: String, systemId: String)] = [:]

    /// A tree holding only its document (row 0).
    package init() {
        _ = newRow(kind: .document, namespace: .html, tag: .unknown, payload: "", attributes: [])
    }

    deinit {
        var remaining = count
        for chunk in chunks {
            let rows = min(remaining, HTMLTree.chunkSize)
            chunk.deinitialize(count: rows)
            chunk.deallocate()
            remaining -= rows
        }
    }

    // MARK: Rows

    /// The row at `index`, bounds-checked: every index read from outside a handle goes through
    /// here.
    @inline(__always) func row(_ index: Int32) -> UnsafeMutablePointer<Row> {
        precondition(index >= 0 && Int(index) < count, "HTMLTree: no row \(index)")
        let i = Int(index)
        return chunks[i &>> HTMLTree.chunkShift] + (i & (HTMLTree.chunkSize - 1))
    }

    /// A new row, detached (no links); the chunk it lands in is allocated when needed.
    @inline(__always)
    func newRow(kind: Kind, namespace: Namespace, tag: HTMLTag, payload: consuming String, attributes: consuming [Attribute]) -> UnsafeMutablePointer<Row> {
        let index = count
        precondition(index < Int(Int32.max), "HTMLTree: too many rows")
        if index == chunks.count &<< HTMLTree.chunkShift {
            chunks.append(UnsafeMutablePointer<Row>.allocate(capacity: HTMLTree.chunkSize))
        }
        let pointer = chunks[index &>> HTMLTree.chunkShift] + (index & (HTMLTree.chunkSize - 1))
        pointer.initialize(to: Row(
            parent: -1, firstChild: -1, lastChild: -1, nextSibling: -1, previousSibling: -1,
            templateContents: -1, stackCount: 0, formattingDigest: 0, index: Int32(truncatingIfNeeded: index),
            kind: kind, namespace: namespace, tag: tag, payload: payload, attributes: attributes))
        count = index + 1
        return pointer
    }

    /// A new detached element row; an HTML `<template>` gets a new fragment row as its contents.
    /// `tag` is interned from `localName` already (``HTMLTag/unknown`` or its identifier).
    @inline(__always)
    func newElementRow(tag: HTMLTag, localName: consuming String, namespace: Namespace, attributes: consuming [Attribute]) -> UnsafeMutablePointer<Row> {
        let element = newRow(kind: .element, namespace: namespace, tag: tag, payload: localName, attributes: attributes)
        if namespace == .html && tag == .template {
            // A new chunk may be allocated here; `element` stays where it is.
            element.pointee.templateContents = newRow(kind: .fragment, namespace: .html, tag: .unknown, payload: "", attributes: []).pointee.index
        }
        return element
    }

    /// A new detached text row holding `bytes` (well-formed UTF-8) in ``textPool``; in its
    /// `payload` if the pool would pass `Int32.max` bytes.
    @inline(__always)
    func newTextRow(bytes: UnsafeBufferPointer<UInt8>) -> UnsafeMutablePointer<Row> {
        let start = textPool.count
        guard bytes.count > 0, start + bytes.count <= Int(Int32.max) else {
            return newRow(kind: .text, namespace: .html, tag: .unknown, payload: ByteAccumulator.stringFromValidUTF8(bytes), attributes: [])
        }
        let text = newRow(kind: .text, namespace: .html, tag: .unknown, payload: "", attributes: [])
        textPool.append(bytes)
        text.pointee.stackCount = Int32(truncatingIfNeeded: start)
        text.pointee.formattingDigest = UInt32(truncatingIfNeeded: bytes.count)
        return text
    }

    /// Appends `bytes` (well-formed UTF-8) to the text row `text`: in place in ``textPool`` when
    /// its run ends the pool, else to its `payload` (the pooled run is moved there first, once).
    @inline(__always)
    func appendText(bytes: UnsafeBufferPointer<UInt8>, to text: UnsafeMutablePointer<Row>) {
        let count = Int(text.pointee.formattingDigest)
        if count > 0 {
            let start = Int(text.pointee.stackCount)
            if start + count == textPool.count && textPool.count + bytes.count <= Int(Int32.max) {
                textPool.append(bytes)
                text.pointee.formattingDigest = UInt32(truncatingIfNeeded: count + bytes.count)
                return
            }
            moveTextToPayload(text)
        }
        text.pointee.payload += ByteAccumulator.stringFromValidUTF8(bytes)
    }

    /// Appends `string` to the text row `text` (``appendText(bytes:to:)`` for a `String`).
    func appendText(_ string: consuming String, to text: UnsafeMutablePointer<Row>) {
        if text.pointee.formattingDigest > 0 {
            var string = string
            withUTF8Bytes(inPlace: &string) { appendText(bytes: $0, to: text) }
        } else {
            text.pointee.payload += string
        }
    }

    /// Moves a pooled text's bytes into its row's `payload` (the pool keeps them, unused).
    private func moveTextToPayload(_ text: UnsafeMutablePointer<Row>) {
        text.pointee.payload = withTextBytes(text) { ByteAccumulator.stringFromValidUTF8($0) }
        text.pointee.stackCount = 0
        text.pointee.formattingDigest = 0
    }

    /// Calls `body` with the UTF-8 of the text row `text` (read during the call only).
    @inline(__always)
    func withTextBytes<R>(_ text: UnsafeMutablePointer<Row>, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        let count = Int(text.pointee.formattingDigest)
        guard count > 0 else { return withUTF8Bytes(inPlace: &text.pointee.payload, body) }
        let start = Int(text.pointee.stackCount)
        return textPool.withBytes(start..<(start + count), body)
    }

    /// The number of UTF-8 bytes of the text row `text` (a pooled run's count, else its
    /// `payload`'s): what ``withTextBytes(_:_:)`` would hand over, without reading them.
    @inline(__always)
    func textByteCount(_ text: UnsafeMutablePointer<Row>) -> Int {
        let pooled = Int(text.pointee.formattingDigest)
        return pooled > 0 ? pooled : text.pointee.payload.utf8.count
    }

    /// The data of the text row `text`.
    func textData(_ text: UnsafeMutablePointer<Row>) -> String {
        text.pointee.formattingDigest > 0 ? withTextBytes(text) { ByteAccumulator.stringFromValidUTF8($0) } : text.pointee.payload
    }

    /// A new detached doctype row.
    func newDoctypeRow(name: String, publicId: String, systemId: String) -> UnsafeMutablePointer<Row> {
        let doctype = newRow(kind: .doctype, namespace: .html, tag: .unknown, payload: name, attributes: [])
        if !publicId.isEmpty || !systemId.isEmpty { doctypeIdentifiers[doctype.pointee.index] = (publicId, systemId) }
        return doctype
    }

    /// A copy of the row at `source` alone, detached: no children; a `<template>` copy gets new,
    /// empty template contents (``copyChildren(of:into:)`` fills them).
    func shallowCopy(of source: Int32) -> UnsafeMutablePointer<Row> {
        let original = row(source)
        switch original.pointee.kind {
        case .element:
            return newElementRow(tag: original.pointee.tag, localName: original.pointee.payload,
                                 namespace: original.pointee.namespace, attributes: original.pointee.attributes)
        case .doctype:
            let ids = doctypeIdentifiers[source]
            return newDoctypeRow(name: original.pointee.payload, publicId: ids?.publicId ?? "", systemId: ids?.systemId ?? "")
        case .text:
            // A pooled text's copy names the same bytes (a run of the pool is never changed; an
            // append to either row extends the pool past it or moves that row to `payload`).
            let copy = newRow(kind: .text, namespace: .html, tag: .unknown, payload: original.pointee.payload, attributes: [])
            copy.pointee.stackCount = original.pointee.stackCount
            copy.pointee.formattingDigest = original.pointee.formattingDigest
            return copy
        case .document, .fragment, .comment:
            return newRow(kind: original.pointee.kind, namespace: .html, tag: .unknown, payload: original.pointee.payload, attributes: [])
        }
    }

    // MARK: Links

    /// Links the detached `child` as the last child of `parent` (the parser's common insertion).
    @inline(__always) func appendDetached(_ child: UnsafeMutablePointer<Row>, to parent: UnsafeMutablePointer<Row>) {
        assert(child.pointee.parent < 0 && child.pointee.nextSibling < 0 && child.pointee.previousSibling < 0)
        let childIndex = child.pointee.index
        child.pointee.parent = parent.pointee.index
        let previous = parent.pointee.lastChild
        if previous >= 0 {
            child.pointee.previousSibling = previous
            row(previous).pointee.nextSibling = childIndex
        } else {
            parent.pointee.firstChild = childIndex
        }
        parent.pointee.lastChild = childIndex
    }

    /// Detaches `node` (with its subtree) from its parent; nothing if it is detached (as
    /// ``Node/remove()``).
    func detach(_ node: UnsafeMutablePointer<Row>) {
        let parentIndex = node.pointee.parent
        guard parentIndex >= 0 else { return }
        let parent = row(parentIndex)
        let previous = node.pointee.previousSibling, next = node.pointee.nextSibling
        if previous >= 0 { row(previous).pointee.nextSibling = next } else { parent.pointee.firstChild = next }
        if next >= 0 { row(next).pointee.previousSibling = previous } else { parent.pointee.lastChild = previous }
        node.pointee.parent = -1
        node.pointee.previousSibling = -1
        node.pointee.nextSibling = -1
    }

    /// Moves `child` (with its subtree) to the end of `parent`, detaching it first (as
    /// ``Node/appendChild(_:)``).
    func append(_ child: Int32, to parent: Int32) {
        let childRow = row(child), parentRow = row(parent)
        precondition(childRow.pointee.kind != .document && child != parent, "HTMLTree: cannot append \(child) to \(parent)")
        detach(childRow)
        appendDetached(childRow, to: parentRow)
    }

    /// Inserts `child` into `parent` before `reference` (a child of `parent`; `nil`: at the end),
    /// detaching it first (as ``Node/insertBefore(_:_:)``).
    func insert(_ child: Int32, into parent: Int32, before reference: Int32?) {
        guard let reference else { append(child, to: parent); return }
        let referenceRow = row(reference)
        precondition(referenceRow.pointee.parent == parent, "HTMLTree: reference is not a child of the parent")
        if child == reference { return }
        let childRow = row(child)
        precondition(childRow.pointee.kind != .document && child != parent, "HTMLTree: cannot insert \(child) into \(parent)")
        detach(childRow)
        let previous = referenceRow.pointee.previousSibling
        childRow.pointee.parent = parent
        childRow.pointee.nextSibling = reference
        childRow.pointee.previousSibling = previous
        if previous >= 0 { row(previous).pointee.nextSibling = child } else { row(parent).pointee.firstChild = child }
        referenceRow.pointee.previousSibling = child
    }

    /// Moves every child of `node` to the end of `newParent`, in order (as
    /// ``Node/moveChildren(to:)``; nothing when the two are the same node). One pass over the
    /// moved children, which are spliced as one list.
    func moveChildren(of node: Int32, to newParent: Int32) {
        guard node != newParent else { return }
        let source = row(node), target = row(newParent)
        let first = source.pointee.firstChild
        guard first >= 0 else { return }
        let last = source.pointee.lastChild
        setParent(ofChainFrom: first, to: newParent)
        let previous = target.pointee.lastChild
        if previous >= 0 {
            row(previous).pointee.nextSibling = first
            row(first).pointee.previousSibling = previous
        } else {
            target.pointee.firstChild = first
        }
        target.pointee.lastChild = last
        source.pointee.firstChild = -1
        source.pointee.lastChild = -1
    }

    /// Sets `parent` as the parent of `first` and of every sibling after it (a chain of children
    /// being moved as one).
    @inline(__always) func setParent(ofChainFrom first: Int32, to parent: Int32) {
        var child = first
        while child >= 0 {
            let childRow = row(child)
            childRow.pointee.parent = parent
            child = childRow.pointee.nextSibling
        }
    }

    /// Detaches every child of `node`.
    package func removeAllChildren(of node: Int32) {
        let parent = row(node)
        var child = parent.pointee.firstChild
        while child >= 0 {
            let childRow = row(child)
            child = childRow.pointee.nextSibling
            childRow.pointee.parent = -1
            childRow.pointee.previousSibling = -1
            childRow.pointee.nextSibling = -1
        }
        parent.pointee.firstChild = -1
        parent.pointee.lastChild = -1
    }

    /// Appends deep copies of the children of `source` to `target`, template contents included,
    /// in one walk with a worklist (as ``Node/clone(deep:)``: no nesting makes it recurse).
    /// Each child's copy is complete before it is attached, and the next child is read before,
    /// so the walk ends even when `target` lies inside `source`'s subtree (as the class DOM's).
    func copyChildren(of source: Int32, into target: Int32) {
        // Each subtree is copied whole before it is attached (as `clone(deep:)` then
        // `appendChild`), so the pairs below never see a half-attached copy.
        var child = row(source).pointee.firstChild
        while child >= 0 {
            let next = row(child).pointee.nextSibling
            let copy = deepCopy(of: child)
            appendDetached(copy, to: row(target))
            child = next
        }
    }

    /// A detached deep copy of the node `source` (children and template contents).
    func deepCopy(of source: Int32) -> UnsafeMutablePointer<Row> {
        let copy = shallowCopy(of: source)
        // Pairs (original, copy) whose children are still to be copied.
        var pending: [(source: Int32, target: Int32)] = []
        if row(source).pointee.firstChild >= 0 { pending.append((source, copy.pointee.index)) }
        queueTemplateContents(of: source, copy: copy, into: &pending)
        while let (original, target) = pending.popLast() {
            var child = row(original).pointee.firstChild
            while child >= 0 {
                let childCopy = shallowCopy(of: child)
                appendDetached(childCopy, to: row(target))
                if row(child).pointee.firstChild >= 0 { pending.append((child, childCopy.pointee.index)) }
                queueTemplateContents(of: child, copy: childCopy, into: &pending)
                child = row(child).pointee.nextSibling
            }
        }
        return copy
    }

    /// Queues the template contents of `source` (if it has non-empty ones) to be copied into those
    /// of `copy`, its ``shallowCopy(of:)``.
    @inline(__always)
    private func queueTemplateContents(of source: Int32, copy: UnsafeMutablePointer<Row>, into pending: inout [(source: Int32, target: Int32)]) {
        let contents = row(source).pointee.templateContents
        guard contents >= 0, row(contents).pointee.firstChild >= 0 else { return }
        if copy.pointee.templateContents < 0 {
            copy.pointee.templateContents = newRow(kind: .fragment, namespace: .html, tag: .unknown, payload: "", attributes: []).pointee.index
        }
        pending.append((contents, copy.pointee.templateContents))
    }

    // MARK: Reading

    /// The element handle of the row at `index`, or `nil` when it is not an element.
    func element(_ index: Int32) -> ArenaElement? {
        let pointer = row(index)
        return pointer.pointee.kind == .element ? ArenaElement(row: pointer) : nil
    }

    /// What the node at `index` is.
    package func kind(_ index: Int32) -> Kind { row(index).pointee.kind }

    /// The parent, or `nil` for the document, a template's contents and a detached node.
    package func parent(_ index: Int32) -> Int32? { link(row(index).pointee.parent) }
    /// The first child, or `nil`.
    package func firstChild(_ index: Int32) -> Int32? { link(row(index).pointee.firstChild) }
    /// The last child, or `nil`.
    package func lastChild(_ index: Int32) -> Int32? { link(row(index).pointee.lastChild) }
    /// The next sibling, or `nil`.
    package func nextSibling(_ index: Int32) -> Int32? { link(row(index).pointee.nextSibling) }
    /// The previous sibling, or `nil`.
    package func previousSibling(_ index: Int32) -> Int32? { link(row(index).pointee.previousSibling) }
    /// The template contents (a fragment row) of an HTML `<template>`, else `nil`.
    package func templateContents(_ index: Int32) -> Int32? { link(row(index).pointee.templateContents) }

    @inline(__always) private func link(_ value: Int32) -> Int32? { value >= 0 ? value : nil }

    /// An element's namespace (`.html` for a node that is not an element).
    package func namespace(_ index: Int32) -> Namespace { row(index).pointee.namespace }
    /// An element's interned name (``HTMLTag/unknown`` for a node that is not an element).
    package func tag(_ index: Int32) -> HTMLTag { row(index).pointee.tag }
    /// An element's local name (`""` for a node that is not an element).
    package func localName(_ index: Int32) -> String {
        let pointer = row(index)
        return pointer.pointee.kind == .element ? pointer.pointee.payload : ""
    }
    /// An element's attributes in source order (empty for a node that is not an element).
    package func attributes(_ index: Int32) -> [Attribute] { row(index).pointee.attributes }
    /// The data of a text or comment node, else `nil`.
    package func text(_ index: Int32) -> String? {
        let pointer = row(index)
        switch pointer.pointee.kind {
        case .text: return textData(pointer)
        case .comment: return pointer.pointee.payload
        case .document, .fragment, .element, .doctype: return nil
        }
    }
    /// The name, public and system identifiers of a doctype node, else `nil`.
    package func doctype(_ index: Int32) -> (name: String, publicId: String, systemId: String)? {
        let pointer = row(index)
        guard pointer.pointee.kind == .doctype else { return nil }
        let ids = doctypeIdentifiers[index]
        return (pointer.pointee.payload, ids?.publicId ?? "", ids?.systemId ?? "")
    }

    // MARK: Dump

    /// The subtree below `root` (the document by default) in html5lib-tests' `#document` format,
    /// exactly as ``Node/html5libTreeDump``: one `| `-prefixed line per node, attributes sorted,
    /// two spaces of indentation per level, a template's contents under a `content` line.
    /// Iterative (a worklist), so no depth overflows the stack; note that the format itself is
    /// quadratic in the depth (the indentation).
    package func html5libTreeDump(of root: Int32 = 0) -> String {
        var out = ""
        var stack: [(Int32, Int)] = []
        pushChildren(of: root, depth: 0, onto: &stack)
        while let (node, depth) = stack.popLast() {
            let indent = String(repeating: "  ", count: depth)
            out += "| " + indent
            let pointer = row(node)
            switch pointer.pointee.kind {
            case .element:
                let localName = pointer.pointee.payload
                switch pointer.pointee.namespace {
                case .html: out += "<\(localName)>\n"
                case .svg: out += "<svg \(localName)>\n"
                case .mathml: out += "<math \(localName)>\n"
                }
                let attributes = pointer.pointee.attributes.map { attribute -> (String, String) in
                    let name = attribute.namespace.map { "\($0.prefix) \(attribute.name)" } ?? attribute.name
                    return (name, attribute.value)
                }.sorted { $0.0 < $1.0 }
                for (name, value) in attributes { out += "| \(indent)  \(name)=\"\(value)\"\n" }
                let contents = pointer.pointee.templateContents
                if contents >= 0 {
                    out += "| \(indent)  content\n"
                    pushChildren(of: node, depth: depth + 1, onto: &stack)
                    pushChildren(of: contents, depth: depth + 2, onto: &stack)
                    continue
                }
            case .text:
                out += "\"\(textData(pointer))\"\n"
            case .comment:
                out += "<!-- \(pointer.pointee.payload) -->\n"
            case .doctype:
                let ids = doctypeIdentifiers[node]
                let publicId = ids?.publicId ?? "", systemId = ids?.systemId ?? ""
                if publicId.isEmpty && systemId.isEmpty {
                    out += "<!DOCTYPE \(pointer.pointee.payload)>\n"
                } else {
                    out += "<!DOCTYPE \(pointer.pointee.payload) \"\(publicId)\" \"\(systemId)\">\n"
                }
            case .document, .fragment:
                break  // never a child (as the class dump: nothing after the prefix)
            }
            pushChildren(of: node, depth: depth + 1, onto: &stack)
        }
        return out
    }

    /// Pushes the children of `node`, last first (so they pop in order).
    private func pushChildren(of node: Int32, depth: Int, onto stack: inout [(Int32, Int)]) {
        var child = row(node).pointee.lastChild
        while child >= 0 {
            stack.append((child, depth))
            child = row(child).pointee.previousSibling
        }
    }

    // MARK: Materializing

    /// The equivalent class DOM of the whole tree (quirks mode included), built iteratively.
    package func materialize() -> Document {
        let document = unsafeDowncast(materialize(0), to: Document.self)
        document.quirksMode = quirksMode
        return document
    }

    /// The equivalent class DOM of the subtree at `root` (a ``Document`` for row 0, a
    /// ``DocumentFragment`` for a fragment row, else the node itself), with template contents,
    /// built iteratively. The `stackCount`/`formattingDigest` bookkeeping is not copied.
    package func materialize(_ root: Int32) -> Node {
        let top = classNode(of: root)
        var pending: [(source: Int32, target: Node)] = []
        queue(root, top, into: &pending)
        while let (source, target) = pending.popLast() {
            var child = row(source).pointee.firstChild
            while child >= 0 {
                let node = classNode(of: child)
                target.appendDetached(node)
                queue(child, node, into: &pending)
                child = row(child).pointee.nextSibling
            }
        }
        return top
    }

    /// Queues the children of `source`, and its template contents' children, to be materialized
    /// into `target` (its class node).
    private func queue(_ source: Int32, _ target: Node, into pending: inout [(source: Int32, target: Node)]) {
        let pointer = row(source)
        if pointer.pointee.firstChild >= 0 { pending.append((source, target)) }
        let contents = pointer.pointee.templateContents
        if contents >= 0, row(contents).pointee.firstChild >= 0, let element = target as? Element {
            if element.storedTemplateContent == nil { element.storedTemplateContent = DocumentFragment() }
            pending.append((contents, element.storedTemplateContent!))
        }
    }

    /// The class node for the row at `index` alone (no children).
    private func classNode(of index: Int32) -> Node {
        let pointer = row(index)
        switch pointer.pointee.kind {
        case .document: return Document()
        case .fragment: return DocumentFragment()
        case .element:
            return Element(tag: pointer.pointee.tag, localName: pointer.pointee.payload,
                           namespace: pointer.pointee.namespace, attributes: pointer.pointee.attributes)
        case .text: return Text(textData(pointer))
        case .comment: return Comment(pointer.pointee.payload)
        case .doctype:
            let ids = doctypeIdentifiers[index]
            return DocumentType(name: pointer.pointee.payload, publicId: ids?.publicId ?? "", systemId: ids?.systemId ?? "")
        }
    }
}
