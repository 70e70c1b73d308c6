import Testing
@testable import HTML5

/// The interned element names (`Element.tag`) must always agree with `localName`: the tree
/// builder decides every step by `tag`, and the sanitizer may too.
@Suite struct HTMLTagTests {
    @Test func everyInternedNameRoundTrips() {
        var seen = Set<String>()
        for tag in HTMLTag.allCases where tag != .unknown {
            #expect(!tag.name.isEmpty)
            #expect(seen.insert(tag.name).inserted, "\(tag.name) is interned twice")
            #expect(HTMLTag(localName: tag.name) == tag)
            let element = Element(localName: tag.name)
            #expect(element.tag == tag)
            #expect(element.localName == tag.name)
            #expect(element.isHTML(tag))
        }
        #expect(HTMLTag.unknown.name == "")
    }

    @Test func namesOutsideTheTableAreUnknown() {
        // Exact, case-sensitive: the parser lowercases HTML names and case-adjusts SVG names
        // before interning, so `DIV` or `foreignobject` never reach an element as those strings
        // unless a caller builds one by hand.
        for name in ["", "DIV", "Div", "foreignobject", "x-custom", "tablex", "tabl", "selectedcontentx", "a\u{0}", "\u{FFFD}"] {
            #expect(HTMLTag(localName: name) == .unknown, "\(name.debugDescription)")
            let element = Element(localName: name)
            #expect(element.tag == .unknown)
            #expect(element.localName == name)
            #expect(!element.isHTML(.unknown))
        }
    }

    @Test func parsedElementsCarryTheirInternedName() throws {
        let html = """
            <!doctype html><table><tr><td><font color=red>x</font><my-widget>y</my-widget></td></tr></table>
            <svg><foreignObject><p>z</p></foreignObject><clippath/><linearGradient/></svg>
            <math><mi>1</mi><annotation-xml encoding="text/html"><div>q</div></annotation-xml></math>
            <DIV>upper</DIV><image src=a><Custom-Thing></Custom-Thing>
            """
        let document = try HTML5Parser.parseDocument(html).root
        var names: [String] = []
        for case let element as Element in document.descendants {
            #expect(element.tag == HTMLTag(localName: element.localName), "\(element.localName)")
            names.append(element.localName)
        }
        #expect(names.contains("foreignObject") && names.contains("clipPath") && names.contains("linearGradient"))
        #expect(names.contains("my-widget") && names.contains("custom-thing") && names.contains("img"))
        #expect(!names.contains("image"))
    }

    @Test func unknownEndTagsCloseOnlyTheirOwnName() throws {
        // "Any other end tag" compares names outside the table by string.
        let document = try HTML5Parser.parseDocument("<x-a><x-b>1</x-a>2</x-b>3").root
        let body = document.documentElement!.childElements.last!
        let xa = body.firstChild as! Element
        #expect(xa.localName == "x-a")
        #expect(body.childCount == 2, "</x-a> closes x-b and x-a; </x-b> then matches nothing")
        let xb = xa.firstChild as! Element
        #expect(xb.localName == "x-b")
        #expect(xb.textContent == "1")
        #expect((body.lastChild as? Text)?.data == "23")
    }

    @Test func tagSetsHoldExactlyTheirMembers() {
        let set: HTMLTagSet = [.a, .xmp, .merror, .svg]
        for tag in HTMLTag.allCases {
            #expect(set.contains(tag) == [.a, .xmp, .merror, .svg].contains(tag), "\(tag)")
        }
        let all = HTMLTagSet(HTMLTag.allCases.filter { $0 != .unknown })
        #expect(!all.contains(.unknown))
        #expect(HTMLTag.allCases.filter { all.contains($0) }.count == HTMLTag.allCases.count - 1)
    }
}
