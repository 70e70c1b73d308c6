// The stack of open elements (§13.2.4.3): push/pop with the per-name count, "has an element in
// scope" for every scope kind, and generating implied end tags.

extension TreeBuilder {
    // MARK: Stack helpers

    var currentNode: Element? { openElements.last }
    var adjustedCurrentNode: Element? {
        if let context, openElements.count == 1 { return context }
        return openElements.last
    }

    mutating func push(_ element: Element) {
        openElements.append(element)
        if element.namespace == .html { openCounts[element.localName, default: 0] += 1 }
    }

    @discardableResult
    mutating func pop() -> Element {
        let element = openElements.removeLast()
        if element.namespace == .html {
            openCounts[element.localName]! -= 1
            if element.localName == "option" { maybeCloneIntoSelectedContent(element) }
        }
        return element
    }

    /// "Maybe clone an option into selectedcontent" (customizable `<select>`): when an option is
    /// popped, the first option (or the last one with `selected`) is cloned into the select's
    /// `<selectedcontent>`.
    mutating func maybeCloneIntoSelectedContent(_ option: Element) {
        var node = option.parent
        while let n = node, !((n as? Element)?.isHTML("select") ?? false) { node = n.parent }
        guard let select = node as? Element else { return }
        var selectedContent: Element?
        for d in select.descendants { if let e = d as? Element, e.isHTML("selectedcontent") { selectedContent = e; break } }
        guard let target = selectedContent else { return }
        let hasSelected = option.attribute("selected") != nil
        let key = ObjectIdentifier(select)
        if selectedContentChosen[key] != nil && !hasSelected { return }
        selectedContentChosen[key] = hasSelected
        target.removeAllChildren()
        for child in option.children { target.appendChild(child.clone(deep: true)) }
    }

    mutating func removeFromStack(_ element: Element) {
        if let index = openElements.lastIndex(where: { $0 === element }) {
            openElements.remove(at: index)
            if element.namespace == .html { openCounts[element.localName]! -= 1 }
        }
    }

    mutating func stackContains(_ element: Element) -> Bool {
        var i = openElements.count - 1
        while i >= 0 { if openElements[i] === element { return true }; i -= 1 }
        return false
    }

    mutating func popUntil(_ name: String) {
        while let e = currentNode {
            pop()
            if e.isHTML(name) { return }
        }
    }

    mutating func popUntil(anyOf names: Set<String>) {
        while let e = currentNode {
            pop()
            if e.namespace == .html && names.contains(e.localName) { return }
        }
    }

    mutating func popUntil(_ element: Element) {
        while let e = currentNode {
            pop()
            if e === element { return }
        }
    }

    enum Scope { case normal, listItem, button, table, select }

    mutating func isScopeBoundary(_ e: Element, _ scope: Scope) -> Bool {
        switch scope {
        case .select:
            return !(e.namespace == .html && (e.localName == "optgroup" || e.localName == "option"))
        case .table:
            return e.namespace == .html && (e.localName == "html" || e.localName == "table" || e.localName == "template")
        default:
            switch e.namespace {
            case .html:
                if ElementSets.defaultScope.contains(e.localName) || e.localName == "select" { return true }
                if scope == .listItem && (e.localName == "ol" || e.localName == "ul") { return true }
                if scope == .button && e.localName == "button" { return true }
                return false
            case .mathml:
                return TreeBuilder.set0.contains(e.localName)
            case .svg:
                return e.localName == "foreignObject" || e.localName == "desc" || e.localName == "title"
            }
        }
    }

    mutating func inScope(_ name: String, _ scope: Scope = .normal) -> Bool {
        if (openCounts[name] ?? 0) == 0 { return false }
        var i = openElements.count - 1
        while i >= 0 {
            let e = openElements[i]
            if e.isHTML(name) { return true }
            if isScopeBoundary(e, scope) { return false }
            i -= 1
        }
        return false
    }

    mutating func inScope(anyOf names: Set<String>, _ scope: Scope = .normal) -> Bool {
        var i = openElements.count - 1
        while i >= 0 {
            let e = openElements[i]
            if e.namespace == .html && names.contains(e.localName) { return true }
            if isScopeBoundary(e, scope) { return false }
            i -= 1
        }
        return false
    }

    mutating func inScope(element target: Element) -> Bool {
        var i = openElements.count - 1
        while i >= 0 {
            let e = openElements[i]
            if e === target { return true }
            if isScopeBoundary(e, .normal) { return false }
            i -= 1
        }
        return false
    }

    mutating func generateImpliedEndTags(except: String? = nil) {
        while let e = currentNode, e.namespace == .html, ElementSets.impliedEnd.contains(e.localName), e.localName != except {
            pop()
        }
    }

    mutating func generateImpliedEndTagsThoroughly() {
        while let e = currentNode, e.namespace == .html, ElementSets.impliedEndThorough.contains(e.localName) { pop() }
    }
}
