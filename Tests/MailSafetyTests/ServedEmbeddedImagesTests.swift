import Foundation
import Testing
@testable import MailSafety

/// `EmbeddedImageStyle.served(prefix:)`: `cid:` images written as a path of the app (one
/// rendering's token in it) instead of `data:` URIs, and the viewer CSP naming that path only.
@Suite struct ServedEmbeddedImagesTests {
    static let prefix = "http://127.0.0.1:8080/viewer/TOKEN/cid/"

    static func options() -> SanitizerOptions {
        SanitizerOptions(attachments: [
            "<logo@x>": EmbeddedAttachment(mimeType: "image/png", bytes: Data()),
            "vector@x": EmbeddedAttachment(mimeType: "image/svg+xml", bytes: Data()),
            "doc@x": EmbeddedAttachment(mimeType: "text/html", bytes: Data()),
        ], embeddedImages: .served(prefix: prefix))
    }

    @Test func cidImagesBecomeThePrefixAndTheMatchedKeyRasterImagesOnly() throws {
        let html = "<img src=\"cid:LOGO@x\"><img src=\"cid:vector@x\"><img src=\"cid:doc@x\"><img src=\"cid:missing@x\">"
            + "<p style=\"background:url(cid:logo@x)\">b</p>"
        let result = try MailSanitizer(options: Self.options()).sanitize(html)
        let logo = Self.prefix + RemoteProxy.encode("<logo@x>")
        #expect(RemoteProxy.decode(String(logo.dropFirst(Self.prefix.count))) == "<logo@x>")
        #expect(result.html.hasPrefix("<img src=\"\(logo)\"><img><img><img><p style="))
        #expect(result.html.components(separatedBy: logo).count == 3, "the image and the CSS background: \(result.html)")
        #expect(!result.html.contains("data:"))
        #expect(result.report.count(.missingAttachment) == 1)
        #expect(result.report.count(.unsafeURL) == 2)
        // Not a remote resource: nothing blocked, no tracker.
        #expect(result.report.blockedRemote.isEmpty)
        // A second sanitize of the output keeps the served URLs (the sanitizer's passes are a fixed point).
        let again = try MailSanitizer(options: Self.options()).sanitize(result.html)
        #expect(again.html == result.html)
    }

    @Test func aServedLookingURLOfAnotherPrefixOrKeyIsRemote() throws {
        // The prefix holds the rendering's token: a URL with another token is an ordinary remote
        // URL; so is one with the prefix but no key of this message's attachments after it.
        let others = ["http://127.0.0.1:8080/viewer/OTHER/cid/" + RemoteProxy.encode("<logo@x>"),
                      Self.prefix + RemoteProxy.encode("<someone-else@x>"), Self.prefix + "not-base64url!", Self.prefix]
        for other in others {
            let result = try MailSanitizer(options: Self.options()).sanitize("<img src=\"\(other)\">")
            #expect(result.html == "<img data-rampart-src=\"\(other)\">")
            #expect(result.report.blockedRemote.map(\.url) == [other])
        }
    }

    @Test func theViewerPolicyNamesThePrefixAndInlineDataImages() {
        let embedded = ContentSecurityPolicy.viewer(.embeddedImagesOnly, servedPrefix: Self.prefix).headerValue
        #expect(embedded.contains("img-src \(Self.prefix) data:;"))
        #expect(embedded.contains("font-src \(Self.prefix) data:;"))
        #expect(!embedded.replacingOccurrences(of: Self.prefix, with: "").contains("http"))
        let remote = ContentSecurityPolicy.viewer(.remoteAllowed, proxyOrigin: "http://127.0.0.1:8080", servedPrefix: Self.prefix).headerValue
        #expect(remote.contains("img-src \(Self.prefix) data: http://127.0.0.1:8080;"))
        #expect(!ContentSecurityPolicy.viewer(.lockdown, servedPrefix: Self.prefix).headerValue.contains("img-src"))
    }
}
