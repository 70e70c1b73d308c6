// The "in body" insertion mode (§13.2.6.4.7): start tags, end tags, closing p elements, stopping.

extension TreeBuilder {
    mutating func closePElement() {
        generateImpliedEndTags(except: .p)
        if currentHTMLTag != .p { error("unexpected-end-tag") }
        popUntil(.p)
    }

    mutating func closePIfInButtonScope() {
        if inScope(.p, .button) { closePElement() }
    }

    // MARK: In body (§13.2.6.4.7)

    mutating func inBody(_ token: Token) {
        switch token {
        case .characterBytes: characterBytesNotDispatched()
        case .characters(let s):
            if runContainsNUL(s) {
                error("unexpected-null-character")
                var copy = s
                let cleaned = copy.removingNUL()
                if cleaned.isEmpty { return }
                inBodyCharacters(cleaned)
            } else {
                inBodyCharacters(s)
            }
        case .comment(let data): insertComment(data)
        case .doctype: error("unexpected-doctype")
        case .startTag(let tag): inBodyStartTag(tag)
        case .endTag(let tag): inBodyEndTag(tag, token)
        case .eof:
            if !templateModes.isEmpty { inTemplate(token); return }
        }
    }

    /// A character run without U+0000 in body.
    mutating func inBodyCharacters(_ s: consuming String) {
        reconstructFormatting()
        if framesetOK && containsNonWhitespace(s) { framesetOK = false }
        insertText(s)
    }

    /// A start tag in body. The token is consumed: ``TreeBuilder/run()`` hands over the tokens it
    /// no longer needs, so their name and attributes move into the element.
    mutating func inBodyStartTag(_ tag: consuming TagToken) {
        let name = tag.tag
        // Fast path for the most frequent tag of mail HTML that the spec handles as "any other
        // start tag" (a String switch compares case by case).
        if name == .span {
            reconstructFormatting()
            insertElement(tag)
            return
        }
        switch tag.tag {
        case .html:
            error("unexpected-start-tag")
            if (openCount(.template)) > 0 { return }
            if sink.isVerifying { sink.failVerification(); return }  // changes an element already in the tree
            sink.mergeAttributes(tag.attributes, into: openElements[0])
        case .base, .basefont, .bgsound, .link, .meta, .noframes, .script, .style, .template, .title:
            inHead(.startTag(tag))
        case .body:
            error("unexpected-start-tag")
            if openElements.count == 1 || !openElements[1].isHTML(.body) || (openCount(.template)) > 0 { return }
            framesetOK = false
            if sink.isVerifying { sink.failVerification(); return }  // changes an element already in the tree
            sink.mergeAttributes(tag.attributes, into: openElements[1])
        case .frameset:
            error("unexpected-start-tag")
            if openElements.count == 1 || !openElements[1].isHTML(.body) || !framesetOK { return }
            if sink.isVerifying { sink.failVerification(); return }  // removes a node from the tree
            sink.remove(openElements[1])
            while openElements.count > 1 { pop() }
            insertElement(tag)
            mode = .inFrameset
        case .address, .article, .aside, .blockquote, .center, .details, .dialog, .dir, .div, .dl,
             .fieldset, .figcaption, .figure, .footer, .header, .hgroup, .main, .menu, .nav, .ol, .p,
             .search, .section, .summary, .ul:
            closePIfInButtonScope()
            insertElement(tag)
        case .h1, .h2, .h3, .h4, .h5, .h6:
            closePIfInButtonScope()
            if currentIsHTML(in: ElementSets.headings) {
                error("unexpected-start-tag"); pop()
            }
            insertElement(tag)
        case .pre, .listing:
            closePIfInButtonScope()
            insertElement(tag)
            skipNextNewline = true
            framesetOK = false
        case .form:
            let hasTemplate = (openCount(.template)) > 0
            if formElement != nil && !hasTemplate { error("unexpected-start-tag"); return }
            closePIfInButtonScope()
            let element = insertElementReturning(tag)
            if !hasTemplate { formElement = element }
        case .li, .dd, .dt:
            framesetOK = false
            var i = openElements.count - 1
            while i >= 0 {
                let node = openElements[i]
                if name == .li ? node.isHTML(.li) : (node.isHTML(.dd) || node.isHTML(.dt)) {
                    generateImpliedEndTags(except: node.tag)
                    if !currentIsHTML(node.tag) { error("unexpected-start-tag") }
                    popUntil(node.tag)
                    break
                }
                if ElementSets.isSpecial(node) && !(node.namespace == .html && TreeBuilderSets.set5.contains(node.tag)) { break }
                i -= 1
            }
            closePIfInButtonScope()
            insertElement(tag)
        case .plaintext:
            closePIfInButtonScope()
            insertElement(tag)
            tokenizer.state = .plaintext
        case .button:
            if inScope(.button) {
                error("unexpected-start-tag")
                generateImpliedEndTags()
                popUntil(.button)
            }
            reconstructFormatting()
            insertElement(tag)
            framesetOK = false
        case .a:
            var i = activeFormatting.count - 1
            while i >= 0, let e = activeFormatting[i] {
                if e.isHTML(.a) {
                    error("unexpected-start-tag")
                    if !adoptionAgency(.a) { anyOtherEndTag(TagToken(.a)) }
                    if let fi = formattingIndex(e) { activeFormatting.remove(at: fi) }
                    removeFromStack(e)
                    break
                }
                i -= 1
            }
            reconstructFormatting()
            pushFormatting(insertElementReturning(tag))
        case .b, .big, .code, .em, .font, .i, .s, .small, .strike, .strong, .tt, .u:
            reconstructFormatting()
            pushFormatting(insertElementReturning(tag))
        case .nobr:
            reconstructFormatting()
            if inScope(.nobr) {
                error("unexpected-start-tag")
                if !adoptionAgency(.nobr) { anyOtherEndTag(TagToken(.nobr)) }
                reconstructFormatting()
            }
            pushFormatting(insertElementReturning(tag))
        case .applet, .marquee, .object:
            reconstructFormatting()
            insertElement(tag)
            activeFormatting.append(nil)
            framesetOK = false
        case .table:
            if sink.quirksMode != .quirks { closePIfInButtonScope() }
            insertElement(tag)
            framesetOK = false
            mode = .inTable
        case .area, .br, .embed, .img, .keygen, .wbr:
            reconstructFormatting()
            insertElement(tag); pop()
            framesetOK = false
        case .input:
            if let context, context.isHTML(.select) { error("unexpected-start-tag"); return }
            if inScope(.select) {
                error("unexpected-start-tag")
                popUntil(.select)
            }
            reconstructFormatting()
            let hidden = tag.attribute("type")?.lowercased() == "hidden"  // read before the token moves
            insertElement(tag); pop()
            if !hidden { framesetOK = false }
        case .param, .source, .track:
            insertElement(tag); pop()
        case .hr:
            closePIfInButtonScope()
            if inScope(.select) {
                generateImpliedEndTags()
                if inScope(.option) || inScope(.optgroup) { error("unexpected-start-tag") }
            }
            insertElement(tag); pop()
            framesetOK = false
        case .image:
            error("unexpected-start-tag")
            var renamed = tag
            renamed.rename("img")
            inBodyStartTag(renamed)
        case .textarea:
            if inScope(.select) { error("unexpected-start-tag"); popUntil(.select) }
            insertElement(tag)
            skipNextNewline = true
            tokenizer.state = .rcdata
            originalMode = mode
            framesetOK = false
            mode = .text
        case .xmp:
            closePIfInButtonScope()
            reconstructFormatting()
            framesetOK = false
            genericRawText(tag)
        case .iframe:
            framesetOK = false
            genericRawText(tag)
        case .noembed:
            genericRawText(tag)
        case .noscript where scripting:
            genericRawText(tag)
        case .select:
            if let context, context.isHTML(.select) { error("unexpected-start-tag"); return }
            if inScope(.select) {
                error("unexpected-start-tag")
                popUntil(.select)
                return
            }
            reconstructFormatting()
            insertElement(tag)
            framesetOK = false
        case .option:
            if inScope(.select) {
                generateImpliedEndTags(except: .optgroup)
                if inScope(.option) { error("unexpected-start-tag") }
            } else if currentIsHTML(.option) {
                pop()
            }
            reconstructFormatting()
            insertElement(tag)
        case .optgroup:
            if inScope(.select) {
                generateImpliedEndTags()
                if inScope(.option) || inScope(.optgroup) { error("unexpected-start-tag") }
            } else if currentIsHTML(.option) {
                pop()
            }
            reconstructFormatting()
            insertElement(tag)
        case .rb, .rtc:
            if inScope(.ruby) {
                generateImpliedEndTags()
                if !currentIsHTML(.ruby) { error("unexpected-start-tag") }
            }
            insertElement(tag)
        case .rp, .rt:
            if inScope(.ruby) {
                generateImpliedEndTags(except: .rtc)
                if !currentIsHTML(.ruby) && !currentIsHTML(.rtc) { error("unexpected-start-tag") }
            }
            insertElement(tag)
        case .math:
            reconstructFormatting()
            insertForeign(tag, .mathml)
        case .svg:
            reconstructFormatting()
            insertForeign(tag, .svg)
        case .caption, .col, .colgroup, .frame, .head, .tbody, .td, .tfoot, .th, .thead, .tr:
            error("unexpected-start-tag")
        default:
            reconstructFormatting()
            insertElement(tag)
        }
    }

    mutating func inBodyEndTag(_ tag: TagToken, _ token: Token) {
        let name = tag.tag
        switch tag.tag {
        case .template: inHead(token)
        case .body:
            if !inScope(.body) { error("unexpected-end-tag"); return }
            mode = .afterBody
        case .html:
            if !inScope(.body) { error("unexpected-end-tag"); return }
            mode = .afterBody
            process(token, mode)
        case .address, .article, .aside, .blockquote, .button, .center, .details, .dialog, .dir, .div,
             .dl, .fieldset, .figcaption, .figure, .footer, .header, .hgroup, .listing, .main, .menu, .nav,
             .ol, .pre, .search, .section, .select, .summary, .ul:
            if !inScope(name) { error("unexpected-end-tag"); return }
            generateImpliedEndTags()
            if !currentIsHTML(name) { error("unexpected-end-tag") }
            popUntil(name)
        case .form:
            if (openCount(.template)) == 0 {
                let node = formElement
                formElement = nil
                guard let node, inScope(element: node) else { error("unexpected-end-tag"); return }
                generateImpliedEndTags()
                if !currentIs(node) { error("unexpected-end-tag") }
                removeFromStack(node)
            } else {
                if !inScope(.form) { error("unexpected-end-tag"); return }
                generateImpliedEndTags()
                if !currentIsHTML(.form) { error("unexpected-end-tag") }
                popUntil(.form)
            }
        case .p:
            if !inScope(.p, .button) {
                error("unexpected-end-tag")
                insertElement(TagToken(.p))
            }
            closePElement()
        case .li:
            if !inScope(.li, .listItem) { error("unexpected-end-tag"); return }
            generateImpliedEndTags(except: .li)
            if !currentIsHTML(.li) { error("unexpected-end-tag") }
            popUntil(.li)
        case .dd, .dt:
            if !inScope(name) { error("unexpected-end-tag"); return }
            generateImpliedEndTags(except: name)
            if !currentIsHTML(name) { error("unexpected-end-tag") }
            popUntil(name)
        case .h1, .h2, .h3, .h4, .h5, .h6:
            if !inScope(anyOf: ElementSets.headings) { error("unexpected-end-tag"); return }
            generateImpliedEndTags()
            if !currentIsHTML(name) { error("unexpected-end-tag") }
            popUntil(anyOf: ElementSets.headings)
        case .a, .b, .big, .code, .em, .font, .i, .nobr, .s, .small, .strike, .strong, .tt, .u:
            if !adoptionAgency(name) { anyOtherEndTag(tag) }
        case .applet, .marquee, .object:
            if !inScope(name) { error("unexpected-end-tag"); return }
            generateImpliedEndTags()
            if !currentIsHTML(name) { error("unexpected-end-tag") }
            popUntil(name)
            clearFormattingToMarker()
        case .br:
            error("unexpected-end-tag")
            inBodyStartTag(TagToken(.br))
        default:
            anyOtherEndTag(tag)
        }
    }

    /// "Stop parsing": pop every open element (which runs the pop hooks, e.g. selectedcontent).
    mutating func stopParsing() {
        while !openElements.isEmpty { pop() }
    }

    mutating func anyOtherEndTag(_ tag: TagToken) {
        var i = openElements.count - 1
        while i >= 0 {
            let node = openElements[i]
            // An interned name compares as one integer; a name outside the table only matches an
            // element that is outside the table too, by its string.
            if node.namespace == .html && node.tag == tag.tag && (tag.tag != .unknown || node.localName == tag.name) {
                generateImpliedEndTags(except: tag.tag == .unknown ? nil : tag.tag)
                if !currentIs(node) { error("unexpected-end-tag") }
                popUntil(node)
                return
            }
            if ElementSets.isSpecial(node) { error("unexpected-end-tag"); return }
            i -= 1
        }
    }
}
