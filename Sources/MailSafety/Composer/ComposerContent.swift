/// Sanitizes each part loaded into the composer — signature, draft body, quoted message of a
/// reply or forward — with the same engine as the viewer. Remote content is always blocked (the
/// composer's CSP blocks remote loads anyway), each part's CSS is scoped to its own wrapper, and
/// quoted content keeps its look (styles, tables, images that are embedded) but loses anything
/// active.
///
/// Trust-model row: outbox (composer) — "a reply or forward quotes an incoming, possibly
/// malicious message: sanitize every part loaded into the composer; CSP that blocks remote loads".
public struct ComposerContent: Sendable {
    /// The kinds of part the composer loads.
    public enum Part: String, Sendable, CaseIterable {
        case signature, draft, quoted

        /// The wrapper id the part is rendered in (`rampart-composer-quoted`, ...).
        public var wrapperID: String { "rampart-composer-" + rawValue }
    }

    public var attachments: [String: EmbeddedAttachment]
    public var embeddedImages: EmbeddedImageStyle
    public var trackers: TrackerList

    public init(attachments: [String: EmbeddedAttachment] = [:], embeddedImages: EmbeddedImageStyle = .dataURI, trackers: TrackerList = .builtIn) {
        self.attachments = attachments
        self.embeddedImages = embeddedImages
        self.trackers = trackers
    }

    /// Sanitizes one part. - Throws: ``MailSafetyError``.
    public func sanitize(_ html: String, as part: Part) throws(MailSafetyError) -> SanitizedMessage {
        let options = SanitizerOptions(
            remote: .block, attachments: attachments, embeddedImages: embeddedImages, trackers: trackers,
            stripTrackingParameters: true, wrapperID: part.wrapperID
        )
        return try MailSanitizer(options: options).sanitize(html)
    }

    /// The composer document: the CSP (editor script by nonce, no remote loads) first in `<head>`,
    /// then each sanitized part in its wrapper, quoted content in a `<blockquote>`.
    /// - Parameters:
    ///   - parts: sanitized parts in display order.
    ///   - editorScript: the editor's script; it runs with `nonce`.
    ///   - nonce: the fresh nonce of this load; the CSP allows only the script that carries it.
    public static func renderDocument(parts: [(Part, SanitizedMessage)], editorScript: String, nonce: String) -> String {
        let policy = ContentSecurityPolicy.composer(scriptNonce: nonce)
        var body = ""
        for (part, message) in parts {
            let inner = "<div id=\"\(part.wrapperID)\">" + message.html + "</div>"
            body += part == .quoted ? "<blockquote type=\"cite\">" + inner + "</blockquote>" : inner
        }
        // `</script` inside the editor script would end the element early.
        let script = editorScript.replacingOccurrences(of: "</script", with: "<\\/script", options: .caseInsensitive)
        return "<!DOCTYPE html><html><head>" + policy.metaTag + "<meta charset=\"utf-8\"><meta name=\"referrer\" content=\"no-referrer\">"
            + "</head><body><div id=\"rampart-composer\" contenteditable=\"true\">" + body + "</div>"
            + "<script nonce=\"\(nonce)\">" + script + "</script></body></html>"
    }
}

import Foundation
