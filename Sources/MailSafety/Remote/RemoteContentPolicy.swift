import Foundation

/// Whether the viewer may load remote content (images, CSS backgrounds, fonts, posters, ...) for
/// one message.
///
/// Trust-model row: inbox (incoming mail) — "remote content blocked unless allowed": remote loads
/// reveal the reader's IP address and the time the message was opened.
public enum RemoteContentPolicy: String, Sendable, Codable, CaseIterable {
    /// The default: nothing remote stays loadable; URLs move to `data-rampart-*` placeholders.
    case block
    /// The user's "auto-load remote content" setting is on.
    case allowAll
    /// The user asked to load remote content for this message.
    case allowThisMessage
    /// The sender is one the user trusts.
    case allowTrustedSender

    /// `true` when remote URLs may be kept loadable.
    public var allowsRemote: Bool { self != .block }
}

/// An attachment of the message that `cid:` references may point to.
///
/// Trust-model row: inbox — embedded images arrive inside the encrypted message and count as
/// local; they are resolved here and never fetched from the network.
public struct EmbeddedAttachment: Sendable {
    public var mimeType: String
    public var bytes: Data

    public init(mimeType: String, bytes: Data) {
        self.mimeType = mimeType
        self.bytes = bytes
    }
}

/// How resolved `cid:` images are written into the sanitized HTML.
///
/// Trust-model row: inbox — embedded images stay local (CSP stage 2 allows exactly these).
public enum EmbeddedImageStyle: Sendable, Equatable {
    /// `data:<mime>;base64,...` (needs `img-src data:`).
    case dataURI
    /// `<scheme>:<percent-encoded Content-ID>`, served by the app (needs `img-src <scheme>:`).
    case appScheme(String)
    /// `<prefix><base64url of the attachments key it matched>` (see ``RemoteProxy/encode(_:)``),
    /// served by the app at that prefix, an absolute `http(s)` URL ending in `/` that normally
    /// carries a token of one rendering (e.g. `http://127.0.0.1:8080/viewer/TOKEN/cid/`; the
    /// viewer's CSP then names that prefix in `img-src`, beside `data:` for inline images). Raster images only: an
    /// attachment of another type (SVG, fonts, HTML, …) is dropped. The bytes of the
    /// ``EmbeddedAttachment`` are not read: the app opens the attachment when it is asked for it.
    case served(prefix: String)

    /// Whether `url` is a URL this style wrote for one of `attachments` (a second sanitizer pass
    /// keeps it as it is): for ``served(prefix:)`` the prefix and the base64url of one of their
    /// keys, nothing else.
    func wrote(_ url: String, attachments: [String: EmbeddedAttachment]) -> Bool {
        switch self {
        case .dataURI: return false
        case .appScheme(let scheme): return URLPolicy.scheme(of: url) == scheme.lowercased()
        case .served(let prefix):
            guard url.hasPrefix(prefix), let key = RemoteProxy.decode(String(url.dropFirst(prefix.count))) else { return false }
            return attachments[key] != nil && RemoteProxy.encode(key) == url.dropFirst(prefix.count)
        }
    }

    /// The raster image types ``served(prefix:)`` writes (``URLPolicy/imageMIMETypes`` without SVG).
    public static let servedImageTypes: Set<String> = URLPolicy.imageMIMETypes.subtracting(["image/svg+xml"])
}

/// What kind of remote resource was found (for the report and the placeholders).
///
/// Trust-model row: inbox — the UI shows the user what was blocked.
public enum RemoteResourceKind: String, Sendable, Codable, Hashable {
    case image, srcset, cssBackground = "css", font, stylesheet, poster, media, inputImage = "input-image"
    case svgImage = "svg-image", svgUse = "svg-use", ping, background
}

/// What kind of thing the sanitizer removed (the report's counts are keyed by these).
///
/// Trust-model row: inbox — the report says what was removed.
public enum RemovalKind: String, Sendable, Codable, Hashable, CaseIterable {
    case scriptElement = "script-element"
    case activeElement = "active-element"
    case formControl = "form-control"
    case unknownElement = "unknown-element"
    case foreignElement = "namespace-mismatch"
    case eventHandler = "event-handler"
    case attribute = "attribute"
    case unsafeURL = "unsafe-url"
    case clobberingName = "clobbering-name"
    case comment = "comment"
    case cssDeclaration = "css-declaration"
    case cssRule = "css-rule"
    case cssPositioning = "css-positioning"
    case missingAttachment = "missing-attachment"
    case trackingParameter = "tracking-parameter"
    case truncated = "truncated"
}

/// A remote resource the sanitizer blocked (made unloadable).
///
/// Trust-model row: inbox — remote content blocked unless allowed.
public struct BlockedResource: Sendable, Codable, Equatable, Hashable {
    public var url: String
    public var kind: RemoteResourceKind
}

/// A tracker the sanitizer found.
///
/// Trust-model row: inbox — "mail can carry trackers".
public struct TrackerFinding: Sendable, Codable, Equatable, Hashable {
    public enum Reason: String, Sendable, Codable, Hashable {
        /// A 1×1 or hidden image.
        case pixel
        /// The URL matches a known tracker vendor.
        case knownTracker = "known-tracker"
        /// A link carried tracking parameters (they were stripped).
        case linkParameters = "link-parameters"
        /// A `ping` attribute (reports clicks to a server).
        case ping
    }
    public var url: String
    public var reason: Reason
    /// The vendor, for known trackers.
    public var vendor: String?
}

/// What the sanitizer did to one message: removal counts by kind, blocked remote resources and
/// trackers. The UI shows it ("3 remote images blocked, 1 tracker").
///
/// Trust-model row: inbox (incoming mail) — the user sees what was blocked and can allow it.
public struct SanitizationReport: Sendable, Codable, Equatable {
    public var removed: [String: Int] = [:]
    public var blockedRemote: [BlockedResource] = []
    public var trackers: [TrackerFinding] = []
    /// `true` when the input was cut (too large or too deep); see ``SanitizerLimits``.
    public var truncated = false
    /// `true` when the message's markup reached one of the HTML parser's bounds for hostile
    /// input: the active formatting elements (Noah's Ark's window, re-created elements), the
    /// search for a `<select>`'s `<selectedcontent>`, or more attributes on one element than the
    /// parser keeps (deep nesting is ``truncated``). Ordinary mail never does; such markup is
    /// still sanitized (the re-parse check never takes a parse that reached a bound as proof of
    /// stability), and the flag lets the app log or score the message.
    ///
    /// Trust-model row: inbox (incoming mail) — a message built to confuse or stall a sanitizer.
    public var hostileMarkup = false

    public init() {}

    private enum CodingKeys: String, CodingKey { case removed, blockedRemote, trackers, truncated, hostileMarkup }

    /// Decodes a report; one saved before ``hostileMarkup`` existed reads as `false` there.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        removed = try container.decode([String: Int].self, forKey: .removed)
        blockedRemote = try container.decode([BlockedResource].self, forKey: .blockedRemote)
        trackers = try container.decode([TrackerFinding].self, forKey: .trackers)
        truncated = try container.decode(Bool.self, forKey: .truncated)
        hostileMarkup = try container.decodeIfPresent(Bool.self, forKey: .hostileMarkup) ?? false
    }

    /// How many things of `kind` were removed.
    public func count(_ kind: RemovalKind) -> Int { removed[kind.rawValue] ?? 0 }

    mutating func note(_ kind: RemovalKind, _ count: Int = 1) {
        guard count > 0 else { return }
        removed[kind.rawValue, default: 0] += count
    }

    mutating func block(_ url: String, _ kind: RemoteResourceKind) {
        let item = BlockedResource(url: url, kind: kind)
        if !blockedRemote.contains(item) { blockedRemote.append(item) }
    }

    mutating func tracker(_ url: String, _ reason: TrackerFinding.Reason, vendor: String? = nil) {
        let item = TrackerFinding(url: url, reason: reason, vendor: vendor)
        if !trackers.contains(item) { trackers.append(item) }
    }
}
