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
        let plain: Bool? = raw.utf8.withContiguousStorageIfAvailable { bytes in
            for byte in bytes where byte <= 0x20 { return false }
            return true
        }
        if plain ?? !raw.utf8.contains(where: { $0 <= 0x20 }) { return raw }
        var scalars = Substring(raw).unicodeScalars[...]
        while let first = scalars.first, first.value <= 0x20 { scalars.removeFirst() }
        while let last = scalars.last, last.value <= 0x20 { scalars.removeLast() }
        var out = String.UnicodeScalarView()
        for scalar in scalars where scalar != "\t" && scalar != "\n" && scalar != "\r" { out.append(scalar) }
        return String(out)
    }

    /// The lowercased scheme of a cleaned URL, or `nil` when it has none (relative URL).
    public static func scheme(of url: String) -> String? {
        // On the UTF-8 bytes: a scheme is ASCII, and a non-ASCII byte before the `:` means no
        // scheme, as a non-ASCII scalar did in the scalar loop below.
        let fast: String?? = url.utf8.withContiguousStorageIfAvailable { bytes -> String? in
            for (index, byte) in bytes.enumerated() {
                if byte == 0x3A {
                    guard index > 0 else { return nil }
                    return String(unsafeUninitializedCapacity: index) { out in
                        for k in 0..<index { let b = bytes[k]; out[k] = b >= 0x41 && b <= 0x5A ? b | 0x20 : b }
                        return index
                    }
                }
                let isAlpha = (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A
                let isOther = (byte >= 0x30 && byte <= 0x39) || byte == 0x2B || byte == 0x2D || byte == 0x2E
                if !(isAlpha || (index > 0 && isOther)) { return nil }
            }
            return nil
        }
        if let fast { return fast }
        return schemeByScalars(url)
    }

    /// ``scheme(of:)`` scalar by scalar (the reference for the byte version above).
    static func schemeByScalars(_ url: String) -> String? {
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
        classify(cleaned: clean(raw))
    }

    /// ``classify(_:)`` of a URL that has been through ``clean(_:)`` (which is idempotent: what
    /// it returns starts and ends with a scalar above U+0020 and holds no tab or newline).
    static func classify(cleaned url: String) -> Classification {
        if url.hasASCIIPrefix("//") || url.hasASCIIPrefix("\\\\") || url.hasASCIIPrefix("/\\") || url.hasASCIIPrefix("\\/") {
            guard let parts = URLComponentsLite(url: "https:" + url.replacingOccurrences(of: "\\", with: "/")) else { return .unsafe(scheme: nil) }
            return .remote(parts)
        }
        if url.hasASCIIPrefix("#") { return .fragment }
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
        switch Self.parseASCII(url) {
        case .parsed(let parts): self = parts; return
        case .invalid: return nil
        case .notASCII: self.init(characters: url)
        }
    }

    /// The parse by `Character`s, for URLs with non-ASCII text (and the reference the byte
    /// parse is tested against).
    init?(characters url: String) {
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

    private init(scheme: String, host: String, pathAndQuery: String, fragment: String?) {
        self.scheme = scheme
        self.host = host
        self.pathAndQuery = pathAndQuery
        self.fragment = fragment
    }

    private enum ASCIIParse { case parsed(URLComponentsLite), invalid, notASCII }

    /// The parse below for an all-ASCII URL, on its bytes: for ASCII text every `Character` is
    /// one byte (the URL is cleaned, so no CR LF pair), so byte searches find what the
    /// `Character` searches find. A host with `%` is decoded by ``normalizeHost(_:)`` as before.
    private static func parseASCII(_ url: String) -> ASCIIParse {
        let result: ASCIIParse? = url.utf8.withContiguousStorageIfAvailable { bytes -> ASCIIParse in
            var colon = -1
            var backslash = false
            for index in 0..<bytes.count {
                let byte = bytes[index]
                if byte >= 0x80 { return .notASCII }
                if byte == 0x3A && colon < 0 { colon = index }
                if byte == 0x5C { backslash = true }
            }
            guard colon >= 0 else { return .invalid }
            let scheme = text(bytes, 0..<colon, lowercased: true)
            let after = UnsafeBufferPointer(rebasing: bytes[(colon + 1)...])
            // `\` reads as `/` (a copy is made only when there is one).
            guard backslash else { return parseAfterScheme(scheme, after) }
            var rest = Array(after)
            for k in rest.indices where rest[k] == 0x5C { rest[k] = 0x2F }
            return rest.withUnsafeBufferPointer { parseAfterScheme(scheme, $0) }
        }
        return result ?? .notASCII
    }

    /// The ASCII bytes `source[range]` as a `String`, ASCII-lowercased if asked.
    private static func text(_ source: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, lowercased: Bool = false) -> String {
        guard !range.isEmpty, let base = source.baseAddress else { return "" }
        return String(unsafeUninitializedCapacity: range.count) { out in
            guard let target = out.baseAddress else { return 0 }
            if lowercased {
                for k in 0..<range.count { let b = base[range.lowerBound + k]; target[k] = b >= 0x41 && b <= 0x5A ? b | 0x20 : b }
            } else {
                target.initialize(from: base + range.lowerBound, count: range.count)
            }
            return range.count
        }
    }

    /// The rest of ``parseASCII(_:)``: `r` is what follows the scheme's `:`, with `\` read as `/`.
    /// `http:example.com` and `http:///example.com` read as `http://example.com`.
    private static func parseAfterScheme(_ scheme: String, _ r: UnsafeBufferPointer<UInt8>) -> ASCIIParse {
        var start = 0
        while start < r.count && r[start] == 0x2F { start += 1 }
        var hostEnd = start
        while hostEnd < r.count && r[hostEnd] != 0x2F && r[hostEnd] != 0x3F && r[hostEnd] != 0x23 { hostEnd += 1 }
        // The host: after the last `@`; an IP literal `[…]` whole; else before the last `:`.
        var hostStart = start
        for k in start..<hostEnd where r[k] == 0x40 { hostStart = k + 1 }
        var host: String
        if hostStart < hostEnd && r[hostStart] == 0x5B {
            host = text(r, hostStart..<hostEnd, lowercased: true)
        } else {
            var end = hostEnd
            for k in hostStart..<hostEnd where r[k] == 0x3A { end = k }
            var percent = false
            for k in hostStart..<end where r[k] == 0x25 { percent = true; break }
            if percent {
                host = URLPolicy.percentDecode(text(r, hostStart..<end)).lowercased()
                while host.hasSuffix(".") { host.removeLast() }
            } else {
                while end > hostStart && r[end - 1] == 0x2E { end -= 1 }
                host = text(r, hostStart..<end, lowercased: true)
            }
        }
        if host.isEmpty { return .invalid }
        var fragment: String?
        var pathEnd = r.count
        var hash = hostEnd
        while hash < r.count && r[hash] != 0x23 { hash += 1 }
        if hash < r.count {
            fragment = text(r, (hash + 1)..<r.count)
            pathEnd = hash
        }
        return .parsed(URLComponentsLite(scheme: scheme, host: host, pathAndQuery: text(r, hostEnd..<pathEnd), fragment: fragment))
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
