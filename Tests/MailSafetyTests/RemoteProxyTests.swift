import Foundation
import Testing
@testable import MailSafety

/// The remote stage through a proxy: every loadable remote URL (`src`, `srcset`, CSS `url()`)
/// rewritten to the proxy, nothing else, stable under a second pass, and the CSP widened to the
/// proxy's origin only.
@Suite("Remote proxy rewriting")
struct RemoteProxyTests {
    static let proxy = RemoteProxy(prefix: "http://127.0.0.1:8123/remote/tok3n/")!
    static let mail = #"<p><img src="https://img.example/a.png" alt="a"></p>"#
        + #"<img srcset="https://img.example/s1.png 1x, https://img.example/s2.png 2x" alt="s">"#
        + #"<p style="background:url('https://img.example/bg.png')">bg</p>"#
        + #"<style>p{background-image:url(https://img.example/sheet.png)}</style>"#
        + #"<img src="https://t.hubspotemail.net/e1t/o/pixel.gif" width="1" height="1">"#
        + #"<a href="https://img.example/link">link</a>"#

    static func sanitize(_ html: String, remote: RemoteContentPolicy) throws -> SanitizedMessage {
        try MailSanitizer(options: SanitizerOptions(remote: remote, remoteProxy: proxy)).sanitize(html)
    }

    @Test func allowedRemoteResourcesGoThroughTheProxyAndNothingElse() throws {
        let sanitized = try Self.sanitize(Self.mail, remote: .allowThisMessage)
        let urls = Self.proxy.remoteURLs(in: sanitized.html)
        #expect(Set(urls) == ["https://img.example/a.png", "https://img.example/s1.png", "https://img.example/s2.png",
                              "https://img.example/bg.png", "https://img.example/sheet.png"], "\(sanitized.html)")
        // No remote resource left loadable as it was; the link stays a link; the tracker stays blocked.
        for direct in [" src=\"https://img.example", "https://img.example/s1.png 1x", "url(https://img.example", "url(\"https://img.example",
                       " src=\"https://t.hubspotemail.net"] {
            #expect(!sanitized.html.contains(direct), "\(direct) in \(sanitized.html)")
        }
        #expect(sanitized.html.contains("href=\"https://img.example/link\""))
        #expect(sanitized.report.trackers.contains { $0.vendor == "HubSpot" })
        // A second pass keeps the proxied URLs as they are (no proxy of a proxy).
        let again = try Self.sanitize(sanitized.html, remote: .allowThisMessage)
        #expect(again.html == sanitized.html)
    }

    @Test func blockedRemoteContentIsNotRewritten() throws {
        let sanitized = try Self.sanitize(Self.mail, remote: .block)
        #expect(Self.proxy.remoteURLs(in: sanitized.html).isEmpty && !sanitized.html.contains(Self.proxy.prefix))
        #expect(sanitized.report.blockedRemote.count >= 5)
    }

    @Test func theEncodingRoundTripsAndTheCSPNamesOnlyTheProxysOrigin() throws {
        for url in ["https://a.example/x?y=1&z=%20#f", "http://b.example/ü/€.png", ""] {
            #expect(RemoteProxy.decode(RemoteProxy.encode(url)) == (url.isEmpty ? nil : url))
        }
        #expect(RemoteProxy.decode("not base64!") == nil)
        #expect(RemoteProxy(prefix: "javascript:alert(1)/") == nil && RemoteProxy(prefix: "http://h.example/no-slash") == nil)
        #expect(Self.proxy.origin == "http://127.0.0.1:8123")
        let csp = ContentSecurityPolicy.viewer(.remoteAllowed, proxyOrigin: Self.proxy.origin).headerValue
        #expect(csp.contains("img-src data: http://127.0.0.1:8123;") && csp.contains("font-src data: http://127.0.0.1:8123;"))
        #expect(!csp.contains("https:") && !csp.contains("http:;") && !csp.contains("http: "))
        #expect(ContentSecurityPolicy.viewer(.remoteAllowed).headerValue.contains("img-src data: https: http:"))
    }
}
