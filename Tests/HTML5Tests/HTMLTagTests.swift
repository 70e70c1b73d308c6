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

    @Test func internedNameSwitchAgreesWithTheNameTable() {
        for tag in HTMLTag.allCases { #expect(tag.internedName == tag.name, "\(tag)") }
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

    /// Near misses of every interned name are unknown: one byte changed at each position, one
    /// byte more or less at either end (the lookup packs the first eight bytes with loads that
    /// overlap for names shorter than eight, so every length and position is tried).
    @Test func nearMissesOfEveryNameAreUnknown() {
        let names = Set(HTMLTag.allCases.map(\.name))
        var tried = 0
        for tag in HTMLTag.allCases where tag != .unknown {
            let bytes = Array(tag.name.utf8)
            var variants: [[UInt8]] = [Array(bytes.dropLast()), Array(bytes.dropFirst()), bytes + [0x61], [0x61] + bytes]
            for i in bytes.indices {
                var changed = bytes
                changed[i] = changed[i] == 0x7A ? 0x79 : changed[i] &+ 1
                variants.append(changed)
            }
            for variant in variants {
                let name = String(decoding: variant, as: UTF8.self)
                let expected = names.contains(name) ? HTMLTag(localName: name) : HTMLTag.unknown
                let found = variant.withUnsafeBufferPointer { HTMLTag.lookup($0) }
                #expect(found == expected, "\(name.debugDescription)")
                if names.contains(name) { #expect(found.name == name) }
                tried += 1
            }
        }
        #expect(tried > 1000)
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

    /// The parser's name sets are written as four mask words (statically initialized, no
    /// lazy-global check per token): each must hold exactly the tags of its list in the spec.
    @Test func parserNameSetConstantsMatchTheirTagLists() {
        let expected: [(String, HTMLTagSet, [HTMLTag])] = [
            ("TreeBuilderSets.set0", TreeBuilderSets.set0, [.mi, .mo, .mn, .ms, .mtext, .annotationXml]),
            ("TreeBuilderSets.set1", TreeBuilderSets.set1, [.table, .tbody, .tfoot, .thead, .tr]),
            ("TreeBuilderSets.set2", TreeBuilderSets.set2, [.mi, .mo, .mn, .ms, .mtext]),
            ("TreeBuilderSets.set3", TreeBuilderSets.set3, [.head, .body, .html, .br]),
            ("TreeBuilderSets.set4", TreeBuilderSets.set4, [.basefont, .bgsound, .link, .meta, .noframes,
                .style]),
            ("TreeBuilderSets.set5", TreeBuilderSets.set5, [.address, .div, .p]),
            ("TreeBuilderSets.set6", TreeBuilderSets.set6, [.tbody, .tfoot, .thead, .template, .html]),
            ("TreeBuilderSets.set7", TreeBuilderSets.set7, [.tr, .template, .html]),
            ("TreeBuilderSets.set8", TreeBuilderSets.set8, [.table, .tbody, .template, .tfoot, .thead,
                .tr]),
            ("TreeBuilderSets.set9", TreeBuilderSets.set9, [.caption, .col, .colgroup, .tbody, .td, .tfoot,
                .th, .thead, .tr]),
            ("TreeBuilderSets.set10", TreeBuilderSets.set10, [.body, .col, .colgroup, .html, .tbody, .td,
                .tfoot, .th, .thead, .tr]),
            ("TreeBuilderSets.set11", TreeBuilderSets.set11, [.tbody, .tfoot, .thead]),
            ("TreeBuilderSets.set12", TreeBuilderSets.set12, [.caption, .col, .colgroup, .tbody, .tfoot,
                .thead]),
            ("TreeBuilderSets.set13", TreeBuilderSets.set13, [.body, .caption, .col, .colgroup, .html, .td,
                .th, .tr]),
            ("TreeBuilderSets.set14", TreeBuilderSets.set14, [.caption, .col, .colgroup, .tbody, .tfoot,
                .thead, .tr]),
            ("TreeBuilderSets.set15", TreeBuilderSets.set15, [.body, .caption, .col, .colgroup, .html, .td,
                .th]),
            ("TreeBuilderSets.set16", TreeBuilderSets.set16, [.body, .caption, .col, .colgroup, .html]),
            ("TreeBuilderSets.tableContext", TreeBuilderSets.tableContext, [.table, .template, .html]),
            ("HTMLSerializer.voidTags", HTMLSerializer.voidTags, [.area, .base, .basefont, .bgsound,
                .br, .col, .embed, .frame, .hr, .img, .input, .keygen, .link, .meta, .param,
                .source, .track, .wbr]),
            ("HTMLSerializer.rawTextParentTags", HTMLSerializer.rawTextParentTags, [.style, .script,
                .xmp, .iframe, .noembed, .noframes, .plaintext]),
            ("ElementSets.special", ElementSets.special, [.address, .applet, .area, .article,
                .aside, .base, .basefont, .bgsound, .blockquote, .body, .br, .button,
                .caption, .center, .col, .colgroup, .dd, .details, .dir, .div, .dl, .dt,
                .embed, .fieldset, .figcaption, .figure, .footer, .form, .frame,
                .frameset, .h1, .h2, .h3, .h4, .h5, .h6, .head, .header, .hgroup, .hr,
                .html, .iframe, .img, .input, .keygen, .li, .link, .listing, .main,
                .marquee, .menu, .meta, .nav, .noembed, .noframes, .noscript, .object,
                .ol, .p, .param, .plaintext, .pre, .script, .search, .section, .select,
                .source, .style, .summary, .table, .tbody, .td, .template, .textarea,
                .tfoot, .th, .thead, .title, .tr, .track, .ul, .wbr, .xmp]),
            ("ElementSets.formatting", ElementSets.formatting, [.a, .b, .big, .code, .em, .font, .i,
                .nobr, .s, .small, .strike, .strong, .tt, .u]),
            ("ElementSets.impliedEnd", ElementSets.impliedEnd, [.dd, .dt, .li, .optgroup, .option,
                .p, .rb, .rp, .rt, .rtc]),
            ("ElementSets.impliedEndThorough", ElementSets.impliedEndThorough, [.caption, .colgroup,
                .dd, .dt, .li, .optgroup, .option, .p, .rb, .rp, .rt, .rtc, .tbody, .td,
                .tfoot, .th, .thead, .tr]),
            ("ElementSets.defaultScope", ElementSets.defaultScope, [.applet, .caption, .html,
                .table, .td, .th, .marquee, .object, .template]),
            ("ElementSets.headings", ElementSets.headings, [.h1, .h2, .h3, .h4, .h5, .h6]),
            ("ElementSets.breakoutTags", ElementSets.breakoutTags, [.b, .big, .blockquote, .body,
                .br, .center, .code, .dd, .div, .dl, .dt, .em, .embed, .h1, .h2, .h3,
                .h4, .h5, .h6, .head, .hr, .i, .img, .li, .listing, .menu, .meta, .nobr,
                .ol, .p, .pre, .ruby, .s, .small, .span, .strong, .strike, .sub, .sup,
                .table, .tt, .u, .ul, .`var`]),
        ]
        for (name, set, tags) in expected {
            #expect(set == HTMLTagSet(tags), "\(name)")
            for tag in HTMLTag.allCases { #expect(set.contains(tag) == tags.contains(tag), "\(name) \(tag)") }
        }
    }
}
