// The editing half of the arena tree's API (docs/arena-tree.md, step 4): what the mail
// sanitizer's cleaner does to a tree — remove a node, unwrap it, replace a text, set or filter
// attributes, replace an element's children with one text — on the rows, each step what the class
// DOM's method of the same name does to the nodes.
//
// Trust-model row: inbox (incoming mail). The sanitizer rewrites the tree hostile bytes built:
// every edit keeps the links consistent (a removed node is unlinked, its row stays and is never
// reused, so no link dangles), reads and writes rows only through bounds-checked indexes, and is
// linear in what it touches (an unwrap relinks the moved children once, as one chain).
// `HTMLTreeEditingTests` runs the same edits on both trees and compares them.

extension HTMLTree {
    // MARK: Structure

    /// Detaches `node` with its subtree from its parent (as ``Node/remove()``; nothing when it
    /// is detached). The rows stay in the tree, unlinked.
    package func remove(_ node: Int32) { detach(row(node)) }

    /// Replaces `node` by its children, in order, where it stood, then detaches it (as
    /// ``Node/unwrap()``; nothing when it is detached). The children are relinked as one chain:
    /// one pass over them for their parent link. Template contents stay with the node.
    package func unwrap(_ node: Int32) {
        let nodeRow = row(node)
        let parentIndex = nodeRow.pointee.parent
        guard parentIndex >= 0 else { return }
        let first = nodeRow.pointee.firstChild
        if first >= 0 {
            let last = nodeRow.pointee.lastChild
            setParent(ofChainFrom: first, to: parentIndex)
            // The chain goes between the node's previous sibling and the node.
            let previous = nodeRow.pointee.previousSibling
            row(first).pointee.previousSibling = previous
            if previous >= 0 { row(previous).pointee.nextSibling = first } else { row(parentIndex).pointee.firstChild = first }
            row(last).pointee.nextSibling = node
            nodeRow.pointee.previousSibling = last
            nodeRow.pointee.firstChild = -1
            nodeRow.pointee.lastChild = -1
        }
        detach(nodeRow)
    }

    /// Appends a new text node holding `data` at the end of `parent` (no merging with a text
    /// before it, as ``Node/appendChild(_:)`` of a new ``Text``); returns its row.
    @discardableResult
    package func appendNewText(_ data: String, to parent: Int32) -> Int32 {
        let text = newRow(kind: .text, namespace: .html, tag: .unknown, payload: data, attributes: [])
        appendDetached(text, to: row(parent))
        return text.pointee.index
    }

    // MARK: Text

    /// Replaces the data of a text or comment node (as setting ``CharacterData/data``).
    package func setData(_ node: Int32, _ data: String) {
        let pointer = row(node)
        precondition(pointer.pointee.kind == .text || pointer.pointee.kind == .comment, "HTMLTree: row \(node) holds no text")
        pointer.pointee.payload = data
        if pointer.pointee.kind == .text {
            // The text is its payload from now on, not a run of the pool.
            pointer.pointee.stackCount = 0
            pointer.pointee.formattingDigest = 0
        }
    }

    /// Calls `body` with the UTF-8 of a text or comment node's data (`[]` for other nodes), read
    /// in place during the call.
    package func withData<R>(_ node: Int32, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        let pointer = row(node)
        switch pointer.pointee.kind {
        case .text: return withTextBytes(pointer, body)
        case .comment: return withUTF8Bytes(inPlace: &pointer.pointee.payload, body)
        case .document, .fragment, .element, .doctype: return body(UnsafeBufferPointer(start: nil, count: 0))
        }
    }

    /// The concatenated data of the text nodes below `node` in document order, template contents
    /// not entered (as ``Node/textContent``; a text's own data for a text). One walk, bytes
    /// appended to one buffer.
    package func textContent(of node: Int32) -> String {
        if kind(node) == .text { return textData(row(node)) }
        var bytes: [UInt8] = []
        var current = row(node).pointee.firstChild
        while current >= 0 {
            let currentRow = row(current)
            if currentRow.pointee.kind == .text {
                withTextBytes(currentRow) { bytes.append(contentsOf: $0) }
            }
            if currentRow.pointee.firstChild >= 0 {
                current = currentRow.pointee.firstChild
                continue
            }
            // The next sibling of the nearest node up to `node` (excluded) that has one.
            var up = current
            current = -1
            while up >= 0 && up != node {
                let upRow = row(up)
                if upRow.pointee.nextSibling >= 0 { current = upRow.pointee.nextSibling; break }
                up = upRow.pointee.parent
            }
        }
        return bytes.withUnsafeBufferPointer { ByteAccumulator.stringFromValidUTF8($0) }
    }

    // MARK: Attributes

    /// Replaces the attributes of an element (moved in).
    package func setAttributes(_ node: Int32, _ attributes: consuming [Attribute]) {
        let pointer = row(node)
        precondition(pointer.pointee.kind == .element, "HTMLTree: row \(node) is not an element")
        pointer.pointee.attributes = attributes
    }

    /// Calls `body` with the element's attributes read where the row stores them, writable only
    /// for moves that put back the very bits they take (the sanitizer reads each attribute moved
    /// out and back, with no retain): no mutating method of the array is called, so an array the
    /// parser's attribute cache shares with another row is not copied. `body` must not reach the
    /// same element's attributes any other way.
    package func withAttributesInPlace<R>(_ node: Int32, _ body: (UnsafeMutableBufferPointer<Attribute>) -> R) -> R {
        row(node).pointee.attributes.withUnsafeBufferPointer { body(UnsafeMutableBufferPointer(mutating: $0)) }
    }

    /// Sets (adds or replaces) the attribute `name` in `namespace` (as ``Element/setAttribute(_:_:namespace:)``).
    package func setAttribute(_ node: Int32, _ name: String, _ value: String, namespace: AttributeNamespace? = nil) {
        var attributes = self.attributes(node)
        if let index = attributes.firstIndex(where: { $0.namespace == namespace && $0.name == name }) {
            attributes[index].value = value
        } else {
            attributes.append(Attribute(name: name, value: value, namespace: namespace))
        }
        setAttributes(node, attributes)
    }

    /// Removes the attribute `name` in `namespace`; whether there was one (as
    /// ``Element/removeAttribute(_:namespace:)``).
    @discardableResult
    package func removeAttribute(_ node: Int32, _ name: String, namespace: AttributeNamespace? = nil) -> Bool {
        var attributes = self.attributes(node)
        guard let index = attributes.firstIndex(where: { $0.namespace == namespace && $0.name == name }) else { return false }
        attributes.remove(at: index)
        setAttributes(node, attributes)
        return true
    }

    /// Keeps the attributes for which `keep` is `true` (as ``Element/filterAttributes(_:)``).
    package func filterAttributes(_ node: Int32, _ keep: (Attribute) -> Bool) {
        let attributes = self.attributes(node)
        let kept = attributes.filter(keep)
        if kept.count != attributes.count { setAttributes(node, kept) }
    }
}

extension HTMLNode {
    /// Detaches the node with its subtree (nothing when it is detached); the handle stays valid.
    public func remove() { tree.remove(index) }
    /// Replaces the node by its children where it stood, then detaches it (the sanitizer's
    /// unwrap: the content stays, the tag goes).
    public func unwrap() { tree.unwrap(index) }
    /// Detaches every child.
    public func removeAllChildren() { tree.removeAllChildren(of: index) }
    /// Appends a new text node holding `data` as the last child; returns it.
    @discardableResult
    public func appendText(_ data: String) -> HTMLNode { HTMLNode(tree, tree.appendNewText(data, to: index)) }
    /// Replaces the data of a text or comment node (a precondition: the node is one).
    public func setData(_ data: String) { tree.setData(index, data) }
    /// Sets (adds or replaces) an attribute of an element.
    public func setAttribute(_ name: String, _ value: String, namespace: AttributeNamespace? = nil) {
        tree.setAttribute(index, name, value, namespace: namespace)
    }
    /// Removes an attribute of an element; whether it had one.
    @discardableResult
    public func removeAttribute(_ name: String, namespace: AttributeNamespace? = nil) -> Bool {
        tree.removeAttribute(index, name, namespace: namespace)
    }
    /// Keeps the attributes of an element for which `keep` is `true`.
    public func filterAttributes(_ keep: (Attribute) -> Bool) { tree.filterAttributes(index, keep) }
}
