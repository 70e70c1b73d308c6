import Foundation
import HTML5
import MailSafety

/// The sanitizer's safety oracle, checked on the *reparsed* output tree (never by searching the
/// text): what the web view would build from the sanitized HTML must hold nothing that runs
/// script, loads remote content while it is blocked, or escapes the message's frame.
///
/// It is written independently of the sanitizer's allowlist: its own lists of script-capable
/// elements, its own URL scheme reading (the WHATWG URL parser's: leading/trailing C0 controls
/// and spaces trimmed, tabs and newlines removed anywhere, backslashes as slashes).
public struct SafetyOracle {
    public let target: String
    public let remoteBlocked: Bool
    /// The embedded images the options let the app serve (`EmbeddedImageStyle.served(prefix:)`):
    /// that prefix followed by the base64url of one of the attachments' keys, exactly; any other
    /// URL, the prefix included, is remote.
    public let served: (prefix: String, keys: Set<String>)?

    public init(target: String, remoteBlocked: Bool, served: (prefix: String, keys: Set<String>)? = nil) {
        self.target = target
        self.remoteBlocked = remoteBlocked
        self.served = served
    }

    /// Whether `raw` is one of the app's served embedded images (see ``served``).
    func isServed(_ raw: String) -> Bool {
        guard let served, raw.hasPrefix(served.prefix) else { return false }
        return served.keys.contains { RemoteProxy.encode($0) == raw.dropFirst(served.prefix.count) }
    }

    /// Elements that run script, load documents or plugins, or change the document's base or
    /// policy, in any namespace (compared lowercased).
    static let forbiddenElements: Set<String> = [
        "script", "iframe", "frame", "frameset", "object", "embed", "applet", "base", "meta", "link", "portal",
        "fencedframe", "noscript", "param", "handler", "listener", "foreignobject", "animate", "set",
        "animatetransform", "animatemotion", "discard", "form", "input", "button", "textarea", "select",
    ]

    /// Attributes that name a URL the browser loads without a click.
    static let resourceAttributes: Set<String> = ["src", "srcset", "poster", "background", "lowsrc", "dynsrc", "data", "codebase"]
    /// Attributes that must never be present (they load, navigate or embed documents).
    /// SVG presentation attributes whose value may be a `url(…)` the renderer loads.
    static let svgURLAttributes: Set<String> = [
        "fill", "stroke", "clip-path", "mask", "marker-start", "marker-mid", "marker-end", "filter", "cursor",
    ]
    static let forbiddenAttributes: Set<String> = ["srcdoc", "action", "formaction", "ping", "xmlns:xlink", "is"]

    /// The scheme a browser would read from `raw`, lowercased; `"//"` for a scheme-relative URL,
    /// `nil` for a relative one.
    public static func scheme(_ raw: String) -> String? {
        var scalars = Array(raw.unicodeScalars)
        while let first = scalars.first, first.value <= 0x20 { scalars.removeFirst() }
        while let last = scalars.last, last.value <= 0x20 { scalars.removeLast() }
        scalars.removeAll { $0 == "\t" || $0 == "\n" || $0 == "\r" }
        if scalars.count >= 2, scalars[0] == "/" || scalars[0] == "\\", scalars[1] == "/" || scalars[1] == "\\" { return "//" }
        var scheme = ""
        for (index, scalar) in scalars.enumerated() {
            if scalar == ":" { return index == 0 ? nil : scheme }
            let v = scalar.value
            let alpha = (v >= 0x41 && v <= 0x5A) || (v >= 0x61 && v <= 0x7A)
            let other = (v >= 0x30 && v <= 0x39) || scalar == "+" || scalar == "-" || scalar == "."
            guard alpha || (index > 0 && other) else { return nil }
            scheme.unicodeScalars.append(Unicode.Scalar(alpha ? v | 0x20 : v)!)
        }
        return nil
    }

    /// The URLs of a srcset as the HTML spec's "parse a srcset attribute" reads them: a URL is
    /// a run of non-whitespace (commas inside it belong to it, trailing ones are dropped), then
    /// descriptors up to a comma outside parentheses. (Splitting at every comma, as this oracle
    /// first did, read `x,javascript:y` as two URLs, where a browser loads one.)
    static func srcsetURLs(_ value: String) -> [String] {
        func isSpace(_ s: Unicode.Scalar) -> Bool { s == " " || s == "\t" || s == "\n" || s == "\r" || s == "\u{0C}" }
        var scalars = Substring(value).unicodeScalars[...]
        var urls: [String] = []
        while true {
            while let f = scalars.first, isSpace(f) || f == "," { scalars.removeFirst() }
            if scalars.isEmpty { return urls }
            var url = String.UnicodeScalarView()
            while let f = scalars.first, !isSpace(f) { url.append(f); scalars.removeFirst() }
            if url.last == "," {
                while url.last == "," { url.removeLast() }
            } else {
                var inParens = false
                while let f = scalars.first {
                    scalars.removeFirst()
                    if f == "(" { inParens = true } else if f == ")" { inParens = false }
                    if f == "," && !inParens { break }
                }
            }
            urls.append(String(url))
        }
    }

    static let scriptSchemes: Set<String> = ["javascript", "vbscript", "livescript", "mocha"]
    static let remoteSchemes: Set<String> = ["//", "http", "https", "ftp", "ws", "wss", "file", "blob", "filesystem"]

    /// Checks one URL: never script; never `data:` outside images; never remote when blocked
    /// (for resources).
    func checkURL(_ raw: String, resource: Bool, context: String) {
        guard let scheme = Self.scheme(raw) else { return }
        Fuzz.check(!Self.scriptSchemes.contains(scheme), target, "\(context): script URL \(raw.debugDescription)")
        if scheme == "data" {
            let lower = raw.lowercased().filter { !$0.isWhitespace }
            let embeddable = lower.hasPrefix("data:image/") || lower.hasPrefix("data:font/") || lower.hasPrefix("data:application/font-") || lower.hasPrefix("data:application/x-font-") || lower.hasPrefix("data:application/vnd.ms-fontobject")
            Fuzz.check(resource && embeddable, target, "\(context): data URL where forbidden \(raw.debugDescription)")
        }
        if resource && remoteBlocked && !isServed(raw) {
            Fuzz.check(!Self.remoteSchemes.contains(scheme), target, "\(context): remote resource while remote content is blocked \(raw.debugDescription)")
        }
    }

    /// Checks a style attribute's or sheet's CSS, token by token.
    public func checkCSS(_ css: String, context: String) {
        let tokens = CSSTokenizer.tokenize(css).filter { $0 != .whitespace }
        var index = 0
        func isPropertyName(_ i: Int) -> Bool {
            guard i + 1 < tokens.count, tokens[i + 1] == .colon else { return false }
            guard i > 0 else { return true }
            return tokens[i - 1] == .semicolon || tokens[i - 1] == .openCurly
        }
        var property: String?
        while index < tokens.count {
            let token = tokens[index]
            switch token {
            case .function(let name):
                let lower = name.lowercased()
                Fuzz.check(lower != "expression" && lower != "javascript" && !lower.hasPrefix("-moz-binding"), target, "\(context): CSS function \(name)")
                if lower == "url" || lower == "image-set" || lower == "-webkit-image-set" || lower == "src" {
                    // The string arguments are URLs.
                    var j = index + 1
                    while j < tokens.count, tokens[j] != .closeParen {
                        if case .string(let u) = tokens[j] { checkURL(u, resource: true, context: context + " CSS") }
                        j += 1
                    }
                }
            case .url(let u):
                checkURL(u, resource: true, context: context + " CSS")
            case .atKeyword(let name):
                let lower = name.lowercased()
                Fuzz.check(lower != "import" && lower != "namespace", target, "\(context): CSS @\(name)")
            case .ident(let name) where isPropertyName(index):
                let lower = name.lowercased()
                property = lower
                Fuzz.check(!["behavior", "-moz-binding", "-ms-behavior", "binding"].contains(lower), target, "\(context): CSS property \(name)")
            case .ident(let word):
                if property == "position" {
                    let lower = word.lowercased()
                    Fuzz.check(lower != "fixed" && lower != "absolute" && lower != "sticky", target, "\(context): position: \(word)")
                }
            case .semicolon, .closeCurly:
                property = nil
            default:
                break
            }
            index += 1
        }
    }

    /// Walks the tree (template contents included).
    public func check(_ root: Node) {
        var stack: [Node] = [root]
        while let node = stack.popLast() {
            if let element = node as? Element {
                let name = element.localName.lowercased()
                Fuzz.check(!Self.forbiddenElements.contains(name), target, "forbidden element <\(element.localName)> (\(element.namespace))")
                for attribute in element.attributes {
                    let attr = attribute.name.lowercased()
                    let qualified = attribute.qualifiedName.lowercased()
                    Fuzz.check(!attr.hasPrefix("on"), target, "event handler attribute \(attribute.qualifiedName) on <\(element.localName)>")
                    Fuzz.check(!Self.forbiddenAttributes.contains(qualified), target, "forbidden attribute \(attribute.qualifiedName)")
                    switch attr {
                    case "href":
                        // A link on <a>/<area>; an SVG href loads (image, use, gradients).
                        let isLink = (element.namespace == .html && (name == "a" || name == "area"))
                            || (element.namespace == .svg && name == "a")
                        checkURL(attribute.value, resource: !isLink, context: "<\(element.localName) \(attribute.qualifiedName)>")
                        if element.namespace == .html && !isLink {
                            Fuzz.violation(target, "href on <\(element.localName)>")
                        }
                    case "cite":
                        checkURL(attribute.value, resource: false, context: "<\(element.localName) cite>")
                    case "srcset":
                        for url in Self.srcsetURLs(attribute.value) {
                            checkURL(url, resource: true, context: "<\(element.localName) srcset>")
                        }
                    case "style":
                        checkCSS(attribute.value, context: "<\(element.localName) style>")
                    default:
                        if Self.resourceAttributes.contains(attr) {
                            checkURL(attribute.value, resource: true, context: "<\(element.localName) \(attribute.qualifiedName)>")
                        }
                        // SVG presentation attributes that take url(...) load it.
                        if element.namespace == .svg, Self.svgURLAttributes.contains(attr) {
                            checkCSS("x{a:" + attribute.value + "}", context: "<\(element.localName) \(attribute.qualifiedName)>")
                        }
                    }
                }
                if name == "style" {
                    checkCSS(element.textContent, context: "<style>")
                }
                if let content = element.templateContent { stack.append(content) }
            }
            var child = node.firstChild
            while let c = child { stack.append(c); child = c.nextSibling }
        }
    }
}
