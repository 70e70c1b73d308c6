// The generic raw text / RCDATA element parsing algorithms and the "text" insertion mode
// (§13.2.6.2, §13.2.6.4.8).

extension TreeBuilder {
    mutating func genericRCDATA(_ tag: TagToken) {
        insertElement(tag)
        tokenizer.state = .rcdata
        originalMode = mode
        mode = .text
    }

    mutating func genericRawText(_ tag: TagToken) {
        insertElement(tag)
        tokenizer.state = .rawtext
        originalMode = mode
        mode = .text
    }

    // MARK: Text (§13.2.6.4.8)

    mutating func textMode(_ token: Token) {
        switch token {
        case .characters(let s): insertText(s)
        case .eof:
            error("eof-in-text")
            pop()
            mode = originalMode
            process(token, mode)
        case .endTag:
            pop()
            mode = originalMode
        default: break
        }
    }
}
