// Inserting nodes (§13.2.6.1): the appropriate place (foster parenting, templates, the depth
// limit), creating and inserting elements, text and comments.

extension TreeBuilder {
    // MARK: Insertion

    struct Place { let parent: Node; let before: Node? }

    mutating func appropriatePlace(override: Element? = nil) -> Place {
        var target: Element = override ?? currentNode!
        if openElements.count > maxDepth, override.map({ $0.isSame(openElements[openElements.count - 1]) }) ?? true {
            depthTruncated = true
            target = openElements[maxDepth - 1]
        }
        if fosterParenting && target.namespace == .html && TreeBuilderSets.set1.contains(target.tag) {
            var lastTemplate = -1, lastTable = -1
            for (i, e) in openElements.enumerated().reversed() {
                if lastTemplate < 0 && e.isHTML(.template) { lastTemplate = i }
                if lastTable < 0 && e.isHTML(.table) { lastTable = i }
                if lastTemplate >= 0 && lastTable >= 0 { break }
            }
            if lastTemplate >= 0 && (lastTable < 0 || lastTemplate > lastTable) {
                return Place(parent: sink.templateContents(of: openElements[lastTemplate])!, before: nil)
            }
            if lastTable < 0 { return Place(parent: Sink.node(openElements[0]), before: nil) }
            let table = openElements[lastTable]
            if let parent = sink.parent(of: table) { return Place(parent: parent, before: Sink.node(table)) }
            return Place(parent: Sink.node(openElements[lastTable - 1]), before: nil)
        }
        if let content = sink.templateContents(of: target) { return Place(parent: content, before: nil) }
        return Place(parent: Sink.node(target), before: nil)
    }

    /// Inserts an element at `place` (detaching it first if it is in the tree: the adoption
    /// agency's last node).
    mutating func insert(_ element: Element, at place: Place) {
        sink.insertElement(element, into: place.parent, before: place.before)
    }

    /// The index in the stack of open elements of the element at whose end "the appropriate
    /// place for inserting a node" is, when it is simply the end of an open element: the current
    /// node, or, beyond the depth limit, the element at the limit (which ``appropriatePlace(override:)``
    /// picks too, marking the document truncated as it does) — no foster parenting, not a
    /// template. Nearly every insertion; `nil` sends the caller through the full
    /// ``appropriatePlace(override:)`` (same result, more reference counting).
    @inline(__always) mutating func appendTargetIndex() -> Int? {
        let count = openElements.count
        guard !fosterParenting && count > 0 else { return nil }
        let index = count <= maxDepth ? count - 1 : maxDepth - 1
        guard !openElements[index].hasTemplateContents else { return nil }
        if count > maxDepth { depthTruncated = true }
        return index
    }

    /// Appends an element the parser has just created to the open element at `index` (from
    /// ``appendTargetIndex()``). The sink reaches the parent through an `inout` access to the
    /// stack's slot (for the class DOM: the stack's own reference, no retain and release around
    /// the call); the new element moves into its parent.
    @inline(__always) mutating func appendToOpenElement(_ element: consuming Element, at index: Int) {
        sink.appendElement(element, to: &openElements[index])
    }

    /// Inserts an element the parser has just created at the appropriate place.
    @inline(__always) mutating func insertAtAppropriatePlace(_ element: consuming Element) {
        if let index = appendTargetIndex() { appendToOpenElement(element, at: index) } else { insert(element, at: appropriatePlace()) }
    }

    mutating func insertText(_ s: consuming String) {
        guard !s.isEmpty else { return }
        if let index = appendTargetIndex() {
            sink.appendText(s, to: &openElements[index])
            return
        }
        let place = appropriatePlace()
        if sink.isDocument(place.parent) { return }
        sink.insertText(s, into: place.parent, before: place.before)
    }

    mutating func insertComment(_ data: String, at place: Place? = nil) {
        if let place {
            sink.insertComment(data, into: place.parent, before: place.before)
        } else if let index = appendTargetIndex() {
            sink.appendComment(data, to: &openElements[index])
        } else {
            let place = appropriatePlace()
            sink.insertComment(data, into: place.parent, before: place.before)
        }
    }

    /// Creates the element for a tag token, moving the token's name and attributes into it (the
    /// callers that hand over a token they no longer need save a retain and a release of each).
    mutating func createElement(_ tag: consuming TagToken, _ namespace: Namespace) -> Element {
        var tag = tag
        var name = "", attributes: [Attribute] = []
        swap(&name, &tag.name)
        swap(&attributes, &tag.attributes)
        return sink.newElement(tag: tag.tag, localName: name, namespace: namespace, attributes: attributes)
    }

    /// Creates, inserts and pushes the element for `tag`. The new element costs one retain: the
    /// parent's child link gets a copy and the stack of open elements takes the creating one.
    mutating func insertElement(_ tag: consuming TagToken, _ namespace: Namespace = .html) {
        if sink.isVerifying { verifyElement(tag, namespace); return }
        let element = createElement(tag, namespace)
        if let index = appendTargetIndex() {
            appendToOpenElement(element, at: index)
        } else {
            insert(element, at: appropriatePlace())
        }
        push(element)
    }

    /// ``insertElement(_:_:)`` for the callers that keep the element (it is the current node).
    mutating func insertElementReturning(_ tag: consuming TagToken, _ namespace: Namespace = .html) -> Element {
        insertElement(tag, namespace)
        return openElements[openElements.count - 1]
    }

    mutating func insertForeign(_ tag: TagToken, _ namespace: Namespace) {
        var tag = tag
        if namespace == .mathml { adjustMathMLAttributes(&tag) }
        if namespace == .svg { adjustSVGAttributes(&tag) }
        let element = makeElement(tag: tag.tag, localName: tag.name, namespace: namespace, attributes: adjustForeignAttributes(tag.attributes))
        insertAtAppropriatePlace(element)
        push(element)
        if tag.selfClosing { pop() }
    }

    /// A new element for the parser — or, when the parse only verifies a tree
    /// (``HTML5Parser/parsesBack(_:to:context:options:)``), that tree's matching element (a fresh
    /// one, never inserted anywhere, when there is none: the verification has failed then).
    mutating func makeElement(tag: HTMLTag, localName: String, namespace: Namespace, attributes: [Attribute]) -> Element {
        sink.makeElement(tag: tag, localName: localName, namespace: namespace, attributes: attributes)
    }

    /// ``insertElement(_:_:)`` when the parse only verifies a tree: the same steps, with the
    /// tree's matching element (out of line, so the parser's own path stays as it was). The
    /// token's name and attributes are read in place; the sink's insertion steps check that the
    /// element is appended where the expected tree has it.
    @inline(never) mutating func verifyElement(_ token: consuming TagToken, _ namespace: Namespace) {
        // Moved into a constant: the token's name and attributes are then passed to the match
        // without a retain each (from the mutable parameter they were copied for the call).
        let tag = consume token
        let element = sink.makeElement(tag: tag.tag, localName: tag.name, namespace: namespace, attributes: tag.attributes)
        if let index = appendTargetIndex() {
            sink.appendBorrowedElement(element, to: &openElements[index])
        } else {
            insert(element, at: appropriatePlace())
        }
        push(element)
    }
}
