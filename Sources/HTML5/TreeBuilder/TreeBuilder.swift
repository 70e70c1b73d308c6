// The WHATWG tree-construction stage (§13.2.6): insertion modes, the stack of open elements, the
// list of active formatting elements, the adoption agency algorithm, foster parenting, templates,
// foreign content and fragment parsing.

struct TreeBuilder {
    // Name sets used by the insertion modes (hoisted so no array is built per token).
    static let set0: Set<String> = ["mi", "mo", "mn", "ms", "mtext", "annotation-xml"]
    static let set1: Set<String> = ["table", "tbody", "tfoot", "thead", "tr"]
    static let set2: Set<String> = ["mi", "mo", "mn", "ms", "mtext"]
    static let set3: Set<String> = ["head", "body", "html", "br"]
    static let set4: Set<String> = ["basefont", "bgsound", "link", "meta", "noframes", "style"]
    static let set5: Set<String> = ["address", "div", "p"]
    static let set6: Set<String> = ["tbody", "tfoot", "thead", "template", "html"]
    static let set7: Set<String> = ["tr", "template", "html"]
    static let set8: Set<String> = ["table", "tbody", "template", "tfoot", "thead", "tr"]
    static let set9: Set<String> = ["caption", "col", "colgroup", "tbody", "td", "tfoot", "th", "thead", "tr"]
    static let set10: Set<String> = ["body", "col", "colgroup", "html", "tbody", "td", "tfoot", "th", "thead", "tr"]
    static let set11: Set<String> = ["tbody", "tfoot", "thead"]
    static let set12: Set<String> = ["caption", "col", "colgroup", "tbody", "tfoot", "thead"]
    static let set13: Set<String> = ["body", "caption", "col", "colgroup", "html", "td", "th", "tr"]
    static let set14: Set<String> = ["caption", "col", "colgroup", "tbody", "tfoot", "thead", "tr"]
    static let set15: Set<String> = ["body", "caption", "col", "colgroup", "html", "td", "th"]
    static let set16: Set<String> = ["body", "caption", "col", "colgroup", "html"]

    enum Mode {
        case initial, beforeHTML, beforeHead, inHead, inHeadNoscript, afterHead, inBody, text, inTable, inTableText
        case inCaption, inColumnGroup, inTableBody, inRow, inCell, inTemplate, afterBody
        case inFrameset, afterFrameset, afterAfterBody, afterAfterFrameset
    }

    var tokenizer: Tokenizer
    let document = Document()
    let scripting: Bool
    let maxDepth: Int
    var depthTruncated = false

    var mode: Mode = .initial
    var originalMode: Mode = .initial
    var templateModes: [Mode] = []
    var openElements: [Element] = []
    /// HTML-namespace element name -> how many are on the stack (makes "in scope" O(1) when absent).
    var openCounts: [String: Int] = [:]
    var activeFormatting: [Element?] = []  // nil = marker
    var headElement: Element?
    var formElement: Element?
    var framesetOK = true
    var fosterParenting = false
    var pendingTableText = ""
    var skipNextNewline = false
    var context: Element?
    var iframeSrcdoc = false

    init(tokenizer: Tokenizer, scripting: Bool, maxDepth: Int) {
        self.tokenizer = tokenizer
        self.scripting = scripting
        self.maxDepth = max(maxDepth, 4)
    }

    mutating func error(_ code: String) {
        if tokenizer.recordErrors { tokenizer.errors.append(ParseError(code: code, offset: tokenizer.pos)) }
    }

    // MARK: Running

    mutating func run() {
        while true {
            let token = tokenizer.nextToken()
            if case .characters(var s) = token, skipNextNewline {
                skipNextNewline = false
                if s.utf8.first == 0x0A { s.removeFirst(); if s.isEmpty { continue } }
                dispatch(.characters(s))
            } else {
                skipNextNewline = false
                dispatch(token)
            }
            if case .eof = token { stopParsing(); break }
            let adjusted = adjustedCurrentNode
            tokenizer.allowCDATA = adjusted != nil && adjusted!.namespace != .html
        }
    }

    /// Sets up fragment parsing with `context` (§13.4 "parsing HTML fragments").
    mutating func prepareFragment(context: Element) {
        self.context = context
        if context.namespace == .html {
            switch context.localName {
            case "title", "textarea": tokenizer.state = .rcdata
            case "style", "xmp", "iframe", "noembed", "noframes": tokenizer.state = .rawtext
            case "script": tokenizer.state = .scriptData
            case "noscript": if scripting { tokenizer.state = .rawtext }
            case "plaintext": tokenizer.state = .plaintext
            default: break
            }
        }
        let root = Element(localName: "html")
        document.appendChild(root)
        push(root)
        if context.isHTML("template") { templateModes.append(.inTemplate) }
        resetInsertionMode()
        var node: Node? = context
        while let n = node {
            if let e = n as? Element, e.isHTML("form") { formElement = e; break }
            node = n.parent
        }
        tokenizer.allowCDATA = context.namespace != .html
    }

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

    /// Select elements whose `<selectedcontent>` already holds an option's clone; `true` when
    /// that option had the `selected` attribute.
    var selectedContentChosen: [ObjectIdentifier: Bool] = [:]

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

    // MARK: Insertion

    struct Place { let parent: Node; let before: Node? }

    mutating func appropriatePlace(override target: Element? = nil) -> Place {
        var target: Element = target ?? currentNode!
        if target === currentNode && openElements.count > maxDepth {
            depthTruncated = true
            target = openElements[maxDepth - 1]
        }
        if fosterParenting && target.namespace == .html && TreeBuilder.set1.contains(target.localName) {
            var lastTemplate = -1, lastTable = -1
            for (i, e) in openElements.enumerated().reversed() {
                if lastTemplate < 0 && e.isHTML("template") { lastTemplate = i }
                if lastTable < 0 && e.isHTML("table") { lastTable = i }
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
        Element(localName: tag.name, namespace: namespace, attributes: tag.attributes)
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
        let element = Element(localName: tag.name, namespace: namespace, attributes: adjustForeignAttributes(tag.attributes))
        insert(element, at: appropriatePlace())
        push(element)
        if tag.selfClosing { pop() }
    }

    mutating func adjustMathMLAttributes(_ tag: inout TagToken) {
        for i in tag.attributes.indices where tag.attributes[i].name == "definitionurl" { tag.attributes[i].name = "definitionURL" }
    }

    mutating func adjustSVGAttributes(_ tag: inout TagToken) {
        for i in tag.attributes.indices {
            if let adjusted = ElementSets.svgAttributeNames[tag.attributes[i].name] { tag.attributes[i].name = adjusted }
        }
    }

    mutating func adjustForeignAttributes(_ attributes: [Attribute]) -> [Attribute] {
        var result = attributes
        for i in result.indices {
            if let (ns, local) = ElementSets.foreignAttributes[result[i].name] {
                result[i].namespace = ns
                result[i].name = local
            }
        }
        return result
    }

    // MARK: Active formatting elements

    mutating func pushFormatting(_ element: Element) {
        // Noah's Ark: at most three equal entries after the last marker.
        var count = 0
        var earliest = -1
        var i = activeFormatting.count - 1
        while i >= 0, let e = activeFormatting[i] {
            if e.localName == element.localName && e.namespace == element.namespace && sameAttributes(e, element) {
                count += 1
                earliest = i
            }
            i -= 1
        }
        if count >= 3 { activeFormatting.remove(at: earliest) }
        activeFormatting.append(element)
    }

    mutating func sameAttributes(_ a: Element, _ b: Element) -> Bool {
        guard a.attributes.count == b.attributes.count else { return false }
        for attribute in a.attributes where !b.attributes.contains(attribute) { return false }
        return true
    }

    mutating func reconstructFormatting() {
        guard let lastEntry = activeFormatting.last, let last = lastEntry, !stackContains(last) else { return }
        var index = activeFormatting.count - 1
        while index > 0 {
            guard let entry = activeFormatting[index - 1], !stackContains(entry) else { break }
            index -= 1
        }
        while index < activeFormatting.count {
            let entry = activeFormatting[index]!
            let element = Element(localName: entry.localName, namespace: entry.namespace, attributes: entry.attributes)
            insert(element, at: appropriatePlace())
            push(element)
            activeFormatting[index] = element
            index += 1
        }
    }

    mutating func clearFormattingToMarker() {
        while let entry = activeFormatting.popLast() { if entry == nil { return } }
    }

    mutating func formattingIndex(_ element: Element) -> Int? {
        activeFormatting.lastIndex { $0 === element }
    }

    // MARK: Adoption agency (§13.2.6.4.7)

    /// Returns false when the caller must act as "any other end tag".
    mutating func adoptionAgency(_ subject: String) -> Bool {
        if let current = currentNode, current.isHTML(subject), formattingIndex(current) == nil {
            pop()
            return true
        }
        for _ in 0..<8 {
            var formattingElement: Element?
            var i = activeFormatting.count - 1
            while i >= 0, let e = activeFormatting[i] {
                if e.isHTML(subject) { formattingElement = e; break }
                i -= 1
            }
            guard let formatting = formattingElement else { return false }
            guard let stackIndex = openElements.lastIndex(where: { $0 === formatting }) else {
                error("adoption-agency-1.2")
                activeFormatting.remove(at: formattingIndex(formatting)!)
                return true
            }
            if !inScope(element: formatting) { error("adoption-agency-4.4"); return true }
            if formatting !== currentNode { error("adoption-agency-1.3") }
            var furthestBlock: Element?
            var furthestIndex = -1
            for j in (stackIndex + 1)..<openElements.count where ElementSets.isSpecial(openElements[j]) {
                furthestBlock = openElements[j]; furthestIndex = j; break
            }
            guard let furthest = furthestBlock else {
                popUntil(formatting)
                activeFormatting.remove(at: formattingIndex(formatting)!)
                return true
            }
            let commonAncestor = openElements[stackIndex - 1]
            var bookmark = formattingIndex(formatting)!
            var node = furthest
            var nodeIndex = furthestIndex
            var lastNode = furthest
            var inner = 0
            while true {
                inner += 1
                nodeIndex -= 1
                node = openElements[nodeIndex]
                if node === formatting { break }
                if inner > 3, let fi = formattingIndex(node) {
                    activeFormatting.remove(at: fi)
                    if fi < bookmark { bookmark -= 1 }
                }
                guard let fi = formattingIndex(node) else {
                    openElements.remove(at: nodeIndex)
                    if node.namespace == .html { openCounts[node.localName]! -= 1 }
                    continue
                }
                let replacement = Element(localName: node.localName, namespace: node.namespace, attributes: node.attributes)
                activeFormatting[fi] = replacement
                openElements[nodeIndex] = replacement
                node = replacement
                if lastNode === furthest { bookmark = fi + 1 }
                node.appendChild(lastNode)
                lastNode = node
            }
            insert(lastNode, at: appropriatePlace(override: commonAncestor))
            let newElement = Element(localName: formatting.localName, namespace: formatting.namespace, attributes: formatting.attributes)
            furthest.moveChildren(to: newElement)
            furthest.appendChild(newElement)
            let oldIndex = formattingIndex(formatting)!
            activeFormatting.remove(at: oldIndex)
            if oldIndex < bookmark { bookmark -= 1 }
            activeFormatting.insert(newElement, at: min(bookmark, activeFormatting.count))
            removeFromStack(formatting)
            let fbIndex = openElements.lastIndex { $0 === furthest }!
            openElements.insert(newElement, at: fbIndex + 1)
            openCounts[newElement.localName, default: 0] += 1
        }
        return true
    }

    // MARK: Reset the insertion mode (§13.2.4.1)

    mutating func resetInsertionMode() {
        var i = openElements.count - 1
        while i >= 0 {
            var node = openElements[i]
            let last = i == 0
            if last, let context { node = context }
            if node.namespace == .html {
                switch node.localName {
                case "td", "th": if !last { mode = .inCell; return }
                case "tr": mode = .inRow; return
                case "tbody", "thead", "tfoot": mode = .inTableBody; return
                case "caption": mode = .inCaption; return
                case "colgroup": mode = .inColumnGroup; return
                case "table": mode = .inTable; return
                case "template": mode = templateModes.last ?? .inTemplate; return
                case "head": if !last { mode = .inHead; return }
                case "body": mode = .inBody; return
                case "frameset": mode = .inFrameset; return
                case "html": mode = headElement == nil ? .beforeHead : .afterHead; return
                default: break
                }
            }
            if last { mode = .inBody; return }
            i -= 1
        }
        mode = .inBody
    }

    // MARK: Dispatch (§13.2.6 tree construction dispatcher)

    mutating func isMathMLTextIntegrationPoint(_ e: Element) -> Bool {
        e.namespace == .mathml && TreeBuilder.set2.contains(e.localName)
    }

    mutating func isHTMLIntegrationPoint(_ e: Element) -> Bool {
        if e.namespace == .mathml && e.localName == "annotation-xml" {
            guard let encoding = e.attribute("encoding")?.lowercased() else { return false }
            return encoding == "text/html" || encoding == "application/xhtml+xml"
        }
        return e.namespace == .svg && (e.localName == "foreignObject" || e.localName == "desc" || e.localName == "title")
    }

    mutating func dispatch(_ token: Token) {
        guard let node = adjustedCurrentNode, node.namespace != .html else { process(token, mode); return }
        switch token {
        case .startTag(let tag):
            if isMathMLTextIntegrationPoint(node) && tag.name != "mglyph" && tag.name != "malignmark" { process(token, mode); return }
            if node.namespace == .mathml && node.localName == "annotation-xml" && tag.name == "svg" { process(token, mode); return }
            if isHTMLIntegrationPoint(node) { process(token, mode); return }
        case .characters:
            if isMathMLTextIntegrationPoint(node) || isHTMLIntegrationPoint(node) { process(token, mode); return }
        case .eof:
            process(token, mode); return
        default: break
        }
        processForeign(token)
    }

    // MARK: Foreign content (§13.2.6.5)

    mutating func processForeign(_ token: Token) {
        switch token {
        case .characters(let s):
            var text = s
            if text.utf8.contains(0) { error("unexpected-null-character"); text = text.replacingNUL(with: "\u{FFFD}") }
            if s.utf8.contains(where: { !isWhitespaceByte($0) && $0 != 0 }) { framesetOK = false }
            insertText(text)
        case .comment(let data): insertComment(data)
        case .doctype: error("unexpected-doctype")
        case .startTag(var tag):
            let breakout = ElementSets.breakoutTags.contains(tag.name)
                || (tag.name == "font" && tag.attributes.contains { $0.name == "color" || $0.name == "face" || $0.name == "size" })
            if breakout {
                error("unexpected-html-element-in-foreign-content")
                while let current = currentNode, current.namespace != .html, !isMathMLTextIntegrationPoint(current), !isHTMLIntegrationPoint(current) {
                    pop()
                }
                process(token, mode)
                return
            }
            let namespace = adjustedCurrentNode!.namespace
            if namespace == .svg, let adjusted = ElementSets.svgTagNames[tag.name] { tag.name = adjusted }
            insertForeign(tag, namespace)
        case .endTag(let tag):
            if tag.name == "br" || tag.name == "p" {
                error("unexpected-html-element-in-foreign-content")
                while let current = currentNode, current.namespace != .html, !isMathMLTextIntegrationPoint(current), !isHTMLIntegrationPoint(current) {
                    pop()
                }
                process(token, mode)
                return
            }
            if tag.name == "script", let current = currentNode, current.namespace == .svg, current.localName == "script" {
                pop()
                return
            }
            var index = openElements.count - 1
            var node = openElements[index]
            if node.localName.lowercased() != tag.name { error("unexpected-end-tag") }
            while index > 0 {
                if node.localName.lowercased() == tag.name {
                    popUntil(node)
                    return
                }
                index -= 1
                node = openElements[index]
                if node.namespace == .html { process(token, mode); return }
            }
        case .eof: process(token, mode)
        }
    }

    // MARK: Modes

    mutating func process(_ token: Token, _ mode: Mode) {
        switch mode {
        case .initial: initial(token)
        case .beforeHTML: beforeHTML(token)
        case .beforeHead: beforeHead(token)
        case .inHead: inHead(token)
        case .inHeadNoscript: inHeadNoscript(token)
        case .afterHead: afterHead(token)
        case .inBody: inBody(token)
        case .text: textMode(token)
        case .inTable: inTable(token)
        case .inTableText: inTableText(token)
        case .inCaption: inCaption(token)
        case .inColumnGroup: inColumnGroup(token)
        case .inTableBody: inTableBody(token)
        case .inRow: inRow(token)
        case .inCell: inCell(token)
        case .inTemplate: inTemplate(token)
        case .afterBody: afterBody(token)
        case .inFrameset: inFrameset(token)
        case .afterFrameset: afterFrameset(token)
        case .afterAfterBody: afterAfterBody(token)
        case .afterAfterFrameset: afterAfterFrameset(token)
        }
    }

    /// Splits leading ASCII whitespace off a character run.
    mutating func splitWhitespace(_ s: String) -> (String, String) {
        let utf8 = s.utf8
        var index = utf8.startIndex
        while index < utf8.endIndex, isWhitespaceByte(utf8[index]) { index = utf8.index(after: index) }
        if index == utf8.startIndex { return ("", s) }
        if index == utf8.endIndex { return (s, "") }
        return (String(s[..<index]), String(s[index...]))
    }

    mutating func initial(_ token: Token) {
        switch token {
        case .characters(let s):
            let (_, rest) = splitWhitespace(s)
            if rest.isEmpty { return }
            initialAnythingElse()
            process(.characters(rest), mode)
        case .comment(let data): insertComment(data, at: Place(parent: document, before: nil))
        case .doctype(let d):
            let name = d.name ?? ""
            if name != "html" || d.publicId != nil || (d.systemId != nil && d.systemId != "about:legacy-compat") {
                error("bad-doctype")
            }
            document.appendChild(DocumentType(name: name, publicId: d.publicId ?? "", systemId: d.systemId ?? ""))
            if !iframeSrcdoc { document.quirksMode = quirksMode(for: d) }
            mode = .beforeHTML
        default:
            initialAnythingElse()
            process(token, mode)
        }
    }

    mutating func initialAnythingElse() {
        if !iframeSrcdoc { error("expected-doctype"); document.quirksMode = .quirks }
        mode = .beforeHTML
    }

    mutating func quirksMode(for d: DoctypeToken) -> Document.QuirksMode {
        if d.forceQuirks || d.name != "html" { return .quirks }
        let publicId = d.publicId?.lowercased()
        let systemId = d.systemId?.lowercased()
        if let p = publicId {
            if p == "-//w3o//dtd w3 html strict 3.0//en//" || p == "-/w3c/dtd html 4.0 transitional/en" || p == "html" { return .quirks }
            if ElementSets.quirkyPublicPrefixes.contains(where: { p.hasPrefix($0) }) { return .quirks }
            if systemId == nil && (p.hasPrefix("-//w3c//dtd html 4.01 frameset//") || p.hasPrefix("-//w3c//dtd html 4.01 transitional//")) { return .quirks }
        }
        if systemId == "http://www.ibm.com/data/dtd/v11/ibmxhtml1-transitional.dtd" { return .quirks }
        if let p = publicId {
            if p.hasPrefix("-//w3c//dtd xhtml 1.0 frameset//") || p.hasPrefix("-//w3c//dtd xhtml 1.0 transitional//") { return .limitedQuirks }
            if systemId != nil && (p.hasPrefix("-//w3c//dtd html 4.01 frameset//") || p.hasPrefix("-//w3c//dtd html 4.01 transitional//")) { return .limitedQuirks }
        }
        return .noQuirks
    }

    mutating func beforeHTML(_ token: Token) {
        switch token {
        case .doctype: error("unexpected-doctype")
        case .comment(let data): insertComment(data, at: Place(parent: document, before: nil))
        case .characters(let s):
            let (_, rest) = splitWhitespace(s)
            if rest.isEmpty { return }
            beforeHTMLAnythingElse()
            process(.characters(rest), mode)
        case .startTag(let tag) where tag.name == "html":
            let element = createElement(tag, .html)
            document.appendChild(element)
            push(element)
            mode = .beforeHead
        case .endTag(let tag) where !TreeBuilder.set3.contains(tag.name):
            error("unexpected-end-tag")
        default:
            beforeHTMLAnythingElse()
            process(token, mode)
        }
    }

    mutating func beforeHTMLAnythingElse() {
        let element = Element(localName: "html")
        document.appendChild(element)
        push(element)
        mode = .beforeHead
    }

    mutating func beforeHead(_ token: Token) {
        switch token {
        case .characters(let s):
            let (_, rest) = splitWhitespace(s)
            if rest.isEmpty { return }
            headElement = insertElement(TagToken(name: "head", attributes: [], selfClosing: false))
            mode = .inHead
            process(.characters(rest), mode)
        case .comment(let data): insertComment(data)
        case .doctype: error("unexpected-doctype")
        case .startTag(let tag) where tag.name == "html": inBody(token)
        case .startTag(let tag) where tag.name == "head":
            headElement = insertElement(tag)
            mode = .inHead
        case .endTag(let tag) where !TreeBuilder.set3.contains(tag.name):
            error("unexpected-end-tag")
        default:
            headElement = insertElement(TagToken(name: "head", attributes: [], selfClosing: false))
            mode = .inHead
            process(token, mode)
        }
    }

    mutating func inHead(_ token: Token) {
        switch token {
        case .characters(let s):
            let (ws, rest) = splitWhitespace(s)
            insertText(ws)
            if rest.isEmpty { return }
            pop()
            mode = .afterHead
            process(.characters(rest), mode)
        case .comment(let data): insertComment(data)
        case .doctype: error("unexpected-doctype")
        case .startTag(let tag):
            switch tag.name {
            case "html": inBody(token)
            case "base", "basefont", "bgsound", "link":
                insertElement(tag); pop()
            case "meta":
                insertElement(tag); pop()
            case "title":
                genericRCDATA(tag)
            case "noscript" where scripting, "noframes", "style":
                genericRawText(tag)
            case "noscript":
                insertElement(tag); mode = .inHeadNoscript
            case "script":
                let place = appropriatePlace()
                let element = createElement(tag, .html)
                insert(element, at: place)
                push(element)
                tokenizer.state = .scriptData
                originalMode = mode
                mode = .text
            case "template":
                insertElement(tag)
                activeFormatting.append(nil)
                framesetOK = false
                mode = .inTemplate
                templateModes.append(.inTemplate)
            case "head": error("unexpected-start-tag")
            default:
                pop(); mode = .afterHead; process(token, mode)
            }
        case .endTag(let tag):
            switch tag.name {
            case "head": pop(); mode = .afterHead
            case "body", "html", "br": pop(); mode = .afterHead; process(token, mode)
            case "template":
                if (openCounts["template"] ?? 0) == 0 { error("unexpected-end-tag"); return }
                generateImpliedEndTagsThoroughly()
                if currentNode?.isHTML("template") != true { error("unexpected-end-tag") }
                popUntil("template")
                clearFormattingToMarker()
                templateModes.removeLast()
                resetInsertionMode()
            default: error("unexpected-end-tag")
            }
        case .eof:
            pop(); mode = .afterHead; process(token, mode)
        }
    }

    mutating func inHeadNoscript(_ token: Token) {
        switch token {
        case .doctype: error("unexpected-doctype")
        case .startTag(let tag) where tag.name == "html": inBody(token)
        case .endTag(let tag) where tag.name == "noscript":
            pop(); mode = .inHead
        case .characters(let s):
            let (ws, rest) = splitWhitespace(s)
            if !ws.isEmpty { inHead(.characters(ws)) }
            if rest.isEmpty { return }
            error("unexpected-character"); pop(); mode = .inHead; process(.characters(rest), mode)
        case .comment: inHead(token)
        case .startTag(let tag) where TreeBuilder.set4.contains(tag.name):
            inHead(token)
        case .startTag(let tag) where tag.name == "head" || tag.name == "noscript":
            error("unexpected-start-tag")
        case .endTag(let tag) where tag.name != "br":
            error("unexpected-end-tag")
        default:
            error("unexpected-token"); pop(); mode = .inHead; process(token, mode)
        }
    }

    mutating func afterHead(_ token: Token) {
        switch token {
        case .characters(let s):
            let (ws, rest) = splitWhitespace(s)
            insertText(ws)
            if rest.isEmpty { return }
            insertElement(TagToken(name: "body", attributes: [], selfClosing: false))
            mode = .inBody
            process(.characters(rest), mode)
        case .comment(let data): insertComment(data)
        case .doctype: error("unexpected-doctype")
        case .startTag(let tag):
            switch tag.name {
            case "html": inBody(token)
            case "body": insertElement(tag); framesetOK = false; mode = .inBody
            case "frameset": insertElement(tag); mode = .inFrameset
            case "base", "basefont", "bgsound", "link", "meta", "noframes", "script", "style", "template", "title":
                error("unexpected-start-tag")
                let head = headElement!
                push(head)
                inHead(token)
                removeFromStack(head)
            case "head": error("unexpected-start-tag")
            default:
                insertElement(TagToken(name: "body", attributes: [], selfClosing: false))
                mode = .inBody
                process(token, mode)
            }
        case .endTag(let tag):
            switch tag.name {
            case "template": inHead(token)
            case "body", "html", "br":
                insertElement(TagToken(name: "body", attributes: [], selfClosing: false))
                mode = .inBody
                process(token, mode)
            default: error("unexpected-end-tag")
            }
        case .eof:
            insertElement(TagToken(name: "body", attributes: [], selfClosing: false))
            mode = .inBody
            process(token, mode)
        }
    }

    mutating func genericRCDATA(_ tag: TagToken) {
        insertElement(tag)
        tokenizer.state = .rcdata
        originalMode = mode
        mode = .text
    }

    mutating func genericRawText(_ tag: TagToken) {
        insertElement(tag)
        tokenizer.state = .rawtext
        originalMode = mode
        mode = .text
    }

    mutating func closePElement() {
        generateImpliedEndTags(except: "p")
        if currentNode?.isHTML("p") != true { error("unexpected-end-tag") }
        popUntil("p")
    }

    mutating func closePIfInButtonScope() {
        if inScope("p", .button) { closePElement() }
    }

    // MARK: In body (§13.2.6.4.7)

    mutating func inBody(_ token: Token) {
        switch token {
        case .characters(var s):
            if s.utf8.contains(0) {
                error("unexpected-null-character")
                s = s.removingNUL()
                if s.isEmpty { return }
            }
            reconstructFormatting()
            insertText(s)
            if framesetOK && s.utf8.contains(where: { !isWhitespaceByte($0) }) { framesetOK = false }
        case .comment(let data): insertComment(data)
        case .doctype: error("unexpected-doctype")
        case .startTag(let tag): inBodyStartTag(tag, token)
        case .endTag(let tag): inBodyEndTag(tag, token)
        case .eof:
            if !templateModes.isEmpty { inTemplate(token); return }
        }
    }

    mutating func inBodyStartTag(_ tag: TagToken, _ token: Token) {
        let name = tag.name
        // Fast path for the most frequent tag of mail HTML that the spec handles as "any other
        // start tag" (a String switch compares case by case).
        if name == "span" {
            reconstructFormatting()
            insertElement(tag)
            return
        }
        switch name {
        case "html":
            error("unexpected-start-tag")
            if (openCounts["template"] ?? 0) > 0 { return }
            let html = openElements[0]
            for attribute in tag.attributes where html.attribute(attribute.name) == nil { html.attributes.append(attribute) }
        case "base", "basefont", "bgsound", "link", "meta", "noframes", "script", "style", "template", "title":
            inHead(token)
        case "body":
            error("unexpected-start-tag")
            if openElements.count == 1 || !openElements[1].isHTML("body") || (openCounts["template"] ?? 0) > 0 { return }
            framesetOK = false
            let body = openElements[1]
            for attribute in tag.attributes where body.attribute(attribute.name) == nil { body.attributes.append(attribute) }
        case "frameset":
            error("unexpected-start-tag")
            if openElements.count == 1 || !openElements[1].isHTML("body") || !framesetOK { return }
            openElements[1].remove()
            while openElements.count > 1 { pop() }
            insertElement(tag)
            mode = .inFrameset
        case "address", "article", "aside", "blockquote", "center", "details", "dialog", "dir", "div", "dl",
             "fieldset", "figcaption", "figure", "footer", "header", "hgroup", "main", "menu", "nav", "ol", "p",
             "search", "section", "summary", "ul":
            closePIfInButtonScope()
            insertElement(tag)
        case "h1", "h2", "h3", "h4", "h5", "h6":
            closePIfInButtonScope()
            if let current = currentNode, current.namespace == .html, ElementSets.headings.contains(current.localName) {
                error("unexpected-start-tag"); pop()
            }
            insertElement(tag)
        case "pre", "listing":
            closePIfInButtonScope()
            insertElement(tag)
            skipNextNewline = true
            framesetOK = false
        case "form":
            let hasTemplate = (openCounts["template"] ?? 0) > 0
            if formElement != nil && !hasTemplate { error("unexpected-start-tag"); return }
            closePIfInButtonScope()
            let element = insertElement(tag)
            if !hasTemplate { formElement = element }
        case "li", "dd", "dt":
            framesetOK = false
            var i = openElements.count - 1
            while i >= 0 {
                let node = openElements[i]
                if name == "li" ? node.isHTML("li") : (node.isHTML("dd") || node.isHTML("dt")) {
                    generateImpliedEndTags(except: node.localName)
                    if currentNode?.isHTML(node.localName) != true { error("unexpected-start-tag") }
                    popUntil(node.localName)
                    break
                }
                if ElementSets.isSpecial(node) && !(node.namespace == .html && TreeBuilder.set5.contains(node.localName)) { break }
                i -= 1
            }
            closePIfInButtonScope()
            insertElement(tag)
        case "plaintext":
            closePIfInButtonScope()
            insertElement(tag)
            tokenizer.state = .plaintext
        case "button":
            if inScope("button") {
                error("unexpected-start-tag")
                generateImpliedEndTags()
                popUntil("button")
            }
            reconstructFormatting()
            insertElement(tag)
            framesetOK = false
        case "a":
            var i = activeFormatting.count - 1
            while i >= 0, let e = activeFormatting[i] {
                if e.isHTML("a") {
                    error("unexpected-start-tag")
                    if !adoptionAgency("a") { anyOtherEndTag("a") }
                    if let fi = formattingIndex(e) { activeFormatting.remove(at: fi) }
                    removeFromStack(e)
                    break
                }
                i -= 1
            }
            reconstructFormatting()
            pushFormatting(insertElement(tag))
        case "b", "big", "code", "em", "font", "i", "s", "small", "strike", "strong", "tt", "u":
            reconstructFormatting()
            pushFormatting(insertElement(tag))
        case "nobr":
            reconstructFormatting()
            if inScope("nobr") {
                error("unexpected-start-tag")
                if !adoptionAgency("nobr") { anyOtherEndTag("nobr") }
                reconstructFormatting()
            }
            pushFormatting(insertElement(tag))
        case "applet", "marquee", "object":
            reconstructFormatting()
            insertElement(tag)
            activeFormatting.append(nil)
            framesetOK = false
        case "table":
            if document.quirksMode != .quirks { closePIfInButtonScope() }
            insertElement(tag)
            framesetOK = false
            mode = .inTable
        case "area", "br", "embed", "img", "keygen", "wbr":
            reconstructFormatting()
            insertElement(tag); pop()
            framesetOK = false
        case "input":
            if let context, context.isHTML("select") { error("unexpected-start-tag"); return }
            if inScope("select") {
                error("unexpected-start-tag")
                popUntil("select")
            }
            reconstructFormatting()
            insertElement(tag); pop()
            if tag.attribute("type")?.lowercased() != "hidden" { framesetOK = false }
        case "param", "source", "track":
            insertElement(tag); pop()
        case "hr":
            closePIfInButtonScope()
            if inScope("select") {
                generateImpliedEndTags()
                if inScope("option") || inScope("optgroup") { error("unexpected-start-tag") }
            }
            insertElement(tag); pop()
            framesetOK = false
        case "image":
            error("unexpected-start-tag")
            var renamed = tag
            renamed.name = "img"
            inBodyStartTag(renamed, .startTag(renamed))
        case "textarea":
            if inScope("select") { error("unexpected-start-tag"); popUntil("select") }
            insertElement(tag)
            skipNextNewline = true
            tokenizer.state = .rcdata
            originalMode = mode
            framesetOK = false
            mode = .text
        case "xmp":
            closePIfInButtonScope()
            reconstructFormatting()
            framesetOK = false
            genericRawText(tag)
        case "iframe":
            framesetOK = false
            genericRawText(tag)
        case "noembed":
            genericRawText(tag)
        case "noscript" where scripting:
            genericRawText(tag)
        case "select":
            if let context, context.isHTML("select") { error("unexpected-start-tag"); return }
            if inScope("select") {
                error("unexpected-start-tag")
                popUntil("select")
                return
            }
            reconstructFormatting()
            insertElement(tag)
            framesetOK = false
        case "option":
            if inScope("select") {
                generateImpliedEndTags(except: "optgroup")
                if inScope("option") { error("unexpected-start-tag") }
            } else if currentNode?.isHTML("option") == true {
                pop()
            }
            reconstructFormatting()
            insertElement(tag)
        case "optgroup":
            if inScope("select") {
                generateImpliedEndTags()
                if inScope("option") || inScope("optgroup") { error("unexpected-start-tag") }
            } else if currentNode?.isHTML("option") == true {
                pop()
            }
            reconstructFormatting()
            insertElement(tag)
        case "rb", "rtc":
            if inScope("ruby") {
                generateImpliedEndTags()
                if currentNode?.isHTML("ruby") != true { error("unexpected-start-tag") }
            }
            insertElement(tag)
        case "rp", "rt":
            if inScope("ruby") {
                generateImpliedEndTags(except: "rtc")
                if currentNode?.isHTML("ruby") != true && currentNode?.isHTML("rtc") != true { error("unexpected-start-tag") }
            }
            insertElement(tag)
        case "math":
            reconstructFormatting()
            insertForeign(tag, .mathml)
        case "svg":
            reconstructFormatting()
            insertForeign(tag, .svg)
        case "caption", "col", "colgroup", "frame", "head", "tbody", "td", "tfoot", "th", "thead", "tr":
            error("unexpected-start-tag")
        default:
            reconstructFormatting()
            insertElement(tag)
        }
    }

    mutating func inBodyEndTag(_ tag: TagToken, _ token: Token) {
        let name = tag.name
        switch name {
        case "template": inHead(token)
        case "body":
            if !inScope("body") { error("unexpected-end-tag"); return }
            mode = .afterBody
        case "html":
            if !inScope("body") { error("unexpected-end-tag"); return }
            mode = .afterBody
            process(token, mode)
        case "address", "article", "aside", "blockquote", "button", "center", "details", "dialog", "dir", "div",
             "dl", "fieldset", "figcaption", "figure", "footer", "header", "hgroup", "listing", "main", "menu", "nav",
             "ol", "pre", "search", "section", "select", "summary", "ul":
            if !inScope(name) { error("unexpected-end-tag"); return }
            generateImpliedEndTags()
            if currentNode?.isHTML(name) != true { error("unexpected-end-tag") }
            popUntil(name)
        case "form":
            if (openCounts["template"] ?? 0) == 0 {
                let node = formElement
                formElement = nil
                guard let node, inScope(element: node) else { error("unexpected-end-tag"); return }
                generateImpliedEndTags()
                if currentNode !== node { error("unexpected-end-tag") }
                removeFromStack(node)
            } else {
                if !inScope("form") { error("unexpected-end-tag"); return }
                generateImpliedEndTags()
                if currentNode?.isHTML("form") != true { error("unexpected-end-tag") }
                popUntil("form")
            }
        case "p":
            if !inScope("p", .button) {
                error("unexpected-end-tag")
                insertElement(TagToken(name: "p", attributes: [], selfClosing: false))
            }
            closePElement()
        case "li":
            if !inScope("li", .listItem) { error("unexpected-end-tag"); return }
            generateImpliedEndTags(except: "li")
            if currentNode?.isHTML("li") != true { error("unexpected-end-tag") }
            popUntil("li")
        case "dd", "dt":
            if !inScope(name) { error("unexpected-end-tag"); return }
            generateImpliedEndTags(except: name)
            if currentNode?.isHTML(name) != true { error("unexpected-end-tag") }
            popUntil(name)
        case "h1", "h2", "h3", "h4", "h5", "h6":
            if !inScope(anyOf: ElementSets.headings) { error("unexpected-end-tag"); return }
            generateImpliedEndTags()
            if currentNode?.isHTML(name) != true { error("unexpected-end-tag") }
            popUntil(anyOf: ElementSets.headings)
        case "a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong", "tt", "u":
            if !adoptionAgency(name) { anyOtherEndTag(name) }
        case "applet", "marquee", "object":
            if !inScope(name) { error("unexpected-end-tag"); return }
            generateImpliedEndTags()
            if currentNode?.isHTML(name) != true { error("unexpected-end-tag") }
            popUntil(name)
            clearFormattingToMarker()
        case "br":
            error("unexpected-end-tag")
            inBodyStartTag(TagToken(name: "br", attributes: [], selfClosing: false), .startTag(TagToken(name: "br", attributes: [], selfClosing: false)))
        default:
            anyOtherEndTag(name)
        }
    }

    /// "Stop parsing": pop every open element (which runs the pop hooks, e.g. selectedcontent).
    mutating func stopParsing() {
        while !openElements.isEmpty { pop() }
    }

    mutating func anyOtherEndTag(_ name: String) {
        var i = openElements.count - 1
        while i >= 0 {
            let node = openElements[i]
            if node.isHTML(name) {
                generateImpliedEndTags(except: name)
                if currentNode !== node { error("unexpected-end-tag") }
                popUntil(node)
                return
            }
            if ElementSets.isSpecial(node) { error("unexpected-end-tag"); return }
            i -= 1
        }
    }

    // MARK: Text (§13.2.6.4.8)

    mutating func textMode(_ token: Token) {
        switch token {
        case .characters(let s): insertText(s)
        case .eof:
            error("eof-in-text")
            pop()
            mode = originalMode
            process(token, mode)
        case .endTag:
            pop()
            mode = originalMode
        default: break
        }
    }

    // MARK: Tables

    mutating func clearStackToTableContext() {
        while let e = currentNode, !(e.namespace == .html && (e.localName == "table" || e.localName == "template" || e.localName == "html")) { pop() }
    }

    mutating func clearStackToTableBodyContext() {
        while let e = currentNode, !(e.namespace == .html && TreeBuilder.set6.contains(e.localName)) { pop() }
    }

    mutating func clearStackToTableRowContext() {
        while let e = currentNode, !(e.namespace == .html && TreeBuilder.set7.contains(e.localName)) { pop() }
    }

    mutating func inTable(_ token: Token) {
        switch token {
        case .characters:
            if let current = currentNode, current.namespace == .html, TreeBuilder.set8.contains(current.localName) {
                pendingTableText = ""
                originalMode = mode
                mode = .inTableText
                process(token, mode)
                return
            }
            inTableAnythingElse(token)
        case .comment(let data): insertComment(data)
        case .doctype: error("unexpected-doctype")
        case .startTag(let tag):
            switch tag.name {
            case "caption":
                clearStackToTableContext()
                activeFormatting.append(nil)
                insertElement(tag)
                mode = .inCaption
            case "colgroup":
                clearStackToTableContext()
                insertElement(tag)
                mode = .inColumnGroup
            case "col":
                clearStackToTableContext()
                insertElement(TagToken(name: "colgroup", attributes: [], selfClosing: false))
                mode = .inColumnGroup
                process(token, mode)
            case "tbody", "tfoot", "thead":
                clearStackToTableContext()
                insertElement(tag)
                mode = .inTableBody
            case "td", "th", "tr":
                clearStackToTableContext()
                insertElement(TagToken(name: "tbody", attributes: [], selfClosing: false))
                mode = .inTableBody
                process(token, mode)
            case "table":
                error("unexpected-start-tag")
                if !inScope("table", .table) { return }
                popUntil("table")
                resetInsertionMode()
                process(token, mode)
            case "style", "script", "template":
                inHead(token)
            case "input" where tag.attribute("type")?.lowercased() == "hidden":
                error("unexpected-start-tag")
                insertElement(tag); pop()
            case "form":
                error("unexpected-start-tag")
                if (openCounts["template"] ?? 0) > 0 || formElement != nil { return }
                formElement = insertElement(tag)
                pop()
            default:
                inTableAnythingElse(token)
            }
        case .endTag(let tag):
            switch tag.name {
            case "table":
                if !inScope("table", .table) { error("unexpected-end-tag"); return }
                popUntil("table")
                resetInsertionMode()
            case "body", "caption", "col", "colgroup", "html", "tbody", "td", "tfoot", "th", "thead", "tr":
                error("unexpected-end-tag")
            case "template": inHead(token)
            default: inTableAnythingElse(token)
            }
        case .eof: inBody(token)
        }
    }

    mutating func inTableAnythingElse(_ token: Token) {
        error("foster-parenting")
        fosterParenting = true
        inBody(token)
        fosterParenting = false
    }

    mutating func inTableText(_ token: Token) {
        if case .characters(var s) = token {
            if s.utf8.contains(0) { error("unexpected-null-character"); s = s.removingNUL() }
            pendingTableText += s
            return
        }
        let text = pendingTableText
        pendingTableText = ""
        if text.utf8.contains(where: { !isWhitespaceByte($0) }) {
            error("foster-parenting-characters")
            fosterParenting = true
            inBody(.characters(text))
            fosterParenting = false
        } else {
            insertText(text)
        }
        mode = originalMode
        process(token, mode)
    }

    mutating func inCaption(_ token: Token) {
        switch token {
        case .endTag(let tag) where tag.name == "caption":
            closeCaption()
        case .startTag(let tag) where TreeBuilder.set9.contains(tag.name):
            if closeCaption() { process(token, mode) }
        case .endTag(let tag) where tag.name == "table":
            if closeCaption() { process(token, mode) }
        case .endTag(let tag) where TreeBuilder.set10.contains(tag.name):
            error("unexpected-end-tag")
        default:
            inBody(token)
        }
    }

    @discardableResult
    mutating func closeCaption() -> Bool {
        if !inScope("caption", .table) { error("unexpected-end-tag"); return false }
        generateImpliedEndTags()
        if currentNode?.isHTML("caption") != true { error("unexpected-end-tag") }
        popUntil("caption")
        clearFormattingToMarker()
        mode = .inTable
        return true
    }

    mutating func inColumnGroup(_ token: Token) {
        switch token {
        case .characters(let s):
            let (ws, rest) = splitWhitespace(s)
            insertText(ws)
            if rest.isEmpty { return }
            if currentNode?.isHTML("colgroup") != true { error("unexpected-character"); return }
            pop(); mode = .inTable; process(.characters(rest), mode)
        case .comment(let data): insertComment(data)
        case .doctype: error("unexpected-doctype")
        case .startTag(let tag) where tag.name == "html": inBody(token)
        case .startTag(let tag) where tag.name == "col": insertElement(tag); pop()
        case .endTag(let tag) where tag.name == "colgroup":
            if currentNode?.isHTML("colgroup") != true { error("unexpected-end-tag"); return }
            pop(); mode = .inTable
        case .endTag(let tag) where tag.name == "col": error("unexpected-end-tag")
        case .startTag(let tag) where tag.name == "template": inHead(token)
        case .endTag(let tag) where tag.name == "template": inHead(token)
        case .eof: inBody(token)
        default:
            if currentNode?.isHTML("colgroup") != true { error("unexpected-token"); return }
            pop(); mode = .inTable; process(token, mode)
        }
    }

    mutating func inTableBody(_ token: Token) {
        switch token {
        case .startTag(let tag) where tag.name == "tr":
            clearStackToTableBodyContext()
            insertElement(tag)
            mode = .inRow
        case .startTag(let tag) where tag.name == "th" || tag.name == "td":
            error("unexpected-cell")
            clearStackToTableBodyContext()
            insertElement(TagToken(name: "tr", attributes: [], selfClosing: false))
            mode = .inRow
            process(token, mode)
        case .endTag(let tag) where TreeBuilder.set11.contains(tag.name):
            if !inScope(tag.name, .table) { error("unexpected-end-tag"); return }
            clearStackToTableBodyContext()
            pop()
            mode = .inTable
        case .startTag(let tag) where TreeBuilder.set12.contains(tag.name):
            tableBodyEscape(token)
        case .endTag(let tag) where tag.name == "table":
            tableBodyEscape(token)
        case .endTag(let tag) where TreeBuilder.set13.contains(tag.name):
            error("unexpected-end-tag")
        default:
            inTable(token)
        }
    }

    mutating func tableBodyEscape(_ token: Token) {
        if !inScope(anyOf: ["tbody", "thead", "tfoot"], .table) { error("unexpected-token"); return }
        clearStackToTableBodyContext()
        pop()
        mode = .inTable
        process(token, mode)
    }

    mutating func inRow(_ token: Token) {
        switch token {
        case .startTag(let tag) where tag.name == "th" || tag.name == "td":
            clearStackToTableRowContext()
            insertElement(tag)
            mode = .inCell
            activeFormatting.append(nil)
        case .endTag(let tag) where tag.name == "tr":
            if !inScope("tr", .table) { error("unexpected-end-tag"); return }
            clearStackToTableRowContext()
            pop()
            mode = .inTableBody
        case .startTag(let tag) where TreeBuilder.set14.contains(tag.name):
            if !inScope("tr", .table) { error("unexpected-start-tag"); return }
            clearStackToTableRowContext(); pop(); mode = .inTableBody; process(token, mode)
        case .endTag(let tag) where tag.name == "table":
            if !inScope("tr", .table) { error("unexpected-end-tag"); return }
            clearStackToTableRowContext(); pop(); mode = .inTableBody; process(token, mode)
        case .endTag(let tag) where TreeBuilder.set11.contains(tag.name):
            if !inScope(tag.name, .table) { error("unexpected-end-tag"); return }
            if !inScope("tr", .table) { return }
            clearStackToTableRowContext(); pop(); mode = .inTableBody; process(token, mode)
        case .endTag(let tag) where TreeBuilder.set15.contains(tag.name):
            error("unexpected-end-tag")
        default:
            inTable(token)
        }
    }

    mutating func closeCell() {
        generateImpliedEndTags()
        if !(currentNode?.isHTML("td") == true || currentNode?.isHTML("th") == true) { error("unexpected-end-tag") }
        popUntil(anyOf: ["td", "th"])
        clearFormattingToMarker()
        mode = .inRow
    }

    mutating func inCell(_ token: Token) {
        switch token {
        case .endTag(let tag) where tag.name == "td" || tag.name == "th":
            if !inScope(tag.name, .table) { error("unexpected-end-tag"); return }
            generateImpliedEndTags()
            if currentNode?.isHTML(tag.name) != true { error("unexpected-end-tag") }
            popUntil(tag.name)
            clearFormattingToMarker()
            mode = .inRow
        case .startTag(let tag) where TreeBuilder.set9.contains(tag.name):
            if !inScope("td", .table) && !inScope("th", .table) { error("unexpected-start-tag"); return }
            closeCell()
            process(token, mode)
        case .endTag(let tag) where TreeBuilder.set16.contains(tag.name):
            error("unexpected-end-tag")
        case .endTag(let tag) where TreeBuilder.set1.contains(tag.name):
            if !inScope(tag.name, .table) { error("unexpected-end-tag"); return }
            closeCell()
            process(token, mode)
        default:
            inBody(token)
        }
    }

    // MARK: Template (§13.2.6.4.18)

    mutating func inTemplate(_ token: Token) {
        switch token {
        case .characters, .comment, .doctype:
            inBody(token)
        case .startTag(let tag):
            let next: Mode
            switch tag.name {
            case "base", "basefont", "bgsound", "link", "meta", "noframes", "script", "style", "template", "title":
                inHead(token); return
            case "caption", "colgroup", "tbody", "tfoot", "thead": next = .inTable
            case "col": next = .inColumnGroup
            case "tr": next = .inTableBody
            case "td", "th": next = .inRow
            default: next = .inBody
            }
            templateModes.removeLast()
            templateModes.append(next)
            mode = next
            process(token, mode)
        case .endTag(let tag):
            if tag.name == "template" { inHead(token) } else { error("unexpected-end-tag") }
        case .eof:
            if (openCounts["template"] ?? 0) == 0 { return }
            error("eof-in-template")
            popUntil("template")
            clearFormattingToMarker()
            templateModes.removeLast()
            resetInsertionMode()
            process(token, mode)
        }
    }

    // MARK: After body, frameset

    mutating func afterBody(_ token: Token) {
        switch token {
        case .characters(let s):
            let (ws, rest) = splitWhitespace(s)
            if !ws.isEmpty { inBody(.characters(ws)) }
            if rest.isEmpty { return }
            error("unexpected-character"); mode = .inBody; process(.characters(rest), mode)
        case .comment(let data): insertComment(data, at: Place(parent: openElements[0], before: nil))
        case .doctype: error("unexpected-doctype")
        case .startTag(let tag) where tag.name == "html": inBody(token)
        case .endTag(let tag) where tag.name == "html":
            if context != nil { error("unexpected-end-tag"); return }
            mode = .afterAfterBody
        case .eof: break
        default:
            error("unexpected-token"); mode = .inBody; process(token, mode)
        }
    }

    mutating func whitespaceOnly(_ s: String) -> String {
        String(decoding: s.utf8.filter(isWhitespaceByte), as: UTF8.self)
    }

    mutating func inFrameset(_ token: Token) {
        switch token {
        case .characters(let s):
            let ws = whitespaceOnly(s)
            if ws.utf8.count != s.utf8.count { error("unexpected-character") }
            insertText(ws)
        case .comment(let data): insertComment(data)
        case .doctype: error("unexpected-doctype")
        case .startTag(let tag):
            switch tag.name {
            case "html": inBody(token)
            case "frameset": insertElement(tag)
            case "frame": insertElement(tag); pop()
            case "noframes": inHead(token)
            default: error("unexpected-start-tag")
            }
        case .endTag(let tag) where tag.name == "frameset":
            if openElements.count == 1 { error("unexpected-end-tag"); return }
            pop()
            if context == nil && currentNode?.isHTML("frameset") != true { mode = .afterFrameset }
        case .endTag: error("unexpected-end-tag")
        case .eof: break
        }
    }

    mutating func afterFrameset(_ token: Token) {
        switch token {
        case .characters(let s):
            let ws = whitespaceOnly(s)
            if ws.utf8.count != s.utf8.count { error("unexpected-character") }
            insertText(ws)
        case .comment(let data): insertComment(data)
        case .doctype: error("unexpected-doctype")
        case .startTag(let tag) where tag.name == "html": inBody(token)
        case .startTag(let tag) where tag.name == "noframes": inHead(token)
        case .endTag(let tag) where tag.name == "html": mode = .afterAfterFrameset
        case .eof: break
        default: error("unexpected-token")
        }
    }

    mutating func afterAfterBody(_ token: Token) {
        switch token {
        case .comment(let data): insertComment(data, at: Place(parent: document, before: nil))
        case .doctype: inBody(token)
        case .startTag(let tag) where tag.name == "html": inBody(token)
        case .characters(let s):
            let (ws, rest) = splitWhitespace(s)
            if !ws.isEmpty { inBody(.characters(ws)) }
            if rest.isEmpty { return }
            error("unexpected-character"); mode = .inBody; process(.characters(rest), mode)
        case .eof: break
        default:
            error("unexpected-token"); mode = .inBody; process(token, mode)
        }
    }

    mutating func afterAfterFrameset(_ token: Token) {
        switch token {
        case .comment(let data): insertComment(data, at: Place(parent: document, before: nil))
        case .doctype: inBody(token)
        case .startTag(let tag) where tag.name == "html": inBody(token)
        case .characters(let s):
            let ws = whitespaceOnly(s)
            if !ws.isEmpty { inBody(.characters(ws)) }
            if ws.utf8.count != s.utf8.count { error("unexpected-character") }
        case .startTag(let tag) where tag.name == "noframes": inHead(token)
        case .eof: break
        default: error("unexpected-token")
        }
    }
}

@inline(__always) func isWhitespaceByte(_ b: UInt8) -> Bool { b == 0x20 || b == 0x0A || b == 0x09 || b == 0x0C || b == 0x0D }
@inline(__always) func isWhitespaceScalar(_ s: Unicode.Scalar) -> Bool { s.value < 128 && isWhitespaceByte(UInt8(s.value)) }

extension String {
    mutating func removingNUL() -> String { String(decoding: utf8.filter { $0 != 0 }, as: UTF8.self) }
    mutating func replacingNUL(with replacement: String) -> String {
        var out = ""
        for scalar in unicodeScalars { if scalar == "\0" { out += replacement } else { out.unicodeScalars.append(scalar) } }
        return out
    }
}
