import Foundation
import HTML5
import RampartCore

/// Size and depth limits for untrusted input.
///
/// Trust-model row: inbox (incoming mail) — a hostile message must not exhaust memory or stack.
/// Input larger than ``maxInputBytes`` is refused with ``MailSafetyError/tooLarge(bytes:limit:)``;
/// elements nested deeper than ``maxDepth`` are removed (a documented truncation, flagged in
/// ``SanitizationReport/truncated``).
public struct SanitizerLimits: Sendable, Equatable {
    public var maxInputBytes: Int
    public var maxDepth: Int
    /// Sanitize → serialize → re-parse rounds before giving up on a stable tree.
    public var maxPasses: Int

    public init(maxInputBytes: Int = 32 << 20, maxDepth: Int = 256, maxPasses: Int = 4) {
        self.maxInputBytes = maxInputBytes
        self.maxDepth = maxDepth
        self.maxPasses = maxPasses
    }
}

/// Everything the sanitizer needs to know about one message.
///
/// Trust-model rows: inbox (incoming mail) and outbox (composer) — the policy that decides what
/// may load, the attachments `cid:` may point to, the tracker list.
public struct SanitizerOptions: Sendable {
    /// Remote content: blocked by default.
    public var remote: RemoteContentPolicy
    /// Attachments of the message by Content-ID (with or without `<>`).
    public var attachments: [String: EmbeddedAttachment]
    public var embeddedImages: EmbeddedImageStyle
    public var trackers: TrackerList
    /// Remove `utm_*`, `mc_eid`, ... from links (they are reported either way).
    public var stripTrackingParameters: Bool
    /// The id of the element the message is rendered in; every CSS selector is scoped under it.
    public var wrapperID: String
    public var limits: SanitizerLimits
    /// When set, remote resources that may load are rewritten to go through this proxy (see
    /// ``RemoteProxy``); nil (the default) keeps them as they are.
    public var remoteProxy: RemoteProxy?

    public init(
        remote: RemoteContentPolicy = .block,
        attachments: [String: EmbeddedAttachment] = [:],
        embeddedImages: EmbeddedImageStyle = .dataURI,
        trackers: TrackerList = .builtIn,
        stripTrackingParameters: Bool = true,
        wrapperID: String = "rampart-message",
        limits: SanitizerLimits = SanitizerLimits(),
        remoteProxy: RemoteProxy? = nil
    ) {
        self.remoteProxy = remoteProxy
        self.remote = remote
        self.attachments = attachments
        self.embeddedImages = embeddedImages
        self.trackers = trackers
        self.stripTrackingParameters = stripTrackingParameters
        self.wrapperID = wrapperID
        self.limits = limits
    }
}

/// The result of sanitizing: HTML to place inside the wrapper element, and the report.
///
/// Trust-model row: inbox — what the viewer shows, and what the UI tells the user.
public struct SanitizedMessage: Sendable, Equatable {
    /// Sanitized HTML, to be placed inside `<div id="wrapperID">` (it was parsed in that context).
    public var html: String
    public var report: SanitizationReport
    public var wrapperID: String
}

/// Failures of the mail-safety module.
///
/// Trust-model row: inbox — bad input gets a clear error, never a crash.
public enum MailSafetyError: RampartError, Equatable {
    /// The bytes are not UTF-8 (offset of the first bad byte).
    case invalidEncoding(byteOffset: Int)
    case tooLarge(bytes: Int, limit: Int)
    /// No stable tree after the configured passes (the content was reduced to text).
    case unstable
    case invalidWrapperID(String)

    /// The category the CLI's exit status uses.
    public var kind: RampartErrorKind {
        switch self {
        case .invalidEncoding, .invalidWrapperID: .badInput
        case .tooLarge, .unstable: .failure
        }
    }

    public var code: String {
        switch self {
        case .invalidEncoding: "mailSafety.invalidEncoding"
        case .tooLarge: "mailSafety.tooLarge"
        case .unstable: "mailSafety.unstable"
        case .invalidWrapperID: "mailSafety.invalidWrapperID"
        }
    }

    public var description: String {
        switch self {
        case .invalidEncoding(let offset):
            "The message body is not valid UTF-8 (first bad byte at offset \(offset)); decode it to UTF-8 first."
        case .tooLarge(let bytes, let limit):
            "The message body is \(bytes) bytes, over the sanitizer's limit of \(limit) bytes; show it as an attachment instead."
        case .unstable:
            "The sanitized HTML did not reach a stable form; it was shown as plain text."
        case .invalidWrapperID(let id):
            "The wrapper id '\(id)' must be 1–64 characters of letters, digits, '-' or '_', starting with a letter."
        }
    }
}

/// The mail HTML sanitizer: parses with Rampart's spec-exact HTML5 parser (in the context of the
/// `<div>` the message is shown in), walks the tree with an allowlist of elements and attributes
/// per namespace, checks every URL, sanitizes CSS, blocks remote content and trackers, then
/// serializes and re-parses until the output is stable (`sanitize(sanitize(x)) == sanitize(x)`,
/// the guard against mutation XSS).
///
/// Trust-model rows: inbox (incoming mail) — "sanitize; no script execution in the viewer;
/// remote content blocked unless allowed"; outbox (composer) — every part loaded into the
/// composer goes through the same engine (see ``ComposerContent``).
///
/// ```swift
/// let result = try MailSanitizer().sanitize("<p onclick=x()>Hi <img src=https://t.example/p.gif>")
/// // result.html == "<p>Hi <img data-rampart-src=\"https://t.example/p.gif\"></p>"
/// ```
public struct MailSanitizer: Sendable {
    public var options: SanitizerOptions

    public init(options: SanitizerOptions = SanitizerOptions()) {
        self.options = options
    }

    /// Sanitizes UTF-8 bytes. - Throws: ``MailSafetyError``.
    public func sanitize(bytes: some Collection<UInt8>) throws(MailSafetyError) -> SanitizedMessage {
        guard bytes.count <= options.limits.maxInputBytes else {
            throw .tooLarge(bytes: bytes.count, limit: options.limits.maxInputBytes)
        }
        if let text = String(validating: bytes, as: UTF8.self) { return try sanitize(text) }
        // Invalid: find the offset of the first bad byte for the error.
        var offset = 0
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var text = String.UnicodeScalarView()
        var consumed = 0
        decoding: while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                text.append(scalar)
                consumed += UTF8.width(scalar)
                offset = consumed
            case .emptyInput: break decoding
            case .error: throw .invalidEncoding(byteOffset: offset)
            }
        }
        return try sanitize(String(text))
    }

    /// Sanitizes HTML text. - Throws: ``MailSafetyError`` (too large, bad wrapper id).
    ///
    /// The message is parsed into, cleaned on and checked with the arena tree (`HTMLTree`);
    /// `referenceSanitize(_:)` (SPI `Reference`) does the same on the class DOM and gives the same
    /// output and report, byte for byte (checked by `ArenaPathTests` and the `sanitizer` fuzz
    /// target).
    public func sanitize(_ html: String) throws(MailSafetyError) -> SanitizedMessage {
        try sanitize(html, on: ArenaPass.self, freeingTree: true)
    }

    /// ``sanitize(_:)`` on the class DOM (`DocumentFragment`): the reference the arena
    /// path is checked against, byte for byte, output and report, until the class path is
    /// removed. Not for production use: slower, and kept only as that oracle. - Throws:
    /// ``MailSafetyError``.
    @_spi(Reference)
    public func referenceSanitize(_ html: String) throws(MailSafetyError) -> SanitizedMessage {
        try sanitize(html, on: ClassPass.self, freeingTree: true)
    }

    /// The sanitizer's passes on one kind of tree (``SanitizerPass``). With `freeingTree` false,
    /// the pass whose output is returned keeps its cleaned tree allocated until the process ends
    /// (``sanitize(utf8:freeingTree:)``).
    func sanitize<Pass: SanitizerPass>(_ html: String, on _: Pass.Type, freeingTree: Bool) throws(MailSafetyError) -> SanitizedMessage {
        guard Self.isValidWrapperID(options.wrapperID) else { throw .invalidWrapperID(options.wrapperID) }
        guard html.utf8.count <= options.limits.maxInputBytes else {
            throw .tooLarge(bytes: html.utf8.count, limit: options.limits.maxInputBytes)
        }
        return passes(freeingTree: freeingTree) { gate in Pass(cleaning: html, gate: gate, options: options) }
    }

    /// The passes after the checks of the input: `firstPass` parses and cleans the message
    /// (findings into the gate it is given), then the re-parse check and the passes again until
    /// a fixed point, or the text alone.
    func passes<Pass: SanitizerPass>(freeingTree: Bool, firstPass: (ResourceGate) -> Pass) -> SanitizedMessage {
        let gate = ResourceGate(options: options)
        var first = firstPass(gate)
        var current = first.html
        // Whether the message itself (the first parse) reached one of the parser's bounds.
        let bounded = first.bounded
        var report: SanitizationReport {
            var report = gate.report
            report.hostileMarkup = bounded
            return report
        }
        // The re-parse check: the output must parse (in the rendering context) to a tree that
        // serializes to the same text, i.e. to the very tree the cleaner produced. Usually it
        // does, and then cleaning again is a no-op (the cleaner is idempotent on its own output:
        // PropertyTests and CorpusTests run the full sanitize twice). When it does not — a
        // mutation — the cleaner runs again on the re-parsed tree until a fixed point (see
        // ``SanitizerPass/parsesBack()`` for how each tree decides).
        if first.parsesBack() {
            if !freeingTree { first.keepTreeUntilExit() }
            return SanitizedMessage(html: current, report: report, wrapperID: options.wrapperID)
        }
        for _ in 1..<max(options.limits.maxPasses, 2) {
            let again = Pass(cleaning: current, gate: gate, options: options)
            if !again.limited && again.html == current {
                if !freeingTree { again.keepTreeUntilExit() }
                return SanitizedMessage(html: current, report: report, wrapperID: options.wrapperID)
            }
            current = again.html
        }
        // No fixed point: fall back to the text alone, which is stable by construction.
        var text = ""
        HTMLSerializer.escape(Pass.textContent(parsing: current), attributeMode: false, into: &text)
        var truncatedReport = report
        truncatedReport.truncated = true
        truncatedReport.note(.truncated)
        return SanitizedMessage(html: text, report: truncatedReport, wrapperID: options.wrapperID)
    }

    static func isValidWrapperID(_ id: String) -> Bool {
        guard (1...64).contains(id.utf8.count), let first = id.unicodeScalars.first,
              (first.value | 0x20) >= 0x61 && (first.value | 0x20) <= 0x7A
        else { return false }
        return id.unicodeScalars.allSatisfy { s in
            let v = s.value
            return (v >= 0x30 && v <= 0x39) || ((v | 0x20) >= 0x61 && (v | 0x20) <= 0x7A) || s == "-" || s == "_"
        }
    }

    /// Output size (UTF-8 bytes) up to which the cleaned tree is kept for the re-parse check's
    /// tree comparison (after a parse that `parsesBack` could not match node for node): beyond
    /// it the tree is freed before the output is parsed again, so a large message never holds
    /// two trees at once.
    static let sameTreeLimit = 1 << 20
}
