// The WHATWG tree-construction stage (§13.2.6): insertion modes, the stack of open elements, the
// list of active formatting elements, the adoption agency algorithm, foster parenting, templates,
// foreign content and fragment parsing.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Name sets of the insertion modes (hoisted so no array is built per token; outside
/// ``TreeBuilder`` because a generic type cannot have static stored properties).
enum TreeBuilderSets {
    // .mi, .mo, .mn, .ms, .mtext, .annotationXml
    static let set0 = HTMLTagSet(words: 0x0000000000000000, 0x0000000000000000, 0x0009F00000000000, 0x0000000000000000)
    // .table, .tbody, .tfoot, .thead, .tr
    static let set1 = HTMLTagSet(words: 0x0000000000000000, 0x8000000000000000, 0x0000000000000251, 0x0000000000000000)
    // .mi, .mo, .mn, .ms, .mtext
    static let set2 = HTMLTagSet(words: 0x0000000000000000, 0x0000000000000000, 0x0001F00000000000, 0x0000000000000000)
    // .head, .body, .html, .br
    static let set3 = HTMLTagSet(words: 0x2200000000180000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000)
    // .basefont, .bgsound, .link, .meta, .noframes, .style
    static let set4 = HTMLTagSet(words: 0x0000000000009000, 0x0800000002040400, 0x0000000000000000, 0x0000000000000000)
    // .address, .div, .p
    static let set5 = HTMLTagSet(words: 0x0000002000000010, 0x0000000100000000, 0x0000000000000000, 0x0000000000000000)
    // .tbody, .tfoot, .thead, .template, .html
    static let set6 = HTMLTagSet(words: 0x2000000000000000, 0x0000000000000000, 0x0000000000000055, 0x0000000000000000)
    // .tr, .template, .html
    static let set7 = HTMLTagSet(words: 0x2000000000000000, 0x0000000000000000, 0x0000000000000204, 0x0000000000000000)
    // .table, .tbody, .template, .tfoot, .thead, .tr
    static let set8 = HTMLTagSet(words: 0x0000000000000000, 0x8000000000000000, 0x0000000000000255, 0x0000000000000000)
    // .caption, .col, .colgroup, .tbody, .td, .tfoot, .th, .thead, .tr
    static let set9 = HTMLTagSet(words: 0x0000000018800000, 0x0000000000000000, 0x0000000000000273, 0x0000000000000000)
    // .body, .col, .colgroup, .html, .tbody, .td, .tfoot, .th, .thead, .tr
    static let set10 = HTMLTagSet(words: 0x2000000018080000, 0x0000000000000000, 0x0000000000000273, 0x0000000000000000)
    // .tbody, .tfoot, .thead
    static let set11 = HTMLTagSet(words: 0x0000000000000000, 0x0000000000000000, 0x0000000000000051, 0x0000000000000000)
    // .caption, .col, .colgroup, .tbody, .tfoot, .thead
    static let set12 = HTMLTagSet(words: 0x0000000018800000, 0x0000000000000000, 0x0000000000000051, 0x0000000000000000)
    // .body, .caption, .col, .colgroup, .html, .td, .th, .tr
    static let set13 = HTMLTagSet(words: 0x2000000018880000, 0x0000000000000000, 0x0000000000000222, 0x0000000000000000)
    // .caption, .col, .colgroup, .tbody, .tfoot, .thead, .tr
    static let set14 = HTMLTagSet(words: 0x0000000018800000, 0x0000000000000000, 0x0000000000000251, 0x0000000000000000)
    // .body, .caption, .col, .colgroup, .html, .td, .th
    static let set15 = HTMLTagSet(words: 0x2000000018880000, 0x0000000000000000, 0x0000000000000022, 0x0000000000000000)
    // .body, .caption, .col, .colgroup, .html
    static let set16 = HTMLTagSet(words: 0x2000000018880000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000)
    // .table, .template, .html
    static let tableContext = HTMLTagSet(words: 0x2000000000000000, 0x8000000000000000, 0x0000000000000004, 0x0000000000000000)
}

/// The tree-construction stage, generic over the tree it builds (``TreeSink``; docs/arena-tree.md):
/// the class DOM (``DOMSink``) or the arena (``ArenaSink``). Specialised at compile time for each.
///
/// Inside the builder, `Element` and `Node` name the sink's handles (``TreeSink/ElementRef``,
/// ``TreeSink/NodeRef``), so the insertion modes read as the spec does; the class DOM's own types
/// are `HTML5.Element` and `HTML5.Node` here.
struct TreeBuilder<Sink: TreeSink> {
    typealias Element = Sink.ElementRef
    typealias Node = Sink.NodeRef

    enum Mode {
        case initial, beforeHTML, beforeHead, inHead, inHeadNoscript, afterHead, inBody, text, inTable, inTableText
        case inCaption, inColumnGroup, inTableBody, inRow, inCell, inTemplate, afterBody
        case inFrameset, afterFrameset, afterAfterBody, afterAfterFrameset
    }

    var tokenizer: Tokenizer
    /// The tree being built.
    var sink: Sink
    let scripting: Bool
    let maxDepth: Int
    var depthTruncated = false

    var mode: Mode = .initial
    var originalMode: Mode = .initial
    var templateModes: [Mode] = []
    /// `true` while an "in template" end-of-file step reprocesses the token (InTemplate.swift).
    var reprocessingEOFInTemplate = false
    /// Set by an "in template" end-of-file step reached from that reprocessing: another round.
    var eofInTemplatePending = false
    var openElements: [Element] = []
    /// Interned HTML-namespace element name (raw value) -> how many are on the stack (makes "in
    /// scope" O(1) when absent; a fixed array, so no hashing per push and pop).
    var openCounts = ZeroTables.countsPerTag
    var activeFormatting: [Element?] = []  // nil = marker
    var headElement: Element?
    var formElement: Element?
    var framesetOK = true
    var fosterParenting = false
    var pendingTableText = ""
    var skipNextNewline = false
    var context: Element?
    var iframeSrcdoc = false
    /// Select elements whose `<selectedcontent>` already holds an option's clone; `true` when
    /// that option had the `selected` attribute.
    var selectedContentChosen: [Element.Identity: Bool] = [:]
    /// HTML `<selectedcontent>` elements the parser has pushed (never decremented). While it is 0
    /// the document holds none (the parser makes every element; clones copy existing ones), so
    /// closing an option has nothing to look for.
    var selectedContentMade = 0
    /// Elements re-created by "reconstruct the active formatting elements" so far, and whether a
    /// bound on the formatting elements was reached (ActiveFormatting.swift).
    var reconstructedElements = 0
    var formattingLimited = false
    /// ``HTML5ParserOptions/maxReconstructedElements`` (`nil`: only the input's size plus 4 096).
    var maxReconstructedElements: Int?
    /// Nodes visited looking for an option's `<select>` and its `<selectedcontent>`, and whether
    /// that search hit its bound (``selectedContentSearchLimit``) and stopped.
    var selectedContentSearchSteps = 0
    var selectedContentLimited = false
    init(tokenizer: Tokenizer, sink: Sink, scripting: Bool, maxDepth: Int) {
        self.tokenizer = tokenizer
        self.tokenizer.textAsBytes = Sink.takesTextBytes
        self.sink = sink
        self.scripting = scripting
        self.maxDepth = max(maxDepth, 4)
        // Room for the nesting of ordinary mail up front: growing from empty took four
        // reallocations by depth 16, each through the standard library's unspecialized
        // class-array path (a runtime metadata lookup per allocation).
        openElements.reserveCapacity(16)
    }

    mutating func error(_ code: String) {
        if tokenizer.recordErrors { tokenizer.errors.append(ParseError(code: code, offset: tokenizer.pos)) }
    }

    // MARK: Running

    mutating func run() {
        while true {
            if sink.isVerifying {
                // A verification stops at its first mismatch.
                if sink.verificationFailed { break }
                tokenizer.expectedNode = sink.expectedNode
            }
            var token = tokenizer.nextToken()
            if case .characterBytes(let range, let inInput) = token {
                // Only when the sink takes text as bytes. The common case (in body, in cell or
                // in the text mode, nothing to skip, no U+0000) goes to the sink as bytes; any
                // other gets its `String` and the usual path.
                if !skipNextNewline && takesTextBytesPath(range, inInput: inInput) {
                    // Nothing writes the tokenizer's bytes until the next token. (They are read
                    // through references of their own: the insertion changes `self`.)
                    Tokenizer.withTextBytes(range, inInput: inInput, input: tokenizer.input, textBytes: tokenizer.textBytes) {
                        textBytesFastPath($0)
                    }
                    updateAllowCDATA()
                    continue
                }
                token = .characters(tokenizer.string(ofTextBytes: range, inInput: inInput))
            }
            if !skipNextNewline && takesInBodyFastPath(token) {
                // The token is consumed here (not borrowed through the dispatcher), so its
                // string, or its name and attributes, move into the tree without a retain and
                // release each. Same steps as `dispatch` -> in body (or in cell -> in body).
                // (`guard case ... = consume token` moves the payload out; a `switch consume`
                // over both cases copied the tag's name and attributes and then destroyed the
                // token.)
                if case .characters = token {
                    guard case .characters(let s) = consume token else { preconditionFailure() }
                    inBodyCharacters(s)
                } else {
                    guard case .startTag(let tag) = consume token else { preconditionFailure("not a fast-path token") }
                    inBodyStartTag(tag)
                }
            } else if skipNextNewline, case .characters(var s) = token {
                skipNextNewline = false
                if s.utf8.first == 0x0A { s.removeFirst(); if s.isEmpty { continue } }
                dispatch(.characters(s))
            } else {
                skipNextNewline = false
                dispatch(token)
                if case .eof = token { stopParsing(); break }
            }
            updateAllowCDATA()
        }
    }

    /// CDATA sections are tokenized only in foreign content (the adjusted current node's
    /// namespace), which each token may change.
    @inline(__always) mutating func updateAllowCDATA() {
        let namespace = adjustedCurrentNamespace
        tokenizer.allowCDATA = namespace != nil && namespace != .html
    }

    /// `true` when a ``Token/characterBytes(_:inInput:)`` run would reach the "in body" rules unchanged
    /// (in body or in cell, with an HTML adjusted current node or none, and no U+0000 in the run)
    /// or the "text" insertion mode's (which inserts characters as they are; the current node
    /// is the HTML raw-text or RCDATA element).
    @inline(__always) func takesTextBytesPath(_ range: Range<Int>, inInput: Bool) -> Bool {
        guard mode == .inBody || mode == .inCell || mode == .text else { return false }
        if let namespace = adjustedCurrentNamespace, namespace != .html { return false }
        guard tokenizer.inputHasNUL else { return true }
        return !tokenizer.withTextBytes(range, inInput: inInput) { containsNUL($0) }
    }

    /// ``inBodyCharacters(_:)`` (or the text mode's insertion) for a run given as bytes, appended
    /// to the sink as bytes where the text goes at the end of an open element (the common case);
    /// the rare other place (foster parenting) gets a `String`.
    mutating func textBytesFastPath(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard !bytes.isEmpty else { return }
        if mode != .text {
            reconstructFormatting()
            if framesetOK && containsNonWhitespace(bytes) { framesetOK = false }
        }
        if let index = appendTargetIndex() {
            sink.appendText(bytes: bytes, to: &openElements[index])
            return
        }
        insertText(ByteAccumulator.stringFromValidUTF8(bytes))
    }

    /// `true` for the most common tokens of mail, which the dispatcher would hand to the "in body"
    /// rules unchanged: a character run without U+0000 or a start tag, in body (or in cell, for a
    /// start tag that does not close the cell), with an HTML adjusted current node (or none), so
    /// `dispatch` would call `process(token, mode)`.
    @inline(__always) func takesInBodyFastPath(_ token: Token) -> Bool {
        guard mode == .inBody || mode == .inCell else { return false }
        if let namespace = adjustedCurrentNamespace, namespace != .html { return false }
        switch token {
        case .characters(let s): return !runContainsNUL(s)
        case .startTag(let tag): return mode == .inBody || !TreeBuilderSets.set9.contains(tag.tag)
        default: return false
        }
    }

    /// Sets up fragment parsing with `context` (§13.4 "parsing HTML fragments").
    mutating func prepareFragment(context classContext: HTML5.Element) {
        let (context, form) = sink.importContext(classContext)
        self.context = context
        if context.namespace == .html {
            switch context.tag {
            case .title, .textarea: tokenizer.state = .rcdata
            case .style, .xmp, .iframe, .noembed, .noframes: tokenizer.state = .rawtext
            case .script: tokenizer.state = .scriptData
            case .noscript: if scripting { tokenizer.state = .rawtext }
            case .plaintext: tokenizer.state = .plaintext
            default: break
            }
        }
        let root = sink.newElement(tag: .html, localName: "html", namespace: .html, attributes: [])
        sink.appendToDocument(root)
        push(root)
        if context.isHTML(.template) { templateModes.append(.inTemplate) }
        resetInsertionMode()
        formElement = form
        tokenizer.allowCDATA = context.namespace != .html
    }

    // MARK: Reset the insertion mode (§13.2.4.1)

    mutating func resetInsertionMode() {
        var i = openElements.count - 1
        while i >= 0 {
            var node = openElements[i]
            let last = i == 0
            if last, let context { node = context }
            if node.namespace == .html {
                switch node.tag {
                case .td, .th: if !last { mode = .inCell; return }
                case .tr: mode = .inRow; return
                case .tbody, .thead, .tfoot: mode = .inTableBody; return
                case .caption: mode = .inCaption; return
                case .colgroup: mode = .inColumnGroup; return
                case .table: mode = .inTable; return
                case .template: mode = templateModes.last ?? .inTemplate; return
                case .head: if !last { mode = .inHead; return }
                case .body: mode = .inBody; return
                case .frameset: mode = .inFrameset; return
                case .html: mode = headElement == nil ? .beforeHead : .afterHead; return
                default: break
                }
            }
            if last { mode = .inBody; return }
            i -= 1
        }
        mode = .inBody
    }

    // MARK: Dispatch (§13.2.6 tree construction dispatcher)

    mutating func dispatch(_ token: Token) {
        // Most tokens arrive with an HTML adjusted current node: decide that from the namespace
        // alone before touching the node.
        guard let namespace = adjustedCurrentNamespace, namespace != .html, let node = adjustedCurrentNode else {
            processInMode(token, mode); return
        }
        switch token {
        case .startTag(let tag):
            if isMathMLTextIntegrationPoint(node) && tag.tag != .mglyph && tag.tag != .malignmark { process(token, mode); return }
            if node.namespace == .mathml && node.tag == .annotationXml && tag.tag == .svg { process(token, mode); return }
            if isHTMLIntegrationPoint(node) { process(token, mode); return }
        case .characters:
            if isMathMLTextIntegrationPoint(node) || isHTMLIntegrationPoint(node) { process(token, mode); return }
        case .eof:
            process(token, mode); return
        default: break
        }
        processForeign(token)
    }

    // MARK: Modes

    mutating func process(_ token: Token, _ mode: Mode) { processInMode(token, mode) }

    /// `process` inlined into `dispatch`'s common case (one call level less for nearly every
    /// dispatched token); the other callers, which reprocess a token in another mode, and the
    /// foreign-content cases keep the out-of-line `process`.
    @inline(__always) private mutating func processInMode(_ token: Token, _ mode: Mode) {
        switch mode {
        case .initial: initial(token)
        case .beforeHTML: beforeHTML(token)
        case .beforeHead: beforeHead(token)
        case .inHead: inHead(token)
        case .inHeadNoscript: inHeadNoscript(token)
        case .afterHead: afterHead(token)
        case .inBody: inBody(token)
        case .text: textMode(token)
        case .inTable: inTable(token)
        case .inTableText: inTableText(token)
        case .inCaption: inCaption(token)
        case .inColumnGroup: inColumnGroup(token)
        case .inTableBody: inTableBody(token)
        case .inRow: inRow(token)
        case .inCell: inCell(token)
        case .inTemplate: inTemplate(token)
        case .afterBody: afterBody(token)
        case .inFrameset: inFrameset(token)
        case .afterFrameset: afterFrameset(token)
        case .afterAfterBody: afterAfterBody(token)
        case .afterAfterFrameset: afterAfterFrameset(token)
        }
    }

    /// Inserts the leading ASCII whitespace of a character run (the modes where whitespace is
    /// inserted as is) and returns the rest, or `nil` when the run was all whitespace.
    mutating func insertLeadingWhitespace(_ s: String) -> String? {
        let (ws, rest) = splitWhitespace(s)
        insertText(ws)
        return rest.isEmpty ? nil : rest
    }

    /// Splits leading ASCII whitespace off a character run.
    func splitWhitespace(_ s: String) -> (String, String) {
        let utf8 = s.utf8
        var index = utf8.startIndex
        while index < utf8.endIndex, isWhitespaceByte(utf8[index]) { index = utf8.index(after: index) }
        if index == utf8.startIndex { return ("", s) }
        if index == utf8.endIndex { return (s, "") }
        return (String(s[..<index]), String(s[index...]))
    }
}

extension TreeBuilder {
    /// `true` if a character run of this document holds U+0000: ``containsNUL(_:)``, asked only
    /// when the input has a NUL byte at all (``Tokenizer/inputHasNUL``; mail almost never does).
    @inline(__always) func runContainsNUL(_ s: String) -> Bool {
        tokenizer.inputHasNUL && containsNUL(s)
    }
}

/// The insertion modes never see ``Token/characterBytes(_:inInput:)``: ``TreeBuilder/run()`` hands such a
/// run to the sink itself or turns it into ``Token/characters(_:)`` before dispatching it.
func characterBytesNotDispatched() -> Never {
    preconditionFailure("a character run as bytes reached an insertion mode")
}

/// `true` if the character run holds U+0000 (`memchr` over its contiguous UTF-8, bounded by the
/// string's own count; a bridged string without contiguous storage is scanned byte by byte).
/// Runs are scanned once per token, so this is the hottest check of the text path.
@inline(__always) func containsNUL(_ s: String) -> Bool {
    if let found = s.utf8.withContiguousStorageIfAvailable({ containsNUL($0) }) { return found }
    return s.utf8.contains(0)
}

/// `true` if `bytes` holds U+0000 (`memchr`).
@inline(__always) func containsNUL(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return false }
    return memchr(base, 0, bytes.count) != nil
}

/// `true` if the run holds a byte other than ASCII whitespace.
@inline(__always) func containsNonWhitespace(_ s: String) -> Bool {
    if let found = s.utf8.withContiguousStorageIfAvailable({ containsNonWhitespace($0) }) { return found }
    return s.utf8.contains { !isWhitespaceByte($0) }
}

/// ``containsNonWhitespace(_:)-(String)`` over bytes (a run handed over as bytes).
@inline(__always) func containsNonWhitespace(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    for b in bytes where !isWhitespaceByte(b) { return true }
    return false
}

@inline(__always) func isWhitespaceByte(_ b: UInt8) -> Bool { b == 0x20 || b == 0x0A || b == 0x09 || b == 0x0C || b == 0x0D }
@inline(__always) func isWhitespaceScalar(_ s: Unicode.Scalar) -> Bool { s.value < 128 && isWhitespaceByte(UInt8(s.value)) }

extension String {
    mutating func removingNUL() -> String { String(decoding: utf8.filter { $0 != 0 }, as: UTF8.self) }
    mutating func replacingNUL(with replacement: String) -> String {
        var out = ""
        for scalar in unicodeScalars { if scalar == "\0" { out += replacement } else { out.unicodeScalars.append(scalar) } }
        return out
    }
}
