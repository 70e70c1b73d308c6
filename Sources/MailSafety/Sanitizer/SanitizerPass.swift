import HTML5

/// One cleaning pass of ``MailSanitizer`` on one kind of tree: parse the message in the viewer's
/// context, clean it (``TreeCleaner``, the same walk and allowlist for every tree), serialize it,
/// and the re-parse check on that output.
///
/// Trust-model row: inbox (incoming mail) — the mutation-XSS guard. Both passes decide exactly
/// the same: ``ArenaPass`` is what the sanitizer runs, ``ClassPass`` the reference it is checked
/// against byte for byte (output and report: `ArenaPathTests`, the `sanitizer` fuzz target).
protocol SanitizerPass {
    /// Parses `html` and cleans it (a new ``CSSSanitizer`` per pass, findings into `gate`).
    init(cleaning html: String, gate: ResourceGate, options: SanitizerOptions)
    /// The cleaned tree serialized.
    var html: String { get }
    /// The parse reached a bound that makes its tree depart from the spec's (it proves nothing).
    var limited: Bool { get }
    /// The parse reached any of the parser's bounds for hostile markup (the report's
    /// ``SanitizationReport/hostileMarkup``).
    var bounded: Bool { get }
    /// The re-parse check: whether ``html`` parses in the viewer's context to a tree that
    /// serializes to exactly ``html`` (the cleaned tree, up to the splitting of texts), by a
    /// parse that proves it (not ``limited``, or matched node for node against the cleaned
    /// tree). May free the cleaned tree.
    mutating func parsesBack() -> Bool
    /// The text content of `html` parsed in the viewer's context (the last resort's output).
    static func textContent(parsing html: String) -> String
    /// Gives up the cleaned tree without freeing it: it stays allocated until the process ends
    /// (``MailSanitizer/sanitize(utf8:freeingTree:)`` with `freeingTree: false`, for a command
    /// that exits right after).
    func keepTreeUntilExit()
}

/// The class DOM's pass (``HTML5/DocumentFragment``): the reference.
///
/// Its re-parse check is decided while parsing, matching each node the parser would make
/// against the cleaned tree (``MessageParsing/parsesBack(_:to:)``: no second tree is built); when
/// that cannot show it (any step other than appending the next node, e.g. a template), the
/// output is parsed and compared as a tree (``SameTree``), then as text. Past
/// ``MailSanitizer/sameTreeLimit`` the cleaned tree is freed before the output is parsed again,
/// so a large message never holds two class trees at once.
struct ClassPass: SanitizerPass {
    private var fragment: DocumentFragment?
    let html: String
    let limited: Bool
    let bounded: Bool

    init(cleaning html: String, gate: ResourceGate, options: SanitizerOptions) {
        let (fragment, limited, bounded) = MessageParsing.parse(html)
        var walker = TreeCleaner(gate: gate, css: CSSSanitizer(gate: gate, scopeID: options.wrapperID), options: options)
        walker.clean(fragment)
        self.fragment = fragment
        self.html = fragment.innerHTML
        self.limited = limited
        self.bounded = bounded
    }

    mutating func parsesBack() -> Bool {
        if let tree = fragment, MessageParsing.parsesBack(html, to: tree) { return true }
        if html.utf8.count > MailSanitizer.sameTreeLimit { fragment = nil }
        // A re-parse that reached one of the parser's bounds for hostile input departs from the
        // spec (and so from the web view): it proves nothing, and the passes go on.
        let reparsed = MessageParsing.parse(html)
        return !reparsed.limited
            && ((fragment.map { SameTree.sameChildren($0, reparsed.fragment) } ?? false) || reparsed.fragment.innerHTMLEquals(html))
    }

    static func textContent(parsing html: String) -> String { MessageParsing.parseFragment(html).textContent }

    func keepTreeUntilExit() {
        if let fragment { _ = Unmanaged.passRetained(fragment) }
    }
}

/// The arena tree's pass (``HTML5/HTMLTree``): what ``MailSanitizer/sanitize(_:)`` runs.
///
/// Its re-parse check first runs the parser over the output matching each node against the
/// cleaned tree (``MessageParsing/parsesBack(_:to:root:)``, no second tree); when that cannot show
/// it, it parses the output into a second arena tree and compares it with the cleaned one row by
/// row (``HTML5/HTMLTree/hasSameChildren(_:as:in:)``, which says yes only for trees that
/// serialize the same), then as text. That decides exactly as ``ClassPass``: there the answer is
/// `parsesBack || (!limited && serializes to the output)`, and a node-for-node match implies the
/// second (by a parse that is not limited: a match repeats a real parse's decisions, bounds
/// included, so a limited match goes on to the full check); so for a re-parse that is not
/// limited both answer "serializes to the output", and for a limited one (hostile input past the
/// parser's bounds, rare) this pass asks the class DOM's `parsesBack` itself, on the class DOM
/// copy of the cleaned tree.
struct ArenaPass: SanitizerPass {
    private let tree: HTMLTree
    private let root: Int32
    let html: String
    let limited: Bool
    let bounded: Bool

    init(cleaning html: String, gate: ResourceGate, options: SanitizerOptions) {
        self.init(cleaning: MessageParsing.parseTree(html), gate: gate, options: options)
    }

    /// The first pass of ``MailSanitizer/sanitize(utf8:freeingTree:)``: the message parsed from
    /// its bytes (checked to be UTF-8), the same tree as of their `String`.
    init(cleaningValidUTF8 bytes: consuming [UInt8], gate: ResourceGate, options: SanitizerOptions) {
        self.init(cleaning: MessageParsing.parseTree(validUTF8: bytes), gate: gate, options: options)
    }

    private init(cleaning parsed: (tree: HTMLTree, root: Int32, limited: Bool, bounded: Bool), gate: ResourceGate, options: SanitizerOptions) {
        var walker = TreeCleaner(gate: gate, css: CSSSanitizer(gate: gate, scopeID: options.wrapperID), options: options)
        walker.clean(parsed.tree, root: parsed.root)
        tree = parsed.tree
        root = parsed.root
        self.html = parsed.tree.innerHTML(of: parsed.root)
        limited = parsed.limited
        bounded = parsed.bounded
    }

    mutating func parsesBack() -> Bool {
        // First the parser runs over the output matching each node it would create against the
        // cleaned tree (no second tree); a match by a parse that reached no bound is the answer.
        let check = MessageParsing.parsesBack(html, to: tree, root: root)
        if check.matched && !check.limited { return true }
        let reparsed = MessageParsing.parseTree(html)
        guard reparsed.limited else {
            return tree.hasSameChildren(root, as: reparsed.root, in: reparsed.tree) || reparsed.tree.innerHTMLEquals(of: reparsed.root, html)
        }
        let fragment = DocumentFragment()
        tree.materialize(root).moveChildren(to: fragment)
        return MessageParsing.parsesBack(html, to: fragment)
    }

    static func textContent(parsing html: String) -> String {
        let parsed = MessageParsing.parseTree(html)
        return parsed.tree.textContent(of: parsed.root)
    }

    func keepTreeUntilExit() {
        _ = Unmanaged.passRetained(tree)
    }
}
