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
}
