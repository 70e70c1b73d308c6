// The "in template" insertion mode (§13.2.6.4.18).

extension TreeBuilder {
    // MARK: Template (§13.2.6.4.18)

    mutating func inTemplate(_ token: Token) {
        switch token {
        case .characterBytes: characterBytesNotDispatched()
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
            reprocessEOFInTemplate(token)
        }
    }

    /// "Reprocess the token" of the end-of-file step above, as a loop. Reprocessing reaches that
    /// step again (directly, or through "in body" and the table modes) once for every template
    /// still open, so as a recursion it grew the stack by a few frames per open template:
    /// 100 000 unclosed `<template>` overflowed it, with the default depth limit too (the limit
    /// flattens the tree, not the stack of open elements). The outermost step reprocesses the
    /// token until no step reached from it asks for another round; a step reached from it only
    /// asks. Every rule on the way hands the end-of-file token on as its last action, so the
    /// steps run in the same order as with the recursion.
    ///
    /// Trust-model row: inbox (incoming mail) — hostile input (DoS): a message of unclosed
    /// templates is parsed with a stack of bounded depth.
    private mutating func reprocessEOFInTemplate(_ token: Token) {
        if reprocessingEOFInTemplate { eofInTemplatePending = true; return }
        reprocessingEOFInTemplate = true
        repeat {
            eofInTemplatePending = false
            process(token, mode)
        } while eofInTemplatePending
        reprocessingEOFInTemplate = false
    }
}
