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
    /// Collect parse errors (costs a little time).
    public var recordParseErrors = true
    /// The charset from the MIME part (`Content-Type: text/html; charset=...`), if any.
    public var transportCharset: String?

    public init(scripting: Bool = false) { self.scripting = scripting }
}

/// What the parser produced: the tree plus the facts a sanitizer may want to log.
///
/// Trust-model row: inbox — the tree and the evidence of malformed input.
public struct ParseResult<Root: Node> {
    public let root: Root
    public let errors: [ParseError]
    /// The character encoding used to decode the bytes.
    public let encoding: String
    public let depthTruncated: Bool
    public let attributesTruncated: Bool
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
        return run(utf8: utf8, encoding: encoding, options: options, context: nil)
    }

    /// Parses a whole document from a string.
    /// - Throws: ``HTML5Error/inputTooLarge(size:limit:)``.
    public static func parseDocument(_ html: String, options: HTML5ParserOptions = .init()) throws(HTML5Error) -> ParseResult<Document> {
        let count = html.utf8.count
        guard count <= options.maxInputBytes else { throw .inputTooLarge(size: count, limit: options.maxInputBytes) }
        return run(utf8: Array(html.utf8), encoding: "utf-8", options: options, context: nil)
    }

    /// Parses a fragment as if it were the `innerHTML` of `context` (e.g. `Element(localName:
    /// "body")`, or `Element(localName: "path", namespace: .svg)`).
    /// - Throws: ``HTML5Error/inputTooLarge(size:limit:)``.
    public static func parseFragment(_ html: String, context: Element, options: HTML5ParserOptions = .init()) throws(HTML5Error) -> ParseResult<DocumentFragment> {
        let count = html.utf8.count
        guard count <= options.maxInputBytes else { throw .inputTooLarge(size: count, limit: options.maxInputBytes) }
        let result = run(utf8: Array(html.utf8), encoding: "utf-8", options: options, context: context)
        let fragment = DocumentFragment()
        if let html = result.root.documentElement { html.moveChildren(to: fragment) }
        return ParseResult(root: fragment, errors: result.errors, encoding: result.encoding,
                           depthTruncated: result.depthTruncated, attributesTruncated: result.attributesTruncated)
    }

    /// Parses a fragment with the context given as html5lib writes it: `body`, `svg path`,
    /// `math mi`.
    /// - Throws: ``HTML5Error``.
    public static func parseFragment(_ html: String, contextName: String, options: HTML5ParserOptions = .init()) throws(HTML5Error) -> ParseResult<DocumentFragment> {
        let parts = contextName.split(separator: " ")
        let element: Element
        switch parts.count {
        case 1: element = Element(localName: String(parts[0]).lowercased())
        case 2 where parts[0] == "svg": element = Element(localName: String(parts[1]), namespace: .svg)
        case 2 where parts[0] == "math": element = Element(localName: String(parts[1]), namespace: .mathml)
        default: throw .invalidContext(contextName)
        }
        return try parseFragment(html, context: element, options: options)
    }

    static func run(utf8: [UInt8], encoding: String, options: HTML5ParserOptions, context: Element?) -> ParseResult<Document> {
        var tokenizer = Tokenizer(input: InputStream.preprocess(utf8), maxAttributes: options.maxAttributesPerElement)
        tokenizer.recordErrors = options.recordParseErrors
        // Moved, not copied: with a second reference to each of its arrays alive until the end of
        // this function, the first write to every one of them (the caches included) copied it.
        var builder = TreeBuilder(tokenizer: consume tokenizer, scripting: options.scripting, maxDepth: options.maxNestingDepth)
        if let context { builder.prepareFragment(context: context) }
        builder.run()
        return ParseResult(root: builder.document, errors: builder.tokenizer.errors, encoding: encoding,
                           depthTruncated: builder.depthTruncated, attributesTruncated: builder.tokenizer.truncatedAttributes)
    }
}

/// Input stream preprocessing (§13.2.3.5): CR LF and lone CR become LF. (U+0000 is handled by
/// each tokenizer state, as the spec says.)
enum InputStream {
    static func preprocess(_ bytes: [UInt8]) -> [UInt8] {
        // Mail is CRLF throughout, so every message takes the copying path: the runs between CRs
        // are found with memchr and copied whole (the bytes-at-a-time loop cost 2 % of parsing).
        guard var cr = nextCR(bytes, from: 0) else { return bytes }
        var out = [UInt8]()
        out.reserveCapacity(bytes.count)
        var start = 0
        let n = bytes.count
        while true {
            out.append(contentsOf: bytes[start..<cr])
            out.append(0x0A)
            start = cr + 1
            if start < n && bytes[start] == 0x0A { start += 1 }
            guard let next = nextCR(bytes, from: start) else { break }
            cr = next
        }
        out.append(contentsOf: bytes[start..<n])
        return out
    }

    /// The index of the next CR at or after `start` (`memchr` over the rest of the buffer).
    private static func nextCR(_ bytes: [UInt8], from start: Int) -> Int? {
        guard start < bytes.count else { return nil }
        return bytes.withUnsafeBufferPointer { buffer -> Int? in
            guard let base = buffer.baseAddress, let found = memchr(base + start, 0x0D, buffer.count - start) else { return nil }
            return UnsafeRawPointer(found) - UnsafeRawPointer(base)
        }
    }
}
