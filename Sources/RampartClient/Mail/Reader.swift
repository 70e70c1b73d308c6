import Foundation
import HTML5
import MailSafety
import RampartCore
import SealedStore

/// A message made safe to show: sanitized HTML, the complete viewer document with its CSP, a
/// plain-text rendering for terminals, and what was blocked.
///
/// Trust-model row **inbox (low)**: every body is treated as HTML and sanitized before anything
/// else sees it; remote content stays blocked unless allowed for this message; embedded `cid:`
/// images come from the encrypted message itself.
public struct RenderedMessage: Sendable {
    public var message: MailMessage
    public var attachments: [AttachmentMetadata]
    public var sanitized: SanitizedMessage
    /// The CSP stage the document was built for (stage 2, or stage 3 when remote content is allowed).
    public var policy: ContentSecurityPolicy
    /// The viewer document: CSP `<meta>` first, then the sanitized message in its wrapper.
    public var document: String
    /// Terminal rendering of the sanitized DOM.
    public var text: String
    public var remote: RemoteContentPolicy
    /// Stored privacy settings that failed their integrity check (their safe default was used).
    public var settingsWarnings: [String] = []
    /// The message's signature verdict (nil when it was rendered without the server to check it).
    public var signature: SignatureVerdict?
    /// Set when the sender is in the trusted senders but remote content stayed blocked because
    /// the message's signature did not verify against the sender's pinned key.
    public var unverifiedTrustedSender = false
    /// Set when "block all remote content" is on in the stored settings (it wins over a request
    /// for this message, automatic loading and trusted senders).
    public var blockedBySettings = false
    /// The parts inside an opened PGP/MIME or inline-PGP message from outside (decrypted on this
    /// device at each read, not kept in the store, so they have no attachment id).
    public var protectedAttachments: [ProtectedAttachment] = []

    /// What the backend fetched of the remote content, for a document opened outside the app
    /// (set by ``MessageReader/inliningRemoteContent(_:api:)``; nil otherwise).
    public var backendFetch: BackendFetch?

    /// How many remote resources the backend fetched, and how many it refused (or could not
    /// reach): those are left as empty images.
    public struct BackendFetch: Sendable, Equatable {
        public var fetched: Int
        public var refused: Int
    }

    /// An attachment carried inside an OpenPGP-protected message from outside.
    public struct ProtectedAttachment: Sendable, Equatable {
        public var name: String
        public var mimeType: String
        public var size: Int
        /// Its `Content-ID`, when the body shows it as an embedded (`cid:`) image.
        public var contentID: String?
    }

    /// Trackers found (blocked, whatever the remote-content policy).
    public var trackerCount: Int { trackerURLs.count }
    var trackerURLs: Set<String> { Set(sanitized.report.trackers.map(\.url)) }
    /// Remote images blocked that are not trackers (`img`, `srcset`, CSS backgrounds, SVG
    /// images, posters, input images): zero once remote content is allowed.
    public var blockedImageCount: Int {
        let imageKinds: Set<RemoteResourceKind> = [.image, .srcset, .cssBackground, .svgImage, .poster, .inputImage, .background]
        return Set(sanitized.report.blockedRemote.filter { imageKinds.contains($0.kind) }.map(\.url)).subtracting(trackerURLs).count
    }
    /// Every remote resource blocked that is not a tracker (images, fonts, stylesheets, media, ...).
    public var blockedRemoteCount: Int { Set(sanitized.report.blockedRemote.map(\.url)).subtracting(trackerURLs).count }

    /// One line saying what was blocked, e.g. `Blocked: 2 trackers, 3 remote images (4 remote resources); removed 1 script.`,
    /// and, when the backend fetched the remote content (``backendFetch``), how much of it it got
    /// and refused.
    public var blockedSummary: String {
        var parts = ["\(trackerCount) tracker\(trackerCount == 1 ? "" : "s")",
                     "\(blockedImageCount) remote image\(blockedImageCount == 1 ? "" : "s")"]
        if blockedRemoteCount != blockedImageCount { parts.append("\(blockedRemoteCount) remote resources in all") }
        var line = "Blocked: " + parts.joined(separator: ", ")
        let report = sanitized.report
        let scripts = report.count(.scriptElement) + report.count(.eventHandler)
        let active = report.count(.activeElement) + report.count(.formControl)
        let unsafe = report.count(.unsafeURL)
        var removed: [String] = []
        if scripts > 0 { removed.append("\(scripts) script\(scripts == 1 ? "" : "s")/handler\(scripts == 1 ? "" : "s")") }
        if active > 0 { removed.append("\(active) active element\(active == 1 ? "" : "s")") }
        if unsafe > 0 { removed.append("\(unsafe) unsafe URL\(unsafe == 1 ? "" : "s")") }
        if !removed.isEmpty { line += "; removed " + removed.joined(separator: ", ") }
        if blockedBySettings && blockedRemoteCount > 0 {
            line += " (\"block all remote content\" is on in your settings: rampart settings remote-content off to allow it per message)"
        } else if !remote.allowsRemote && blockedRemoteCount > 0 { line += " (use --load-remote to load remote content)" }
        switch remote {
        case .allowAll: line += " Remote content loaded: automatic loading is on in your settings"
        case .allowTrustedSender: line += " Remote content loaded: the sender is trusted in your settings and the signature verified"
        case .allowThisMessage: line += " Remote content loaded for this message"
        case .block:
            if unverifiedTrustedSender {
                line += " The sender is in your trusted senders, but this message's signature did not verify against their pinned key: remote content stays blocked"
            }
        }
        line += "."
        if let backendFetch {
            line += " Through the backend: \(backendFetch.fetched) remote resource\(backendFetch.fetched == 1 ? "" : "s") fetched, "
                + "\(backendFetch.refused) refused or unreachable (left empty)."
        }
        return line
    }
}

/// Reads messages from the sealed store and renders them safely.
///
/// Trust-model row **inbox (low)**: sanitize (MailSafety) → CSP stage 2 (embedded images only)
/// or stage 3 (remote allowed, by explicit request) → render. The terminal rendering walks the
/// *sanitized* DOM (HTML5 parser), so nothing the sanitizer removed can reach the terminal, and
/// control characters are dropped (no terminal escape sequences from mail).
public struct MessageReader: Sendable {
    public let account: ClientAccount

    public init(account: ClientAccount) { self.account = account }

    /// The message's record. - Throws: ``ClientError/notFound(kind:id:)``, `LockedError`.
    public func message(_ id: String) throws -> MailMessage {
        do { return try account.store().mail.message(id: id) } catch SealedStoreError.notFound {
            throw ClientError.notFound(kind: "message", id: id)
        }
    }

    /// The remote-content policy for a message: blocked when "block all remote content" is on in
    /// the settings (the fourth value says so), else asked for this message, else the user's
    /// (integrity-checked) settings — automatic loading, or a trusted sender whose signature on
    /// this message verified against their pinned key — else blocked.
    ///
    /// Trust-model rows **settings (modified: high)** — a setting changed on disk without the
    /// MainKey fails its MAC and falls back to "blocked"; the warning is returned — and **inbox
    /// (low)**: the `From` of a message is a claim anyone can write; a "trusted sender" counts
    /// only when the message is signed by the key pinned for that address (an unsigned, badly
    /// signed or otherwise signed message that claims a trusted sender keeps remote content
    /// blocked, and the third value says so).
    public func remotePolicy(for message: MailMessage, requested: Bool,
                             signature: SignatureVerdict?) throws -> (RemoteContentPolicy, [String], Bool, Bool) {
        let readout = try account.store().privacySettings()
        let warnings = readout.warnings.map(\.description)
        if readout.settings.blockAllRemoteContent { return (.block, warnings, false, true) }
        if requested { return (.allowThisMessage, warnings, false, false) }
        if readout.settings.autoLoadRemoteContent { return (.allowAll, warnings, false, false) }
        let sender = message.sender.address.lowercased()
        if readout.settings.trustedSenders.contains(where: { $0.lowercased() == sender }) {
            return try signatureVouches(signature, for: message) ? (.allowTrustedSender, warnings, false, false) : (.block, warnings, true, false)
        }
        return (.block, warnings, false, false)
    }

    /// Whether the verdict is "verified" by the key pinned for the message's sender (or the
    /// user's own key for their own addresses).
    func signatureVouches(_ signature: SignatureVerdict?, for message: MailMessage) throws -> Bool {
        guard let signature, signature.status == "verified", let fingerprint = signature.fingerprint else { return false }
        let sender = message.sender.address.lowercased()
        if try account.session().addresses.contains(where: { $0.lowercased() == sender }) {
            return try account.mailboxKeys().contains { $0.fingerprint.hex == fingerprint }
        }
        return try ContactKeys(account: account).pinned(sender)?.fingerprint == fingerprint
    }

    /// Renders message `id` with the policy chosen by ``remotePolicy(for:requested:signature:)``,
    /// after verifying its signature (``verify(_:api:)``) when `api` is given. With `proxy`, remote
    /// resources that may load are rewritten to go through it (see `RemoteProxy`). With
    /// `servedImages`, embedded images are written as that prefix plus their Content-ID
    /// (MailSafety's `EmbeddedImageStyle.served(prefix:)`) and not opened here: the app serves
    /// them (an attachment through ``AttachmentVault/lease(_:api:)``, a part of an OpenPGP
    /// message from outside through ``protectedPart(of:contentID:api:)``), and the CSP's
    /// `img-src` names that prefix instead of `data:`.
    public func render(_ id: String, loadRemote: Bool, api: APIClient?, proxy: RemoteProxy? = nil,
                       servedImages: String? = nil) async throws -> RenderedMessage {
        var message = try message(id)
        var signature: SignatureVerdict?
        if let api { signature = try await verify(message, api: api) }
        // PGP/MIME or inline PGP from outside, stored as it came: shown from its opened original.
        let outside = try await api.asyncFlatMap { try await openOutsidePGP(message, api: $0) }
        if let outside { (message, signature) = (outside.message, outside.signature) }
        let (policy, warnings, unverified, blockedBySettings) = try remotePolicy(for: message, requested: loadRemote, signature: signature)
        var rendered: RenderedMessage
        if let outside {
            // Its parts came out of the decrypted original: `cid:` images are embedded from there.
            var embedded: [String: EmbeddedAttachment] = [:]
            for part in outside.attachments {
                guard let contentID = part.contentID, !contentID.isEmpty else { continue }
                embedded[contentID] = EmbeddedAttachment(mimeType: part.mimeType, bytes: part.data)
            }
            rendered = try Self.render(message: message, attachments: [], embedded: embedded, remote: policy, proxy: proxy,
                                       embeddedImages: servedImages.map { .served(prefix: $0) } ?? .dataURI)
            rendered.protectedAttachments = outside.attachments.map {
                RenderedMessage.ProtectedAttachment(name: $0.name, mimeType: $0.mimeType, size: $0.data.count, contentID: $0.contentID)
            }
        } else {
            rendered = try await render(id, remote: policy, api: api, proxy: proxy, servedImages: servedImages)
        }
        rendered.settingsWarnings = warnings
        rendered.unverifiedTrustedSender = unverified
        rendered.blockedBySettings = blockedBySettings
        rendered.signature = signature
        return rendered
    }

    /// Sanitizes and renders message `id`. Embedded images are fetched through the attachment
    /// cache when `api` is given (otherwise `cid:` images are reported missing); with
    /// `servedImages` they are not opened but written as that prefix (see
    /// ``render(_:loadRemote:api:proxy:servedImages:)``).
    public func render(_ id: String, remote: RemoteContentPolicy = .block, api: APIClient?, proxy: RemoteProxy? = nil,
                       servedImages: String? = nil) async throws -> RenderedMessage {
        let message = try message(id)
        let attachments = try account.store().mail.attachments(messageID: id)
        var embedded: [String: EmbeddedAttachment] = [:]
        if let servedImages {
            for attachment in attachments {
                guard let contentID = AttachmentVault.contentID(of: attachment) else { continue }
                embedded[contentID] = EmbeddedAttachment(mimeType: attachment.mimeType, bytes: Data())
            }
            return try Self.render(message: message, attachments: attachments, embedded: embedded, remote: remote, proxy: proxy,
                                   embeddedImages: .served(prefix: servedImages))
        }
        if let api {
            var vault: AttachmentVault?  // opened only when the message embeds an image
            for attachment in attachments {
                guard let contentID = AttachmentVault.contentID(of: attachment) else { continue }
                let opened = try vault ?? AttachmentVault(account: account)
                vault = opened
                embedded[contentID] = EmbeddedAttachment(mimeType: attachment.mimeType,
                                                         bytes: try await opened.contents(of: attachment, api: api))
            }
        }
        return try Self.render(message: message, attachments: attachments, embedded: embedded, remote: remote, proxy: proxy)
    }

    /// Renders an already opened message (no I/O); remote resources through `proxy` when it is
    /// given and remote content is allowed (the CSP's remote stage then names only its origin).
    /// With `embeddedImages` `.served(prefix:)` the CSP's `img-src` and `font-src` name that
    /// prefix instead of `data:`.
    public static func render(message: MailMessage, attachments: [AttachmentMetadata],
                              embedded: [String: EmbeddedAttachment], remote: RemoteContentPolicy,
                              proxy: RemoteProxy? = nil, embeddedImages: EmbeddedImageStyle = .dataURI) throws -> RenderedMessage {
        let proxy = remote.allowsRemote ? proxy : nil
        let sanitizer = MailSanitizer(options: SanitizerOptions(remote: remote, attachments: embedded, embeddedImages: embeddedImages,
                                                                remoteProxy: proxy))
        let sanitized = try sanitizer.sanitize(message.body)
        var served: String?
        if case .served(let prefix) = embeddedImages { served = prefix }
        let policy = ContentSecurityPolicy.viewer(remote.allowsRemote ? .remoteAllowed : .embeddedImagesOnly, proxyOrigin: proxy?.origin,
                                                  servedPrefix: served)
        let document = renderDocument(sanitized, policy: policy, title: message.subject)
        let text = TerminalText.render(sanitizedHTML: sanitized.html)
        return RenderedMessage(message: message, attachments: attachments, sanitized: sanitized, policy: policy,
                               document: document, text: text, remote: remote)
    }
}

/// A plain-text rendering of sanitized HTML for a terminal.
///
/// Trust-model row **inbox (low)**: input is the sanitizer's output; every control character
/// (ESC included) is dropped from text and URLs, so mail cannot drive the terminal.
public enum TerminalText {
    static let blocks: Set<String> = ["p", "div", "section", "article", "header", "footer", "main", "aside", "nav",
                                      "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "table", "tr", "blockquote",
                                      "pre", "center", "address", "figure", "figcaption", "dl", "dt", "dd", "hr", "li",
                                      "tbody", "thead", "tfoot", "form", "fieldset"]

    public static func render(sanitizedHTML html: String) -> String {
        guard let parsed = try? HTML5Parser.parseFragment(html, contextName: "div") else { return "" }
        var writer = Writer()
        walk(parsed.root, &writer)
        return writer.finish()
    }

    struct Writer {
        var lines: [String] = []
        var current = ""
        var pendingSpace = false
        var prefix = ""
        var preformatted = 0

        mutating func text(_ raw: String) {
            let clean = TerminalText.clean(raw)
            if preformatted > 0 {
                let parts = clean.split(separator: "\n", omittingEmptySubsequences: false)
                for (i, part) in parts.enumerated() {
                    if i > 0 { newline() }
                    current += part
                }
                return
            }
            for scalar in clean.unicodeScalars {
                if CharacterSet.whitespacesAndNewlines.contains(scalar) {
                    pendingSpace = !current.isEmpty
                } else {
                    if pendingSpace { current += " "; pendingSpace = false }
                    current.unicodeScalars.append(scalar)
                }
            }
        }
        mutating func newline() {
            lines.append(prefix + current)
            current = ""
            pendingSpace = false
        }
        mutating func block() {
            if !current.isEmpty { newline() }
            if let last = lines.last, !last.trimmingCharacters(in: .whitespaces).isEmpty || last == prefix { lines.append("") }
        }
        mutating func finish() -> String {
            if !current.isEmpty { newline() }
            var out: [String] = []
            for line in lines {
                let trimmed = line.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
                if trimmed.isEmpty, out.last?.isEmpty ?? true { continue }
                out.append(trimmed)
            }
            while out.last?.isEmpty == true { out.removeLast() }
            return out.joined(separator: "\n")
        }
    }

    static func walk(_ node: Node, _ w: inout Writer) {
        for child in node.children {
            if let text = child as? Text { w.text(text.data); continue }
            guard let element = child as? Element else { continue }
            let name = element.localName
            switch name {
            case "style", "script", "template", "head", "title":
                continue
            case "br":
                w.newline()
            case "img":
                let alt = element[attribute: "alt"].map { clean($0) } ?? ""
                let source = element[attribute: "src"] ?? ""
                let what = source.hasPrefix("data:") ? "embedded image" : (source.isEmpty ? "blocked image" : "image")
                w.text(alt.isEmpty ? " [\(what)] " : " [\(what): \(alt)] ")
            case "a":
                walk(element, &w)
                if let href = element[attribute: "href"], href.hasPrefix("http") || href.hasPrefix("mailto:") {
                    let label = element.textContent.trimmingCharacters(in: .whitespacesAndNewlines)
                    if label != href { w.text(" <\(clean(href))>") }
                }
            case "li":
                w.block()
                w.text("• ")
                walk(element, &w)
                w.block()
            case "td", "th":
                walk(element, &w)
                w.text("  ")
            case "pre":
                w.block()
                w.preformatted += 1
                walk(element, &w)
                w.preformatted -= 1
                w.block()
            case "blockquote":
                w.block()
                let saved = w.prefix
                w.prefix += "> "
                walk(element, &w)
                w.block()
                w.prefix = saved
            case "hr":
                w.block()
                w.text(String(repeating: "─", count: 40))
                w.block()
            default:
                if blocks.contains(name) {
                    w.block()
                    walk(element, &w)
                    w.block()
                } else {
                    walk(element, &w)
                }
            }
        }
    }

    /// Drops C0/C1 control characters except tab and newline, and bidirectional overrides.
    static func clean(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let v = scalar.value
            if v == 0x09 || v == 0x0A { out.append(scalar); continue }
            if v < 0x20 || (0x7F...0x9F).contains(v) { continue }
            if (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v) { continue }
            out.append(scalar)
        }
        return String(out)
    }
}
