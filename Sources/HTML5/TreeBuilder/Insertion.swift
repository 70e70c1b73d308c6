// Inserting nodes (§13.2.6.1): the appropriate place (foster parenting, templates, the depth
// limit), creating and inserting elements, text and comments.

extension TreeBuilder {
    // MARK: Insertion

    struct Place { let parent: Node; let before: Node? }

    mutating func appropriatePlace(override target: Element? = nil) -> Place {
        var target: Element = target ?? currentNode!
        if target === currentNode && openElements.count > maxDepth {
            depthTruncated = true
            target = openElements[maxDepth - 1]
        }
        if fosterParenting && target.namespace == .html && TreeBuilder.set1.contains(target.tag) {
            var lastTemplate = -1, lastTable = -1
            for (i, e) in openElements.enumerated().reversed() {
                if lastTemplate < 0 && e.isHTML(.template) { lastTemplate = i }
                if lastTable < 0 && e.isHTML(.table) { lastTable = i }
                if lastTemplate >= 0 && lastTable >= 0 { break }
            }
            if lastTemplate >= 0 && (lastTable < 0 || lastTemplate > lastTable) {
                return Place(parent: openElements[lastTemplate].templateContent!, before: nil)
            }
            if lastTable < 0 { return Place(parent: openElements[0], before: nil) }
            let table = openElements[lastTable]
            if let parent = table.parent { return Place(parent: parent, before: table) }
            return Place(parent: openElements[lastTable - 1], before: nil)
        }
        if let content = target.templateContent { return Place(parent: content, before: nil) }
        return Place(parent: target, before: nil)
    }

    mutating func insert(_ node: Node, at place: Place) {
        place.parent.insertBefore(node, place.before)
    }

    /// The current node when "the appropriate place for inserting a node" is simply its end: no
    /// foster parenting, not a template, within the depth limit — nearly every insertion. `nil`
    /// sends the caller through the full ``appropriatePlace(override:)`` (same result, more
    /// reference counting).
    @inline(__always) func simpleInsertionTarget() -> Element? {
        guard !fosterParenting, openElements.count <= maxDepth, let target = openElements.last,
              target.storedTemplateContent == nil else { return nil }
        return target
    }

    /// Inserts a node the parser has just created at the appropriate place.
    @inline(__always) mutating func insertAtAppropriatePlace(_ node: Node) {
        if let target = simpleInsertionTarget() { target.appendDetached(node) } else { insert(node, at: appropriatePlace()) }
    }

    mutating func insertText(_ s: String) {
        guard !s.isEmpty else { return }
        if let target = simpleInsertionTarget() {
            if let text = target.storedLastChild as? Text { text.data += s } else { target.appendDetached(Text(s)) }
            return
        }
        let place = appropriatePlace()
        if place.parent is Document { return }
        let previous = place.before == nil ? place.parent.lastChild : place.before!.previousSibling
        if let text = previous as? Text { text.data += s; return }
        insert(Text(s), at: place)
    }

    mutating func insertComment(_ data: String, at place: Place? = nil) {
        if let place { insert(Comment(data), at: place) } else { insertAtAppropriatePlace(Comment(data)) }
    }

    func createElement(_ tag: TagToken, _ namespace: Namespace) -> Element {
        Element(tag: tag.tag, localName: tag.name, namespace: namespace, attributes: tag.attributes)
    }

    @discardableResult
    mutating func insertElement(_ tag: TagToken, _ namespace: Namespace = .html) -> Element {
        let element = createElement(tag, namespace)
        insertAtAppropriatePlace(element)
        push(element)
        return element
    }

    mutating func insertForeign(_ tag: TagToken, _ namespace: Namespace) {
        var tag = tag
        if namespace == .mathml { adjustMathMLAttributes(&tag) }
        if namespace == .svg { adjustSVGAttributes(&tag) }
        let element = Element(tag: tag.tag, localName: tag.name, namespace: namespace, attributes: adjustForeignAttributes(tag.attributes))
        insertAtAppropriatePlace(element)
        push(element)
        if tag.selfClosing { pop() }
    }
}
