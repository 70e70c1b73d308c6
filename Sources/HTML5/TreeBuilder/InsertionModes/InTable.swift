// The table insertion modes (§13.2.6.4.9–15): in table, in table text, in caption, in column
// group, in table body, in row, in cell.

extension TreeBuilder {
    // MARK: Tables

    mutating func clearStackToTableContext() {
        while !openElements.isEmpty, !currentIsHTML(in: TreeBuilderSets.tableContext) { pop() }
    }

    mutating func clearStackToTableBodyContext() {
        while !openElements.isEmpty, !currentIsHTML(in: TreeBuilderSets.set6) { pop() }
    }

    mutating func clearStackToTableRowContext() {
        while !openElements.isEmpty, !currentIsHTML(in: TreeBuilderSets.set7) { pop() }
    }

    mutating func inTable(_ token: Token) {
        switch token {
        case .characterBytes: characterBytesNotDispatched()
        case .characters:
            if currentIsHTML(in: TreeBuilderSets.set8) {
                pendingTableText = ""
                originalMode = mode
                mode = .inTableText
                process(token, mode)
                return
            }
            inTableAnythingElse(token)
        case .comment(let data): insertComment(data)
        case .doctype: error("unexpected-doctype")
        case .startTag(let tag):
            switch tag.tag {
            case .caption:
                clearStackToTableContext()
                activeFormatting.append(nil)
                insertElement(tag)
                mode = .inCaption
            case .colgroup:
                clearStackToTableContext()
                insertElement(tag)
                mode = .inColumnGroup
            case .col:
                clearStackToTableContext()
                insertElement(TagToken(.colgroup))
                mode = .inColumnGroup
                process(token, mode)
            case .tbody, .tfoot, .thead:
                clearStackToTableContext()
                insertElement(tag)
                mode = .inTableBody
            case .td, .th, .tr:
                clearStackToTableContext()
                insertElement(TagToken(.tbody))
                mode = .inTableBody
                process(token, mode)
            case .table:
                error("unexpected-start-tag")
                if !inScope(.table, .table) { return }
                popUntil(.table)
                resetInsertionMode()
                process(token, mode)
            case .style, .script, .template:
                inHead(token)
            case .input where tag.attribute("type")?.lowercased() == "hidden":
                error("unexpected-start-tag")
                insertElement(tag); pop()
            case .form:
                error("unexpected-start-tag")
                if (openCount(.template)) > 0 || formElement != nil { return }
                formElement = insertElementReturning(tag)
                pop()
            default:
                inTableAnythingElse(token)
            }
        case .endTag(let tag):
            switch tag.tag {
            case .table:
                if !inScope(.table, .table) { error("unexpected-end-tag"); return }
                popUntil(.table)
                resetInsertionMode()
            case .body, .caption, .col, .colgroup, .html, .tbody, .td, .tfoot, .th, .thead, .tr:
                error("unexpected-end-tag")
            case .template: inHead(token)
            default: inTableAnythingElse(token)
            }
        case .eof: inBody(token)
        }
    }

    mutating func inTableAnythingElse(_ token: Token) {
        error("foster-parenting")
        fosterParenting = true
        inBody(token)
        fosterParenting = false
    }

    mutating func inTableText(_ token: Token) {
        if case .characters(var s) = token {
            if runContainsNUL(s) { error("unexpected-null-character"); s = s.removingNUL() }
            pendingTableText += s
            return
        }
        let text = pendingTableText
        pendingTableText = ""
        if containsNonWhitespace(text) {
            error("foster-parenting-characters")
            fosterParenting = true
            inBody(.characters(text))
            fosterParenting = false
        } else {
            insertText(text)
        }
        mode = originalMode
        process(token, mode)
    }

    mutating func inCaption(_ token: Token) {
        switch token {
        case .endTag(let tag) where tag.tag == .caption:
            closeCaption()
        case .startTag(let tag) where TreeBuilderSets.set9.contains(tag.tag):
            if closeCaption() { process(token, mode) }
        case .endTag(let tag) where tag.tag == .table:
            if closeCaption() { process(token, mode) }
        case .endTag(let tag) where TreeBuilderSets.set10.contains(tag.tag):
            error("unexpected-end-tag")
        default:
            inBody(token)
        }
    }

    @discardableResult
    mutating func closeCaption() -> Bool {
        if !inScope(.caption, .table) { error("unexpected-end-tag"); return false }
        generateImpliedEndTags()
        if !currentIsHTML(.caption) { error("unexpected-end-tag") }
        popUntil(.caption)
        clearFormattingToMarker()
        mode = .inTable
        return true
    }

    mutating func inColumnGroup(_ token: Token) {
        switch token {
        case .characters(let s):
            guard let rest = insertLeadingWhitespace(s) else { return }
            if !currentIsHTML(.colgroup) { error("unexpected-character"); return }
            pop(); mode = .inTable; process(.characters(rest), mode)
        case .comment(let data): insertComment(data)
        case .doctype: error("unexpected-doctype")
        case .startTag(let tag) where tag.tag == .html: inBody(token)
        case .startTag(let tag) where tag.tag == .col: insertElement(tag); pop()
        case .endTag(let tag) where tag.tag == .colgroup:
            if !currentIsHTML(.colgroup) { error("unexpected-end-tag"); return }
            pop(); mode = .inTable
        case .endTag(let tag) where tag.tag == .col: error("unexpected-end-tag")
        case .startTag(let tag) where tag.tag == .template: inHead(token)
        case .endTag(let tag) where tag.tag == .template: inHead(token)
        case .eof: inBody(token)
        default:
            if !currentIsHTML(.colgroup) { error("unexpected-token"); return }
            pop(); mode = .inTable; process(token, mode)
        }
    }

    mutating func inTableBody(_ token: Token) {
        switch token {
        case .startTag(let tag) where tag.tag == .tr:
            clearStackToTableBodyContext()
            insertElement(tag)
            mode = .inRow
        case .startTag(let tag) where tag.tag == .th || tag.tag == .td:
            error("unexpected-cell")
            clearStackToTableBodyContext()
            insertElement(TagToken(.tr))
            mode = .inRow
            process(token, mode)
        case .endTag(let tag) where TreeBuilderSets.set11.contains(tag.tag):
            if !inScope(tag.tag, .table) { error("unexpected-end-tag"); return }
            clearStackToTableBodyContext()
            pop()
            mode = .inTable
        case .startTag(let tag) where TreeBuilderSets.set12.contains(tag.tag):
            tableBodyEscape(token)
        case .endTag(let tag) where tag.tag == .table:
            tableBodyEscape(token)
        case .endTag(let tag) where TreeBuilderSets.set13.contains(tag.tag):
            error("unexpected-end-tag")
        default:
            inTable(token)
        }
    }

    mutating func tableBodyEscape(_ token: Token) {
        if !inScope(anyOf: [.tbody, .thead, .tfoot], .table) { error("unexpected-token"); return }
        clearStackToTableBodyContext()
        pop()
        mode = .inTable
        process(token, mode)
    }

    mutating func inRow(_ token: Token) {
        switch token {
        case .startTag(let tag) where tag.tag == .th || tag.tag == .td:
            clearStackToTableRowContext()
            insertElement(tag)
            mode = .inCell
            activeFormatting.append(nil)
        case .endTag(let tag) where tag.tag == .tr:
            if !inScope(.tr, .table) { error("unexpected-end-tag"); return }
            clearStackToTableRowContext()
            pop()
            mode = .inTableBody
        case .startTag(let tag) where TreeBuilderSets.set14.contains(tag.tag):
            if !inScope(.tr, .table) { error("unexpected-start-tag"); return }
            clearStackToTableRowContext(); pop(); mode = .inTableBody; process(token, mode)
        case .endTag(let tag) where tag.tag == .table:
            if !inScope(.tr, .table) { error("unexpected-end-tag"); return }
            clearStackToTableRowContext(); pop(); mode = .inTableBody; process(token, mode)
        case .endTag(let tag) where TreeBuilderSets.set11.contains(tag.tag):
            if !inScope(tag.tag, .table) { error("unexpected-end-tag"); return }
            if !inScope(.tr, .table) { return }
            clearStackToTableRowContext(); pop(); mode = .inTableBody; process(token, mode)
        case .endTag(let tag) where TreeBuilderSets.set15.contains(tag.tag):
            error("unexpected-end-tag")
        default:
            inTable(token)
        }
    }

    mutating func closeCell() {
        generateImpliedEndTags()
        if !(currentIsHTML(.td) || currentIsHTML(.th)) { error("unexpected-end-tag") }
        popUntil(anyOf: [.td, .th])
        clearFormattingToMarker()
        mode = .inRow
    }

    mutating func inCell(_ token: Token) {
        switch token {
        case .endTag(let tag) where tag.tag == .td || tag.tag == .th:
            if !inScope(tag.tag, .table) { error("unexpected-end-tag"); return }
            generateImpliedEndTags()
            if !currentIsHTML(tag.tag) { error("unexpected-end-tag") }
            popUntil(tag.tag)
            clearFormattingToMarker()
            mode = .inRow
        case .startTag(let tag) where TreeBuilderSets.set9.contains(tag.tag):
            if !inScope(.td, .table) && !inScope(.th, .table) { error("unexpected-start-tag"); return }
            closeCell()
            process(token, mode)
        case .endTag(let tag) where TreeBuilderSets.set16.contains(tag.tag):
            error("unexpected-end-tag")
        case .endTag(let tag) where TreeBuilderSets.set1.contains(tag.tag):
            if !inScope(tag.tag, .table) { error("unexpected-end-tag"); return }
            closeCell()
            process(token, mode)
        default:
            inBody(token)
        }
    }
}
