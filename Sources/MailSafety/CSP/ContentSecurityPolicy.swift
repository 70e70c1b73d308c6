import HTML5

/// The Content-Security-Policy of the message viewer (three stages) and of the composer, as an
/// HTTP header value and as a `<meta>` tag.
///
/// Trust-model rows: inbox (incoming mail) — "strict CSP": (1) everything blocked until
/// sanitizing is done, (2) embedded images only, (3) remote resources too when allowed, scripts
/// never; outbox (composer) — the editor's own inline script (by nonce) but no remote loads.
public struct ContentSecurityPolicy: Sendable, Equatable {
    /// The viewer's stages.
    public enum ViewerStage: String, Sendable, CaseIterable, Codable {
        /// Until sanitizing is done: `default-src 'none'`.
        case lockdown
        /// Sanitized; embedded (`cid:`) images only, as `data:` or the app's scheme.
        case embeddedImagesOnly
        /// The user allowed remote content: images, styles, fonts and media widen; scripts never.
        case remoteAllowed
    }

    /// Directives in order (name, sources).
    public private(set) var directives: [(name: String, sources: [String])]

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.headerValue == rhs.headerValue }

    /// Directives a `<meta>` policy ignores (CSP3 §3.3): left out of ``metaTag``.
    static let headerOnly: Set<String> = ["frame-ancestors", "report-uri", "report-to", "sandbox"]

    /// The viewer's policy for a stage. `appScheme` is the scheme the app serves embedded images
    /// under (e.g. `rampart-cid`), if it uses one instead of `data:` URIs. `proxyOrigin` is the
    /// origin of the ``RemoteProxy`` the document's remote URLs were rewritten to: the remote
    /// stage then widens to that origin only, not to every `http(s)` host. `servedPrefix` is the
    /// prefix of ``EmbeddedImageStyle/served(prefix:)``: when given, `cid:` images and fonts come
    /// from that path (no app scheme), and images the body carries inline as `data:` URIs (which
    /// the sanitizer keeps: they load nothing from anywhere) stay allowed.
    public static func viewer(_ stage: ViewerStage, appScheme: String? = nil, proxyOrigin: String? = nil,
                              servedPrefix: String? = nil) -> ContentSecurityPolicy {
        let local = servedPrefix.map { [$0, "data:"] } ?? ["data:"] + (appScheme.map { [$0 + ":"] } ?? [])
        let remote = proxyOrigin.map { [$0] } ?? ["https:", "http:"]
        var d: [(String, [String])] = [("default-src", ["'none'"])]
        switch stage {
        case .lockdown:
            break
        case .embeddedImagesOnly:
            d += [("img-src", local), ("style-src", ["'unsafe-inline'"]), ("font-src", local)]
        case .remoteAllowed:
            d += [
                ("img-src", local + remote),
                ("style-src", ["'unsafe-inline'"] + remote),
                ("font-src", local + remote),
                ("media-src", local + remote),
            ]
        }
        d += [
            ("script-src", ["'none'"]), ("object-src", ["'none'"]), ("frame-src", ["'none'"]), ("child-src", ["'none'"]),
            ("worker-src", ["'none'"]), ("connect-src", ["'none'"]), ("manifest-src", ["'none'"]),
            ("base-uri", ["'none'"]), ("form-action", ["'none'"]), ("frame-ancestors", ["'none'"]),
        ]
        return ContentSecurityPolicy(directives: d)
    }

    /// The composer's policy: the editor's inline script by nonce, inline styles, embedded images;
    /// no remote loads of any kind.
    /// - Parameters:
    ///   - scriptNonce: a fresh nonce per load (see ``makeNonce()``).
    ///   - appScheme: the app's own URL scheme for embedded images, if it has one (added to `img-src`).
    public static func composer(scriptNonce: String, appScheme: String? = nil) -> ContentSecurityPolicy {
        let local = ["data:"] + (appScheme.map { [$0 + ":"] } ?? [])
        return ContentSecurityPolicy(directives: [
            ("default-src", ["'none'"]),
            ("script-src", ["'nonce-\(scriptNonce)'"]),
            ("style-src", ["'unsafe-inline'"]),
            ("img-src", local + ["blob:"]),
            ("font-src", local),
            ("object-src", ["'none'"]), ("frame-src", ["'none'"]), ("child-src", ["'none'"]), ("worker-src", ["'none'"]),
            ("connect-src", ["'none'"]), ("manifest-src", ["'none'"]), ("media-src", ["'none'"]),
            ("base-uri", ["'none'"]), ("form-action", ["'none'"]), ("frame-ancestors", ["'none'"]),
        ])
    }

    /// A random nonce (128 bits, base64) for the composer's script.
    public static func makeNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        for _ in 0..<16 { bytes.append(UInt8.random(in: 0...255, using: &generator)) }
        return base64(bytes)
    }

    static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var out = ""
        var i = 0
        while i < bytes.count {
            let b0 = Int(bytes[i]), b1 = i + 1 < bytes.count ? Int(bytes[i + 1]) : 0, b2 = i + 2 < bytes.count ? Int(bytes[i + 2]) : 0
            out.append(alphabet[b0 >> 2])
            out.append(alphabet[((b0 & 3) << 4) | (b1 >> 4)])
            out.append(i + 1 < bytes.count ? alphabet[((b1 & 15) << 2) | (b2 >> 6)] : "=")
            out.append(i + 2 < bytes.count ? alphabet[b2 & 63] : "=")
            i += 3
        }
        return out
    }

    /// The value of a `Content-Security-Policy` HTTP header.
    public var headerValue: String {
        directives.map { ([$0.name] + $0.sources).joined(separator: " ") }.joined(separator: "; ")
    }

    /// The policy as a `<meta http-equiv>` value (without the directives a meta policy ignores).
    public var metaValue: String {
        directives.filter { !Self.headerOnly.contains($0.name) }.map { ([$0.name] + $0.sources).joined(separator: " ") }
            .joined(separator: "; ")
    }

    /// `<meta http-equiv="Content-Security-Policy" content="...">`, the value escaped as the HTML5
    /// serializer escapes attribute values.
    public var metaTag: String {
        var tag = "<meta http-equiv=\"Content-Security-Policy\" content=\""
        HTMLSerializer.escape(metaValue, attributeMode: true, into: &tag)
        return tag + "\">"
    }
}

/// Builds the complete HTML document the viewer loads: the CSP `<meta>` first in `<head>`, then
/// the charset, a no-referrer policy and the wrapper's own containment style, then the sanitized
/// message inside `<div id="wrapperID">`.
///
/// Trust-model row: inbox (incoming mail) — strict CSP in the viewer; the message is confined to
/// its wrapper (CSS `contain`, `overflow`, `isolation`).
public func renderDocument(_ message: SanitizedMessage, policy: ContentSecurityPolicy, title: String = "") -> String {
    var escapedTitle = ""
    HTMLSerializer.escape(title, attributeMode: false, into: &escapedTitle)
    return """
    <!DOCTYPE html><html><head>\(policy.metaTag)<meta charset="utf-8"><meta name="referrer" content="no-referrer">\
    <title>\(escapedTitle)</title>\
    <style>#\(message.wrapperID){contain:content;isolation:isolate;overflow:auto;position:relative;max-width:100%}</style>\
    </head><body><div id="\(message.wrapperID)">\(message.html)</div></body></html>
    """
}
