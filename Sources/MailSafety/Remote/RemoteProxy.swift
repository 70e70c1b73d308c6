import Foundation

/// Where remote resources are fetched through once remote content is allowed: the sanitizer
/// writes each loadable remote URL as `prefix` + the URL in base64url, so the viewer asks the
/// app (which asks its backend) and never the sender's server.
///
/// Trust-model row: inbox (incoming mail) — IP disclosure by remote content: with a proxy the
/// sender's server sees the backend's address, not the reader's. The prefix normally carries a
/// token of one rendering (see the app), and only the URLs that rendering wrote are fetched
/// (``remoteURLs(in:)``).
public struct RemoteProxy: Sendable, Equatable {
    /// An absolute URL ending in `/`, e.g. `http://127.0.0.1:8080/remote/TOKEN/`.
    public let prefix: String
    /// `scheme://host[:port]` of `prefix`: the one source the viewer's CSP widens to.
    public let origin: String

    /// - Returns: nil when `prefix` is not an absolute `http(s)` URL ending in `/`.
    public init?(prefix: String) {
        guard prefix.hasSuffix("/"), let url = URL(string: prefix), let scheme = url.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty else { return nil }
        self.prefix = prefix
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        origin = "\(scheme)://\(hostPart)" + (url.port.map { ":\($0)" } ?? "")
    }

    /// The proxied form of a remote URL.
    public func url(for remote: String) -> String { prefix + Self.encode(remote) }

    /// Whether `url` is already a proxied URL of this proxy (a second sanitizer pass keeps it).
    public func isProxied(_ url: String) -> Bool { url.hasPrefix(prefix) }

    /// The remote URLs of every proxied URL in `html` (the sanitizer's output), in order, once each.
    public func remoteURLs(in html: String) -> [String] {
        var found: [String] = []
        var rest = html[...]
        while let range = rest.range(of: prefix) {
            let tail = rest[range.upperBound...]
            let component = tail.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
            if let url = Self.decode(String(component)), !found.contains(url) { found.append(url) }
            rest = tail[component.endIndex...]
        }
        return found
    }

    /// base64url without padding.
    public static func encode(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The text of a base64url component, or nil when it is not one.
    public static func decode(_ component: String) -> String? {
        guard !component.isEmpty else { return nil }
        var base64 = component.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64) else { return nil }
        return String(data: data, encoding: .utf8)
    }
}
