// Parsing into the arena tree (`HTMLTree`, docs/arena-tree.md step 2): the same tokenizer and
// tree builder as `HTML5Parser.parseDocument`, with `ArenaSink` as the builder's sink instead of
// the class DOM.
//
// Trust-model row: inbox (incoming mail) — the same spec-exact tree, the same limits against
// hostile input (`HTML5ParserOptions`), built without a class object per node.

/// What parsing into an ``HTMLTree`` produced: the tree's root node (``ParseResult/root``: the
/// document, or for a fragment the `<html>` element whose children are the fragment's nodes, as
/// the class parser's fragment root) and the facts every ``ParseResult`` reports.
public typealias HTMLTreeParseResult = ParseResult<HTMLNode>

extension ParseResult where Root == HTMLNode {
    /// The tree (its row 0 is the document).
    public var tree: HTMLTree { root.tree }

    /// The result's nodes in html5lib-tests' format (as ``Node/html5libTreeDump`` of the class
    /// parser's document or fragment).
    public var html5libTreeDump: String { tree.html5libTreeDump(of: root.index) }

    /// The result's nodes serialized (as ``Node/innerHTML`` of the class parser's document or
    /// fragment).
    public var innerHTML: String { tree.innerHTML(of: root.index) }
}

extension HTML5Parser {
    /// Parses a whole document from bytes into an ``HTMLTree`` (encoding sniffed as by
    /// ``parseDocument(_:options:)-([UInt8],_)``).
    /// - Throws: ``HTML5Error/inputTooLarge(size:limit:)``.
    public static func parseTree(_ bytes: [UInt8], options: HTML5ParserOptions = .init()) throws(HTML5Error) -> HTMLTreeParseResult {
        guard bytes.count <= options.maxInputBytes else { throw .inputTooLarge(size: bytes.count, limit: options.maxInputBytes) }
        let (utf8, encoding) = EncodingSniffer.decode(bytes, transportCharset: options.transportCharset)
        return runTree(input: InputStream.preprocess(utf8), encoding: encoding, options: options, context: nil)
    }

    /// Parses a whole document from a string into an ``HTMLTree``.
    /// - Throws: ``HTML5Error/inputTooLarge(size:limit:)``.
    public static func parseTree(_ html: String, options: HTML5ParserOptions = .init()) throws(HTML5Error) -> HTMLTreeParseResult {
        let count = html.utf8.count
        guard count <= options.maxInputBytes else { throw .inputTooLarge(size: count, limit: options.maxInputBytes) }
        return runTree(input: InputStream.preprocess(html), encoding: "utf-8", options: options, context: nil)
    }

    /// Parses a fragment into an ``HTMLTree`` as if it were the `innerHTML` of `context`; the
    /// result's `HTMLTreeParseResult/root` is the `<html>` element that holds the fragment's
    /// nodes.
    /// - Throws: ``HTML5Error/inputTooLarge(size:limit:)``.
    public static func parseTreeFragment(_ html: String, context: Element, options: HTML5ParserOptions = .init()) throws(HTML5Error) -> HTMLTreeParseResult {
        let count = html.utf8.count
        guard count <= options.maxInputBytes else { throw .inputTooLarge(size: count, limit: options.maxInputBytes) }
        return runTree(input: InputStream.preprocess(html), encoding: "utf-8", options: options, context: context)
    }

    /// ``parseTreeFragment(_:context:options:)`` of bytes the caller has checked to be UTF-8
    /// (unchecked here): the same tree as of the `String` of those bytes, parsed from the array
    /// itself (without a CR it is the tokenizer's input as it is), so a large message is not
    /// copied into a `String` and again into the tokenizer's array.
    /// - Throws: ``HTML5Error/inputTooLarge(size:limit:)``.
    package static func parseTreeFragment(validUTF8 bytes: consuming [UInt8], context: Element, options: HTML5ParserOptions = .init()) throws(HTML5Error) -> HTMLTreeParseResult {
        guard bytes.count <= options.maxInputBytes else { throw .inputTooLarge(size: bytes.count, limit: options.maxInputBytes) }
        return runTree(input: InputStream.preprocess(consume bytes), encoding: "utf-8", options: options, context: context)
    }

    /// ``parseTreeFragment(_:context:options:)`` with the context given as html5lib writes it
    /// (`body`, `svg path`, `math mi`).
    /// - Throws: ``HTML5Error``.
    package static func parseTreeFragment(_ html: String, contextName: String, options: HTML5ParserOptions = .init()) throws(HTML5Error) -> HTMLTreeParseResult {
        try parseTreeFragment(html, context: try contextElement(contextName), options: options)
    }

    /// Input size from which ``runTree`` reserves the text pool at the input's size.
    static let reservedTextPoolThreshold = 256 * 1024

    private static func runTree(input: [UInt8], encoding: String, options: HTML5ParserOptions, context: Element?) -> HTMLTreeParseResult {
        let sink = ArenaSink()
        // A large document's texts go to the pool in one allocation of the input's size (text is
        // rarely longer than its markup; the pool still grows when it is), not in a series of
        // doublings that copy it each time.
        if input.count >= Self.reservedTextPoolThreshold { sink.tree.textPool.reserve(input.count) }
        let builder = build(input: input, sink: sink, options: options, context: context)
        let tree = builder.sink.tree
        // A fragment's nodes are the children of the document's `<html>` element (the first
        // element child of row 0: fragment parsing puts nothing before it).
        var root: Int32 = 0
        if context != nil {
            var child = tree.firstChild(0)
            while let c = child, tree.kind(c) != .element { child = tree.nextSibling(c) }
            root = child ?? 0
        }
        return HTMLTreeParseResult(root: HTMLNode(tree, root), builder: builder, encoding: encoding)
    }
}
