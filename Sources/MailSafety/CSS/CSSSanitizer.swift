/// Sanitizes `style` attributes and `<style>` sheets: drops script-capable CSS (`expression()`,
/// `behavior`, `-moz-binding`, `javascript:`), `@import` and other at-rules that load or escape,
/// sends every `url()`/`image-set()`/`@font-face src` through the remote-content policy,
/// neutralizes `position: fixed/absolute/sticky` and huge `z-index`, and scopes every selector
/// under the message's wrapper element.
///
/// Trust-model row: inbox (incoming mail) — CSS can track (remote backgrounds, fonts) and can
/// overlay the app's UI; outbox (composer) — quoted CSS keeps its look but not its reach.
struct CSSSanitizer {
    let gate: ResourceGate
    /// The wrapper element's id, e.g. `rampart-message`.
    let scopeID: String
    /// The wrapper's selector, e.g. `#rampart-message`.
    var scope: String { "#" + CSSSerializer.identifier(scopeID) }

    static let maxZIndex = 100

    /// Properties dropped whatever their value.
    static let forbiddenProperties: Set<String> = [
        "behavior", "-ms-behavior", "-moz-binding", "binding", "-webkit-binding", "-o-link", "-o-link-source",
        "-ms-filter", "filter-progid", "-webkit-user-modify", "user-modify", "-moz-user-input", "will-change",
        "content-visibility", "container", "container-name", "anchor-name", "position-anchor", "view-transition-name",
        "-ms-scroll-chaining", "zoom",
    ]

    /// Functions allowed in values (lowercased). Anything else drops the declaration.
    static let allowedFunctions: Set<String> = [
        "rgb", "rgba", "hsl", "hsla", "hwb", "lab", "lch", "oklab", "oklch", "color", "color-mix",
        "calc", "min", "max", "clamp", "abs", "sign", "round",
        "linear-gradient", "radial-gradient", "conic-gradient", "repeating-linear-gradient",
        "repeating-radial-gradient", "repeating-conic-gradient", "-webkit-linear-gradient", "-webkit-radial-gradient",
        "-moz-linear-gradient", "-o-linear-gradient",
        "url", "image-set", "-webkit-image-set", "local", "format", "tech",
        "translate", "translatex", "translatey", "translate3d", "rotate", "rotatex", "rotatey", "rotatez", "rotate3d",
        "scale", "scalex", "scaley", "scale3d", "skew", "skewx", "skewy", "matrix", "matrix3d", "perspective",
        "cubic-bezier", "steps", "repeat", "minmax", "fit-content", "blur", "brightness", "contrast", "drop-shadow",
        "grayscale", "hue-rotate", "invert", "opacity", "saturate", "sepia", "inset", "circle", "ellipse", "polygon",
        "counter", "counters", "rect",
    ]

    /// The declarations of a `style` attribute, sanitized; `nil` when nothing is left.
    func sanitizeStyleAttribute(_ text: String) -> String? {
        switch styleAttribute(text) {
        case .same: return text
        case .kept(let style): return style
        case .dropped: return nil
        }
    }

    /// What becomes of a `style` attribute (see ``styleAttribute(_:)``).
    enum StyleAttribute {
        /// The attribute's text is the sanitized text (byte for byte).
        case same
        /// The sanitized text (when it comes from the full path, possibly equal to the input).
        case kept(String)
        /// Nothing is left.
        case dropped
    }

    /// ``sanitizeStyleAttribute(_:)``, telling the usual case — the text is kept as it is —
    /// apart instead of returning the text: returned, it costs a retain, and its drop by the
    /// caller a release, each an atomic read-modify-write (trust-model row: inbox; see
    /// ``CSSStyleFastPath/Answer``).
    func styleAttribute(_ text: String) -> StyleAttribute {
        // Most inline styles in mail are plain declarations the fast path writes exactly as the
        // full path would (and usually unchanged); anything else takes the full path below.
        // Plain `url(…)` tokens too: their URLs go through the gate as on the full path (kind
        // `cssBackground`, a declaration whose URL is not loaded is dropped).
        //
        // The resolver captures the gate alone, unretained (trust-model row: inbox): a closure
        // that reads `gate` captures `self`, and its context then holds a copy of `self` — a
        // retain and a release of the gate and of `scopeID`, each an atomic read-modify-write,
        // for every style attribute of every message, most of which have no URL at all. `self`
        // holds the gate for the whole call, and the closure is non-escaping: it cannot outlive
        // the call.
        let gate = Unmanaged.passUnretained(self.gate)
        switch CSSStyleFastPath.answer(text, resolve: { raw, quoted in
            gate._withUnsafeGuaranteedRef { gate in
                if case .load(let url) = gate.resource(raw, kind: .cssBackground) { return url }
                // The full path reports the string form's declaration as removed too.
                if quoted { gate.findings.note(.cssDeclaration) }
                return nil
            }
        }) {
        case .same: return .same
        case .kept(let style): return .kept(style)
        case .empty: return .dropped
        case .unhandled: return sanitizeStyleAttributeFully(text).map { .kept($0) } ?? .dropped
        }
    }

    /// The full path for `style` attributes: tokenize, parse, sanitize each declaration,
    /// serialize. (The reference the fast path is checked against.)
    func sanitizeStyleAttributeFully(_ text: String) -> String? {
        var dropped = 0
        let declarations = CSSParser.declarations(CSSParser.components(text), dropped: &dropped)
        gate.findings.note(.cssDeclaration, dropped)
        let kept = declarations.compactMap { sanitize($0, fontFace: false) }
        guard !kept.isEmpty else { return nil }
        return serialize(kept)
    }

    /// A `<style>` sheet, sanitized and scoped.
    func sanitizeStyleSheet(_ text: String) -> String {
        // Most sheets in mail are plain rules and simple `@media` blocks; the byte-level fast
        // path writes them exactly as the full path below would, and gives up on anything else.
        if let sheet = CSSSheetFastPath.sanitize(text, css: self) { return sheet }
        return sanitizeStyleSheetFully(text)
    }

    /// The full path for `<style>` sheets. (The reference the sheet fast path is checked against.)
    func sanitizeStyleSheetFully(_ text: String) -> String {
        let rules = CSSParser.rules(CSSParser.components(text), topLevel: true)
        return rulesText(rules, depth: 0)
    }

    private func serialize(_ declarations: [CSSDeclaration]) -> String {
        declarations.map { d in
            CSSSerializer.identifier(d.name.lowercased()) + ":" + CSSSerializer.serialize(d.value) + (d.important ? "!important" : "")
        }.joined(separator: ";")
    }

    private func rulesText(_ rules: [CSSRule], depth: Int) -> String {
        var out: [String] = []
        for rule in rules {
            switch rule {
            case .qualified(let prelude, let block):
                guard let selector = scopedSelector(prelude) else { gate.findings.note(.cssRule); continue }
                var dropped = 0
                let declarations = CSSParser.declarations(block, dropped: &dropped)
                gate.findings.note(.cssDeclaration, dropped)
                let kept = declarations.compactMap { sanitize($0, fontFace: false) }
                guard !kept.isEmpty else { continue }
                out.append(selector + "{" + serialize(kept) + "}")
            case .at(let name, let prelude, let block):
                switch name {
                case "media", "supports":
                    guard depth < 4, let block, isSafePrelude(prelude) else { gate.findings.note(.cssRule); continue }
                    let inner = rulesText(CSSParser.rules(block, topLevel: false), depth: depth + 1)
                    guard !inner.isEmpty else { continue }
                    out.append("@" + name + " " + CSSSerializer.serialize(trim(prelude)) + "{" + inner + "}")
                case "font-face":
                    guard let block, trim(prelude).isEmpty else { gate.findings.note(.cssRule); continue }
                    var dropped = 0
                    let declarations = CSSParser.declarations(block, dropped: &dropped)
                    gate.findings.note(.cssDeclaration, dropped)
                    let kept = declarations.compactMap { sanitize($0, fontFace: true) }
                    guard kept.contains(where: { $0.name.lowercased() == "src" }) else { gate.findings.note(.cssRule); continue }
                    out.append("@font-face{" + serialize(kept) + "}")
                default:
                    // @import, @charset, @namespace, @keyframes, @page, @layer, @property,
                    // @container, @scope and unknown at-rules: dropped.
                    gate.findings.note(.cssRule)
                    if name == "import", let url = firstURL(prelude) {
                        _ = gate.resource(url, kind: .stylesheet)
                    }
                }
            }
        }
        return out.joined()
    }

    func trim(_ components: [CSSComponent]) -> [CSSComponent] {
        var items = components[...]
        while let first = items.first, first.isWhitespace { items.removeFirst() }
        while let last = items.last, last.isWhitespace { items.removeLast() }
        return Array(items)
    }

    private func firstURL(_ components: [CSSComponent]) -> String? {
        for c in components {
            switch c {
            case .token(.url(let u)), .token(.string(let u)): return u
            case .function(let name, let args) where name.lowercased() == "url":
                for a in args { if case .token(.string(let u)) = a { return u } }
            default: continue
            }
        }
        return nil
    }

    /// A media/supports prelude may hold idents, numbers, parens, colons, commas, but no
    /// functions or URLs and no `<` (range syntax is dropped so `</style` can never form).
    func isSafePrelude(_ components: [CSSComponent]) -> Bool {
        for c in components {
            switch c {
            case .function: return false
            case .block(_, let content): if !isSafePrelude(content) { return false }
            case .token(let t):
                switch t {
                case .url, .badURL, .badString, .string, .delim("<"), .delim("\\"), .atKeyword, .cdo, .cdc: return false
                default: continue
                }
            }
        }
        return true
    }

    // MARK: Declarations

    private func sanitize(_ declaration: CSSDeclaration, fontFace: Bool) -> CSSDeclaration? {
        var declaration = declaration
        let name = declaration.name.lowercased()
        declaration.name = name
        if name.hasPrefix("--") || Self.forbiddenProperties.contains(name) {
            gate.findings.note(.cssDeclaration); return nil
        }
        let kind: RemoteResourceKind = fontFace ? .font : .cssBackground
        guard let value = sanitizeValue(declaration.value, kind: kind, depth: 0) else { return nil }
        declaration.value = value
        switch name {
        case "position":
            let words = value.compactMap { c -> String? in if case .token(.ident(let w)) = c { return w.lowercased() }; return nil }
            if words.contains(where: { $0 == "fixed" || $0 == "absolute" || $0 == "sticky" }) || value.count != 1 {
                gate.findings.note(.cssPositioning)
                declaration.value = [.token(.ident("static"))]
            }
        case "z-index":
            if case .token(.number(let n, _, _)) = value.first, value.count == 1 {
                if abs(n) > Double(Self.maxZIndex) {
                    gate.findings.note(.cssPositioning)
                    let clamped = n > 0 ? Self.maxZIndex : -Self.maxZIndex
                    declaration.value = [.token(.number(Double(clamped), repr: String(clamped), isInteger: true))]
                }
            } else if case .token(.ident(let w)) = value.first, value.count == 1, w.lowercased() == "auto" {
            } else {
                gate.findings.note(.cssPositioning)
                return nil
            }
        default:
            break
        }
        return declaration
    }

    /// Returns the sanitized value, or `nil` to drop the declaration.
    /// `stringsAreURLs`: inside `image-set()`, where a string names an image to load.
    private func sanitizeValue(_ value: [CSSComponent], kind: RemoteResourceKind, depth: Int, stringsAreURLs: Bool = false) -> [CSSComponent]? {
        var out: [CSSComponent] = []
        for component in value {
            switch component {
            case .token(let token):
                switch token {
                case .url(let raw):
                    guard let replaced = resource(raw, kind: kind) else { return nil }
                    out.append(replaced)
                case .badURL, .badString, .cdo, .cdc, .atKeyword, .openCurly, .closeCurly, .semicolon:
                    gate.findings.note(.cssDeclaration); return nil
                case .string(let raw) where stringsAreURLs:
                    guard let replaced = resource(raw, kind: kind) else { return nil }
                    out.append(replaced)
                case .ident(let word), .string(let word):
                    if Self.looksScriptable(word) { gate.findings.note(.cssDeclaration); return nil }
                    out.append(component)
                case .delim("<"), .delim("\\"):
                    gate.findings.note(.cssDeclaration); return nil
                default:
                    out.append(component)
                }
            case .function(let rawName, let arguments):
                let name = rawName.lowercased()
                guard Self.allowedFunctions.contains(name) else { gate.findings.note(.cssDeclaration); return nil }
                if name == "url" {
                    // `url("...")` (string form).
                    let strings = arguments.compactMap { c -> String? in if case .token(.string(let s)) = c { return s }; return nil }
                    guard strings.count == 1, let replaced = resource(strings[0], kind: kind) else {
                        gate.findings.note(.cssDeclaration); return nil
                    }
                    out.append(replaced)
                    continue
                }
                if name == "image-set" || name == "-webkit-image-set" {
                    // Bare strings in image-set are URLs, at any depth: a string nested in a
                    // `[`/`(` block or another function inside image-set() passed as a plain
                    // string before, remote or not (found by the CSS fuzz target's safety oracle).
                    guard depth < 8, let inner = sanitizeValue(arguments, kind: kind, depth: depth + 1, stringsAreURLs: true) else { return nil }
                    out.append(.function(name: name, arguments: inner))
                    continue
                }
                guard depth < 8, let inner = sanitizeValue(arguments, kind: kind, depth: depth + 1, stringsAreURLs: stringsAreURLs) else { return nil }
                out.append(.function(name: name, arguments: inner))
            case .block(let open, let content):
                guard open != .openCurly, depth < 8, let inner = sanitizeValue(content, kind: kind, depth: depth + 1, stringsAreURLs: stringsAreURLs) else {
                    gate.findings.note(.cssDeclaration); return nil
                }
                out.append(.block(open: open, content: inner))
            }
        }
        return out
    }

    /// A URL in CSS: loaded, or `nil` (the declaration is dropped: a blocked remote background
    /// leaves nothing loadable; the report lists it so the UI can offer to load it).
    private func resource(_ raw: String, kind: RemoteResourceKind) -> CSSComponent? {
        switch gate.resource(raw, kind: kind) {
        case .load(let url): return .token(.url(url))
        case .block, .drop: return nil
        }
    }

    static func looksScriptable(_ word: String) -> Bool {
        // Every pattern below contains ':' or '('; most words have neither.
        guard word.utf8.contains(where: { $0 == 0x3A || $0 == 0x28 }) else { return false }
        let lower = word.lowercased().filter { !$0.isWhitespace && $0 != "\0" }
        return lower.contains("javascript:") || lower.contains("vbscript:") || lower.contains("expression(")
            || lower.contains("livescript:") || lower.contains("mocha:")
    }

    // MARK: Selectors

    /// Scopes a selector list under ``scope``; `nil` drops the rule.
    func scopedSelector(_ prelude: [CSSComponent]) -> String? {
        var selectors: [[CSSComponent]] = [[]]
        for c in prelude {
            if case .token(.comma) = c { selectors.append([]) } else { selectors[selectors.count - 1].append(c) }
        }
        var out: [String] = []
        for selector in selectors {
            guard let scoped = scopeOne(trim(selector)), !out.contains(scoped) else { continue }
            out.append(scoped)
        }
        return out.isEmpty ? nil : out.joined(separator: ",")
    }

    /// Forbidden anywhere in a selector, inside `:not(…)` and other functions and blocks too:
    /// URLs, at-keywords, `<`, `;` and unmatched closing brackets, pseudo-elements and classes
    /// that reach outside the tree (`:host`, `::part`). (Only the top level was checked, so `:not(@import …)` kept an `@import` token in
    /// the sheet: found by the CSS fuzz target's safety oracle.)
    private static func isAllowedInSelector(_ components: [CSSComponent], depth: Int = 0) -> Bool {
        guard depth < CSSParser.maxNesting else { return false }
        for c in components {
            switch c {
            case .token(.url), .token(.badURL), .token(.atKeyword), .token(.delim("<")), .token(.delim("\\")), .token(.badString),
                 .token(.cdo), .token(.cdc), .block(.openCurly, _):
                return false
            case .token(.semicolon), .token(.closeParen), .token(.closeSquare), .token(.closeCurly):
                // Never in a valid selector; a `;` in the prelude made the written rule read as
                // `…; behavior: …` (found by the CSS fuzz target's safety oracle).
                return false
            case .function(let name, let arguments):
                let lower = name.lowercased()
                guard ["not", "is", "where", "nth-child", "nth-last-child", "nth-of-type", "nth-last-of-type", "lang", "dir"].contains(lower),
                      isAllowedInSelector(arguments, depth: depth + 1) else { return false }
            case .block(_, let content):
                guard isAllowedInSelector(content, depth: depth + 1) else { return false }
            case .token(.ident(let w)) where w.lowercased() == "host" || w.lowercased() == "part" || w.lowercased() == "slotted":
                return false
            default: continue
            }
        }
        return true
    }

    private func scopeOne(_ selector: [CSSComponent]) -> String? {
        guard !selector.isEmpty, Self.isAllowedInSelector(selector) else { return nil }
        var rest = selector[...]
        // Drop leading `html`, `body`, `:root` compounds (with the combinator after them).
        var mappedToScope = false
        while true {
            var probe = rest
            var matched = false
            if case .token(.ident(let w)) = probe.first, ["html", "body"].contains(w.lowercased()) {
                probe.removeFirst(); matched = true
            } else if case .token(.hash(let id, _)) = probe.first, id == scopeID {
                probe.removeFirst(); matched = true
            } else if case .token(.colon) = probe.first, probe.count >= 2, case .token(.ident(let w)) = probe[probe.startIndex + 1], w.lowercased() == "root" {
                probe.removeFirst(2); matched = true
            }
            guard matched else { break }
            // The compound must end here.
            if let next = probe.first {
                switch next {
                case .token(.whitespace), .token(.delim(">")): break
                default: return nil
                }
            }
            while let first = probe.first, first.isWhitespace || first == .token(.delim(">")) { probe.removeFirst() }
            rest = probe
            mappedToScope = true
        }
        // A selector may not start with a combinator: a sibling one would reach outside the
        // wrapper, and any leading combinator is invalid CSS that browsers drop. (Scoping `>p`
        // as `#scope>p` was not stable: the next pass read it as `#scope p`.)
        if case .token(.delim(let d)) = rest.first, d == "+" || d == "~" || d == ">" { return nil }
        if rest.isEmpty { return mappedToScope ? scope : nil }
        return scope + " " + CSSSerializer.serialize(Array(rest))
    }
}
