// The "in template" insertion mode (§13.2.6.4.18).

extension TreeBuilder {
    // MARK: Template (§13.2.6.4.18)

    mutating func inTemplate(_ token: Token) {
        switch token {
        case .characters, .comment, .doctype:
            inBody(token)
        case .startTag(let tag):
            let next: Mode
            switch tag.tag {
            case .base, .basefont, .bgsound, .link, .meta, .noframes, .script, .style, .template, .title:
                inHead(token); return
            case .caption, .colgroup, .tbody, .tfoot, .thead: next = .inTable
            case .col: next = .inColumnGroup
            case .tr: next = .inTableBody
            case .td, .th: next = .inRow
            default: next = .inBody
            }
            templateModes.removeLast()
            templateModes.append(next)
            mode = next
            process(token, mode)
        case .endTag(let tag):
            if tag.tag == .template { inHead(token) } else { error("unexpected-end-tag") }
        case .eof:
            if (openCount(.template)) == 0 { return }
            error("eof-in-template")
            popUntil(.template)
            clearFormattingToMarker()
            templateModes.removeLast()
            resetInsertionMode()
            process(token, mode)
        }
    }
}
