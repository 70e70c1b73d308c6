import HTML5

/// The elements and attributes mail may keep, per namespace.
///
/// Trust-model row: inbox (incoming mail) — an allowlist, never a denylist: anything not named
/// here is removed (or unwrapped, keeping its text).
enum Allowlist {
    /// HTML elements kept (with their allowed attributes).
    static let htmlElements: Set<String> = [
        "a", "abbr", "acronym", "address", "area", "article", "aside", "audio", "b", "bdi", "bdo", "big",
        "blockquote", "br", "caption", "center", "cite", "code", "col", "colgroup", "data", "dd", "del",
        "details", "dfn", "div", "dl", "dt", "em", "fieldset", "figcaption", "figure", "font", "footer", "h1", "h2",
        "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "i", "img", "ins", "kbd", "label", "legend", "li", "main",
        "map", "mark", "menu", "nav", "ol", "p", "picture", "pre", "q", "rp", "rt", "ruby", "s", "samp", "section",
        "small", "source", "span", "strike", "strong", "style", "sub", "summary", "sup", "table", "tbody", "td",
        "tfoot", "th", "thead", "time", "tr", "tt", "u", "ul", "var", "video", "wbr",
    ]

    /// HTML elements removed together with their content (active, embedding, raw-text or
    /// template content whose text would be meaningless or dangerous on its own).
    static let htmlDropWithContent: [String: RemovalKind] = [
        "script": .scriptElement, "iframe": .activeElement, "frame": .activeElement, "frameset": .activeElement,
        "object": .activeElement, "embed": .activeElement, "applet": .activeElement, "param": .activeElement,
        "base": .activeElement, "meta": .activeElement, "link": .activeElement, "template": .activeElement,
        "noscript": .activeElement, "noembed": .activeElement, "noframes": .activeElement, "xmp": .activeElement,
        "plaintext": .activeElement, "title": .activeElement, "portal": .activeElement, "fencedframe": .activeElement,
        "slot": .activeElement, "dialog": .activeElement, "head": .activeElement,
        "input": .formControl, "select": .formControl, "textarea": .formControl, "option": .formControl,
        "optgroup": .formControl, "keygen": .formControl, "datalist": .formControl, "output": .formControl,
        "selectedcontent": .formControl, "track": .activeElement, "image": .activeElement, "search": .formControl,
    ]

    /// HTML elements whose tag goes but whose content stays (forms are neutered this way).
    static let htmlUnwrap: [String: RemovalKind] = ["form": .formControl, "button": .formControl]

    /// SVG elements kept (local names as the parser adjusts them).
    static let svgElements: Set<String> = [
        "svg", "g", "path", "rect", "circle", "ellipse", "line", "polyline", "polygon", "text", "tspan", "defs",
        "linearGradient", "radialGradient", "stop", "clipPath", "mask", "pattern", "symbol", "use", "image",
        "desc", "title", "marker", "a", "textPath",
    ]

    /// MathML elements kept.
    static let mathMLElements: Set<String> = [
        "math", "mi", "mn", "mo", "ms", "mtext", "mrow", "msup", "msub", "msubsup", "mfrac", "msqrt", "mroot",
        "mtable", "mtr", "mtd", "mspace", "mstyle", "mover", "munder", "munderover", "mpadded", "mphantom",
        "menclose", "merror",
    ]

    /// HTML attributes kept on any allowed HTML element (URL and style attributes are checked
    /// separately).
    static let htmlAttributes: Set<String> = [
        "align", "alt", "bgcolor", "border", "cellpadding", "cellspacing", "class", "clear", "color", "cols", "colspan",
        "compact", "dir", "face", "height", "hspace", "lang", "rowspan", "size", "span", "start", "summary", "title",
        "type", "valign", "vspace", "width", "headers", "scope", "abbr", "axis", "nowrap", "reversed", "value",
        "datetime", "role", "id", "name", "shape", "coords", "open", "translate", "char", "charoff", "noshade",
        "frame", "rules", "label", "controls", "loop", "muted", "playsinline", "sizes", "media", "hidden",
    ]

    /// Attributes holding a URL and how each is judged.
    enum URLAttribute {
        case link
        case resource(RemoteResourceKind)
        case srcset
        case drop
    }

    static func urlAttribute(element: some CleanableElement, attribute: Attribute) -> URLAttribute? {
        let name = attribute.name
        if attribute.namespace == .xlink && name == "href" {
            return element.namespace == .svg ? svgHref(element) : .drop
        }
        guard attribute.namespace == nil else { return nil }
        if element.namespace == .svg {
            return name == "href" ? svgHref(element) : nil
        }
        guard element.namespace == .html, let urlName = htmlURLAttributes.value(name) else { return nil }
        return htmlURLAttribute(urlName, element: element)
    }

    /// ``urlAttribute(element:attribute:)`` for an attribute without namespace on an HTML
    /// element, whose name was found in ``htmlURLAttributes`` as `urlName`.
    static func htmlURLAttribute(_ urlName: HTMLURLAttributeName, element: some CleanableElement) -> URLAttribute {
        switch urlName {
        case .href:
            // (By interned tag: `tag` always agrees with `localName`.)
            return element.tag == .a || element.tag == .area ? .link : .drop
        case .src:
            // (By interned tag, as above.)
            switch element.tag {
            case .img: return .resource(.image)
            case .source: return .resource(element.isInPicture ? .image : .media)
            case .video, .audio: return .resource(.media)
            default: return .drop
            }
        case .srcset: return element.tag == .img || element.tag == .source ? .srcset : .drop
        case .poster: return element.tag == .video ? .resource(.poster) : .drop
        case .background: return .resource(.background)
        case .cite: return .link
        case .drop: return .drop
        }
    }

    /// The names of HTML attributes holding a URL (one table lookup for every attribute instead of
    /// a chain of string comparisons).
    enum HTMLURLAttributeName { case href, src, srcset, poster, background, cite, drop }

    static let htmlURLAttributeNames: [(String, HTMLURLAttributeName)] =
        [("href", .href), ("src", .src), ("srcset", .srcset), ("poster", .poster), ("background", .background), ("cite", .cite)]
            + ["action", "formaction", "longdesc", "ping", "data", "codebase", "classid", "archive", "manifest", "lowsrc", "dynsrc",
               "profile", "usemap", "icon", "itemtype", "srcdoc", "attributionsrc"].map { ($0, .drop) }

    static let htmlURLAttributes = ASCIINameTable<HTMLURLAttributeName>(htmlURLAttributeNames)

    private static func svgHref(_ element: some CleanableElement) -> URLAttribute {
        switch element.localName {
        case "image": return .resource(.svgImage)
        case "use": return .resource(.svgUse)
        case "a": return .link
        case "linearGradient", "radialGradient", "pattern", "textPath": return .resource(.svgUse)
        default: return .drop
        }
    }

    /// SVG attributes kept (case-adjusted local names). Presentation attributes that take
    /// `url()` are allowed only with a local `url(#id)`.
    static let svgAttributes: Set<String> = [
        "viewBox", "preserveAspectRatio", "width", "height", "x", "y", "x1", "x2", "y1", "y2", "cx", "cy", "r", "rx",
        "ry", "d", "points", "transform", "fill", "fill-opacity", "fill-rule", "stroke", "stroke-width",
        "stroke-opacity", "stroke-linecap", "stroke-linejoin", "stroke-dasharray", "stroke-dashoffset",
        "stroke-miterlimit", "opacity", "class", "id", "style", "font-family", "font-size", "font-weight",
        "font-style", "text-anchor", "dominant-baseline", "dx", "dy", "rotate", "textLength", "lengthAdjust",
        "offset", "stop-color", "stop-opacity", "gradientUnits", "gradientTransform", "spreadMethod", "fx", "fy",
        "clip-path", "clip-rule", "clipPathUnits", "mask", "maskUnits", "maskContentUnits", "patternUnits",
        "patternContentUnits", "patternTransform", "visibility", "display", "color", "role", "version",
        "marker-start", "marker-mid", "marker-end", "markerWidth", "markerHeight", "markerUnits", "refX", "refY",
        "orient", "startOffset", "vector-effect", "shape-rendering", "text-rendering", "letter-spacing",
        "word-spacing", "text-decoration", "direction", "writing-mode", "lang",
    ]

    /// SVG attributes whose value may contain `url(...)`.
    static let svgPaintAttributes: Set<String> = [
        "fill", "stroke", "clip-path", "mask", "marker-start", "marker-mid", "marker-end",
    ]

    /// MathML attributes kept.
    static let mathMLAttributes: Set<String> = [
        "mathvariant", "mathsize", "mathcolor", "mathbackground", "displaystyle", "scriptlevel", "dir", "display",
        "fence", "separator", "stretchy", "symmetric", "largeop", "movablelimits", "accent", "accentunder", "lspace",
        "rspace", "minsize", "maxsize", "linethickness", "columnalign", "rowalign", "columnspan", "rowspan",
        "width", "height", "depth", "notation", "class", "id", "style", "form",
    ]

    // MARK: Tables (the sets above, looked up by packed ASCII bytes; see ASCIINameTable)

    /// What ``TreeCleaner`` does with an HTML element, by local name (absent: unknown, unwrapped).
    enum HTMLElementRule {
        case keep
        /// `<style>`: the sheet is sanitized.
        case style
        case drop(RemovalKind)
        case unwrap(RemovalKind)
    }

    /// ``htmlDropWithContent`` first, then ``htmlUnwrap``, then ``htmlElements`` (the order the
    /// checks were made in).
    static let htmlElementRules: ASCIINameTable<HTMLElementRule> = {
        var rules: [String: HTMLElementRule] = [:]
        for name in htmlElements { rules[name] = name == "style" ? .style : .keep }
        for (name, kind) in htmlUnwrap { rules[name] = .unwrap(kind) }
        for (name, kind) in htmlDropWithContent { rules[name] = .drop(kind) }
        return ASCIINameTable(rules.map { ($0.key, $0.value) })
    }()
    /// ``htmlElementRules`` by interned tag (`Element.tag`, which always agrees with
    /// `localName`: a known tag stands for exactly its name), so most elements need no lookup
    /// by name; `.unknown` has no entry here and is looked up by name.
    static let htmlElementRulesByTag: [HTMLElementRule?] = {
        var byTag = [HTMLElementRule?](repeating: nil, count: Int(HTMLTag.allCases.map(\.rawValue).max() ?? 0) + 1)
        for tag in HTMLTag.allCases where tag != .unknown { byTag[Int(tag.rawValue)] = htmlElementRules.value(tag.name) }
        return byTag
    }()

    /// The rule for the HTML element `element`, by its interned tag in `byTag`
    /// (``htmlElementRulesByTag``, or a copy of it the caller read once), or by name for an
    /// unknown tag (the local name is read only then).
    @inline(__always)
    static func htmlElementRule(_ element: some CleanableElement, byTag: [HTMLElementRule?]) -> HTMLElementRule? {
        element.tag == .unknown ? htmlElementRules.value(element.localName) : byTag[Int(element.tag.rawValue)]
    }

    static let svgElementTable = ASCIINameTable(svgElements)
    static let mathMLElementTable = ASCIINameTable(mathMLElements)

    /// The attribute names with a rule of their own in ``TreeCleaner``, and membership of the
    /// HTML and MathML attribute allowlists, in one lookup.
    struct AttributeInfo {
        enum Role { case none, style, idOrName, targetOrRel }
        var role: Role = .none
        var html = false
        var mathML = false
        /// What ``htmlURLAttributes`` holds for the name (every name of that table is in this
        /// one, so a name found here needs no second lookup there).
        var urlName: HTMLURLAttributeName?
    }

    static let attributeInfo: ASCIINameTable<AttributeInfo> = {
        var info: [String: AttributeInfo] = [:]
        for name in htmlAttributes { info[name, default: AttributeInfo()].html = true }
        for name in mathMLAttributes { info[name, default: AttributeInfo()].mathML = true }
        info["style", default: AttributeInfo()].role = .style
        info["id", default: AttributeInfo()].role = .idOrName
        info["name", default: AttributeInfo()].role = .idOrName
        info["target", default: AttributeInfo()].role = .targetOrRel
        info["rel", default: AttributeInfo()].role = .targetOrRel
        // (A name that is only a URL attribute gets an entry with no role and in no allowlist,
        // which the cleaner treats as it treats a name without entry.)
        for (name, urlName) in htmlURLAttributeNames { info[name, default: AttributeInfo()].urlName = urlName }
        return ASCIINameTable(info.map { ($0.key, $0.value) })
    }()
    static let svgAttributeTable = ASCIINameTable(svgAttributes)
    static let clobberingNameTable = ASCIINameTable(clobberingNames)

    /// `id`/`name` values that would shadow properties of `document` or `window` (DOM clobbering)
    /// when the message is shown in a web view that runs the app's scripts (the composer).
    static let clobberingNames: Set<String> = [
        "location", "cookie", "domain", "forms", "images", "links", "anchors", "scripts", "embeds", "plugins",
        "body", "head", "documentelement", "defaultview", "activeelement", "referrer", "url", "documenturi",
        "baseuri", "title", "dir", "designmode", "readystate", "implementation", "doctype", "attributes",
        "children", "childnodes", "firstchild", "lastchild", "parentnode", "nodename", "nodetype", "nodevalue",
        "ownerdocument", "innerhtml", "outerhtml", "textcontent", "getelementbyid", "getelementsbytagname",
        "getelementsbyclassname", "getelementsbyname", "queryselector", "queryselectorall", "createelement",
        "createtextnode", "createrange", "write", "writeln", "open", "close", "appendchild", "removechild",
        "insertbefore", "replacechild", "addeventlistener", "removeeventlistener", "dispatchevent", "alert",
        "confirm", "prompt", "eval", "settimeout", "setinterval", "fetch", "xmlhttprequest", "window", "self",
        "top", "parent", "frames", "opener", "length", "name", "status", "history", "navigator", "localstorage",
        "sessionstorage", "indexeddb", "crypto", "origin", "document", "submit", "reset", "action", "method",
        "target", "elements", "form", "constructor", "prototype", "__proto__", "tostring", "valueof",
        "hasownproperty", "nodeName", "currentscript", "all", "defaultstatus", "external", "globalthis",
        "postmessage", "trustedtypes", "customelements", "contenteditable",
    ]
}
