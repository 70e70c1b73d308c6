import HTML5

/// How the sanitizer parses mail: Rampart's spec-exact HTML5 parser, as the `innerHTML` of the
/// `<div>` the viewer shows the message in, with scripting off (as in the viewer). Parsing in the
/// same context as rendering is what makes the re-parse check meaningful.
///
/// Trust-model row: inbox (incoming mail) — the sanitizer sees the tree the web view builds.
enum MessageParsing {
    static let context = "div"

    static func parseFragment(_ html: String) -> DocumentFragment {
        var options = HTML5ParserOptions(scripting: false)
        options.recordParseErrors = false
        // The caller enforces its own input limit; output of a pass (with inlined `cid:` images)
        // may be larger than the input and must still parse.
        options.maxInputBytes = Int.max
        do {
            return try HTML5Parser.parseFragment(html, context: Element(localName: context), options: options).root
        } catch {
            // Only an oversized input can fail, and the limit above is unreachable.
            return DocumentFragment()
        }
    }
}
