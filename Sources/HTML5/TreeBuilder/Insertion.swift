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

    mutating func insertText(_ s: String) {
        guard !s.isEmpty else { return }
        let place = appropriatePlace()
        if place.parent is Document { return }
        let previous = place.before == nil ? place.parent.lastChild : place.before!.previousSibling
        if let text = previous as? Text { text.data += s; return }
        insert(Text(s), at: place)
    }

    mutating func insertComment(_ data: String, at place: Place? = nil) {
        insert(Comment(data), at: place ?? appropriatePlace())
    }

    mutating func createElement(_ tag: TagToken, _ namespace: Namespace) -> Element {
        Element(tag: tag.tag, localName: tag.name, namespace: namespace, attributes: tag.attributes)
    }

    @discardableResult
    mutating func insertElement(_ tag: TagToken, _ namespace: Namespace = .html) -> Element {
        let element = createElement(tag, namespace)
        insert(element, at: appropriatePlace())
        push(element)
        return element
    }

    mutating func insertForeign(_ tag: TagToken, _ namespace: Namespace) {
        var tag = tag
        if namespace == .mathml { adjustMathMLAttributes(&tag) }
        if namespace == .svg { adjustSVGAttributes(&tag) }
        let element = Element(tag: tag.tag, localName: tag.name, namespace: namespace, attributes: adjustForeignAttributes(tag.attributes))
        insert(element, at: appropriatePlace())
        push(element)
        if tag.selfClosing { pop() }
    }
}
