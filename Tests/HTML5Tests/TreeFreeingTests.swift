import Testing
@testable import HTML5

/// Freeing a tree (Node.deinit's worklist) must leave any subtree that someone still holds intact
/// and detached, and must not recurse (deep trees are covered in HTML5ParserTests).
@Suite struct TreeFreeingTests {
    @Test func heldSubtreesSurviveTheirDocument() throws {
        var held: [Element] = []
        do {
            let html = "<div id=a><p>one<b>two</b></p><ul><li>x</li><li>y<i>z</i></li></ul></div><table><tr><td>cell</td></tr></table>"
            let document = try HTML5Parser.parseDocument(html).root
            for case let element as Element in document.descendants where ["p", "ul", "td"].contains(element.localName) {
                held.append(element)
            }
        }  // the document is freed here; the held elements are not
        #expect(held.map(\.localName) == ["p", "ul", "td"])
        for element in held {
            #expect(element.parent == nil && element.previousSibling == nil && element.nextSibling == nil)
        }
        #expect(held[0].outerHTML == "<p>one<b>two</b></p>")
        #expect(held[1].outerHTML == "<ul><li>x</li><li>y<i>z</i></li></ul>")
        #expect(held[2].outerHTML == "<td>cell</td>")
        #expect(held[1].lastChild?.lastChild?.parent === held[1].lastChild)
    }

    @Test func wideAndDeepTreesAreFreed() throws {
        // Many siblings with children at every level: the worklist holds each level's inner
        // nodes, then moves on.
        let row = String(repeating: "<span><i>x</i></span>", count: 200)
        let html = String(repeating: "<div>" + row, count: 300)
        for _ in 0..<3 {
            let result = try HTML5Parser.parseDocument(html)
            #expect(result.root.textContent.count == 200 * 300)
        }
    }

    // Freeing recurses for shallow subtrees and skips the link stores for nodes nobody else
    // holds; the tests below hold nodes at every kind of place that touches and check that the
    // held node comes out detached (no stale link into freed memory) with its subtree intact.

    /// Every link inside `root`'s subtree (template contents included) agrees with its
    /// neighbours': parent, first/last child, next/previous sibling.
    func expectConsistentLinks(_ root: Node, sourceLocation: SourceLocation = #_sourceLocation) {
        var stack = [root]
        while let node = stack.popLast() {
            var previous: Node?
            var child = node.firstChild
            while let current = child {
                #expect(current.parent === node, sourceLocation: sourceLocation)
                #expect(current.previousSibling === previous, sourceLocation: sourceLocation)
                stack.append(current)
                previous = current
                child = current.nextSibling
            }
            #expect(node.lastChild === previous, sourceLocation: sourceLocation)
            if let content = (node as? Element)?.templateContent {
                #expect(content.parent == nil && content.nextSibling == nil, sourceLocation: sourceLocation)
                stack.append(content)
            }
        }
    }

    /// `count` templates from `root` down, each in the content of the one before: `place` puts
    /// each level's template (and whatever goes around it) into that level's parent. Returns the
    /// innermost template's content.
    @discardableResult
    static func nestTemplates(_ count: Int, under root: Node, _ place: (_ level: Int, _ parent: Node, _ template: Element) -> Void) -> Node {
        var parent = root
        for level in 0..<count {
            let template = Element(localName: "template")
            place(level, parent, template)
            parent = template.templateContent!
        }
        return parent
    }

    func expectDetached(_ node: Node, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(node.parent == nil, sourceLocation: sourceLocation)
        #expect(node.previousSibling == nil, sourceLocation: sourceLocation)
        #expect(node.nextSibling == nil, sourceLocation: sourceLocation)
        expectConsistentLinks(node, sourceLocation: sourceLocation)
    }

    @Test func heldFirstMiddleAndLastChildrenSurviveTheirSiblingsAndParent() throws {
        let html = "<div><p>1<b>a</b></p><p>2<i>b</i></p><p>3<u>c</u></p><p>4</p></div>"
        for position in 0..<4 {
            var held: Element?
            do {
                let document = try HTML5Parser.parseDocument(html).root
                let paragraphs = document.descendants.compactMap { $0 as? Element }.filter { $0.localName == "p" }
                held = paragraphs[position]
            }
            let element = try #require(held)
            expectDetached(element)
            #expect(element.outerHTML == ["<p>1<b>a</b></p>", "<p>2<i>b</i></p>", "<p>3<u>c</u></p>", "<p>4</p>"][position])
        }
        // Leaves too (text), first and last of their parent.
        var texts: [Node] = []
        do {
            let document = try HTML5Parser.parseDocument("<p>x<b>y</b>z</p>").root
            for node in document.descendants where node is Text { texts.append(node) }
        }
        #expect(texts.map { ($0 as! Text).data } == ["x", "y", "z"])
        for text in texts { expectDetached(text) }
    }

    @Test func heldNodesAtAndBeyondTheRecursionLimitSurvive() throws {
        // A chain of 300 nested elements, each followed by a text sibling: the walk recurses for
        // the top levels and uses its worklist below. Hold one node above, at or below the limit.
        let depth = 300
        for heldDepth in [1, 2, 31, 32, 33, 34, 64, 65, 150, 299, 300] {
            var held: Element?
            do {
                let root = DocumentFragment()
                var parent: Node = root
                for level in 1...depth {
                    let element = Element(localName: "div")
                    element.setAttribute("id", String(level))
                    parent.appendChild(element)
                    parent.appendChild(Text("after \(level)"))
                    if level == heldDepth { held = element }
                    parent = element
                }
            }
            let element = try #require(held)
            expectDetached(element)
            // Intact down to the bottom of the chain.
            var node: Node? = element
            var level = heldDepth
            while let current = node as? Element {
                #expect(current.attribute("id") == String(level))
                if level < depth {
                    #expect((current.lastChild as? Text)?.data == "after \(level + 1)")
                } else {
                    #expect(current.firstChild == nil)
                }
                node = current.firstChild
                level += 1
            }
            #expect(level == depth + 1)
        }
    }

    @Test func heldNodeDeepInsideAHundredThousandDeepTreeSurvives() throws {
        var options = HTML5ParserOptions()
        options.maxNestingDepth = .max
        options.recordParseErrors = false
        var held: Element?
        do {
            let result = try HTML5Parser.parseDocument(String(repeating: "<span>", count: 50_000) + "<b>x<i>y</i></b>" + String(repeating: "<span>", count: 50_000), options: options)
            held = result.root.descendants.compactMap { $0 as? Element }.first { $0.localName == "b" }
        }
        let bold = try #require(held)
        expectDetached(bold)
        #expect(bold.textContent == "xy")
        #expect(bold.lastChild?.parent === bold)
    }

    @Test func heldTemplateContentSurvivesItsTemplate() throws {
        let html = "<div><template><p>a<b>b</b></p><template><i>c</i></template></template><span>d</span></div>"
        // A template held: it keeps its content. A node held inside a content fragment.
        var heldTemplate: Element?
        var heldInside: Element?
        do {
            // The content fragment held, without its template.
            var heldContent: DocumentFragment?
            do {
                let document = try HTML5Parser.parseDocument(html).root
                let outer = try #require(document.descendants.compactMap { $0 as? Element }.first { $0.localName == "template" })
                heldContent = outer.templateContent
                heldTemplate = try #require(outer.templateContent?.lastChild as? Element)
                heldInside = try #require(outer.templateContent?.firstChild as? Element)
            }
            // The fragment outlived its template whole: the nodes held inside it are still its
            // children.
            let content = try #require(heldContent)
            expectDetached(content)
            #expect(content.firstChild === heldInside && content.lastChild === heldTemplate)
            #expect(content.innerHTML == "<p>a<b>b</b></p><template><i>c</i></template>")
        }  // the fragment is freed here: the nodes held inside come out detached and whole
        let template = try #require(heldTemplate)
        expectDetached(template)
        #expect(template.outerHTML == "<template><i>c</i></template>")
        let inside = try #require(heldInside)
        expectDetached(inside)
        #expect(inside.outerHTML == "<p>a<b>b</b></p>")
    }

    @Test func heldTemplateDeepInsideAFreedTreeKeepsItsContent() throws {
        // Templates nested in templates' contents; hold one in the middle: everything above it is
        // freed, it and its content (with the templates below) survive.
        var held: Element?
        do {
            let root = DocumentFragment()
            Self.nestTemplates(100, under: root) { level, parent, template in
                template.setAttribute("id", String(level))
                parent.appendChild(Text("before"))
                parent.appendChild(template)
                parent.appendChild(Text("after"))
                if level == 50 { held = template }
            }
        }
        let template = try #require(held)
        expectDetached(template)
        var level = 50
        var current: Element? = template
        while let element = current {
            #expect(element.attribute("id") == String(level))
            level += 1
            current = element.templateContent?.firstChild?.nextSibling as? Element
        }
        #expect(level == 100)
    }

    @Test func contentInsideFreedTemplatesIsFreedAndHeldPartsSurvive() throws {
        // Templates whose content is freed with them (through the walk, not their own deinit),
        // with a node held deep inside the content of the innermost one.
        var held: Element?
        do {
            let root = DocumentFragment()
            Self.nestTemplates(100, under: root) { level, parent, template in
                parent.appendChild(template)
                parent.appendChild(Text("after"))
                if level == 99 {
                    let content = template.templateContent!
                    let kept = Element(localName: "em")
                    kept.appendChild(Text("kept"))
                    content.appendChild(Element(localName: "br"))
                    content.appendChild(kept)
                    content.appendChild(Element(localName: "br"))
                    held = kept
                }
            }
        }
        let kept = try #require(held)
        expectDetached(kept)
        #expect(kept.outerHTML == "<em>kept</em>")
    }

    @Test func aHundredThousandNestedTemplatesAreFreedWithoutStackOverflow() {
        // Each template's content holds the next template: the walk takes the contents over,
        // so the nesting is not a recursion through the templates' own deinits.
        do {
            let root = DocumentFragment()
            Self.nestTemplates(100_000, under: root) { _, parent, template in parent.appendChild(template) }
        }
    }

    @Test func nodeMovedToAnotherTreeSurvivesTheFirstTree() throws {
        let second = try HTML5Parser.parseFragment("<ol><li>1</li></ol>", contextName: "body").root
        do {
            let first = try HTML5Parser.parseDocument("<div><p>x<b>y</b></p><p>moved<i>z</i></p><p>w</p></div>").root
            let moved = try #require(first.descendants.compactMap { $0 as? Element }.filter { $0.localName == "p" }.dropFirst().first)
            let list = try #require(second.firstChild as? Element)
            list.appendChild(moved)
            expectConsistentLinks(first)
        }  // the first tree is freed here
        expectConsistentLinks(second)
        #expect(second.innerHTML == "<ol><li>1</li><p>moved<i>z</i></p></ol>")
        let moved = try #require(second.firstChild?.lastChild)
        #expect(moved.parent === second.firstChild && moved.previousSibling === second.firstChild?.firstChild)
    }
}
