// The stack of open elements (§13.2.4.3): push/pop with the per-name count, "has an element in
// scope" for every scope kind, and generating implied end tags.

extension TreeBuilder {
    // MARK: Stack helpers

    var currentNode: Element? { openElements.last }

    /// `true` if `element` is the current node.
    @inline(__always) func currentIs(_ element: Element) -> Bool {
        let count = openElements.count
        return count > 0 && openElements[count - 1].identity == element.identity
    }
    var adjustedCurrentNode: Element? {
        if let context, openElements.count == 1 { return context }
        return openElements.last
    }

    /// The namespace of the adjusted current node (`nil` when the stack is empty), read once per
    /// token by the dispatcher without handing out the node itself.
    @inline(__always) var adjustedCurrentNamespace: Namespace? {
        // Read through the stack's subscript, not `last`: in the generic builder `last` is a call
        // that hands back a retained element (a retain and release per token for the class DOM).
        let count = openElements.count
        if count == 1, let context { return context.namespace }
        return count > 0 ? openElements[count - 1].namespace : nil
    }

    /// The interned name of the current node when it is an HTML element; `nil` for a foreign
    /// current node or an empty stack. A name test through this takes no reference to the node
    /// (a node bound with `while let e = currentNode` is retained across the loop's `pop()`).
    @inline(__always) var currentHTMLTag: HTMLTag? {
        let count = openElements.count
        guard count > 0, openElements[count - 1].namespace == .html else { return nil }
        return openElements[count - 1].tag
    }

    /// `true` if the current node is the HTML element `tag` (as `currentNode?.isHTML(tag) == true`:
    /// never for ``HTMLTag/unknown``).
    @inline(__always) func currentIsHTML(_ tag: HTMLTag) -> Bool { tag != .unknown && currentHTMLTag == tag }

    /// `true` if the current node is an HTML element whose name is in `tags`.
    @inline(__always) func currentIsHTML(in tags: HTMLTagSet) -> Bool {
        guard let tag = currentHTMLTag else { return false }
        return tags.contains(tag)
    }

    /// How many HTML elements with this name are on the stack.
    @inline(__always) func openCount(_ tag: HTMLTag) -> Int { Int(openCounts[Int(tag.rawValue)]) }

    mutating func push(_ element: consuming Element) {
        element.stackCount += 1
        if element.namespace == .html {
            openCounts[Int(element.tag.rawValue)] += 1
            if element.tag == .selectedcontent { selectedContentMade += 1 }
        }
        openElements.append(element)  // last: the caller's reference moves into the stack
    }

    @discardableResult
    mutating func pop() -> Element {
        let element = openElements.removeLast()
        element.stackCount -= 1
        if element.namespace == .html {
            openCounts[Int(element.tag.rawValue)] -= 1
            if element.tag == .option { maybeCloneIntoSelectedContent(element) }
        }
        return element
    }

    /// "Maybe clone an option into selectedcontent" (customizable `<select>`): when an option is
    /// popped, the first option (or the last one with `selected`) is cloned into the select's
    /// `<selectedcontent>`.
    ///
    /// Trust-model row: inbox (incoming mail) — hostile input (DoS). The search for the select and
    /// its first `<selectedcontent>` walks the tree on every option that closes: a `<select>` of
    /// 10 000 options (90 KB) took 20 s to parse that way, 20 000 options 90 s. Now a document in
    /// which the parser made no `<selectedcontent>` skips the search (exact: there is none to
    /// find), and otherwise the walks together visit at most one node per input byte plus 65 536;
    /// past that the parser stops copying options (``ParseResult/selectedContentLimited``, a
    /// parse error) — a bounded departure on hostile input only, like the depth limit.
    mutating func maybeCloneIntoSelectedContent(_ option: Element) {
        guard selectedContentMade > 0, !selectedContentLimited else { return }
        // A verification does not copy: an option closing where a <selectedcontent> exists is not
        // one of its steps.
        if sink.isVerifying { sink.failVerification(); return }
        var budget = selectedContentSearchLimit - selectedContentSearchSteps
        defer { selectedContentSearchSteps = selectedContentSearchLimit - max(budget, 0) }
        switch sink.findSelectedContent(for: option, budget: &budget) {
        case .notFound: return
        case .limited:
            selectedContentLimited = true
            error("selectedcontent-search-limit")
        case .found(let select, let target):
            let hasSelected = option.attributeValue("selected") != nil
            if selectedContentChosen[select] != nil && !hasSelected { return }
            selectedContentChosen[select] = hasSelected
            sink.replaceChildren(of: target, withCopiesOfChildrenOf: option)
        }
    }

    /// The bound on the nodes the `<selectedcontent>` searches of one parse may visit: one per
    /// input byte plus 65 536 (ordinary markup — the `<selectedcontent>` in a `<button>` before
    /// the options — needs two or three per option, and an option takes at least 8 bytes).
    var selectedContentSearchLimit: Int { tokenizer.input.count &+ 65_536 }

    mutating func removeFromStack(_ element: Element) {
        if let index = openElements.lastIndex(where: { $0.isSame(element) }) {
            openElements.remove(at: index)
            element.stackCount -= 1
            if element.namespace == .html { openCounts[Int(element.tag.rawValue)] -= 1 }
        }
    }

    mutating func stackContains(_ element: Element) -> Bool {  // mutating: see `inScope`
        // Debug builds cross-check the counter against the stack (small stacks only, so the
        // deep-nesting tests stay linear).
        assert(openElements.count > 256 || (element.stackCount > 0) == openElements.contains { $0.isSame(element) })
        return element.stackCount > 0
    }

    // The pops test the element `pop()` hands back rather than taking a second reference to
    // the current node first (one retain and release less per popped element).

    mutating func popUntil(_ tag: HTMLTag) {
        while !openElements.isEmpty {
            if pop().isHTML(tag) { return }
        }
    }

    mutating func popUntil(anyOf tags: HTMLTagSet) {
        while !openElements.isEmpty {
            if pop().isHTML(in: tags) { return }
        }
    }

    mutating func popUntil(_ element: Element) {
        while !openElements.isEmpty {
            if pop().isSame(element) { return }
        }
    }

    enum Scope { case normal, listItem, button, table, select }

    /// Whether an element with this namespace and name ends the search of `scope`. Takes the
    /// element's namespace and name, not the element: the scope loops read both from the stack's
    /// slot and pass no reference to this (out-of-line) call, so no node is retained and released
    /// per element looked at.
    static func isScopeBoundary(_ namespace: Namespace, _ tag: HTMLTag, _ scope: Scope) -> Bool {
        switch scope {
        case .select:
            return !(namespace == .html && (tag == .optgroup || tag == .option))
        case .table:
            return namespace == .html && (tag == .html || tag == .table || tag == .template)
        default:
            switch namespace {
            case .html:
                if ElementSets.defaultScope.contains(tag) || tag == .select { return true }
                if scope == .listItem && (tag == .ol || tag == .ul) { return true }
                if scope == .button && tag == .button { return true }
                return false
            case .mathml:
                return TreeBuilderSets.set0.contains(tag)
            case .svg:
                return tag == .foreignObject || tag == .desc || tag == .title
            }
        }
    }

    // The scope tests and `stackContains` read the stack only, but are declared `mutating`: the
    // tree builder is a large struct (512 bytes) and every call of a non-mutating method on it
    // from the (mutating) insertion modes copied all of it to the stack first; a mutating
    // method gets the address instead.

    /// "Has an element in scope" for an HTML element named `tag` (never ``HTMLTag/unknown``: the
    /// algorithms ask only about names the spec lists).
    mutating func inScope(_ tag: HTMLTag, _ scope: Scope = .normal) -> Bool {
        assert(tag != .unknown)
        if openCount(tag) == 0 { return false }
        var i = openElements.count - 1
        while i >= 0 {
            let namespace = openElements[i].namespace, name = openElements[i].tag
            if namespace == .html && name == tag && tag != .unknown { return true }  // `isHTML(tag)`
            if TreeBuilder.isScopeBoundary(namespace, name, scope) { return false }
            i -= 1
        }
        return false
    }

    mutating func inScope(anyOf tags: HTMLTagSet, _ scope: Scope = .normal) -> Bool {
        var i = openElements.count - 1
        while i >= 0 {
            let namespace = openElements[i].namespace, name = openElements[i].tag
            if namespace == .html && tags.contains(name) { return true }
            if TreeBuilder.isScopeBoundary(namespace, name, scope) { return false }
            i -= 1
        }
        return false
    }

    /// ``inScope(element:)`` for the element at `stackIndex` (which is on the stack once): no
    /// element on it is a scope boundary above that index.
    func inScope(stackIndex: Int) -> Bool {
        openElements.withUnsafeBufferPointer { stack in
            var i = stack.count - 1
            while i > stackIndex {
                if TreeBuilder.isScopeBoundary(stack[i].namespace, stack[i].tag, .normal) { return false }
                i -= 1
            }
            return true
        }
    }

    /// Whether `target` is on the stack with no scope boundary above it (it is there at most
    /// once): ``inScope(stackIndex:)`` at its index.
    mutating func inScope(element target: Element) -> Bool {
        let id = target.identity
        guard let index = openElements.withUnsafeBufferPointer({ stack in stack.lastIndex { $0.identity == id } })
        else { return false }
        return inScope(stackIndex: index)
    }

    /// The first test is inlined (the current node is rarely one to close: most calls pop
    /// nothing); the pops are out of line.
    @inline(__always) mutating func generateImpliedEndTags(except: HTMLTag? = nil) {
        if let tag = currentHTMLTag, ElementSets.impliedEnd.contains(tag), tag != except {
            popImpliedEndTags(except: except)
        }
    }

    private mutating func popImpliedEndTags(except: HTMLTag?) {
        while let tag = currentHTMLTag, ElementSets.impliedEnd.contains(tag), tag != except {
            pop()
        }
    }

    mutating func generateImpliedEndTagsThoroughly() {
        while let tag = currentHTMLTag, ElementSets.impliedEndThorough.contains(tag) { pop() }
    }
}
