/// URL cleaning and scheme checks for every URL-bearing attribute and CSS `url()`.
///
/// Trust-model row: inbox (incoming mail) — `javascript:`, `vbscript:`, `data:text/html` and
/// look-alikes hidden with entities, tabs, newlines or control characters never survive; the
/// check runs on the value the browser's URL parser would see (the HTML parser has already
/// decoded character references).
public enum URLPolicy {
    /// What a URL is used for: a link the user may click, or a resource the viewer would load.
    public enum Use: Sendable {
        case link
        case resource
    }

    /// The classification of a cleaned URL.
    public enum Classification: Sendable, Equatable {
        /// `http:`, `https:` or scheme-relative `//host`.
        case remote(URLComponentsLite)
        /// `cid:` reference to an attachment of the message (the Content-ID, percent-decoded).
        case contentID(String)
        /// `data:` URL with its MIME type (lowercased, parameters removed).
        case data(mimeType: String)
        /// `mailto:` or `tel:`.
        case contact
        /// `#fragment` within the message.
        case fragment
        /// Anything else: relative URLs, `javascript:`, `file:`, unknown schemes.
        case unsafe(scheme: String?)
    }

    /// Removes what the URL parser removes or ignores: leading and trailing C0 controls and
    /// spaces, and ASCII tab and newline anywhere.
    public static func clean(_ raw: String) -> String {
        if !raw.utf8.contains(where: { $0 <= 0x20 }) { return raw }
        var scalars = Substring(raw).unicodeScalars[...]
        while let first = scalars.first, first.value <= 0x20 { scalars.removeFirst() }
        while let last = scalars.last, last.value <= 0x20 { scalars.removeLast() }
        var out = String.UnicodeScalarView()
        for scalar in scalars where scalar != "\t" && scalar != "\n" && scalar != "\r" { out.append(scalar) }
        return String(out)
    }

    /// The lowercased scheme of a cleaned URL, or `nil` when it has none (relative URL).
    public static func scheme(of url: String) -> String? {
        var scheme = ""
        for (index, scalar) in url.unicodeScalars.enumerated() {
            if scalar == ":" { return index == 0 ? nil : scheme }
            let v = scalar.value
            let isAlpha = (v >= 0x41 && v <= 0x5A) || (v >= 0x61 && v <= 0x7A)
            let isOther = (v >= 0x30 && v <= 0x39) || scalar == "+" || scalar == "-" || scalar == "."
            if isAlpha || (index > 0 && isOther) {
                scheme.unicodeScalars.append(Unicode.Scalar(isAlpha ? v | 0x20 : v)!)
            } else {
                return nil
            }
        }
        return nil
    }

    /// Classifies a URL after ``clean(_:)``.
    public static func classify(_ raw: String) -> Classification {
        let url = clean(raw)
        if url.hasPrefix("//") || url.hasPrefix("\\\\") || url.hasPrefix("/\\") || url.hasPrefix("\\/") {
            guard let parts = URLComponentsLite(url: "https:" + url.replacingOccurrences(of: "\\", with: "/")) else { return .unsafe(scheme: nil) }
            return .remote(parts)
        }
        if url.hasPrefix("#") { return .fragment }
        guard let scheme = scheme(of: url) else { return .unsafe(scheme: nil) }
        switch scheme {
        case "http", "https":
            guard let parts = URLComponentsLite(url: url) else { return .unsafe(scheme: scheme) }
            return .remote(parts)
        case "cid":
            let id = String(url.dropFirst(4))
            return .contentID(percentDecode(id))
        case "data":
            let rest = url.dropFirst(5)
            let header = rest.prefix { $0 != "," }
            let mime = header.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
            return .data(mimeType: mime.isEmpty ? "text/plain" : mime)
        case "mailto", "tel": return .contact
        default: return .unsafe(scheme: scheme)
        }
    }

    static func percentDecode(_ string: String) -> String {
        // A byte search: `contains("%")` resolved to Foundation's substring search (CFStringFind),
        // 5–6 % of the sanitizer's time on link-heavy mail. `%` is ASCII, so the byte test finds
        // exactly the `%` bytes the loop below decodes.
        guard string.utf8.contains(0x25) else { return string }
        var bytes: [UInt8] = []
        var utf8 = Array(string.utf8)[...]
        while let byte = utf8.first {
            utf8.removeFirst()
            if byte == 0x25, utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                utf8.removeFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// MIME types a `data:` URL may carry in an image context (raster images and SVG, which
    /// cannot run script when loaded as an image).
    public static let imageMIMETypes: Set<String> = [
        "image/png", "image/gif", "image/jpeg", "image/jpg", "image/webp", "image/bmp", "image/avif", "image/svg+xml",
        "image/x-icon", "image/vnd.microsoft.icon",
    ]

    /// MIME types a `data:` URL may carry as a font.
    public static let fontMIMETypes: Set<String> = [
        "font/woff", "font/woff2", "font/ttf", "font/otf", "application/font-woff", "application/font-woff2",
        "application/x-font-ttf", "application/x-font-woff", "application/vnd.ms-fontobject",
    ]
}

/// The parts of an `http(s)` URL the tracker checks need: host, path and query items. Parsed
/// leniently and without Foundation's URL type so behaviour is the same on every platform.
///
/// Trust-model row: inbox — remote content and trackers are judged by host, path and query.
public struct URLComponentsLite: Sendable, Equatable {
    public var scheme: String
    public var host: String
    public var pathAndQuery: String
    public var fragment: String?

    init?(url: String) {
        guard let colon = url.firstIndex(of: ":") else { return nil }
        scheme = url[..<colon].lowercased()
        let afterColon = url[url.index(after: colon)...]
        var rest = afterColon.utf8.contains(0x5C) ? afterColon.replacingOccurrences(of: "\\", with: "/")[...] : Substring(afterColon)
        // `http:example.com` and `http:///example.com` are read by browsers as `http://example.com`.
        rest = rest.drop(while: { $0 == "/" })
        let hostEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        host = Self.normalizeHost(rest[..<hostEnd])
        pathAndQuery = String(rest[hostEnd...])
        fragment = nil
        if host.isEmpty { return nil }
        splitFragment()
    }

    private mutating func splitFragment() {
        if let hash = pathAndQuery.firstIndex(of: "#") {
            fragment = String(pathAndQuery[pathAndQuery.index(after: hash)...])
            pathAndQuery = String(pathAndQuery[..<hash])
        }
    }

    private static func normalizeHost(_ authority: Substring) -> String {
        var host = authority
        if let at = host.lastIndex(of: "@") { host = host[host.index(after: at)...] }
        if host.hasPrefix("[") { return String(host).lowercased() }
        if let colon = host.lastIndex(of: ":") { host = host[..<colon] }
        var result = URLPolicy.percentDecode(String(host)).lowercased()
        while result.hasSuffix(".") { result.removeLast() }
        return result
    }

    /// `host` + `pathAndQuery`, without scheme: the text tracker patterns are matched against.
    public var matchText: String { host + pathAndQuery }

    /// The query as (name, value) pairs in order, values still percent-encoded.
    public var queryItems: [(name: String, value: String)] {
        guard let q = pathAndQuery.firstIndex(of: "?") else { return [] }
        return pathAndQuery[pathAndQuery.index(after: q)...].split(separator: "&", omittingEmptySubsequences: true).map { item in
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }
    }
}

import Foundation
