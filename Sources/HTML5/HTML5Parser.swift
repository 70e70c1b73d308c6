import Foundation

/// Why parsing was refused.
///
/// Trust-model row: inbox — hostile input (oversized bodies) fails with a typed error instead of
/// exhausting memory. Conforms to `RampartError` in the CLI target (this module has no
/// dependency beyond Foundation).
public enum HTML5Error: Error, Sendable, Equatable, CustomStringConvertible {
    /// The input is larger than ``HTML5ParserOptions/maxInputBytes``.
    case inputTooLarge(size: Int, limit: Int)
    /// The fragment context names no element.
    case invalidContext(String)

    /// A stable identifier, e.g. `html5.inputTooLarge`.
    public var code: String {
        switch self {
        case .inputTooLarge: "html5.inputTooLarge"
        case .invalidContext: "html5.invalidContext"
        }
    }

    public var description: String {
        switch self {
        case let .inputTooLarge(size, limit):
            "The HTML is \(size) bytes, above the limit of \(limit) bytes; raise maxInputBytes or refuse the message."
        case let .invalidContext(context):
            "'\(context)' is not a usable fragment context; give an element name such as 'body' or 'svg path'."
        }
    }
}

/// Options of the parser, with limits against hostile input.
///
/// Trust-model row: inbox — limits bound time and memory on malicious mail.
public struct HTML5ParserOptions: Sendable {
    /// The scripting flag. Off by default: mail is rendered with scripts disabled, so `<noscript>`
    /// content is parsed as markup (which the sanitizer then sees).
    public var scripting = false
    /// Inputs above this many bytes are refused with ``HTML5Error/inputTooLarge(size:limit:)``.
    public var maxInputBytes = 64 << 20
    /// Elements nested deeper than this are inserted as children of the element at this depth
    /// (the tree is flattened there, like WebKit's limit; ``ParseResult/depthTruncated`` says it
    /// happened). Bounds the DOM depth for every later recursive consumer.
    public var maxNestingDepth = 512
    /// Attributes beyond this count on one element are dropped (a `too-many-attributes` parse
    /// error; ``ParseResult/attributesTruncated`` says it happened).
    public var maxAttributesPerElement = 256
    /// Elements re-created by reconstructing the active formatting elements in one parse, at
    /// most (`nil`: no bound but the parser's own, one per input byte plus 4 096, which always
    /// holds). Past it, closed entries are dropped from the list instead of re-created (a
    /// `formatting-elements-limit` parse error; ``ParseResult/formattingLimited`` says it
    /// happened). `<p><b class=cN>x</p>` repeated makes the Nth paragraph re-create N elements;
    /// the parser's own bound keeps that linear in the input, at about 140 bytes of memory per
    /// input byte (10 MB of it: 1.4 GB). A caller that parses untrusted mail can bound it
    /// absolutely.
    public var maxReconstructedElements: Int?
    /// Collect parse errors (costs a little time).
    public var recordParseErrors = true
    /// The charset from the MIME part (`Content-Type: text/html; charset=...`), if any.
    public var transportCharset: String?

    public init(scripting: Bool = false) { self.scripting = scripting }
}

/// What the parser produced: the tree plus the facts a sanitizer may want to log.
///
/// `Root` is the class DOM's ``Document`` or fragment root (``Element``), or an ``HTMLNode`` of an
/// arena tree (``HTMLTreeParseResult``).
///
/// Trust-model row: inbox — the tree and the evidence of malformed input.
public struct ParseResult<Root> {
    public let root: Root
    public let errors: [ParseError]
    /// The character encoding used to decode the bytes.
    public let encoding: String
    public let depthTruncated: Bool
    public let attributesTruncated: Bool
    /// The document has so many nodes to search for a `<select>`'s `<selectedcontent>` when its
    /// options close that the parser stopped copying options into `<selectedcontent>` (a
    /// `selectedcontent-search-limit` parse error marks where). The search is bounded by one node
    /// per input byte plus 65 536: hostile input cannot make it quadratic.
    public let selectedContentLimited: Bool
    /// A bound on the active formatting elements was reached (a `formatting-elements-limit` parse
    /// error marks where): Noah's Ark compares at most the last 320 entries, and the elements
    /// re-created by reconstructing the active formatting elements are at most the input's size
    /// plus 4 096 (past that, closed entries are dropped instead). Both keep hostile markup
    /// linear; from that point the tree departs from the spec's, so a sanitizer must not take
    /// such a parse of its own output as proof of stability.
    public let formattingLimited: Bool
    /// Nodes visited searching for selects and their `<selectedcontent>` (for tests).
    let selectedContentSearchSteps: Int
}

extension ParseResult {
    /// `root` with the facts `builder` gathered while it built the tree.
    init<Sink: TreeSink>(root: Root, builder: TreeBuilder<Sink>, encoding: String) {
        self.init(root: root, errors: builder.tokenizer.errors, encoding: encoding,
                  depthTruncated: builder.depthTruncated, attributesTruncated: builder.tokenizer.truncatedAttributes,
                  selectedContentLimited: builder.selectedContentLimited, formattingLimited: builder.formattingLimited,
                  selectedContentSearchSteps: builder.selectedContentSearchSteps)
    }
}

/// The spec-exact WHATWG HTML parser.
///
/// Trust-model row: inbox (incoming mail) and outbox (composer) — "sanitize": the sanitizer must
/// see the same tree the web view builds, so parsing follows the WHATWG algorithm exactly
/// (tested against the html5lib suite).
///
/// ```swift
/// let result = try HTML5Parser.parseDocument(Array(data))
/// for node in result.root.descendants { ... }
/// ```
public enum HTML5Parser {
    /// Parses a whole document from bytes, sniffing the encoding (BOM, transport charset,
    /// `<meta charset>` prescan, then UTF-8 if valid, else windows-1252).
    /// - Throws: ``HTML5Error/inputTooLarge(size:limit:)``.
    public static func parseDocument(_ bytes: [UInt8], options: HTML5ParserOptions = .init()) throws(HTML5Error) -> ParseResult<Document> {
        guard bytes.count <= options.maxInputBytes else { throw .inputTooLarge(size: bytes.count, limit: options.maxInputBytes) }
        let (utf8, encoding) = EncodingSniffer.decode(bytes, transportCharset: options.transportCharset)
        return run(input: InputStream.preprocess(utf8), encoding: encoding, options: options, context: nil)
    }

    /// Parses a whole document from a string.
    /// - Throws: ``HTML5Error/inputTooLarge(size:limit:)``.
    public static func parseDocument(_ html: String, options: HTML5ParserOptions = .init()) throws(HTML5Error) -> ParseResult<Document> {
        let count = html.utf8.count
        guard count <= options.maxInputBytes else { throw .inputTooLarge(size: count, limit: options.maxInputBytes) }
        return run(input: InputStream.preprocess(html), encoding: "utf-8", options: options, context: nil)
    }

    /// Parses a fragment as if it were the `innerHTML` of `context` (e.g. `Element(localName:
    /// "body")`, or `Element(localName: "path", namespace: .svg)`).
    /// - Throws: ``HTML5Error/inputTooLarge(size:limit:)``.
    public static func parseFragment(_ html: String, context: Element, options: HTML5ParserOptions = .init()) throws(HTML5Error) -> ParseResult<DocumentFragment> {
        let count = html.utf8.count
        guard count <= options.maxInputBytes else { throw .inputTooLarge(size: count, limit: options.maxInputBytes) }
        let result = run(input: InputStream.preprocess(html), encoding: "utf-8", options: options, context: context)
        let fragment = DocumentFragment()
        if let html = result.root.documentElement { html.moveChildren(to: fragment) }
        return ParseResult(root: fragment, errors: result.errors, encoding: result.encoding,
                           depthTruncated: result.depthTruncated, attributesTruncated: result.attributesTruncated,
                           selectedContentLimited: result.selectedContentLimited, formattingLimited: result.formattingLimited,
                           selectedContentSearchSteps: result.selectedContentSearchSteps)
    }

    /// Parses a fragment with the context given as html5lib writes it: `body`, `svg path`,
    /// `math mi`.
    /// - Throws: ``HTML5Error``.
    public static func parseFragment(_ html: String, contextName: String, options: HTML5ParserOptions = .init()) throws(HTML5Error) -> ParseResult<DocumentFragment> {
        try parseFragment(html, context: try contextElement(contextName), options: options)
    }

    /// The fragment context element named as html5lib writes it: `body`, `svg path`, `math mi`.
    /// - Throws: ``HTML5Error/invalidContext(_:)``.
    static func contextElement(_ contextName: String) throws(HTML5Error) -> Element {
        let parts = contextName.split(separator: " ")
        switch parts.count {
        case 1: return Element(localName: String(parts[0]).lowercased())
        case 2 where parts[0] == "svg": return Element(localName: String(parts[1]), namespace: .svg)
        case 2 where parts[0] == "math": return Element(localName: String(parts[1]), namespace: .mathml)
        default: throw .invalidContext(contextName)
        }
    }

    /// Parses `input`, already preprocessed (``InputStream``) and well-formed UTF-8.
    static func run(input: [UInt8], encoding: String, options: HTML5ParserOptions, context: Element?) -> ParseResult<Document> {
        let builder = build(input: input, sink: DOMSink(), options: options, context: context)
        return ParseResult(root: builder.sink.documentNode, builder: builder, encoding: encoding)
    }

    /// Runs the tree builder over `input` (preprocessed, well-formed UTF-8) into `sink`, and
    /// returns the builder when it has finished (its sink holds the tree).
    static func build<Sink: TreeSink>(input: [UInt8], sink: consuming Sink, options: HTML5ParserOptions, context: Element?) -> TreeBuilder<Sink> {
        // Every caller's input is well-formed UTF-8: `EncodingSniffer.decode`'s output (validated,
        // repaired or transcoded) or a `String`'s UTF-8, with CRs normalized (ASCII for ASCII).
        var tokenizer = Tokenizer(input: input, maxAttributes: options.maxAttributesPerElement, inputIsValidUTF8: true)
        tokenizer.recordErrors = options.recordParseErrors
        // Moved, not copied: with a second reference to each of its arrays alive until the end of
        // this function, the first write to every one of them (the caches included) copied it.
        var builder = TreeBuilder(tokenizer: consume tokenizer, sink: sink, scripting: options.scripting, maxDepth: options.maxNestingDepth)
        builder.maxReconstructedElements = options.maxReconstructedElements
        if let context { builder.prepareFragment(context: context) }
        builder.run()
        return builder
    }
}

/// Input stream preprocessing (§13.2.3.5): CR LF and lone CR become LF. (U+0000 is handled by
/// each tokenizer state, as the spec says.)
enum InputStream {
    static func preprocess(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBufferPointer { normalizingNewlines($0) } ?? bytes
    }

    /// The UTF-8 of `html`, preprocessed, read from the string's own storage: one copy of the
    /// input, with or without CRs (copying the string to an array first and then normalizing
    /// that array made two, each a large allocation for a large message).
    static func preprocess(_ html: String) -> [UInt8] {
        var html = html
        return html.withUTF8 { normalizingNewlines($0) ?? Array($0) }
    }

    /// `bytes` with CR LF and lone CR as LF, or `nil` when `bytes` holds no CR.
    private static func normalizingNewlines(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        // Mail is CRLF throughout, so every message takes the copying path: the runs between CRs
        // are found with memchr and copied whole with memcpy into the output's storage (the
        // bytes-at-a-time loop cost 2 % of parsing; `Array.append(contentsOf:)` per run cost
        // more than the copy itself on short lines).
        guard let first = nextCR(bytes, from: 0), let source = bytes.baseAddress else { return nil }
        let n = bytes.count
        return [UInt8](unsafeUninitializedCapacity: n) { out, count in
            // The output is never longer than the input (a CR or CR LF becomes one LF), so every
            // write below lies inside `out`; the preconditions keep that true in release builds.
            guard let target = out.baseAddress else { return }
            var written = 0, start = 0, cr = first
            while true {
                let run = cr - start
                precondition(run >= 0 && written + run + 1 <= n, "newline normalization outside the buffer")
                memcpy(target + written, source + start, run)
                target[written + run] = 0x0A
                written += run + 1
                start = cr + 1
                if start < n && source[start] == 0x0A { start += 1 }
                guard let next = nextCR(bytes, from: start) else { break }
                cr = next
            }
            let rest = n - start
            precondition(rest >= 0 && written + rest <= n, "newline normalization outside the buffer")
            memcpy(target + written, source + start, rest)
            count = written + rest
        }
    }

    /// The index of the next CR at or after `start` (`memchr` over the rest of the buffer).
    private static func nextCR(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        // `start` is at most `bytes.count` (one past a CR found inside the buffer, or 0), so the
        // search stays inside the buffer; the check makes that hold whatever the caller.
        precondition(start >= 0 && start <= bytes.count, "CR search outside the input")
        guard start < bytes.count, let base = bytes.baseAddress,
              let found = memchr(base + start, 0x0D, bytes.count - start) else { return nil }
        return UnsafeRawPointer(found) - UnsafeRawPointer(base)
    }
}

/// The tokenizer alone, for the perf lab (`scripts/perf-lab.sh`, `lab split`): how much of a
/// parse pass the tokenizer is, and whether a slowdown of the machine hits it as hard as the
/// whole parse (docs/performance.md, "The slow state is the core's").
///
/// It runs the tokenizer over the preprocessed input to the end and builds no tree. Nothing
/// switches its state as the tree builder does (to RAWTEXT after `<style>`, to RCDATA after
/// `<title>`, ...), so the contents of such elements are tokenized as markup: the token count
/// differs from a parse's, the work per byte hardly does.
package enum TokenizerOnly {
    /// Tokenizes `html` and returns the number of tokens before the end of file.
    package static func tokenCount(_ html: String) -> Int {
        var tokenizer = Tokenizer(input: InputStream.preprocess(html), maxAttributes: HTML5ParserOptions().maxAttributesPerElement,
                                  inputIsValidUTF8: true)
        tokenizer.recordErrors = false
        var count = 0
        while true {
            if case .eof = tokenizer.nextToken() { return count }
            count += 1
        }
    }
}
