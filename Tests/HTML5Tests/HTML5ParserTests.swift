import Foundation
import Testing
@testable import HTML5

@Suite struct HTML5ParserTests {
    func body(_ html: String, scripting: Bool = false) throws -> Element {
        let document = try HTML5Parser.parseDocument(html, options: HTML5ParserOptions(scripting: scripting)).root
        return document.documentElement!.childElements.first { $0.localName == "body" }!
    }

    // MARK: Scripting flag

    @Test func noscriptIsMarkupWhenScriptingIsOff() throws {
        let body = try body("<p>text</p><noscript><img src=x onerror=alert(1)></noscript>")
        let noscript = body.lastChild as! Element
        #expect(noscript.localName == "noscript")
        let img = noscript.firstChild as? Element
        #expect(img?.localName == "img")
        #expect(img?[attribute: "onerror"] == "alert(1)")
    }

    @Test func noscriptIsRawTextWhenScriptingIsOn() throws {
        let body = try body("<p>text</p><noscript><img src=x onerror=alert(1)></noscript>", scripting: true)
        let noscript = body.lastChild as! Element
        #expect((noscript.firstChild as? Text)?.data == "<img src=x onerror=alert(1)>")
    }

    // MARK: Limits

    @Test func oversizedInputIsRejectedWithTypedError() {
        var options = HTML5ParserOptions()
        options.maxInputBytes = 1000
        #expect(throws: HTML5Error.inputTooLarge(size: 2000, limit: 1000)) {
            _ = try HTML5Parser.parseDocument([UInt8](repeating: 0x61, count: 2000), options: options)
        }
        #expect(HTML5Error.inputTooLarge(size: 2000, limit: 1000).code == "html5.inputTooLarge")
    }

    @Test func excessAttributesAreDroppedAndReported() throws {
        var options = HTML5ParserOptions()
        options.maxAttributesPerElement = 3
        let html = "<div " + (0..<10).map { "a\($0)=\($0)" }.joined(separator: " ") + ">"
        let result = try HTML5Parser.parseDocument(html, options: options)
        let div = result.root.descendants.compactMap { $0 as? Element }.first { $0.localName == "div" }!
        #expect(div.attributes.map(\.name) == ["a0", "a1", "a2"])
        #expect(result.attributesTruncated)
        #expect(result.errors.contains { $0.code == "too-many-attributes" })
    }

    @Test func deepNestingIsFlattenedAtTheLimit() throws {
        var options = HTML5ParserOptions()
        options.maxNestingDepth = 50
        let result = try HTML5Parser.parseDocument(String(repeating: "<div>", count: 200) + "x", options: options)
        #expect(result.depthTruncated)
        var depth = 0
        var maximum = 0
        var node: Node? = result.root
        // Walk down the first-child chain: depth never exceeds the limit.
        while let n = node { depth += 1; maximum = max(maximum, depth); node = n.lastChild }
        #expect(maximum <= 52)  // document + 50 open elements + the text
        #expect(result.root.textContent == "x")
    }

    @Test func hundredThousandNestedDivsParseWithoutCrashing() throws {
        var options = HTML5ParserOptions()
        options.recordParseErrors = false
        let result = try HTML5Parser.parseDocument(String(repeating: "<div>", count: 100_000), options: options)
        #expect(result.depthTruncated)
        #expect(result.root.descendants.reduce(0) { n, node in n + ((node as? Element)?.localName == "div" ? 1 : 0) } == 100_000)
        #expect(result.root.outerHTML.count > 100_000 * 5)
    }

    @Test func hundredThousandUnclosedBoldsParseWithoutCrashing() throws {
        var options = HTML5ParserOptions()
        options.recordParseErrors = false
        let result = try HTML5Parser.parseDocument(String(repeating: "<b>x", count: 100_000) + "</p><table><tr><td>y", options: options)
        #expect(result.root.textContent.count == 100_001)
    }

    @Test func deepTreeWithoutLimitIsFreedWithoutStackOverflow() throws {
        var options = HTML5ParserOptions()
        options.maxNestingDepth = .max
        options.recordParseErrors = false
        do {
            let result = try HTML5Parser.parseDocument(String(repeating: "<span>", count: 100_000), options: options)
            #expect(!result.depthTruncated)
            #expect(result.root.outerHTML.hasSuffix("</span></span></body></html>"))
        }
    }

    // End of file inside open templates: each one is closed by the "in template" EOF step, which
    // reprocesses the token in the reset mode; that must not recurse once per open template.
    // The parses run on a thread with a 512 KB stack (secondary threads on Apple platforms), so
    // the result does not depend on the stack of the thread the test runner picks.

    @Test func aHundredThousandUnclosedTemplatesAreClosedAtEndOfFileWithoutStackOverflow() async throws {
        #expect(try HTML5Parser.parseDocument("<template><template><template>").root.outerHTML
            == "<html><head><template><template><template></template></template></template></head><body></body></html>")
        let shape = await onThread(stackSize: 512 << 10) { () -> TemplateChain in
            var options = HTML5ParserOptions()
            options.maxNestingDepth = .max
            let result = try! HTML5Parser.parseDocument(String(repeating: "<template>", count: 100_000), options: options)
            return TemplateChain(result)
        }
        #expect(shape.topLevel == ["head", "body"])
        #expect(shape.nestedTemplates == 100_000)
        #expect(shape.everyContentHoldsOnlyTheNextTemplate)
        #expect(shape.eofInTemplateErrors == 100_000)
        #expect(!shape.depthTruncated)
    }

    @Test func unclosedTemplatesAroundTableRowsAreClosedAtEndOfFileWithoutStackOverflowAtTheDefaultDepth() async {
        // The default depth limit flattens the tree but not the stack of open elements, so the
        // 100 000 templates are all open at end of file; the EOF steps go through "in row",
        // "in table" and "in body" back to "in template".
        let counts = await onThread(stackSize: 512 << 10) { () -> [String: Int] in
            let result = try! HTML5Parser.parseDocument(String(repeating: "<template><tr>", count: 100_000))
            var counts = ["eof-in-template": result.errors.filter { $0.code == "eof-in-template" }.count,
                          "depthTruncated": result.depthTruncated ? 1 : 0]
            var work: [Node] = [result.root]
            while let node = work.popLast() {
                if let element = node as? Element {
                    counts[element.localName, default: 0] += 1
                    if let content = element.templateContent { work.append(content) }
                }
                work.append(contentsOf: node.children)
            }
            return counts
        }
        #expect(counts == ["eof-in-template": 100_000, "depthTruncated": 1, "html": 1, "head": 1, "body": 1,
                           "template": 100_000, "tr": 100_000])
    }

    // MARK: DOM editing for the sanitizer

    @Test func removingAndReplacingNodesKeepsLinksConsistent() throws {
        let body = try body("<p>a</p><script>x</script><b>b</b><i>c</i>")
        let script = body.childElements.first { $0.localName == "script" }!
        script.remove()
        #expect(script.parent == nil && script.nextSibling == nil)
        #expect(body.innerHTML == "<p>a</p><b>b</b><i>c</i>")
        let bold = body.childElements.first { $0.localName == "b" }!
        bold.replace(with: Text("B"))
        #expect(body.innerHTML == "<p>a</p>B<i>c</i>")
        let italic = body.lastChild as! Element
        italic.unwrap()
        #expect(body.innerHTML == "<p>a</p>Bc")
        #expect(body.lastChild?.previousSibling?.nextSibling === body.lastChild)
    }

    @Test func descendantWalkSurvivesRemovingTheVisitedNode() throws {
        let body = try body("<div><script>1</script><p>keep<script>2</script></p></div><script>3</script><span>end</span>")
        var walk = body.descendants
        while let node = walk.next() {
            if let e = node as? Element, e.localName == "script" { e.remove() }
        }
        #expect(body.innerHTML == "<div><p>keep</p></div><span>end</span>")
    }

    @Test func attributesAreEditable() throws {
        let body = try body("<a href='javascript:x' onclick=y title=t>z</a>")
        let a = body.firstChild as! Element
        a.filterAttributes { !$0.name.hasPrefix("on") }
        a[attribute: "href"] = nil
        a.setAttribute("rel", "noopener")
        #expect(body.innerHTML == "<a title=\"t\" rel=\"noopener\">z</a>")
    }

    @Test func detachedNodeOutlivesItsDocument() throws {
        var kept: Element?
        do {
            let document = try HTML5Parser.parseDocument("<p><b>x</b><i>y</i></p>").root
            kept = document.descendants.compactMap { $0 as? Element }.first { $0.localName == "b" }
        }
        #expect(kept?.parent == nil)
        #expect(kept?.nextSibling == nil)
        #expect(kept?.outerHTML == "<b>x</b>")
    }

    // MARK: Serialization

    @Test func serializerEscapesTextAndAttributes() throws {
        let body = try body("<p title='a\"b&amp;'>1 &lt; 2 &amp;&nbsp;</p><script>if (a < b) x()</script>")
        #expect(body.innerHTML == "<p title=\"a&quot;b&amp;\">1 &lt; 2 &amp;&nbsp;</p><script>if (a < b) x()</script>")
    }

    @Test func templateContentsAreSerializedAndReparsed() throws {
        let body = try body("<p>x</p><template><td>cell</td></template>")
        let template = body.lastChild as! Element
        #expect(template.firstChild == nil)
        #expect(template.templateContent?.firstChild != nil)
        #expect(body.innerHTML == "<p>x</p><template><td>cell</td></template>")
    }

    @Test func foreignContentKeepsNamespacesAndAdjustedNames() throws {
        let body = try body("<svg viewbox='0 0 1 1'><foreignobject><p>x</p></foreignobject><a xlink:href='#y'/></svg><math><mi>z</mi></math>")
        let svg = body.firstChild as! Element
        #expect(svg.namespace == .svg)
        #expect(svg.attributes.first?.name == "viewBox")
        let foreignObject = svg.firstChild as! Element
        #expect(foreignObject.localName == "foreignObject")
        #expect((foreignObject.firstChild as? Element)?.namespace == .html)
        let link = svg.lastChild as! Element
        #expect(link.attribute("href", namespace: .xlink) == "#y")
        #expect((body.lastChild as? Element)?.namespace == .mathml)
        #expect(body.innerHTML.contains("xlink:href=\"#y\""))
    }

    // MARK: Fragments

    @Test func fragmentParsingUsesTheContextElement() throws {
        let cells = try HTML5Parser.parseFragment("<td>a</td>", contextName: "tr").root
        #expect((cells.firstChild as? Element)?.localName == "td")
        let inBody = try HTML5Parser.parseFragment("<td>a</td>", contextName: "body").root
        #expect((inBody.firstChild as? Text)?.data == "a")
        let title = try HTML5Parser.parseFragment("<b>x</b>", contextName: "title").root
        #expect((title.firstChild as? Text)?.data == "<b>x</b>")
    }

    // MARK: Encoding sniffing

    @Test func byteOrderMarkWins() throws {
        let utf16: [UInt8] = [0xFF, 0xFE] + Array("<p>é</p>".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
        let result = try HTML5Parser.parseDocument(utf16)
        #expect(result.encoding == "utf-16le")
        #expect(result.root.textContent == "é")
    }

    @Test func metaCharsetPrescanSelectsTheEncoding() throws {
        let bytes: [UInt8] = Array("<meta charset=\"iso-8859-2\"><p>".utf8) + [0xB1] + Array("</p>".utf8)
        let result = try HTML5Parser.parseDocument(bytes)
        #expect(result.encoding == "iso-8859-2")
        #expect(result.root.textContent == "ą")
        let pragma: [UInt8] = Array("<!-- c --><meta http-equiv=Content-Type content='text/html; charset=windows-1252'><p>".utf8) + [0x80]
        let second = try HTML5Parser.parseDocument(pragma)
        #expect(second.encoding == "windows-1252")
        #expect(second.root.textContent == "€")
    }

    @Test func transportCharsetBeatsMetaAndInvalidUTF8FallsBackToWindows1252() throws {
        var options = HTML5ParserOptions()
        options.transportCharset = "ISO-8859-1"
        let bytes: [UInt8] = Array("<meta charset=utf-8><p>".utf8) + [0xE9]
        let result = try HTML5Parser.parseDocument(bytes, options: options)
        #expect(result.encoding == "windows-1252")
        #expect(result.root.textContent == "é")
        let undeclared = try HTML5Parser.parseDocument(Array("<p>".utf8) + [0x93, 0x61, 0x94])
        #expect(undeclared.encoding == "windows-1252")
        #expect(undeclared.root.textContent == "\u{201C}a\u{201D}")
        #expect(try HTML5Parser.parseDocument(Array("<p>é".utf8)).encoding == "utf-8")
    }

    @Test func singleByteEncodingsDecodeThroughTheirTables() throws {
        for (charset, byte, expected) in [("iso-8859-5", UInt8(0xD0), "а"), ("iso-8859-15", 0xA4, "€"), ("koi8-r", 0xC1, "а"),
                                          ("windows-1251", 0xE0, "а"), ("iso-8859-7", 0xE1, "α"), ("windows-1250", 0x9A, "š")] {
            var options = HTML5ParserOptions()
            options.transportCharset = charset
            let result = try HTML5Parser.parseDocument(Array("<p>".utf8) + [byte], options: options)
            #expect(result.root.textContent == expected, "\(charset)")
        }
    }

    @Test func carriageReturnsAreNormalizedAndNULsHandled() throws {
        let body = try body("a\r\nb\rc\0d<textarea>\r\nx\0</textarea>")
        #expect((body.firstChild as? Text)?.data == "a\nb\ncd")
        #expect(((body.lastChild as? Element)?.firstChild as? Text)?.data == "x\u{FFFD}")
    }

    @Test func parseErrorsAreReportedNotThrown() throws {
        let result = try HTML5Parser.parseDocument("<p></b></i>&bogus;<div a=1 a=2>")
        #expect(result.errors.contains { $0.code == "duplicate-attribute" })
        #expect(result.errors.contains { $0.code == "expected-doctype" })
    }
}

/// Runs `body` on a thread of its own whose stack is `stackSize` bytes, and returns its result.
func onThread<T: Sendable>(stackSize: Int, _ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.stackSize = stackSize
        thread.start()
    }
}

/// The shape of a document whose head holds a chain of templates, each one's content holding
/// only the next one (read without recursion).
struct TemplateChain: Sendable {
    var topLevel: [String] = []
    var nestedTemplates = 0
    var everyContentHoldsOnlyTheNextTemplate = true
    var eofInTemplateErrors = 0
    var depthTruncated = false

    init(_ result: ParseResult<Document>) {
        eofInTemplateErrors = result.errors.filter { $0.code == "eof-in-template" }.count
        depthTruncated = result.depthTruncated
        guard let html = result.root.documentElement else { return }
        topLevel = html.childElements.map(\.localName)
        guard let head = html.childElements.first, head.childCount == 1 else { return }
        var node = head.firstChild
        while let template = node as? Element, template.isHTML(.template), let content = template.templateContent {
            nestedTemplates += 1
            if content.childCount > 1 { everyContentHoldsOnlyTheNextTemplate = false }
            node = content.firstChild
        }
        if node != nil { everyContentHoldsOnlyTheNextTemplate = false }
    }
}
