import Foundation
import Testing
@testable import HTML5
import RampartTestSupport

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

    // Copying an option into <selectedcontent> (customizable <select>) deep-copies the option's
    // subtree, template contents included; that copy must not recurse once per nested template.

    @Test func anOptionHoldingAHundredThousandNestedTemplatesIsCopiedIntoSelectedContentWithoutStackOverflow() async throws {
        let prefix = "<select><button><selectedcontent></selectedcontent></button><option>"
        #expect(try HTML5Parser.parseDocument(prefix + "<template><template>").root.outerHTML
            == "<html><head></head><body><select><button><selectedcontent><template><template></template></template>"
            + "</selectedcontent></button><option><template><template></template></template></option></select></body></html>")
        let chains = await onThread(stackSize: 512 << 10) { () -> [Int] in
            var options = HTML5ParserOptions()
            options.maxNestingDepth = .max
            options.recordParseErrors = false
            let result = try! HTML5Parser.parseDocument(prefix + String(repeating: "<template>", count: 100_000), options: options)
            // The template chain under <selectedcontent> (the copy) and under <option> (the original).
            return [HTMLTag.selectedcontent, .option].map { tag -> Int in
                let holder = result.root.descendants.first { ($0 as? Element)?.isHTML(tag) ?? false }
                var count = 0
                var node = holder?.firstChild
                while let template = node as? Element, template.isHTML(.template), template.nextSibling == nil,
                      let content = template.templateContent, template.firstChild == nil {
                    count += 1
                    node = content.firstChild
                }
                return node == nil ? count : -count
            }
        }
        #expect(chains == [100_000, 100_000])
    }

    // Closing an option searches for its <select> and the select's first <selectedcontent>: that
    // search ran over the whole select for every option (10 000 options: 20 s, 20 000: 90 s).

    @Test func optionsOfASelectWithoutSelectedContentAreNotSearched() throws {
        var options = HTML5ParserOptions()
        options.recordParseErrors = false
        let html = "<select>" + String(repeating: "<option>x", count: 100_000) + "</select>"
        let result = try HTML5Parser.parseDocument(html, options: options)
        #expect(result.selectedContentSearchSteps == 0)
        #expect(!result.selectedContentLimited)
        let select = result.root.descendants.first { ($0 as? Element)?.isHTML(.select) ?? false }
        #expect(select?.childElements.count == 100_000)
    }

    @Test func selectedContentSearchesStayWithinTheirBound() throws {
        var options = HTML5ParserOptions()
        options.recordParseErrors = false
        // Ordinary markup: the <selectedcontent> comes first, each option needs a few steps, and the
        // first option is copied (no option has `selected`).
        let ordinary = "<select><button><selectedcontent></selectedcontent></button>"
            + String(repeating: "<option>x</option>", count: 2_000) + "</select>"
        let small = try HTML5Parser.parseDocument(ordinary, options: options)
        #expect(!small.selectedContentLimited)
        #expect(small.selectedContentSearchSteps <= 2_000 * 4)
        let copy = small.root.descendants.first { ($0 as? Element)?.isHTML(.selectedcontent) ?? false }
        #expect(copy?.textContent == "x")
        // Hostile markup: 50 000 options before the <selectedcontent>, 50 000 after; each of the later
        // ones would walk past the first 50 000. The searches stop at their bound, and report it.
        let hostile = "<select>" + String(repeating: "<option>x", count: 50_000)
            + "<button><selectedcontent></selectedcontent></button>" + String(repeating: "<option selected>y", count: 50_000)
        let limited = try HTML5Parser.parseDocument(hostile, options: options)
        let bound = hostile.utf8.count + 65_536
        #expect(limited.selectedContentLimited)
        #expect(limited.selectedContentSearchSteps <= bound)
        var withErrors = options
        withErrors.recordParseErrors = true
        let reported = try HTML5Parser.parseDocument(hostile, options: withErrors)
        let limitErrors = reported.errors.filter { $0.code == "selectedcontent-search-limit" }.count
        #expect(limitErrors == 1)
    }

    // The active formatting elements: thousands of different ones made Noah's Ark quadratic,
    // and reconstructing closed ones re-created all of them in every paragraph (quadratic nodes).

    @Test func reconstructedFormattingElementsStayWithinTheirBound() throws {
        var options = HTML5ParserOptions()
        options.recordParseErrors = false
        let paragraphs = (0..<20_000).map { "<p><b class=c\($0)>x</p>" }.joined()
        let result = try HTML5Parser.parseDocument(paragraphs, options: options)
        #expect(result.formattingLimited)
        let elements = result.root.descendants.filter { $0 is Element }.count
        let bound = 3 + 2 * 20_000 + paragraphs.utf8.count + 4_096
        #expect(elements <= bound)
        // Below the bound nothing changes: the spec's re-created elements are all there.
        let few = (0..<50).map { "<p><b class=c\($0)>x</p>" }.joined()
        let small = try HTML5Parser.parseDocument(few, options: options)
        #expect(!small.formattingLimited)
        let bs = small.root.descendants.filter { node in (node as? Element)?.isHTML(.b) ?? false }.count
        #expect(bs == 50 * 51 / 2)
    }

    @Test func noahsArkLooksAtABoundedWindow() throws {
        var options = HTML5ParserOptions()
        options.recordParseErrors = true
        let open = (0..<20_000).map { "<b class=c\($0)>x" }.joined()
        let result = try HTML5Parser.parseDocument(open, options: options)
        #expect(result.formattingLimited)
        let limitErrors = result.errors.filter { $0.code == "formatting-elements-limit" }.count
        #expect(limitErrors == 1)
        // Noah's Ark itself still holds within the window: four equal elements keep three entries
        // (the html5lib suite checks the trees).
        let four = try HTML5Parser.parseDocument("<b>1<b>2<b>3<b>4<p>x", options: options)
        #expect(!four.formattingLimited)
    }

    @Test func noahsArkComparesAttributeValuesAsBytes() throws {
        // Four <b>s closed by the </p>, then re-created in the next paragraph: Noah's Ark keeps
        // three of four equal ones. "é" and "e\u{301}" are different values (canonically
        // equivalent, so `==` on String took them for the same): then no three are equal, and all
        // four are re-created.
        func reconstructed(_ values: [String]) throws -> Int {
            let html = "<p>" + values.map { "<b title=\"\($0)\">" }.joined() + "x</p><p>y"
            let root = try HTML5Parser.parseDocument(html).root
            var count = 0
            var node: Node? = root.descendants.compactMap { $0 as? Text }.last { $0.data == "y" }
            while let n = node?.parent as? Element, n.isHTML(.b) { count += 1; node = n }
            return count
        }
        let equal = try reconstructed(["é", "é", "é", "é"])
        let equivalent = try reconstructed(["é", "e\u{301}", "é", "é"])
        #expect(equal == 3)
        #expect(equivalent == 4)
    }

    @Test func noahsArkComparesAttributesAsASetByDigestThenBytes() throws {
        // Noah's Ark compares a digest of each entry's attributes first (taken as the entry joins
        // the list). The digest must not tell apart what the spec calls equal (the same
        // attributes in another order), and a digest match alone must not make two entries equal.
        func reconstructed(_ tags: [String]) throws -> Int {
            let root = try HTML5Parser.parseDocument("<p>" + tags.joined() + "x</p><p>y").root
            var count = 0
            var node: Node? = root.descendants.compactMap { $0 as? Text }.last { $0.data == "y" }
            while let n = node?.parent as? Element, n.isHTML(.b) { count += 1; node = n }
            return count
        }
        let reordered = try reconstructed(["<b a=1 b=2>", "<b b=2 a=1>", "<b a=1 b=2>", "<b b=2 a=1>"])
        #expect(reordered == 3)
        // Swapped values keep the names and the value bytes of the set but are other attributes.
        let swapped = try reconstructed(["<b a=1 b=2>", "<b a=2 b=1>", "<b a=1 b=2>", "<b a=2 b=1>"])
        #expect(swapped == 4)
        // Entries re-created by a reconstruction take part in the next one's comparison too.
        let html = "<p><b c=1><b c=1><b c=1>x</p><p><b c=1>y</p><p>z"
        let root = try HTML5Parser.parseDocument(html).root
        var count = 0
        var node: Node? = root.descendants.compactMap { $0 as? Text }.last { $0.data == "z" }
        while let n = node?.parent as? Element, n.isHTML(.b) { count += 1; node = n }
        #expect(count == 3)
    }

    @Test func aDeepCloneOfARandomTreeWithTemplatesEqualsTheOriginal() throws {
        var random = SplitMix64(seed: 0x5EED_C10E)
        for round in 0..<200 {
            let root: Node = round % 4 == 0 ? Document() : DocumentFragment()
            randomTree(under: root, depth: 5, &random)
            let copy = root.clone(deep: true)
            #expect(type(of: copy) == type(of: root))
            #expect(copy.html5libTreeDump == root.html5libTreeDump)
            #expect(copy.innerHTML == root.innerHTML)
            #expect(copy.innerHTML.contains("<template>") == root.innerHTML.contains("<template>"))
            // A copy, not a share: no node of the original is in the copy, and changing the copy
            // leaves the original as it was.
            let originals = Set(allNodes(root).map(ObjectIdentifier.init))
            #expect(allNodes(copy).allSatisfy { !originals.contains(ObjectIdentifier($0)) })
            let before = root.html5libTreeDump
            for node in allNodes(copy) {
                (node as? Text)?.data += "!"
                (node as? Element)?.setAttribute("data-copy", "1")
            }
            #expect(root.html5libTreeDump == before)
        }
        // Templates in template contents, several levels down, are copied too.
        let nested = try HTML5Parser.parseFragment("<template>a<template>b<template>c<p>d</p></template></template></template>",
                                                  contextName: "div").root
        #expect(nested.clone(deep: true).innerHTML == nested.innerHTML)
        #expect(nested.clone(deep: true).html5libTreeDump == nested.html5libTreeDump)
        // Without `deep`: the node alone, but a template keeps its (copied) contents.
        let template = nested.firstChild as! Element
        template.appendChild(Text("child"))
        let shallow = template.clone(deep: false) as! Element
        #expect(shallow.firstChild == nil)
        #expect(shallow.templateContent?.innerHTML == template.templateContent?.innerHTML)
        #expect(shallow.templateContent !== template.templateContent)
        let document = try HTML5Parser.parseDocument("<p>quirks").root
        #expect((document.clone(deep: false) as! Document).quirksMode == .quirks)
        #expect(document.clone(deep: false).firstChild == nil)
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

/// A random tree under `root`, `depth` levels at most (template contents count as a level):
/// texts, comments, doctypes, HTML, SVG and MathML elements with attributes, and templates with
/// children and contents that hold templates in turn.
func randomTree(under root: Node, depth: Int, _ random: inout SplitMix64) {
    let texts = ["", "a", "x < y & z", "\u{A0}", "é", "日本", "\"q\"", "\n"]
    let names: [(String, Namespace)] = [("div", .html), ("p", .html), ("template", .html), ("template", .html), ("br", .html),
                                        ("script", .html), ("x-y", .html), ("circle", .svg), ("template", .svg), ("mi", .mathml)]
    for _ in 0..<random.next(5) {
        switch random.next(8) {
        case 0, 1: root.appendChild(Text(texts[random.next(texts.count)]))
        case 2: root.appendChild(HTML5.Comment(texts[random.next(texts.count)]))
        case 3 where random.next(4) == 0: root.appendChild(DocumentType(name: "html"))
        default:
            let (name, namespace) = names[random.next(names.count)]
            var attributes: [Attribute] = []
            for index in 0..<random.next(3) { attributes.append(Attribute(name: "a\(index)", value: texts[random.next(texts.count)])) }
            if random.next(6) == 0 { attributes.append(Attribute(name: "href", value: "#x", namespace: .xlink)) }
            let element = Element(localName: name, namespace: namespace, attributes: attributes)
            if depth > 0 {
                randomTree(under: element, depth: depth - 1, &random)
                if let content = element.templateContent { randomTree(under: content, depth: depth - 1, &random) }
            }
            root.appendChild(element)
        }
    }
}

/// Every node under `root` (not `root` itself), template contents and their nodes included.
func allNodes(_ root: Node) -> [Node] {
    var result: [Node] = []
    var work: [Node] = [root]
    while let node = work.popLast() {
        if let content = (node as? Element)?.templateContent { result.append(content); work.append(content) }
        for child in node.children { result.append(child); work.append(child) }
    }
    return result
}
