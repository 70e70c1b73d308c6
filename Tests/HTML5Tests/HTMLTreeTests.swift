// Differential tests of the arena tree (`HTMLTree`, `ArenaSink`) against the class DOM
// (`DOMSink`): the same sequence of sink calls runs on both, and the trees must dump the same.
//
// Trust-model row: inbox (incoming mail). The arena tree will hold what hostile mail builds; it
// must have the class DOM's shape on every step the tree builder takes, keep its links
// consistent, and walk (dump, copy, materialize, free) a 100 000-deep tree without recursion.

import Testing
@testable import HTML5
import RampartTestSupport

// MARK: Harness

/// A sink the tests can also read any node of: dump it (the subtree below it, html5lib format),
/// list its children, go to its parent, compare two nodes.
protocol ProbedSink: TreeSink {
    /// The html5lib dump of the children of `node`.
    func dump(_ node: NodeRef) -> String
    /// The children of `node`, in order.
    func children(of node: NodeRef) -> [NodeRef]
    /// The parent of any node (`nil` for a root: the document, template contents, detached).
    func parentNode(_ node: NodeRef) -> NodeRef?
    /// `true` if `a` and `b` are the same node.
    func same(_ a: NodeRef, _ b: NodeRef) -> Bool
}

extension DOMSink: ProbedSink {
    func dump(_ node: Node) -> String { node.html5libTreeDump }
    func children(of node: Node) -> [Node] { Array(node.children) }
    func parentNode(_ node: Node) -> Node? { node.parent }
    func same(_ a: Node, _ b: Node) -> Bool { a === b }
}

extension ArenaSink: ProbedSink {
    func dump(_ node: Int32) -> String { tree.html5libTreeDump(of: node) }
    func children(of node: Int32) -> [Int32] {
        var result: [Int32] = []
        var child = tree.firstChild(node)
        while let c = child { result.append(c); child = tree.nextSibling(c) }
        return result
    }
    func parentNode(_ node: Int32) -> Int32? { tree.parent(node) }
    func same(_ a: Int32, _ b: Int32) -> Bool { a == b }
}

/// A sequence of sink calls, run the same on every sink; it returns a log of what it read back
/// (compared between the sinks too).
protocol SinkScript {
    func script<S: ProbedSink>(_ sink: inout S) -> [String]
}

extension TreeSink {
    /// A new element named `name` (interned when the table has it).
    mutating func make(_ name: String, _ namespace: Namespace = .html, _ attributes: [Attribute] = []) -> ElementRef {
        makeElement(tag: HTMLTag(localName: name), localName: name, namespace: namespace, attributes: attributes)
    }

    /// A new element appended to `parent`.
    @discardableResult
    mutating func add(_ name: String, to parent: inout ElementRef, _ namespace: Namespace = .html, _ attributes: [Attribute] = []) -> ElementRef {
        let element = make(name, namespace, attributes)
        appendElement(element, to: &parent)
        return element
    }

    /// `<html><head></head><body></body></html>` in the document: (html, body).
    mutating func skeleton() -> (html: ElementRef, body: ElementRef) {
        var html = make("html")
        appendToDocument(html)
        add("head", to: &html)
        let body = add("body", to: &html)
        return (html, body)
    }
}

/// `name="value"` attributes.
func attrs(_ pairs: KeyValuePairs<String, String>) -> [Attribute] { pairs.map { Attribute(name: $0.key, value: $0.value) } }

/// Every link of the arena tree agrees with its neighbours', every row is the child of at most
/// one parent, and a template's contents are a detached fragment.
func expectConsistentLinks(_ tree: HTMLTree, sourceLocation: SourceLocation = #_sourceLocation) {
    var seenAsChild = [Bool](repeating: false, count: tree.count)
    var problems: [String] = []
    for index in 0..<Int32(tree.count) {
        var previous: Int32?
        var child = tree.firstChild(index)
        while let current = child {
            if seenAsChild[Int(current)] { problems.append("\(current) twice a child") }
            seenAsChild[Int(current)] = true
            if tree.parent(current) != index { problems.append("parent of \(current)") }
            if tree.previousSibling(current) != previous { problems.append("previous of \(current)") }
            previous = current
            child = tree.nextSibling(current)
        }
        if tree.lastChild(index) != previous { problems.append("last child of \(index)") }
        if tree.parent(index) == nil && (tree.nextSibling(index) != nil || tree.previousSibling(index) != nil) {
            problems.append("detached \(index) has siblings")
        }
        if let contents = tree.templateContents(index) {
            if tree.kind(contents) != .fragment || tree.parent(contents) != nil { problems.append("contents of \(index)") }
        }
    }
    #expect(problems.isEmpty, "\(problems.prefix(10))", sourceLocation: sourceLocation)
}

/// Runs `script` on a `DOMSink` and an `ArenaSink` and expects the same dumps (also of the
/// arena's `materialize()`), the same logs and the same quirks mode. Returns the class DOM's dump
/// and the log.
@discardableResult
func expectSameTrees(_ script: some SinkScript, sourceLocation: SourceLocation = #_sourceLocation) -> (dump: String, log: [String]) {
    var dom = DOMSink()
    let domLog = script.script(&dom)
    var arena = ArenaSink()
    let arenaLog = script.script(&arena)
    let expected = dom.documentNode.html5libTreeDump
    #expect(!expected.isEmpty, sourceLocation: sourceLocation)
    #expect(arena.tree.html5libTreeDump() == expected, sourceLocation: sourceLocation)
    let materialized = arena.tree.materialize()
    #expect(materialized.html5libTreeDump == expected, sourceLocation: sourceLocation)
    #expect(materialized.quirksMode == dom.documentNode.quirksMode, sourceLocation: sourceLocation)
    #expect(arena.quirksMode == dom.quirksMode, sourceLocation: sourceLocation)
    #expect(arenaLog == domLog, sourceLocation: sourceLocation)
    expectConsistentLinks(arena.tree, sourceLocation: sourceLocation)
    return (expected, domLog)
}

/// What a `<selectedcontent>` search found, as sink-independent text.
func describe<E: TreeElement>(_ result: SelectedContentSearch<E>, select: E?) -> String {
    switch result {
    case .notFound: "notFound"
    case .limited: "limited"
    case .found(let found, let target):
        "found select=\(select.map { $0.identity == found } ?? false) target=\(target.localName) \(target.withAttributeBuffer { $0.map(\.value) })"
    }
}

// MARK: Scripts

struct NestedAppends: SinkScript {
    func script<S: ProbedSink>(_ sink: inout S) -> [String] {
        sink.appendDoctype(name: "html", publicId: "", systemId: "")
        sink.insertComment("before html", into: sink.document, before: nil)
        var (html, body) = sink.skeleton()
        sink.mergeAttributes(attrs(["lang": "en"]), into: html)
        var div = sink.add("div", to: &body, .html, attrs(["id": "d", "class": "a b", "data-x": "1"]))
        sink.appendText("Hello", to: &div)
        sink.appendText(", world", to: &div)  // merges
        var b = sink.add("b", to: &div)
        sink.appendText("bold", to: &b)
        sink.appendText("after", to: &div)  // a new text after the element
        sink.appendComment(" c1 ", to: &div)
        sink.appendText("x", to: &div)  // a new text after the comment
        sink.appendText("", to: &div)
        sink.appendText("y", to: &div)
        var ul = sink.add("ul", to: &body)
        for i in 0..<3 {
            var li = sink.add("li", to: &ul)
            sink.appendText("item \(i)", to: &li)
            var inner = sink.add("span", to: &li)
            sink.add("i", to: &inner)
        }
        sink.insertComment("after html", into: sink.document, before: nil)
        sink.quirksMode = .limitedQuirks
        return [sink.dump(S.node(div)), "\(sink.quirksMode)", "\(sink.isDocument(sink.document))", "\(sink.isDocument(S.node(div)))"]
    }
}

struct Doctypes: SinkScript {
    let name: String, publicId: String, systemId: String
    func script<S: ProbedSink>(_ sink: inout S) -> [String] {
        sink.appendDoctype(name: name, publicId: publicId, systemId: systemId)
        sink.quirksMode = .quirks
        var (_, body) = sink.skeleton()
        sink.appendText("q", to: &body)
        return ["\(sink.quirksMode)"]
    }
}

/// Text appended as bytes (the tokenizer's path for the arena, whose text pool takes them), mixed
/// with text appended as strings: a run extended at the end of the pool, a run extended after
/// another text took the pool's end (it moves to its row's string), then strings and bytes again
/// on both. The class DOM takes the same calls through the protocol's default (a `String`).
struct PooledText: SinkScript {
    func script<S: ProbedSink>(_ sink: inout S) -> [String] {
        var (_, body) = sink.skeleton()
        func bytes(_ text: String, to parent: inout S.ElementRef, _ sink: inout S) {
            var text = text
            text.withUTF8 { sink.appendText(bytes: $0, to: &parent) }
        }
        var a = sink.add("p", to: &body)
        bytes("Grüße", to: &a, &sink)
        bytes(" aus", to: &a, &sink)  // extends the run at the pool's end
        var b = sink.add("p", to: &body)
        bytes("zwei", to: &b, &sink)  // a new run: now the pool's end
        bytes(" Köln", to: &a, &sink)  // not at the pool's end: moves to a string
        sink.appendText(" und", to: &a)  // a string onto that string
        bytes(" 😀", to: &a, &sink)
        sink.appendText(" drei", to: &b)  // a string onto the run at the pool's end
        bytes(" vier", to: &b, &sink)
        bytes("", to: &b, &sink)  // nothing
        var c = sink.add("i", to: &b)
        bytes("in <i> & \u{A0}", to: &c, &sink)
        bytes("nach", to: &b, &sink)  // a new text after the element
        let bodyNode = S.node(body), bNode = S.node(b)
        sink.insertText("+vor", into: bNode, before: S.node(c))  // merges into the pooled run before <i>
        sink.insertText("!", into: bodyNode, before: nil)
        return [sink.dump(bodyNode)]
    }
}

struct InsertedText: SinkScript {
    func script<S: ProbedSink>(_ sink: inout S) -> [String] {
        var (_, body) = sink.skeleton()
        sink.add("p", to: &body)
        var table = sink.add("table", to: &body)
        let bodyNode = S.node(body), tableNode = S.node(table)
        sink.insertText("foster1", into: bodyNode, before: tableNode)  // previous is <p>: a new text
        sink.insertText("+foster2", into: bodyNode, before: tableNode)  // merges
        sink.insertElement(sink.make("span"), into: bodyNode, before: tableNode)
        sink.insertText("t3", into: bodyNode, before: tableNode)  // previous is the span
        sink.insertComment("fostered comment", into: bodyNode, before: tableNode)
        sink.insertText("t4", into: bodyNode, before: tableNode)  // previous is the comment
        sink.insertText("end", into: bodyNode, before: nil)  // last is the table
        sink.insertText("+end2", into: bodyNode, before: nil)  // merges
        sink.insertElement(sink.make("tbody"), into: tableNode, before: nil)
        sink.appendText("in table", to: &table)
        sink.insertText("+inserted", into: tableNode, before: nil)  // merges with the appended text
        // Text before the first child: no previous sibling.
        var div = sink.add("div", to: &body)
        var first = sink.add("em", to: &div)
        sink.appendText("em", to: &first)
        sink.insertText("lead", into: S.node(div), before: S.node(first))
        sink.insertText("+more", into: S.node(div), before: S.node(first))
        sink.insertComment("first", into: S.node(div), before: nil)
        return [sink.dump(bodyNode)]
    }
}

struct Templates: SinkScript {
    func script<S: ProbedSink>(_ sink: inout S) -> [String] {
        var (html, body) = sink.skeleton()
        var template = sink.add("template", to: &body, .html, attrs(["id": "t"]))
        var log = ["\(template.hasTemplateContents)"]
        let contents = sink.templateContents(of: template)!
        let div = sink.make("div", .html, attrs(["z": "1", "a": "2"]))
        sink.insertElement(div, into: contents, before: nil)
        sink.insertText("in content", into: contents, before: nil)
        sink.insertText(" more", into: contents, before: nil)
        sink.insertComment("cc", into: contents, before: S.node(div))
        sink.appendText("child of the template itself", to: &template)
        // A template inside template contents, with contents of its own.
        let inner = sink.make("template")
        sink.insertElement(inner, into: contents, before: nil)
        let innerContents = sink.templateContents(of: inner)!
        sink.insertText("deep", into: innerContents, before: nil)
        sink.insertElement(sink.make("template"), into: innerContents, before: nil)  // empty contents
        log.append("\(sink.templateContents(of: div) == nil)")
        log.append("\(sink.parent(of: div).map { !sink.isDocument($0) } ?? false)")
        // Not HTML: no contents.
        var svg = sink.add("svg", to: &body, .svg)
        let svgTemplate = sink.add("template", to: &svg, .svg)
        log.append("\(svgTemplate.hasTemplateContents) \(sink.templateContents(of: svgTemplate) == nil)")
        // A template in the head.
        sink.insertElement(sink.make("template"), into: S.node(html), before: S.node(body))
        log.append(sink.dump(contents))
        return log
    }
}

struct MovingNodes: SinkScript {
    func script<S: ProbedSink>(_ sink: inout S) -> [String] {
        var (_, body) = sink.skeleton()
        var a = sink.add("div", to: &body, .html, attrs(["id": "a"]))
        var span1 = sink.add("span", to: &a, .html, attrs(["id": "1"]))
        sink.appendText("s1", to: &span1)
        sink.add("i", to: &span1)
        let span2 = sink.add("span", to: &a, .html, attrs(["id": "2"]))
        var b = sink.add("div", to: &body, .html, attrs(["id": "b"]))
        sink.appendText("bt", to: &b)
        let empty = sink.add("div", to: &body, .html, attrs(["id": "empty"]))
        var log: [String] = []

        sink.appendChild(span1, to: b)  // moves with its subtree
        log.append(sink.dump(sink.document))
        sink.insertElement(span2, into: S.node(b), before: S.node(span1))  // attached: moves
        sink.insertElement(span2, into: S.node(b), before: S.node(span2))  // before itself: nothing
        log.append(sink.dump(sink.document))
        sink.insertElement(a, into: S.node(body), before: nil)  // to the end
        sink.appendChild(span2, to: b)  // moves to the end of b
        sink.appendChild(span2, to: b)
        log.append(sink.dump(sink.document))
        sink.moveChildren(of: b, to: a)  // onto a (empty): spliced
        sink.moveChildren(of: b, to: a)  // nothing left
        sink.moveChildren(of: empty, to: a)  // nothing to move
        var c = sink.add("div", to: &body, .html, attrs(["id": "c"]))
        sink.appendText("c-first", to: &c)
        sink.moveChildren(of: a, to: c)  // after existing children
        log.append(sink.dump(sink.document))
        // Removing first, middle, last and detached elements.
        var list = sink.add("ol", to: &body)
        let items = (0..<5).map { i -> S.ElementRef in
            var li = sink.add("li", to: &list)
            sink.appendText("\(i)", to: &li)
            return li
        }
        sink.remove(items[0])
        sink.remove(items[2])
        sink.remove(items[4])
        sink.remove(items[4])  // detached: nothing
        log.append("\(sink.parent(of: items[2]) == nil) \(sink.parent(of: items[1]) != nil)")
        sink.appendText("tail", to: &list)  // after items[3]: a new text
        sink.appendChild(items[2], to: a)  // a removed element comes back
        sink.insertElement(items[0], into: S.node(list), before: S.node(items[3]))
        sink.remove(empty)
        // The root moves to the end of the document (after a comment).
        sink.insertComment("end", into: sink.document, before: nil)
        log.append(sink.dump(S.node(list)))
        return log
    }
}

struct MergingAttributes: SinkScript {
    func script<S: ProbedSink>(_ sink: inout S) -> [String] {
        let (html, body) = sink.skeleton()
        sink.mergeAttributes(attrs(["lang": "en"]), into: html)
        sink.mergeAttributes(attrs(["lang": "fr", "dir": "ltr", "dir": "rtl"]), into: html)
        sink.mergeAttributes([Attribute(name: "lang", value: "x", namespace: .xml),
                              Attribute(name: "space", value: "preserve", namespace: .xml)], into: html)
        sink.mergeAttributes(attrs(["class": "1", "class": "2", "onload": "x()"]), into: body)
        sink.mergeAttributes([Attribute(name: "onload", value: "y()"), Attribute(name: "class", value: "3")], into: body)
        sink.mergeAttributes([], into: body)
        return [html.attributeValue("lang") ?? "-", html.attributeValue("dir") ?? "-", html.attributeValue("space") ?? "-",
                "\(body.withAttributeBuffer { $0.map(\.name) })"]
    }
}

struct SelectedContent: SinkScript {
    func script<S: ProbedSink>(_ sink: inout S) -> [String] {
        var (_, body) = sink.skeleton()
        var select = sink.add("select", to: &body, .html, attrs(["id": "s"]))
        var button = sink.add("button", to: &select)
        var target = sink.add("selectedcontent", to: &button, .html, attrs(["id": "sc"]))
        sink.appendText("old", to: &target)
        var option1 = sink.add("option", to: &select, .html, attrs(["id": "o1"]))
        sink.appendText("One ", to: &option1)
        var bold = sink.add("b", to: &option1, .html, attrs(["class": "x"]))
        sink.appendText("bold", to: &bold)
        sink.appendComment("option comment", to: &option1)
        var template = sink.add("template", to: &option1)
        let contents = sink.templateContents(of: template)!
        let inContents = sink.make("span")
        sink.insertElement(inContents, into: contents, before: nil)
        sink.insertText("tc", into: contents, before: nil)
        let nested = sink.make("template")
        sink.insertElement(nested, into: contents, before: nil)
        sink.insertText("nested tc", into: sink.templateContents(of: nested)!, before: nil)
        sink.appendText("template child", to: &template)
        var svg = sink.add("svg", to: &option1, .svg)
        sink.add("circle", to: &svg, .svg, attrs(["r": "1"]))
        var option2 = sink.add("option", to: &select, .html, attrs(["id": "o2"]))
        sink.appendText("Two", to: &option2)

        var log: [String] = []
        var budget = 100
        let first = sink.findSelectedContent(for: option1, budget: &budget)
        log.append(describe(first, select: select) + " budget \(budget)")
        if case .found(_, let found) = first { sink.replaceChildren(of: found, withCopiesOfChildrenOf: option1) }
        log.append(sink.dump(S.node(target)))
        // Copying again replaces the copy.
        budget = 100
        if case .found(_, let found) = sink.findSelectedContent(for: option2, budget: &budget) {
            sink.replaceChildren(of: found, withCopiesOfChildrenOf: option2)
        }
        log.append("budget \(budget)")
        // Every budget around the walk's length: same result, same budget left.
        for start in -1...12 {
            var budget = start
            let result = sink.findSelectedContent(for: option2, budget: &budget)
            log.append("\(start): " + describe(result, select: select) + " left \(budget)")
        }
        // Not found: an option outside any select, a detached option, a select without one.
        var loose = sink.add("option", to: &body)
        var small = 10
        log.append(describe(sink.findSelectedContent(for: loose, budget: &small), select: select) + " \(small)")
        sink.appendText("loose", to: &loose)
        var detached = sink.make("option")
        log.append(describe(sink.findSelectedContent(for: detached, budget: &small), select: select) + " \(small)")
        sink.appendText("x", to: &detached)
        var bare = sink.add("select", to: &body)
        var bareDiv = sink.add("div", to: &bare)
        sink.add("span", to: &bareDiv)
        var bareOption = sink.add("option", to: &bareDiv)
        small = 10
        log.append(describe(sink.findSelectedContent(for: bareOption, budget: &small), select: bare) + " \(small)")
        small = 3  // limited within the descendants walk
        log.append(describe(sink.findSelectedContent(for: bareOption, budget: &small), select: bare) + " \(small)")
        // A <selectedcontent> in an SVG select does not count; its select is not HTML either.
        var svgSelect = sink.add("select", to: &body, .svg)
        sink.add("selectedcontent", to: &svgSelect, .svg)
        let svgOption = sink.add("option", to: &svgSelect)
        small = 10
        log.append(describe(sink.findSelectedContent(for: svgOption, budget: &small), select: select) + " \(small)")
        // The <selectedcontent> inside the option itself: the copy still ends, as the DOM's.
        var odd = sink.add("select", to: &body, .html, attrs(["id": "odd"]))
        var oddOption = sink.add("option", to: &odd)
        sink.appendText("A", to: &oddOption)
        var inner = sink.add("selectedcontent", to: &oddOption)
        sink.appendText("stale", to: &inner)
        sink.appendText("B", to: &oddOption)
        small = 100
        if case .found(_, let found) = sink.findSelectedContent(for: oddOption, budget: &small) {
            sink.replaceChildren(of: found, withCopiesOfChildrenOf: oddOption)
        }
        sink.appendText("z", to: &bareOption)
        return log
    }
}

struct ImportingContext: SinkScript {
    /// Which element of the caller's tree is the context.
    enum Case { case insideForm, theForm, noForm, svgInForm, template }
    let which: Case

    func script<S: ProbedSink>(_ sink: inout S) -> [String] {
        // The caller's class DOM: html > body > form#f > svg > form(svg) > foreignObject > div > p,
        // and a table with no form.
        let document = Document()
        let html = Element(localName: "html")
        document.appendChild(html)
        let body = Element(localName: "body")
        html.appendChild(body)
        let form = Element(localName: "form", attributes: attrs(["id": "f", "action": "/x"]))
        body.appendChild(form)
        let svg = Element(localName: "svg", namespace: .svg)
        form.appendChild(svg)
        let svgForm = Element(localName: "form", namespace: .svg, attributes: attrs(["id": "svg-form"]))
        svg.appendChild(svgForm)
        let foreign = Element(localName: "foreignObject", namespace: .svg)
        svgForm.appendChild(foreign)
        let div = Element(localName: "div")
        foreign.appendChild(div)
        let p = Element(localName: "p", attributes: attrs(["class": "ctx"]))
        div.appendChild(p)
        let table = Element(localName: "table")
        body.appendChild(table)
        let td = Element(localName: "td", attributes: attrs(["colspan": "2"]))
        table.appendChild(td)
        let template = Element(localName: "template")
        td.appendChild(template)

        let context: Element = switch which {
        case .insideForm: p
        case .theForm: form
        case .noForm: td
        case .svgInForm: foreign
        case .template: template
        }
        let imported = sink.importContext(context)
        func describe(_ element: S.ElementRef) -> String {
            "\(element.namespace) \(element.tag) \(element.localName) \(element.withAttributeBuffer { $0.map { "\($0.name)=\($0.value)" } }) \(element.hasTemplateContents)"
        }
        var log = [describe(imported.context)]
        if let formElement = imported.form {
            log.append("form: " + describe(formElement) + " same \(formElement.isSame(imported.context))")
        } else {
            log.append("no form")
        }
        // The builder then makes the root and works in the document.
        var root = sink.newElement(tag: .html, localName: "html", namespace: .html, attributes: [])
        sink.appendToDocument(root)
        sink.appendText("fragment", to: &root)
        _ = document
        return log
    }
}

struct ForeignAndUnknown: SinkScript {
    func script<S: ProbedSink>(_ sink: inout S) -> [String] {
        var (_, body) = sink.skeleton()
        var svg = sink.add("svg", to: &body, .svg, [
            Attribute(name: "viewBox", value: "0 0 1 1"),
            Attribute(name: "href", value: "#a", namespace: .xlink),
            Attribute(name: "lang", value: "en", namespace: .xml),
            Attribute(name: "xlink", value: "http://www.w3.org/1999/xlink", namespace: .xmlns),
            Attribute(name: "xmlns", value: "http://www.w3.org/2000/svg", namespace: .xmlns),
        ])
        var foreignObject = sink.add("foreignObject", to: &svg, .svg)
        sink.add("div", to: &foreignObject)
        var fancy = sink.add("fancyThing", to: &svg, .svg, attrs(["someAttr": "v"]))
        sink.appendText("in fancy", to: &fancy)
        var math = sink.add("math", to: &body, .mathml)
        var mi = sink.add("mi", to: &math, .mathml)
        sink.appendText("x", to: &mi)
        let annotation = sink.add("annotation-xml", to: &math, .mathml, attrs(["encoding": "text/html"]))
        var custom = sink.add("my-widget", to: &body, .html, attrs(["is": "x"]))
        sink.appendText("custom", to: &custom)
        let upper = sink.newElement(tag: .unknown, localName: "ABC", namespace: .html, attributes: [])
        sink.insertElement(upper, into: S.node(body), before: S.node(custom))
        let copied = sink.newElement(copying: fancy)
        sink.appendChild(copied, to: custom)
        let remade = sink.makeElement(copying: svg)
        sink.appendChild(remade, to: custom)
        return [svg, foreignObject, fancy, math, mi, annotation, custom, upper, copied, remade].map {
            "\($0.namespace) \($0.tag) \($0.localName) \($0.attributeValue("someAttr") ?? "-") \($0.attributeValue("href") ?? "-") \($0.isHTML(.svg))"
        }
    }
}

struct Handles: SinkScript {
    func script<S: ProbedSink>(_ sink: inout S) -> [String] {
        var (html, body) = sink.skeleton()
        let a = sink.add("a", to: &body, .html, attrs(["href": "/"]))
        let b = sink.add("b", to: &body)
        let copy = a  // another handle on the same element
        copy.stackCount = 2
        copy.formattingDigest = 0xDEAD_BEEF
        b.stackCount = -1
        b.formattingDigest = 7
        var log = ["\(a.stackCount) \(a.formattingDigest) \(b.stackCount) \(b.formattingDigest)"]
        log.append("\(a.isSame(copy)) \(a.isSame(b)) \(a.identity == copy.identity) \(html.isHTML(.html)) \(a.isHTML(in: [.a, .b]))")
        // Through a list read in place, as the builder's scans do (nil: a marker).
        let list: [S.ElementRef?] = [a, nil, b, html]
        list.withUnsafeBufferPointer { buffer in
            for i in 0..<buffer.count {
                guard let borrowed = S.ElementRef.borrowEntry(at: i, of: buffer) else { log.append("marker"); continue }
                S.ElementRef.withBorrowed(borrowed) { element in
                    element.stackCount += 1
                    log.append("\(element.localName) \(element.stackCount) \(element.formattingDigest) \(element.isSame(a))")
                }
            }
        }
        log.append("\(a.stackCount) \(b.stackCount) \(html.stackCount)")
        sink.appendText("\(a.stackCount)", to: &body)
        return log
    }
}

/// A chain of `depth` nested `<div>`s in the body, text at the bottom, then a `<select>` test at
/// the bottom.
struct Chain: SinkScript {
    let depth: Int
    func script<S: ProbedSink>(_ sink: inout S) -> [String] {
        var (_, body) = sink.skeleton()
        var select = sink.add("select", to: &body)
        sink.add("selectedcontent", to: &select)
        var current = sink.add("option", to: &select)
        let option = current
        for i in 0..<depth {
            current = sink.add(i % 2 == 0 ? "div" : "span", to: &current)
        }
        sink.appendText("bottom", to: &current)
        var budget = Int.max / 2
        if case .found(_, let target) = sink.findSelectedContent(for: option, budget: &budget) {
            sink.replaceChildren(of: target, withCopiesOfChildrenOf: option)
        }
        var small = depth / 2
        let bottomOption = sink.add("option", to: &current)
        let result = sink.findSelectedContent(for: bottomOption, budget: &small)
        return [describe(result, select: select), "\(small)"]
    }
}

/// A random sequence of every kind of sink call (never one that would make a cycle, which the
/// builder never makes either), logging what the reads return and every element's subtree at
/// the end (detached ones too).
struct RandomScript: SinkScript {
    let seed: UInt64
    let steps: Int

    /// `true` if `node` is `element` or inside it (through template contents too).
    func isInside<S: ProbedSink>(_ node: S.NodeRef, _ element: S.ElementRef, _ sink: S, _ elements: [S.ElementRef]) -> Bool {
        var current: S.NodeRef? = node
        while let c = current {
            if sink.same(c, S.node(element)) { return true }
            if let parent = sink.parentNode(c) { current = parent; continue }
            // A root: if it is a template's contents, go on from the template.
            current = elements.first { sink.templateContents(of: $0).map { sink.same($0, c) } ?? false }.map { S.node($0) }
        }
        return false
    }

    func script<S: ProbedSink>(_ sink: inout S) -> [String] {
        var random = SplitMix64(seed: seed)
        let names: [(String, Namespace)] = [("div", .html), ("span", .html), ("template", .html), ("p", .html), ("b", .html),
                                            ("svg", .svg), ("template", .svg), ("my-x", .html), ("select", .html),
                                            ("option", .html), ("selectedcontent", .html), ("mi", .mathml)]
        var log: [String] = []
        var elements: [S.ElementRef] = []
        var copies = 0
        func newElement(_ sink: inout S, _ random: inout SplitMix64) -> S.ElementRef {
            let (name, namespace) = names.randomElement(using: &random)!
            let count = Int.random(in: 0...2, using: &random)
            let attributes = (0..<count).map { Attribute(name: ["a", "b", "c"][$0], value: "\(Int.random(in: 0..<9, using: &random))") }
            let element = sink.make(name, namespace, attributes)
            elements.append(element)
            return element
        }
        /// The document, an element, or a template's contents.
        func someParent(_ sink: S, _ random: inout SplitMix64, allowDocument: Bool) -> S.NodeRef {
            let element = elements.randomElement(using: &random)!
            if let contents = sink.templateContents(of: element), Bool.random(using: &random) { return contents }
            if allowDocument && Int.random(in: 0..<10, using: &random) == 0 { return sink.document }
            return S.node(element)
        }
        func someChild(of parent: S.NodeRef, _ sink: S, _ random: inout SplitMix64) -> S.NodeRef? {
            let children = sink.children(of: parent)
            let pick = Int.random(in: 0...children.count, using: &random)
            return pick == children.count ? nil : children[pick]
        }

        var root = newElement(&sink, &random)
        sink.appendToDocument(root)
        sink.appendText("root", to: &root)
        for step in 0..<steps {
            var target = elements.randomElement(using: &random)!
            switch Int.random(in: 0..<15, using: &random) {
            case 0, 1:
                sink.appendElement(newElement(&sink, &random), to: &target)
            case 2:
                let parent = someParent(sink, &random, allowDocument: true)
                let before = someChild(of: parent, sink, &random)
                sink.insertElement(newElement(&sink, &random), into: parent, before: before)
            case 3:
                sink.appendText("t\(step)", to: &target)
            case 4:
                let parent = someParent(sink, &random, allowDocument: false)
                let before = someChild(of: parent, sink, &random)
                sink.insertText("i\(step)", into: parent, before: before)
            case 5:
                if Bool.random(using: &random) {
                    sink.appendComment("c\(step)", to: &target)
                } else {
                    let parent = someParent(sink, &random, allowDocument: true)
                    sink.insertComment("ic\(step)", into: parent, before: someChild(of: parent, sink, &random))
                }
            case 6:
                let parent = elements.randomElement(using: &random)!
                if !isInside(S.node(parent), target, sink, elements) { sink.appendChild(target, to: parent) }
            case 7:
                let parent = someParent(sink, &random, allowDocument: true)
                let before = someChild(of: parent, sink, &random)
                if !isInside(parent, target, sink, elements) { sink.insertElement(target, into: parent, before: before) }
            case 8:
                let newParent = elements.randomElement(using: &random)!
                if !isInside(S.node(newParent), target, sink, elements) { sink.moveChildren(of: target, to: newParent) }
            case 9:
                sink.remove(target)
            case 10:
                let count = Int.random(in: 0...3, using: &random)
                let attributes = (0..<count).map { Attribute(name: ["a", "b", "d"].randomElement(using: &random)!, value: "m\(step)\($0)") }
                sink.mergeAttributes(attributes, into: target)
                log.append("\(target.withAttributeBuffer { $0.map(\.name) })")
            case 11:
                var budget = Int.random(in: -1...20, using: &random)
                let result = sink.findSelectedContent(for: target, budget: &budget)
                log.append("\(step): \(describe(result, select: nil)) \(budget)")
                if case .found(_, let found) = result, copies < 6 {
                    copies += 1
                    sink.replaceChildren(of: found, withCopiesOfChildrenOf: target)
                }
            case 12:
                let copy = Bool.random(using: &random) ? sink.newElement(copying: target) : sink.makeElement(copying: target)
                elements.append(copy)
                if let parent = sink.parent(of: target) { sink.insertElement(copy, into: parent, before: S.node(target)) }
            case 13:
                target.stackCount &+= 1
                target.formattingDigest = UInt32(truncatingIfNeeded: step)
            default:
                if Int.random(in: 0..<4, using: &random) == 0 { sink.appendToDocument(target) }
                log.append("\(sink.parent(of: target) == nil) \(sink.templateContents(of: target) == nil)")
            }
        }
        for element in elements {
            log.append("\(element.localName) \(element.stackCount) \(element.formattingDigest) \(sink.parent(of: element) == nil)")
            log.append(sink.dump(S.node(element)))
            if let contents = sink.templateContents(of: element) { log.append(sink.dump(contents)) }
        }
        return log
    }
}

// MARK: Tests

@Suite struct HTMLTreeTests {
    @Test func rowIsOneCacheLine() {
        #expect(MemoryLayout<HTMLTree.Row>.stride == 64)
        #expect(MemoryLayout<ArenaElement?>.size == MemoryLayout<Int>.size)
    }

    @Test func nestedAppendsTextMergingAndComments() {
        let (dump, log) = expectSameTrees(NestedAppends())
        // Hand-checked: the merged and the separate texts.
        #expect(dump.contains("|       \"Hello, world\"\n|       <b>\n|         \"bold\"\n|       \"after\"\n|       <!--  c1  -->\n|       \"xy\"\n"))
        #expect(dump.hasPrefix("| <!DOCTYPE html>\n| <!-- before html -->\n| <html>\n|   lang=\"en\"\n"))
        #expect(log[1] == "limitedQuirks" && log[2] == "true" && log[3] == "false")
    }

    @Test(arguments: [("html", "", ""), ("html", "-//W3C//DTD HTML 4.01//EN", ""),
                      ("svg", "", "http://www.w3.org/TR/html4/strict.dtd"), ("", "", "")])
    func doctypesAndQuirks(name: String, publicId: String, systemId: String) {
        let (dump, log) = expectSameTrees(Doctypes(name: name, publicId: publicId, systemId: systemId))
        #expect(dump.hasPrefix(publicId.isEmpty && systemId.isEmpty ? "| <!DOCTYPE \(name)>\n" : "| <!DOCTYPE \(name) \"\(publicId)\" \"\(systemId)\">\n"))
        #expect(log == ["quirks"])
    }

    @Test func insertedTextMergesWithThePreviousText() {
        let (dump, _) = expectSameTrees(InsertedText())
        #expect(dump.contains("|     <p>\n|     \"foster1+foster2\"\n|     <span>\n|     \"t3\"\n|     <!-- fostered comment -->\n|     \"t4\"\n|     <table>\n"))
        #expect(dump.contains("\"lead+more\""))
    }

    @Test func textAsBytesPoolsAndMerges() {
        let (dump, _) = expectSameTrees(PooledText())
        #expect(dump.contains("\"Grüße aus Köln und 😀\""))
        #expect(dump.contains("\"zwei drei vier+vor\""))
        #expect(dump.contains("\"in <i> & \u{A0}\""))
        #expect(dump.contains("\"nach\"") && dump.hasSuffix("\"!\"\n"))
        // And the parser's own use of the pool: every text of a parse comes from it or from a
        // string, and reads back as the class DOM's text.
        let html = "<p>a&amp;b<b>c</b>d<table>e<tr><td>f</td></tr></table><pre>\ng</pre><textarea>\nh</textarea><style>i{}</style>"
        let arena = try! HTML5Parser.parseTree(html)
        let dom = try! HTML5Parser.parseDocument(html)
        #expect(arena.tree.html5libTreeDump() == dom.root.html5libTreeDump)
        #expect(arena.tree.textPool.count > 0)
    }

    /// The public read API (`HTMLNode`) walks the same tree as the class DOM: node for node in
    /// document order, the same kind, names, attributes, data, text content, child counts and
    /// parent links; handles compare and hash by tree and row; serialization and the
    /// materialized tree are the class DOM's.
    @Test(arguments: [
        "<!DOCTYPE html><html lang=en><head><title>T &amp; t</title><style>p{}</style></head><body><p class=a id=b>Hi <b>there</b>&nbsp;!</p><!-- c --><table><tr><td>1<td>2</table><template><i>in</i></template><svg viewBox='0 0 1 1'><foreignObject><p>f</p></foreignObject></svg><math><mi xlink:href=x>m</mi></math><pre>\n\nx</pre>",
        "<p>a<b>b<i>c</b>d</i>e</p><ul><li>1<li>2</ul><select><option>o</select>text at the end",
    ])
    func publicReadAPIMatchesTheClassDOM(html: String) throws {
        let result = try HTML5Parser.parseTree(html)
        let document = try HTML5Parser.parseDocument(html).root
        #expect(result.root == result.tree.document && result.root.kind == .document)
        var arenaNodes = Array(result.root.descendants)
        var classNodes = Array(document.descendants)
        #expect(arenaNodes.count == classNodes.count && arenaNodes.count > 10)
        arenaNodes = Array(arenaNodes.prefix(classNodes.count)); classNodes = Array(classNodes.prefix(arenaNodes.count))
        for (node, reference) in zip(arenaNodes, classNodes) {
            #expect(node.textContent == reference.textContent)
            #expect(node.children.map(\.index) == Array(node.children).map(\.index))
            #expect(Array(node.children).count == Array(reference.children).count)
            for child in node.children { #expect(child.parent == node) }
            #expect(node.firstChild?.previousSibling == nil && node.lastChild?.nextSibling == nil)
            #expect(result.tree.node(node.index) == node)
            switch reference {
            case let element as Element:
                #expect(node.kind == .element && node.isElement)
                #expect(node.localName == element.localName && node.namespace == element.namespace && node.tag == element.tag)
                #expect(node.attributes == element.attributes)
                for attribute in element.attributes where attribute.namespace == nil { #expect(node.attribute(attribute.name) == attribute.value) }
                #expect(node.attribute("no-such-attribute") == nil)
                #expect(node.isHTML(element.tag) == element.isHTML(element.tag))
                #expect((node.templateContents != nil) == (element.templateContent != nil))
                if let contents = node.templateContents, let classContents = element.templateContent {
                    #expect(contents.kind == .fragment && contents.innerHTML == classContents.innerHTML)
                }
                #expect(node.innerHTML == element.innerHTML)
            case let text as Text:
                #expect(node.kind == .text && node.data == text.data && !node.isElement)
            case let comment as HTML5.Comment:
                #expect(node.kind == .comment && node.data == comment.data)
            case let doctype as DocumentType:
                #expect(node.kind == .doctype && node.doctype?.name == doctype.name)
            default:
                Issue.record("unexpected class node \(reference)")
            }
        }
        // Identity: equal handles, equal hashes; another tree's row 0 is another node.
        let again = try HTML5Parser.parseTree(html)
        #expect(Set(arenaNodes).count == arenaNodes.count)
        #expect(result.tree.document != again.tree.document && result.tree.document == result.root)
        #expect(result.tree.node(-1) == nil && result.tree.node(Int32(result.tree.count)) == nil)
        #expect(result.root.materialize().html5libTreeDump == document.html5libTreeDump)
        #expect(result.root.html5libTreeDump == result.html5libTreeDump && result.innerHTML == document.innerHTML)
        // A fragment's root is its `<html>` holder, as the class parser's.
        let fragment = try HTML5Parser.parseTreeFragment("<td>x</td>y", context: Element(localName: "tr"))
        let classFragment = try HTML5Parser.parseFragment("<td>x</td>y", context: Element(localName: "tr")).root
        #expect(fragment.root.isHTML(.html) && fragment.root.innerHTML == classFragment.innerHTML)
        #expect(fragment.root.textContent == classFragment.textContent)
    }

    /// Walking a 100 000-deep tree through the public API (descendants, text content, parent
    /// links) recurses nowhere.
    @Test func publicReadAPIWalksADeepTree() throws {
        var options = HTML5ParserOptions()
        options.maxNestingDepth = 200_000
        let html = String(repeating: "<div>", count: 100_000) + "deep" + String(repeating: "</div>", count: 100_000)
        let result = try HTML5Parser.parseTree(html, options: options)
        var depth = 0, deepest: HTMLNode? = nil
        for node in result.root.descendants where node.kind == .text { deepest = node }
        #expect(deepest?.data == "deep")
        var up = deepest
        while let node = up?.parent { depth += 1; up = node }
        #expect(depth >= 100_000)
        #expect(result.root.textContent == "deep")
        #expect(result.root.descendants.reduce(0) { count, _ in count + 1 } >= 100_003)
    }

    @Test func templatesHaveContents() {
        let (dump, log) = expectSameTrees(Templates())
        #expect(dump.contains("|     <template>\n|       id=\"t\"\n|       content\n|         <!-- cc -->\n|         <div>\n|           a=\"2\"\n|           z=\"1\"\n|         \"in content more\"\n"))
        #expect(log[0] == "true" && log[1] == "true" && log[2] == "true" && log[3] == "false true")
    }

    @Test func movingAttachedElements() { expectSameTrees(MovingNodes()) }

    @Test func mergingAttributes() {
        let (_, log) = expectSameTrees(MergingAttributes())
        #expect(log == ["en", "ltr", "-", "[\"class\", \"onload\"]"])
    }

    @Test func selectedContentFindAndCopy() {
        let (_, log) = expectSameTrees(SelectedContent())
        #expect(log[0].hasPrefix("found select=true target=selectedcontent [\"sc\"]"))
        #expect(log.contains { $0.hasPrefix("-1: limited") })
        #expect(log.contains { $0.hasPrefix("12: found") })
        #expect(log.contains { $0.hasPrefix("notFound") })
    }

    @Test(arguments: [ImportingContext.Case.insideForm, .theForm, .noForm, .svgInForm, .template])
    func importingTheContext(_ which: ImportingContext.Case) {
        let (_, log) = expectSameTrees(ImportingContext(which: which))
        switch which {
        case .insideForm, .svgInForm: #expect(log[1].hasPrefix("form: html form form [\"id=f\", \"action=/x\"] false same false"))
        case .theForm: #expect(log[1].hasSuffix("same true"))
        case .noForm: #expect(log[1] == "no form")
        case .template: #expect(log[0].hasSuffix("true"))
        }
        // The arena's context and form are detached rows.
        var arena = ArenaSink()
        let body = Element(localName: "body")
        let form = Element(localName: "form")
        body.appendChild(form)
        let p = Element(localName: "p")
        form.appendChild(p)
        let imported = arena.importContext(p)
        #expect(arena.parent(of: imported.context) == nil)
        #expect(imported.form.map { arena.parent(of: $0) == nil && !$0.isSame(imported.context) } == true)
    }

    @Test func foreignNamespacesAndUnknownNames() {
        let (dump, log) = expectSameTrees(ForeignAndUnknown())
        #expect(dump.contains("|     <svg svg>\n|       viewBox=\"0 0 1 1\"\n|       xlink href=\"#a\"\n|       xml lang=\"en\"\n|       xmlns xlink="))
        #expect(log.contains("svg unknown fancyThing v - false"))
        #expect(log.contains("html unknown ABC - - false"))
    }

    @Test func stackCountAndDigestThroughHandles() {
        let (_, log) = expectSameTrees(Handles())
        #expect(log[0] == "2 3735928559 -1 7")
        #expect(log.last == "3 0 1")
    }

    @Test func chainDifferential() {
        let (_, log) = expectSameTrees(Chain(depth: 2_000))
        #expect(log == ["limited", "-1"])
    }

    /// 100 000 levels: building, the `<selectedcontent>` walks and copy, materializing and
    /// freeing must not recurse. The full html5lib dump of such a tree is quadratic in the depth
    /// (~10 GB of indentation), so the dump is taken of the bottom 1 000 levels (the same
    /// iterative walk) and compared with the materialized subtree's.
    @Test func hundredThousandDeepChain() {
        let depth = 100_000
        var arena = ArenaSink()
        let log = Chain(depth: depth).script(&arena)
        #expect(log == ["limited", "-1"])
        let tree = arena.tree
        // The deepest element of the original chain and of the copy.
        var deepest: [Int32] = []
        for index in 0..<Int32(tree.count) where tree.text(index) == "bottom" { deepest.append(tree.parent(index)!) }
        #expect(deepest.count == 2)
        for bottom in deepest {
            var node = bottom
            for _ in 0..<1_000 { node = tree.parent(node)! }
            let dump = tree.html5libTreeDump(of: node)
            #expect(dump.split(separator: "\n").count == 1_000 + 1 + (bottom == deepest[0] ? 1 : 0))
            #expect(tree.materialize(node).html5libTreeDump == dump)
            var levels = 0
            var up: Int32? = bottom
            while let u = up { levels += 1; up = tree.parent(u) }
            #expect(levels > depth)
        }
        expectConsistentLinks(tree)
        // Materialized, walked and freed (the class DOM frees deep trees with its worklist).
        do {
            let document = tree.materialize()
            var levels = 0
            var node: Node? = document
            while let n = node { levels += 1; node = n.lastChild }
            #expect(levels > depth)
        }
    }

    /// 100 000 nested templates, each in the previous one's contents: dump (of the bottom),
    /// deep copy, materialize and free without recursion.
    @Test func hundredThousandNestedTemplates() {
        let depth = 100_000
        var sink = ArenaSink()
        var (_, body) = sink.skeleton()
        var select = sink.add("select", to: &body)
        let target = sink.add("selectedcontent", to: &select)
        var option = sink.add("option", to: &select)
        var template = sink.add("template", to: &option)
        for _ in 1..<depth {
            let inner = sink.make("template")
            sink.insertElement(inner, into: sink.templateContents(of: template)!, before: nil)
            template = inner
        }
        sink.insertText("bottom", into: sink.templateContents(of: template)!, before: nil)
        let before = sink.tree.count
        var budget = 100
        guard case .found(_, let found) = sink.findSelectedContent(for: option, budget: &budget) else {
            Issue.record("no selectedcontent")
            return
        }
        #expect(found.isSame(target))
        sink.replaceChildren(of: found, withCopiesOfChildrenOf: option)
        #expect(sink.tree.count == before + 2 * depth + 1)  // a template and its contents per level, the text
        expectConsistentLinks(sink.tree)
        let tail = sink.tree.html5libTreeDump(of: sink.templateContents(of: template)!)
        #expect(tail == "| \"bottom\"\n")
        // Walk the copy down through the contents.
        var levels = 0
        var node = sink.tree.firstChild(found.index)
        while let n = node, let contents = sink.tree.templateContents(n) { levels += 1; node = sink.tree.firstChild(contents) }
        #expect(levels == depth)
        #expect(node.flatMap { sink.tree.text($0) } == "bottom")
        do {
            let document = sink.tree.materialize()
            #expect(document.documentElement?.localName == "html")
        }
    }

    @Test(arguments: 1...40)
    func randomScripts(seed: Int) {
        expectSameTrees(RandomScript(seed: UInt64(seed), steps: 400))
    }

    @Test func readAPI() {
        var sink = ArenaSink()
        sink.appendDoctype(name: "html", publicId: "p", systemId: "s")
        var (html, body) = sink.skeleton()
        sink.appendText("t", to: &body)
        sink.appendComment("c", to: &body)
        let tree = sink.tree
        #expect(tree.kind(0) == .document && tree.parent(0) == nil)
        #expect(tree.kind(1) == .doctype)
        let doctype = tree.doctype(1)
        #expect(doctype?.name == "html" && doctype?.publicId == "p" && doctype?.systemId == "s")
        #expect(tree.doctype(0) == nil && tree.text(1) == nil)
        #expect(tree.localName(html.index) == "html" && tree.tag(html.index) == .html && tree.namespace(html.index) == .html)
        #expect(tree.text(tree.firstChild(body.index)!) == "t")
        #expect(tree.text(tree.lastChild(body.index)!) == "c" && tree.kind(tree.lastChild(body.index)!) == .comment)
        #expect(tree.localName(tree.firstChild(body.index)!) == "")
        #expect(tree.attributes(html.index).isEmpty)
        #expect(tree.element(body.index)?.isSame(body) == true && tree.element(1) == nil)
        #expect(tree.count == 7)
    }
}
