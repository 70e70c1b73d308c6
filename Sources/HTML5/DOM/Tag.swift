// Interned element names: every element name the parser's algorithms test, and the names mail
// HTML, SVG and MathML commonly use, as a one-byte identifier.
//
// Trust-model row: "inbox (incoming mail) — mail can carry malicious HTML". The tree builder
// decides every insertion-mode step by the element's name; comparing one byte instead of a
// `String` makes those steps cheap, and the identifier is computed once per tag from the
// tokenizer's bytes, so there is one source of truth for "is this a `<table>`". A name is interned
// only by exact match (case-sensitive, after the parser's lowercasing and SVG case adjustment), so
// `tag` and `localName` can never disagree.

/// The interned local name of an element: `.div`, `.table`, `.svg`, `.foreignObject`, or
/// ``unknown`` for a name outside the table (custom elements, rare or misspelled tags).
///
/// The identifier names the *local name only*; check ``Element/namespace`` as well (or use
/// `Element.isHTML(_:)` with a tag), since `<title>` and `<a>` exist in HTML and SVG alike.
///
/// ```swift
/// if element.isHTML(.a) { ... }               // an HTML <a>
/// if element.namespace == .svg && element.tag == .foreignObject { ... }
/// ```
///
/// Trust-model row: inbox (incoming mail) — lets the sanitizer test element names with integer
/// compares instead of `String` hashing.
public enum HTMLTag: UInt8, Sendable, Hashable, CaseIterable {
    case unknown = 0
    case a, abbr, acronym, address, applet, area, article, aside, audio, b, base, basefont, bdi, bdo, bgsound
    case big, blink, blockquote, body, br, button, canvas, caption, center, cite, code, col, colgroup, data
    case datalist, dd, del, details, dfn, dialog, dir, div, dl, dt, em, embed, fencedframe, fieldset
    case figcaption, figure, font, footer, form, frame, frameset, h1, h2, h3, h4, h5, h6, head, header, hgroup
    case hr, html, i, iframe, image, img, input, ins, isindex, kbd, keygen, label, legend, li, link, listing
    case main, map, mark, marquee, menu, menuitem, meta, meter, multicol, nav, nextid, nobr, noembed, noframes
    case noscript, object, ol, optgroup, option, output, p, param, picture, plaintext, portal, pre, progress
    case q, rb, rp, rt, rtc, ruby, s, samp, script, search, section, select, selectedcontent, slot, small
    case source, spacer, span, strike, strong, style, sub, summary, sup, table, tbody, td, template, textarea
    case tfoot, th, thead, time, title, tr, track, tt, u, ul, `var`, video, wbr, xmp, svg, g, path, rect
    case circle, ellipse, line, polyline, polygon, text, tspan, defs, linearGradient, radialGradient, stop
    case clipPath, mask, pattern, symbol, use, desc, marker, textPath, foreignObject, filter, math, mi, mo, mn
    case ms, mtext, mglyph, malignmark, annotationXml, annotation, semantics, mrow, msup, msub, msubsup, mfrac
    case msqrt, mroot, mtable, mtr, mtd, mspace, mstyle, mover, munder, munderover, mpadded, mphantom
    case menclose, merror

    /// The local name this identifier stands for (`""` for ``unknown``).
    @inlinable public var name: String { HTMLTag.names[Int(rawValue)] }

    /// ``name`` as a `switch` over string literals: the tokenizer's name for every interned tag
    /// (no lazy-global check of ``names`` and no retain of its element per tag; literals need
    /// neither). `HTMLTagTests` checks it against ``names``.
    @inline(__always) var internedName: String {
        switch self {
        case .unknown: ""
        case .a: "a"
        case .abbr: "abbr"
        case .acronym: "acronym"
        case .address: "address"
        case .applet: "applet"
        case .area: "area"
        case .article: "article"
        case .aside: "aside"
        case .audio: "audio"
        case .b: "b"
        case .base: "base"
        case .basefont: "basefont"
        case .bdi: "bdi"
        case .bdo: "bdo"
        case .bgsound: "bgsound"
        case .big: "big"
        case .blink: "blink"
        case .blockquote: "blockquote"
        case .body: "body"
        case .br: "br"
        case .button: "button"
        case .canvas: "canvas"
        case .caption: "caption"
        case .center: "center"
        case .cite: "cite"
        case .code: "code"
        case .col: "col"
        case .colgroup: "colgroup"
        case .data: "data"
        case .datalist: "datalist"
        case .dd: "dd"
        case .del: "del"
        case .details: "details"
        case .dfn: "dfn"
        case .dialog: "dialog"
        case .dir: "dir"
        case .div: "div"
        case .dl: "dl"
        case .dt: "dt"
        case .em: "em"
        case .embed: "embed"
        case .fencedframe: "fencedframe"
        case .fieldset: "fieldset"
        case .figcaption: "figcaption"
        case .figure: "figure"
        case .font: "font"
        case .footer: "footer"
        case .form: "form"
        case .frame: "frame"
        case .frameset: "frameset"
        case .h1: "h1"
        case .h2: "h2"
        case .h3: "h3"
        case .h4: "h4"
        case .h5: "h5"
        case .h6: "h6"
        case .head: "head"
        case .header: "header"
        case .hgroup: "hgroup"
        case .hr: "hr"
        case .html: "html"
        case .i: "i"
        case .iframe: "iframe"
        case .image: "image"
        case .img: "img"
        case .input: "input"
        case .ins: "ins"
        case .isindex: "isindex"
        case .kbd: "kbd"
        case .keygen: "keygen"
        case .label: "label"
        case .legend: "legend"
        case .li: "li"
        case .link: "link"
        case .listing: "listing"
        case .main: "main"
        case .map: "map"
        case .mark: "mark"
        case .marquee: "marquee"
        case .menu: "menu"
        case .menuitem: "menuitem"
        case .meta: "meta"
        case .meter: "meter"
        case .multicol: "multicol"
        case .nav: "nav"
        case .nextid: "nextid"
        case .nobr: "nobr"
        case .noembed: "noembed"
        case .noframes: "noframes"
        case .noscript: "noscript"
        case .object: "object"
        case .ol: "ol"
        case .optgroup: "optgroup"
        case .option: "option"
        case .output: "output"
        case .p: "p"
        case .param: "param"
        case .picture: "picture"
        case .plaintext: "plaintext"
        case .portal: "portal"
        case .pre: "pre"
        case .progress: "progress"
        case .q: "q"
        case .rb: "rb"
        case .rp: "rp"
        case .rt: "rt"
        case .rtc: "rtc"
        case .ruby: "ruby"
        case .s: "s"
        case .samp: "samp"
        case .script: "script"
        case .search: "search"
        case .section: "section"
        case .select: "select"
        case .selectedcontent: "selectedcontent"
        case .slot: "slot"
        case .small: "small"
        case .source: "source"
        case .spacer: "spacer"
        case .span: "span"
        case .strike: "strike"
        case .strong: "strong"
        case .style: "style"
        case .sub: "sub"
        case .summary: "summary"
        case .sup: "sup"
        case .table: "table"
        case .tbody: "tbody"
        case .td: "td"
        case .template: "template"
        case .textarea: "textarea"
        case .tfoot: "tfoot"
        case .th: "th"
        case .thead: "thead"
        case .time: "time"
        case .title: "title"
        case .tr: "tr"
        case .track: "track"
        case .tt: "tt"
        case .u: "u"
        case .ul: "ul"
        case .`var`: "var"
        case .video: "video"
        case .wbr: "wbr"
        case .xmp: "xmp"
        case .svg: "svg"
        case .g: "g"
        case .path: "path"
        case .rect: "rect"
        case .circle: "circle"
        case .ellipse: "ellipse"
        case .line: "line"
        case .polyline: "polyline"
        case .polygon: "polygon"
        case .text: "text"
        case .tspan: "tspan"
        case .defs: "defs"
        case .linearGradient: "linearGradient"
        case .radialGradient: "radialGradient"
        case .stop: "stop"
        case .clipPath: "clipPath"
        case .mask: "mask"
        case .pattern: "pattern"
        case .symbol: "symbol"
        case .use: "use"
        case .desc: "desc"
        case .marker: "marker"
        case .textPath: "textPath"
        case .foreignObject: "foreignObject"
        case .filter: "filter"
        case .math: "math"
        case .mi: "mi"
        case .mo: "mo"
        case .mn: "mn"
        case .ms: "ms"
        case .mtext: "mtext"
        case .mglyph: "mglyph"
        case .malignmark: "malignmark"
        case .annotationXml: "annotation-xml"
        case .annotation: "annotation"
        case .semantics: "semantics"
        case .mrow: "mrow"
        case .msup: "msup"
        case .msub: "msub"
        case .msubsup: "msubsup"
        case .mfrac: "mfrac"
        case .msqrt: "msqrt"
        case .mroot: "mroot"
        case .mtable: "mtable"
        case .mtr: "mtr"
        case .mtd: "mtd"
        case .mspace: "mspace"
        case .mstyle: "mstyle"
        case .mover: "mover"
        case .munder: "munder"
        case .munderover: "munderover"
        case .mpadded: "mpadded"
        case .mphantom: "mphantom"
        case .menclose: "menclose"
        case .merror: "merror"
        }
    }

    /// The identifier of `localName` (exact, case-sensitive match), or ``unknown``.
    public init(localName: String) {
        var localName = localName
        self = localName.withUTF8 { HTMLTag.lookup($0) }
    }

    /// The names, indexed by raw value.
    @usableFromInline static let names: [String] = [
        "", "a", "abbr", "acronym", "address", "applet", "area", "article", "aside", "audio", "b", "base",
        "basefont", "bdi", "bdo", "bgsound", "big", "blink", "blockquote", "body", "br", "button", "canvas",
        "caption", "center", "cite", "code", "col", "colgroup", "data", "datalist", "dd", "del", "details",
        "dfn", "dialog", "dir", "div", "dl", "dt", "em", "embed", "fencedframe", "fieldset", "figcaption",
        "figure", "font", "footer", "form", "frame", "frameset", "h1", "h2", "h3", "h4", "h5", "h6", "head",
        "header", "hgroup", "hr", "html", "i", "iframe", "image", "img", "input", "ins", "isindex", "kbd",
        "keygen", "label", "legend", "li", "link", "listing", "main", "map", "mark", "marquee", "menu",
        "menuitem", "meta", "meter", "multicol", "nav", "nextid", "nobr", "noembed", "noframes", "noscript",
        "object", "ol", "optgroup", "option", "output", "p", "param", "picture", "plaintext", "portal", "pre",
        "progress", "q", "rb", "rp", "rt", "rtc", "ruby", "s", "samp", "script", "search", "section", "select",
        "selectedcontent", "slot", "small", "source", "spacer", "span", "strike", "strong", "style", "sub",
        "summary", "sup", "table", "tbody", "td", "template", "textarea", "tfoot", "th", "thead", "time",
        "title", "tr", "track", "tt", "u", "ul", "var", "video", "wbr", "xmp", "svg", "g", "path", "rect",
        "circle", "ellipse", "line", "polyline", "polygon", "text", "tspan", "defs", "linearGradient",
        "radialGradient", "stop", "clipPath", "mask", "pattern", "symbol", "use", "desc", "marker", "textPath",
        "foreignObject", "filter", "math", "mi", "mo", "mn", "ms", "mtext", "mglyph", "malignmark",
        "annotation-xml", "annotation", "semantics", "mrow", "msup", "msub", "msubsup", "mfrac", "msqrt",
        "mroot", "mtable", "mtr", "mtd", "mspace", "mstyle", "mover", "munder", "munderover", "mpadded",
        "mphantom", "menclose", "merror",
    ]

    // MARK: Lookup (open addressing over the name bytes)

    /// The lookup tables, in one value so a lookup pays for one lazy-global check, not four.
    private struct Table {
        static let mask = 511
        /// Hash slot -> identifier (``HTMLTag/unknown`` = empty). Stored as the enum, so a hit
        /// returns it without converting a raw value back (an out-of-line call).
        var slots = [HTMLTag](repeating: .unknown, count: mask + 1)
        /// The UTF-8 of every name, concatenated; `starts[raw] ..< starts[raw + 1]` is one name.
        var bytes: [UInt8] = []
        var starts: [Int] = [0]
        /// The first (up to) eight bytes of every name packed little-endian, by raw value: one
        /// compare settles a candidate of up to eight bytes.
        var heads: [UInt64] = []
        var maxLength = 0

        init() {
            for name in HTMLTag.names {
                bytes.append(contentsOf: name.utf8)
                starts.append(bytes.count)
                maxLength = max(maxLength, name.utf8.count)
                heads.append(Array(name.utf8).withUnsafeBufferPointer { Table.head($0) })
            }
            for raw in 1..<HTMLTag.names.count {
                let name = Array(HTMLTag.names[raw].utf8)
                var slot = Table.hash(head: heads[raw], count: name.count)
                while slots[slot] != .unknown { slot = (slot + 1) & Table.mask }
                slots[slot] = HTMLTag(rawValue: UInt8(raw))!
            }
        }

        /// The slot of a name from its ``head(_:)`` and length: one multiply-xor-multiply of
        /// the packed bytes, the top nine bits (the head is a name's first eight bytes, so it
        /// tells apart every name of up to eight bytes; longer ones share a slot chain only
        /// when they share those bytes too). The tokenizer looks up every tag.
        @inline(__always) static func hash(head: UInt64, count: Int) -> Int {
            let h = (head ^ UInt64(truncatingIfNeeded: count) &* 0x9E37_79B9_7F4A_7C15) &* 0xBF58_476D_1CE4_E5B9
            return Int(truncatingIfNeeded: h &>> 55) & mask
        }

        /// The first `min(count, 8)` bytes of `name` packed little-endian: one load of eight
        /// bytes, or two overlapping loads of four or two (the overlap is the same bytes twice),
        /// all inside `name`.
        @inline(__always) static func head(_ name: UnsafeBufferPointer<UInt8>) -> UInt64 {
            guard let base = name.baseAddress else { return 0 }
            let n = name.count
            let raw = UnsafeRawPointer(base)
            if n >= 8 { return UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self)) }
            if n >= 4 {
                let low = UInt64(UInt32(littleEndian: raw.loadUnaligned(as: UInt32.self)))
                let high = UInt64(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: n &- 4, as: UInt32.self)))
                return low | high &<< UInt64(8 &* (n &- 4))
            }
            if n >= 2 {
                let low = UInt64(UInt16(littleEndian: raw.loadUnaligned(as: UInt16.self)))
                let high = UInt64(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: n &- 2, as: UInt16.self)))
                return low | high &<< UInt64(8 &* (n &- 2))
            }
            return n == 1 ? UInt64(base[0]) : 0
        }
    }

    private static let lookupTable = Table()

    /// The identifier of the name in `name` (UTF-8), or ``unknown``. Reads only inside `name`
    /// (``Table/head(_:)`` loads inside it) and inside the tables
    /// (every index is bounds-checked by `Array`).
    static func lookup(_ name: UnsafeBufferPointer<UInt8>) -> HTMLTag {
        let count = name.count
        guard count > 0, count <= HTMLTag.lookupTable.maxLength else { return .unknown }
        let head = Table.head(name)
        var slot = Table.hash(head: head, count: count)
        while true {
            let candidate = HTMLTag.lookupTable.slots[slot]
            if candidate == .unknown { return .unknown }
            let raw = Int(candidate.rawValue)
            let start = HTMLTag.lookupTable.starts[raw]
            if HTMLTag.lookupTable.starts[raw + 1] - start == count && HTMLTag.lookupTable.heads[raw] == head {
                // Same length and first eight bytes: compare the rest (names over eight bytes).
                var i = 8
                while i < count, HTMLTag.lookupTable.bytes[start + i] == name[i] { i += 1 }
                if i >= count { return candidate }
            }
            slot = (slot + 1) & Table.mask
        }
    }
}

/// A set of ``HTMLTag``s as a 256-bit mask: membership is one shift and one AND.
///
/// Trust-model row: inbox (incoming mail) — the element categories of the parser (special,
/// formatting, scope boundaries) and, for the sanitizer, allowlists.
public struct HTMLTagSet: Sendable, Hashable, ExpressibleByArrayLiteral {
    @usableFromInline var w0: UInt64 = 0, w1: UInt64 = 0, w2: UInt64 = 0, w3: UInt64 = 0

    /// A set of these tags.
    public init(_ tags: some Sequence<HTMLTag>) { for tag in tags { insert(tag) } }
    /// A set of the listed tags: `let headings: HTMLTagSet = [.h1, .h2, .h3]`.
    public init(arrayLiteral tags: HTMLTag...) { self.init(tags) }
    /// The set with these four words of the mask (bit `raw & 63` of word `raw >> 6` is the tag with
    /// that raw value). The parser's name sets are written this way: a `static let` of integer
    /// literals is initialized statically, so reading it costs no lazy-global check
    /// (`swift_once`) per token, unlike one built from an array literal at first use.
    /// `HTMLTagTests` checks every such constant against its list of tags.
    @inline(__always) init(words w0: UInt64, _ w1: UInt64, _ w2: UInt64, _ w3: UInt64) {
        self.w0 = w0
        self.w1 = w1
        self.w2 = w2
        self.w3 = w3
    }

    /// Adds `tag`.
    public mutating func insert(_ tag: HTMLTag) {
        let bit = UInt64(1) << UInt64(tag.rawValue & 63)
        switch tag.rawValue >> 6 {
        case 0: w0 |= bit
        case 1: w1 |= bit
        case 2: w2 |= bit
        default: w3 |= bit
        }
    }

    /// `true` if `tag` is in the set.
    @inlinable @inline(__always) public func contains(_ tag: HTMLTag) -> Bool {
        let word: UInt64
        switch tag.rawValue >> 6 {
        case 0: word = w0
        case 1: word = w1
        case 2: word = w2
        default: word = w3
        }
        return word & (UInt64(1) << UInt64(tag.rawValue & 63)) != 0
    }
}
