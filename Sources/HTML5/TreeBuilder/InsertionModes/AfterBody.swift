// The insertion modes after the body and for framesets (§13.2.6.4.19–23): after body, in
// frameset, after frameset, after after body, after after frameset.

extension TreeBuilder {
    // MARK: After body, frameset

    mutating func afterBody(_ token: Token) {
        switch token {
        case .characters(let s): afterBodyCharacters(s)
        case .comment(let data): insertComment(data, at: Place(parent: Sink.node(openElements[0]), before: nil))
        case .doctype: error("unexpected-doctype")
        case .startTag(let tag) where tag.tag == .html: inBody(token)
        case .endTag(let tag) where tag.tag == .html:
            if context != nil { error("unexpected-end-tag"); return }
            mode = .afterAfterBody
        case .eof: break
        default:
            error("unexpected-token"); mode = .inBody; process(token, mode)
        }
    }

    func whitespaceOnly(_ s: String) -> String {
        String(decoding: s.utf8.filter(isWhitespaceByte), as: UTF8.self)
    }

    /// Characters in "after body" and "after after body": leading whitespace is processed as in
    /// body; anything after it is a parse error, switches to "in body" and is reprocessed there.
    mutating func afterBodyCharacters(_ s: String) {
        let (ws, rest) = splitWhitespace(s)
        if !ws.isEmpty { inBody(.characters(ws)) }
        if rest.isEmpty { return }
        error("unexpected-character"); mode = .inBody; process(.characters(rest), mode)
    }

    /// Characters in "in frameset" and "after frameset": whitespace is inserted, every other
    /// character is a parse error and dropped.
    mutating func insertFramesetWhitespace(_ s: String) {
        let ws = whitespaceOnly(s)
        if ws.utf8.count != s.utf8.count { error("unexpected-character") }
        insertText(ws)
    }

    mutating func inFrameset(_ token: Token) {
        switch token {
        case .characterBytes: characterBytesNotDispatched()
        case .characters(let s): insertFramesetWhitespace(s)
        case .comment(let data): insertComment(data)
        case .doctype: error("unexpected-doctype")
        case .startTag(let tag):
            switch tag.tag {
            case .html: inBody(token)
            case .frameset: insertElement(tag)
            case .frame: insertElement(tag); pop()
            case .noframes: inHead(token)
            default: error("unexpected-start-tag")
            }
        case .endTag(let tag) where tag.tag == .frameset:
            if openElements.count == 1 { error("unexpected-end-tag"); return }
            pop()
            if context == nil && !currentIsHTML(.frameset) { mode = .afterFrameset }
        case .endTag: error("unexpected-end-tag")
        case .eof: break
        }
    }

    mutating func afterFrameset(_ token: Token) {
        switch token {
        case .characters(let s): insertFramesetWhitespace(s)
        case .comment(let data): insertComment(data)
        case .doctype: error("unexpected-doctype")
        case .startTag(let tag) where tag.tag == .html: inBody(token)
        case .startTag(let tag) where tag.tag == .noframes: inHead(token)
        case .endTag(let tag) where tag.tag == .html: mode = .afterAfterFrameset
        case .eof: break
        default: error("unexpected-token")
        }
    }

    mutating func afterAfterBody(_ token: Token) {
        switch token {
        case .comment(let data): insertComment(data, at: Place(parent: sink.document, before: nil))
        case .doctype: inBody(token)
        case .startTag(let tag) where tag.tag == .html: inBody(token)
        case .characters(let s): afterBodyCharacters(s)
        case .eof: break
        default:
            error("unexpected-token"); mode = .inBody; process(token, mode)
        }
    }

    mutating func afterAfterFrameset(_ token: Token) {
        switch token {
        case .comment(let data): insertComment(data, at: Place(parent: sink.document, before: nil))
        case .doctype: inBody(token)
        case .startTag(let tag) where tag.tag == .html: inBody(token)
        case .characters(let s):
            let ws = whitespaceOnly(s)
            if !ws.isEmpty { inBody(.characters(ws)) }
            if ws.utf8.count != s.utf8.count { error("unexpected-character") }
        case .startTag(let tag) where tag.tag == .noframes: inHead(token)
        case .eof: break
        default: error("unexpected-token")
        }
    }
}
