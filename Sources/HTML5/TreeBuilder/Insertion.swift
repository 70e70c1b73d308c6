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
        if verifier != nil { verifier!.insert(node, into: place.parent, before: place.before); return }
        place.parent.insertBefore(node, place.before)
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
        guard openElements[index].storedTemplateContent == nil else { return nil }
        if count > maxDepth { depthTruncated = true }
        return index
    }

    /// Appends a node the parser has just created to the open element at `index` (from
    /// ``appendTargetIndex()``). The element is reached through an `inout` access to the stack's
    /// slot: the access is exclusive, so the compiler uses the stack's own reference
    /// instead of retaining and releasing the current node around the call (a plain read of
    /// `openElements[i]` is a copy: the stores into the links could, as far as the compiler knows,
    /// release the stack). The new node moves into its parent's child link.
    @inline(__always) mutating func appendToOpenElement(_ node: consuming Node, at index: Int) {
        if verifier != nil {
            let parent = openElementRef(at: index)
            verifier!.insert(Unmanaged.passUnretained(node), into: parent)
            return
        }
        TreeBuilder.appendDetached(node, to: &openElements[index])
    }

    @inline(__always) private static func appendDetached(_ node: consuming Node, to parent: inout Element) {
        parent.appendDetached(node)
    }

    /// Appends a character run to an open element (from ``appendTargetIndex()``): to its
    /// last child if that is a Text, else as a new Text that takes the (moved) string.
    /// The last child is looked at through an unretained reference and an exact class check
    /// (`Text` is final): no retain, release or dynamic cast per character run.
    @inline(__always) private static func appendText(_ s: consuming String, to parent: inout Element) {
        if let last = UnretainedLinks.lastChild(Unmanaged.passUnretained(parent)), UnretainedLinks.isText(last) {
            last._withUnsafeGuaranteedRef { unsafeDowncast($0, to: Text.self).storedData += s }
        } else {
            parent.appendDetached(Text(s))
        }
    }

    /// The open element at `index`, unretained (read in the stack's buffer: the stack holds it),
    /// for the re-parse check's insertion steps.
    @inline(__always) func openElementRef(at index: Int) -> Unmanaged<Node> {
        openElements.withUnsafeBufferPointer { Unmanaged<Node>.passUnretained($0[index]) }
    }

    /// Inserts a node the parser has just created at the appropriate place.
    @inline(__always) mutating func insertAtAppropriatePlace(_ node: consuming Node) {
        if let index = appendTargetIndex() { appendToOpenElement(node, at: index) } else { insert(node, at: appropriatePlace()) }
    }

    mutating func insertText(_ s: consuming String) {
        guard !s.isEmpty else { return }
        if let index = appendTargetIndex() {
            if verifier != nil {
                let parent = openElementRef(at: index)
                verifier!.appendText(s, to: parent)
                return
            }
            TreeBuilder.appendText(s, to: &openElements[index])
            return
        }
        let place = appropriatePlace()
        if place.parent is Document { return }
        if verifier != nil {
            if place.before == nil { verifier!.appendText(s, to: Unmanaged.passUnretained(place.parent)) } else { verifier!.fail() }
            return
        }
        let previous = place.before == nil ? place.parent.lastChild : place.before!.previousSibling
        if let text = previous as? Text { text.storedData += s; return }
        insert(Text(s), at: place)
    }

    mutating func insertComment(_ data: String, at place: Place? = nil) {
        if verifier != nil {
            let place = place ?? appropriatePlace()
            if place.before == nil { verifier!.appendComment(data, to: place.parent) } else { verifier!.fail() }
            return
        }
        if let place { insert(Comment(data), at: place) } else { insertAtAppropriatePlace(Comment(data)) }
    }

    /// Creates the element for a tag token, moving the token's name and attributes into it (the
    /// callers that hand over a token they no longer need save a retain and a release of each).
    func createElement(_ tag: consuming TagToken, _ namespace: Namespace) -> Element {
        var tag = tag
        var name = "", attributes: [Attribute] = []
        swap(&name, &tag.name)
        swap(&attributes, &tag.attributes)
        return Element(tag: tag.tag, localName: name, namespace: namespace, attributes: attributes)
    }

    /// Creates, inserts and pushes the element for `tag`. The new element costs one retain: the
    /// parent's child link gets a copy and the stack of open elements takes the creating one.
    mutating func insertElement(_ tag: consuming TagToken, _ namespace: Namespace = .html) {
        if verifier != nil { verifyElement(tag, namespace); return }
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
        if verifier != nil, let element = verifier!.match(tag: tag, localName: localName, namespace: namespace, attributes: attributes) {
            return element
        }
        return Element(tag: tag, localName: localName, namespace: namespace, attributes: attributes)
    }

    /// ``insertElement(_:_:)`` when the parse only verifies a tree: the same steps, with the
    /// tree's matching element (out of line, so the parser's own path stays as it was).
    ///
    /// The token is read in place and the match, the parent and the insertion check are handled
    /// as unretained references (the expected tree's caller holds every node of it, the stack
    /// holds the parent): the one retain is the stack's own reference, taken by ``push(_:)``.
    /// Each retain and release is an atomic operation; this path took five or six of them per
    /// element before (perf, 2026-11-27).
    @inline(never) mutating func verifyElement(_ token: consuming TagToken, _ namespace: Namespace) {
        // Moved into a constant: the token's name and attributes are then passed to the match
        // without a retain each (from the mutable parameter they were copied for the call).
        let tag = consume token
        guard let ref = verifier!.matchRef(tag: tag.tag, localName: tag.name, namespace: namespace, attributes: tag.attributes)
        else {
            // No match: the verification has failed (the parse stops after this token); the
            // steps go on with a fresh element, as the parser's own would.
            let element = Element(tag: tag.tag, localName: tag.name, namespace: namespace, attributes: tag.attributes)
            if let index = appendTargetIndex() { appendToOpenElement(element, at: index) } else { insert(element, at: appropriatePlace()) }
            push(element)
            return
        }
        if let index = appendTargetIndex() {
            let parent = openElementRef(at: index)
            verifier!.insert(ref, into: parent)
        } else {
            let place = appropriatePlace()
            if place.before != nil { verifier!.fail() } else { verifier!.insert(ref, into: Unmanaged.passUnretained(place.parent)) }
        }
        push(unsafeDowncast(ref.takeUnretainedValue(), to: Element.self))
    }
}
