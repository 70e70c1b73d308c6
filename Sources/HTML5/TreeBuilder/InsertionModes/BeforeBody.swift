// The insertion modes before the body (§13.2.6.4.1–6): initial (doctype and quirks mode), before
// html, before head, in head, in head noscript, after head.

extension TreeBuilder {
    mutating func initial(_ token: Token) {
        switch token {
        case .characters(let s):
            let (_, rest) = splitWhitespace(s)
            if rest.isEmpty { return }
            initialAnythingElse()
            process(.characters(rest), mode)
        case .comment(let data): insertComment(data, at: Place(parent: sink.document, before: nil))
        case .doctype(let d):
            let name = d.name ?? ""
            if name != "html" || d.publicId != nil || (d.systemId != nil && d.systemId != "about:legacy-compat") {
                error("bad-doctype")
            }
            sink.appendDoctype(name: name, publicId: d.publicId ?? "", systemId: d.systemId ?? "")
            if !iframeSrcdoc { sink.quirksMode = quirksMode(for: d) }
            mode = .beforeHTML
        default:
            initialAnythingElse()
            process(token, mode)
        }
    }

    mutating func initialAnythingElse() {
        if !iframeSrcdoc { error("expected-doctype"); sink.quirksMode = .quirks }
        mode = .beforeHTML
    }

    func quirksMode(for d: DoctypeToken) -> Document.QuirksMode {
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
        case .comment(let data): insertComment(data, at: Place(parent: sink.document, before: nil))
        case .characters(let s):
            let (_, rest) = splitWhitespace(s)
            if rest.isEmpty { return }
            beforeHTMLAnythingElse()
            process(.characters(rest), mode)
        case .startTag(let tag) where tag.tag == .html:
            // (Not reached in fragment parsing, which a verification is: it would append there.)
            if sink.isVerifying { sink.failVerification(); return }
            let element = createElement(tag, .html)
            sink.appendToDocument(element)
            push(element)
            mode = .beforeHead
        case .endTag(let tag) where !TreeBuilderSets.set3.contains(tag.tag):
            error("unexpected-end-tag")
        default:
            beforeHTMLAnythingElse()
            process(token, mode)
        }
    }

    mutating func beforeHTMLAnythingElse() {
        let element = sink.newElement(tag: .html, localName: "html", namespace: .html, attributes: [])
        sink.appendToDocument(element)
        push(element)
        mode = .beforeHead
    }

    mutating func beforeHead(_ token: Token) {
        switch token {
        case .characters(let s):
            let (_, rest) = splitWhitespace(s)
            if rest.isEmpty { return }
            headElement = insertElementReturning(TagToken(.head))
            mode = .inHead
            process(.characters(rest), mode)
        case .comment(let data): insertComment(data)
        case .doctype: error("unexpected-doctype")
        case .startTag(let tag) where tag.tag == .html: inBody(token)
        case .startTag(let tag) where tag.tag == .head:
            headElement = insertElementReturning(tag)
            mode = .inHead
        case .endTag(let tag) where !TreeBuilderSets.set3.contains(tag.tag):
            error("unexpected-end-tag")
        default:
            headElement = insertElementReturning(TagToken(.head))
            mode = .inHead
            process(token, mode)
        }
    }

    /// In head, "anything else": pop the head element, switch to "after head" and reprocess `token`.
    mutating func leaveHead(reprocessing token: Token) {
        pop()
        mode = .afterHead
        process(token, mode)
    }

    /// What "in head" and "after head" do alike: whitespace and comments are inserted, a DOCTYPE
    /// is a parse error, an `html` start tag goes to "in body". Returns the token left for the
    /// mode, nil when nothing is: characters come back without their leading whitespace.
    mutating func headCommonTokens(_ token: Token) -> Token? {
        switch token {
        case .characterBytes: characterBytesNotDispatched(); return nil
        case .characters(let s): return insertLeadingWhitespace(s).map { .characters($0) }
        case .comment(let data): insertComment(data); return nil
        case .doctype: error("unexpected-doctype"); return nil
        case .startTag(let tag) where tag.tag == .html: inBody(token); return nil
        default: return token
        }
    }

    mutating func inHead(_ token: Token) {
        guard let token = headCommonTokens(token) else { return }
        switch token {
        case .startTag(let tag):
            switch tag.tag {
            case .base, .basefont, .bgsound, .link:
                insertElement(tag); pop()
            case .meta:
                insertElement(tag); pop()
            case .title:
                genericRCDATA(tag)
            case .noscript where scripting, .noframes, .style:
                genericRawText(tag)
            case .noscript:
                insertElement(tag); mode = .inHeadNoscript
            case .script:
                let place = appropriatePlace()
                let element = createElement(tag, .html)
                insert(element, at: place)
                push(element)
                tokenizer.state = .scriptData
                originalMode = mode
                mode = .text
            case .template:
                insertElement(tag)
                activeFormatting.append(nil)
                framesetOK = false
                mode = .inTemplate
                templateModes.append(.inTemplate)
            case .head: error("unexpected-start-tag")
            default:
                leaveHead(reprocessing: token)
            }
        case .endTag(let tag):
            switch tag.tag {
            case .head: pop(); mode = .afterHead
            case .body, .html, .br: leaveHead(reprocessing: token)
            case .template:
                if (openCount(.template)) == 0 { error("unexpected-end-tag"); return }
                generateImpliedEndTagsThoroughly()
                if !currentIsHTML(.template) { error("unexpected-end-tag") }
                popUntil(.template)
                clearFormattingToMarker()
                templateModes.removeLast()
                resetInsertionMode()
            default: error("unexpected-end-tag")
            }
        case .characters, .eof:
            leaveHead(reprocessing: token)
        case .characterBytes, .comment, .doctype: return   // done in headCommonTokens
        }
    }

    mutating func inHeadNoscript(_ token: Token) {
        switch token {
        case .doctype: error("unexpected-doctype")
        case .startTag(let tag) where tag.tag == .html: inBody(token)
        case .endTag(let tag) where tag.tag == .noscript:
            pop(); mode = .inHead
        case .characters(let s):
            let (ws, rest) = splitWhitespace(s)
            if !ws.isEmpty { inHead(.characters(ws)) }
            if rest.isEmpty { return }
            error("unexpected-character"); pop(); mode = .inHead; process(.characters(rest), mode)
        case .comment: inHead(token)
        case .startTag(let tag) where TreeBuilderSets.set4.contains(tag.tag):
            inHead(token)
        case .startTag(let tag) where tag.tag == .head || tag.tag == .noscript:
            error("unexpected-start-tag")
        case .endTag(let tag) where tag.tag != .br:
            error("unexpected-end-tag")
        default:
            error("unexpected-token"); pop(); mode = .inHead; process(token, mode)
        }
    }

    mutating func afterHead(_ token: Token) {
        guard let token = headCommonTokens(token) else { return }
        switch token {
        case .startTag(let tag):
            switch tag.tag {
            case .body: insertElement(tag); framesetOK = false; mode = .inBody
            case .frameset: insertElement(tag); mode = .inFrameset
            case .base, .basefont, .bgsound, .link, .meta, .noframes, .script, .style, .template, .title:
                error("unexpected-start-tag")
                let head = headElement!
                push(head)
                inHead(token)
                removeFromStack(head)
            case .head: error("unexpected-start-tag")
            default:
                startBody(reprocessing: token)
            }
        case .endTag(let tag):
            switch tag.tag {
            case .template: inHead(token)
            case .body, .html, .br:
                startBody(reprocessing: token)
            default: error("unexpected-end-tag")
            }
        case .characters, .eof:
            startBody(reprocessing: token)
        case .characterBytes, .comment, .doctype: return   // done in headCommonTokens
        }
    }

    /// After head, "anything else": insert a body element, switch to "in body" and reprocess `token`.
    mutating func startBody(reprocessing token: Token) {
        insertElement(TagToken(.body))
        mode = .inBody
        process(token, mode)
    }
}
