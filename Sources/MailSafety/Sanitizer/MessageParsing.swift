import HTML5

/// How the sanitizer parses mail: Rampart's spec-exact HTML5 parser, as the `innerHTML` of the
/// `<div>` the viewer shows the message in, with scripting off (as in the viewer). Parsing in the
/// same context as rendering is what makes the re-parse check meaningful.
///
/// Trust-model row: inbox (incoming mail) — the sanitizer sees the tree the web view builds.
enum MessageParsing {
    static let context = "div"

    /// Scripting off, no error list, and no input limit: the caller enforces its own, and the
    /// output of a pass (with inlined `cid:` images) may be larger than the input and must still
    /// parse. Re-created formatting elements are bounded absolutely (``maxReconstructedElements``).
    static let options: HTML5ParserOptions = {
        var options = HTML5ParserOptions(scripting: false)
        options.recordParseErrors = false
        options.maxInputBytes = Int.max
        options.maxReconstructedElements = maxReconstructedElements
        return options
    }()

    /// Elements the parser may re-create by reconstructing the active formatting elements in one
    /// parse of a message (``HTML5/HTML5ParserOptions/maxReconstructedElements``), besides the
    /// parser's own bound of one per input byte. That one keeps hostile markup linear but lets
    /// `<p><b class=cN>x</p>` repeated grow 140 bytes of tree per input byte: 10 MB of it took
    /// 12.4 s and 1.4 GB to sanitize, and the sanitizer accepts 32 MB. 65 536 re-created
    /// elements (about 7 MB of tree) are far more than mail re-creates (each needs a formatting
    /// element left open across a block boundary); past them the parse is marked limited, which
    /// the re-parse check never takes as proof, so the output stays safe whatever the tree.
    ///
    /// Trust-model row: inbox (incoming mail) — hostile input (DoS).
    static let maxReconstructedElements = 1 << 16

    /// Whether `html` parses in the viewer's context to `tree`, node for node (decided without
    /// building a second tree: ``HTML5/HTML5Parser/parsesBack(_:to:context:options:)``, which
    /// says `true` only when the parse would serialize to exactly `tree`'s serialization).
    static func parsesBack(_ html: String, to tree: DocumentFragment) -> Bool {
        HTML5Parser.parsesBack(html, to: tree, context: Element(localName: context), options: options)
    }

    /// ``parsesBack(_:to:)`` for the arena tree: whether `html` parses to the children of the
    /// row `root` of `tree`, node for node, and whether that parse reached one of the bounds
    /// that make a tree depart from the spec's (then the match proves nothing by itself).
    static func parsesBack(_ html: String, to tree: HTMLTree, root: Int32) -> (matched: Bool, limited: Bool) {
        HTML5Parser.parsesBack(html, to: tree, root: root, context: Element(localName: context), options: options)
    }

    static func parseFragment(_ html: String) -> DocumentFragment { parse(html).fragment }

    /// The fragment; whether the parser reached one of its bounds for hostile input that make
    /// the tree depart from the spec's (``HTML5/ParseResult/formattingLimited``,
    /// ``HTML5/ParseResult/selectedContentLimited``): such a parse of the sanitizer's own output
    /// is not the tree the web view would build, so it never counts as proof of stability; and
    /// whether it reached any of its bounds for hostile markup (those two, or attributes dropped
    /// past the per-element limit: ``SanitizationReport/hostileMarkup``; nesting flattened past
    /// the parser's depth is left out, as sloppy mail that never closes a `<font>` can get there
    /// and the cleaner's own, lower, depth limit reports it as ``SanitizationReport/truncated``).
    static func parse(_ html: String) -> (fragment: DocumentFragment, limited: Bool, bounded: Bool) {
        do {
            let result = try HTML5Parser.parseFragment(html, context: Element(localName: context), options: options)
            let limited = result.formattingLimited || result.selectedContentLimited
            return (result.root, limited, limited || result.attributesTruncated)
        } catch {
            // Only an oversized input can fail, and the limit above is unreachable.
            return (DocumentFragment(), false, false)
        }
    }

    /// ``parse(_:)`` into an arena tree (``HTML5/HTMLTree``): the tree, the row whose children
    /// are the message's nodes (the fragment parse's `<html>` element), and the same two facts.
    static func parseTree(_ html: String) -> (tree: HTMLTree, root: Int32, limited: Bool, bounded: Bool) {
        parseTree { () throws(HTML5Error) in try HTML5Parser.parseTreeFragment(html, context: Element(localName: context), options: options) }
    }

    /// ``parseTree(_:)`` of bytes already checked to be UTF-8, parsed from the array itself
    /// (the same tree as of their `String`, without that copy).
    static func parseTree(validUTF8 bytes: consuming [UInt8]) -> (tree: HTMLTree, root: Int32, limited: Bool, bounded: Bool) {
        var bytes: [UInt8]? = consume bytes
        return parseTree { () throws(HTML5Error) in
            try HTML5Parser.parseTreeFragment(validUTF8: bytes.take() ?? [], context: Element(localName: context), options: options)
        }
    }

    private static func parseTree(_ run: () throws(HTML5Error) -> HTMLTreeParseResult) -> (tree: HTMLTree, root: Int32, limited: Bool, bounded: Bool) {
        do {
            let result = try run()
            let limited = result.formattingLimited || result.selectedContentLimited
            return (result.tree, result.root.index, limited, limited || result.attributesTruncated)
        } catch {
            // Only an oversized input can fail, and the limit above is unreachable.
            let empty = try! HTML5Parser.parseTreeFragment("", context: Element(localName: context), options: options)
            return (empty.tree, empty.root.index, false, false)
        }
    }
}
