import Foundation
import MailSafety

/// Remote content through the backend, for a document opened outside the app (`rampart read
/// --open` or `--html`).
///
/// Trust-model row **inbox (low) — IP disclosure by remote content**: once remote content is
/// allowed for a message, its images and fonts are fetched by the backend (`APIClient.fetchRemote`),
/// never by this device's browser, and written into the document as `data:` URIs; the document's
/// CSP then allows `data:` only, so the browser that opens it makes no request at all.
extension MessageReader {
    /// The placeholder proxy whose URLs ``inliningRemoteContent(_:api:)`` replaces (`.invalid`:
    /// never resolvable, so a URL left over cannot reach anyone).
    public static let inlineProxy = RemoteProxy(prefix: "https://remote-content.rampart.invalid/")!

    /// `rendered` (made with ``inlineProxy``) with every proxied resource fetched through the
    /// backend and written as a `data:` URI of its type; a resource the backend refused becomes an
    /// empty image. The document is rebuilt under the embedded-images CSP stage, and the counts
    /// are kept in ``RenderedMessage/backendFetch`` (its ``RenderedMessage/blockedSummary`` says them).
    /// - Returns: the message and how many resources were fetched and refused.
    public static func inliningRemoteContent(_ rendered: RenderedMessage, api: APIClient) async -> (RenderedMessage, fetched: Int, refused: Int) {
        let proxy = inlineProxy
        let urls = proxy.remoteURLs(in: rendered.sanitized.html)
        guard !urls.isEmpty else {
            var result = rendered
            if rendered.remote.allowsRemote { result.backendFetch = .init(fetched: 0, refused: 0) }
            return (result, 0, 0)
        }
        var html = rendered.sanitized.html
        var fetched = 0
        // Longest first: one URL's encoding may begin with another's.
        for url in urls.sorted(by: { $0.utf8.count > $1.utf8.count }) {
            var replacement = "data:image/gif;base64,"
            if let answer = try? await api.fetchRemote(url) {
                let type = answer.contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
                if type != "image/svg+xml" && (URLPolicy.imageMIMETypes.contains(type) || URLPolicy.fontMIMETypes.contains(type)) {
                    replacement = "data:\(type);base64," + answer.body.base64EncodedString()
                    fetched += 1
                }
            }
            html = html.replacingOccurrences(of: proxy.url(for: url), with: replacement)
        }
        var result = rendered
        result.sanitized.html = html
        result.policy = ContentSecurityPolicy.viewer(.embeddedImagesOnly)
        result.document = renderDocument(result.sanitized, policy: result.policy, title: rendered.message.subject)
        result.backendFetch = .init(fetched: fetched, refused: urls.count - fetched)
        return (result, fetched, urls.count - fetched)
    }
}
