import Foundation

/// A parsed message: the root part (its headers are the message headers), the tree of parts and
/// the problems met while parsing.
///
/// Trust-model row **inbox (low)**: parsing never traps and never loops on hostile input; it is
/// linear in the input size and bounded by ``MIMELimits`` (nesting depth 64, 1000 header fields
/// per part, 64 KiB per unfolded header field, 10,000 parts). Data past a bound, and data that
/// cannot be decoded as declared, is kept as raw bytes and listed in ``problems``.
public struct MIMEMessage: Sendable, Equatable {
    /// The root part.
    public var root: MIMEPart
    /// Everything that could not be parsed or decoded as declared, in input order.
    public var problems: [MIMEProblem]

    /// Parses a message from its bytes (CRLF, LF or CR line endings). What Windows tools put
    /// around a file (a byte-order mark, UTF-16, a DOS end-of-file mark) is undone first
    /// (``MessageFileBytes/normalized(_:)``); problem offsets count from after it.
    /// - Parameters:
    ///   - bytes: the message as received or read from a file.
    ///   - limits: the bounds parsing keeps to (``MIMELimits/default`` unless told).
    ///   - asFile: false for bytes that are not a file but an entity inside a message
    ///     (a PGP/MIME part, a message being composed): nothing is undone, so a body that ends in
    ///     0x1A keeps it.
    public init(bytes: [UInt8], limits: MIMELimits = .default, asFile: Bool = true) {
        var p = MIMEParser(data: asFile ? MessageFileBytes.normalized(bytes) : bytes, limits: limits)
        let root = p.parseEntity(path: [], depth: 0, defaultType: "text/plain")
        self.root = root
        self.problems = p.problems
    }

    /// Parses a message from a string's UTF-8 bytes.
    public init(_ text: String, limits: MIMELimits = .default) { self.init(bytes: Array(text.utf8), limits: limits) }

    /// Wraps an existing part tree.
    public init(root: MIMEPart, problems: [MIMEProblem] = []) { self.root = root; self.problems = problems }

    /// The message header fields.
    public var headers: MIMEHeaders { root.headers }
    /// The Subject, RFC 2047 decoded.
    public var subject: String? { headers.decoded("subject") }
    /// The From addresses.
    public var from: [MailAddress] { addresses("from") }
    /// The To addresses (group members flattened).
    public var to: [MailAddress] { addresses("to") }
    /// The Cc addresses.
    public var cc: [MailAddress] { addresses("cc") }
    /// The Bcc addresses.
    public var bcc: [MailAddress] { addresses("bcc") }
    /// The Reply-To addresses.
    public var replyTo: [MailAddress] { addresses("reply-to") }
    /// The Date header as an instant, or `nil` when missing or unparsable.
    public var date: Date? { headers["date"].flatMap(MailDate.parse) }
    /// The Message-ID without `<>`.
    public var messageID: String? { headers["message-id"].map { stripAngle(MessageID.normalize($0)) } }

    /// The addresses of an address-list header.
    public func addresses(_ header: String) -> [MailAddress] {
        guard let v = headers["\(header)"] else { return [] }
        return MailAddress.parseList(v)
    }

    /// The part get_body would choose for a preference list (`"related"`, `"html"`, `"plain"`),
    /// with the algorithm of CPython's `EmailMessage.get_body`: depth-first, attachments skipped,
    /// only the root (the `start` part, else the first) of a `multipart/related` considered, the
    /// first part of the most preferred kind wins.
    public func body(preferring preferences: [String] = ["related", "html", "plain"]) -> MIMEPart? {
        var best = preferences.count
        var found: MIMEPart? = nil
        func find(_ part: MIMEPart) -> Bool {  // returns true to stop
            if part.isAttachment { return false }
            let t = part.mimeType
            let (main, sub) = split(t)
            if main == "text" {
                if let i = preferences.firstIndex(of: sub), i < best {
                    best = i; found = part
                    if i == 0 { return true }
                }
                return false
            }
            guard main == "multipart", root.hasChildren else { return false }
            if sub != "related" {
                for c in part.childrenOfMultipart { if find(c) { return true } }
                return false
            }
            if let i = preferences.firstIndex(of: "related"), i < best {
                best = i; found = part
                if i == 0 { return true }
            }
            var candidate: MIMEPart? = nil
            if let start = part.contentType.parameter("start"), !start.isEmpty {
                candidate = part.childrenOfMultipart.first { $0.headers.decoded("content-id") == start }
            }
            if candidate == nil { candidate = part.childrenOfMultipart.first }
            if let c = candidate { return find(c) }
            return false
        }
        _ = find(root)
        return found
    }

    /// The text/plain body (what `get_body(("plain",))` picks), decoded.
    public var textBody: String? { body(preferring: ["plain"]).map { $0.text().text } }
    /// The text/html body (what `get_body(("html",))` picks), decoded.
    public var htmlBody: String? { body(preferring: ["html"]).map { $0.text().text } }

    /// The attachments: every part CPython's `iter_attachments()` yields, applied recursively (see
    /// docs/mime.md): multipart attachments are walked, body containers it skips
    /// (`multipart/alternative`, `multipart/related`) are walked for their own attachments, every
    /// leaf of an attached message (`message/rfc822`) is an attachment, and a single-part message
    /// that is not its own text or HTML body is one attachment.
    public var attachmentParts: [MIMEPart] {
        let (main, _) = split(root.mimeType)
        if main == "multipart" && root.hasChildren { return Self.attachments(of: root) }
        if root.hasChildren { return Self.allLeaves(root) }
        let t = body(preferring: ["plain"]), h = body(preferring: ["html"])
        if t?.path == root.path || h?.path == root.path { return [] }
        return [root]
    }

    /// The attachments as values.
    public var attachments: [MIMEAttachment] { attachmentParts.map(MIMEAttachment.init(part:)) }

    static func allLeaves(_ p: MIMEPart) -> [MIMEPart] {
        var out: [MIMEPart] = []
        var stack: [MIMEPart] = [p]
        while let x = stack.popLast() {
            if x.hasChildren { stack.append(contentsOf: x.children.reversed()) } else { out.append(x) }
        }
        return out
    }

    /// CPython's `iter_attachments` on one multipart: the indices of the parts it yields.
    static func iterAttachments(_ part: MIMEPart) -> Set<Int> {
        let (main, sub) = split(part.mimeType)
        guard main == "multipart", sub != "alternative" else { return [] }
        let parts = part.childrenOfMultipart
        guard part.hasChildren else { return [] }
        if sub == "related" {
            if let start = part.contentType.parameter("start"), !start.isEmpty {
                var found = false
                var atts = Set<Int>()
                for (i, p) in parts.enumerated() {
                    if p.headers.decoded("content-id") == start { found = true } else { atts.insert(i) }
                }
                if found { return atts }
            }
            return Set(parts.indices.dropFirst())
        }
        var seen: [String] = []
        var atts = Set<Int>()
        for (i, p) in parts.enumerated() {
            let t = p.mimeType
            let (m, s) = split(t)
            let bodyType = (m == "text" && (s == "plain" || s == "html")) || (m == "multipart" && (s == "related" || s == "alternative"))
            if bodyType && !p.isAttachment && !seen.contains(s) { seen.append(s); continue }
            atts.insert(i)
        }
        return atts
    }

    static func attachments(of part: MIMEPart) -> [MIMEPart] {
        var out: [MIMEPart] = []
        // Explicit stack of (part, next child index) to stay iterative.
        let listed = iterAttachments(part)
        for (i, sub) in part.childrenOfMultipart.enumerated() {
            let isMulti = split(sub.mimeType).0 == "multipart" && sub.hasChildren
            if listed.contains(i) {
                if isMulti { out += attachments(of: sub) }
                else if sub.hasChildren { out += allLeaves(sub) }
                else { out.append(sub) }
            } else if isMulti {
                out += attachments(of: sub)
            }
        }
        return out
    }
}

func split(_ t: String) -> (String, String) {
    guard let i = t.firstIndex(of: "/") else { return (t, "") }
    return (String(t[..<i]), String(t[t.index(after: i)...]))
}

extension MIMEPart {
    /// Sub-parts when this is a parsed multipart (not an attached message).
    var childrenOfMultipart: [MIMEPart] {
        if case let .multipart(_, parts, _) = body { return parts }
        return []
    }
}

/// An attachment as the summary reports it.
public struct MIMEAttachment: Sendable, Equatable {
    /// The file name (Content-Disposition `filename`, RFC 2231/2047 decoded, else Content-Type
    /// `name`), or `nil`.
    public var filename: String?
    /// `type/subtype`, lowercased.
    public var contentType: String
    /// The Content-ID without `<>`, or `nil`.
    public var contentID: String?
    /// `"inline"` or `"attachment"`: the Content-Disposition when it says one of them, else
    /// `"inline"` for a part with a Content-ID, else `"attachment"`.
    public var disposition: String
    /// The transfer-decoded bytes.
    public var data: [UInt8]
    /// The part path in the message.
    public var path: [Int]

    /// The attachment view of a part (decodes its body).
    public init(part: MIMEPart) {
        filename = part.filename
        contentType = part.mimeType
        contentID = part.contentID
        let d = part.headers.contentDisposition
        disposition = (d == "inline" || d == "attachment") ? d! : (contentID != nil ? "inline" : "attachment")
        data = part.content
        path = part.path
    }
}

/// Message-ID values read like CPython's `get_msg_id`: `<id-left@id-right>` with anything after
/// the id ignored and a missing `>` repaired; values that are not of that shape stay as written.
enum MessageID {
    static func normalize(_ value: String) -> String {
        let s = Array(value.unicodeScalars)
        guard s.first == "<" else { return value }
        let specials: Set<Unicode.Scalar> = ["(", ")", "<", ">", "@", ",", ":", ";", ".", "\\", "\"", "[", "]", " ", "\t"]
        var i = 1
        func dotAtom() -> String? {
            var out = String.UnicodeScalarView()
            while i < s.count && (!specials.contains(s[i]) || s[i] == ".") { out.append(s[i]); i += 1 }
            let t = String(out)
            if t.isEmpty || t.hasPrefix(".") || t.hasSuffix(".") || t.contains("..") { return nil }
            return t
        }
        /// A quoted string or a domain literal, from its opening character through `close` (both
        /// kept); `nil` when `close` never comes.
        func delimited(by close: Unicode.Scalar, escapes: Bool) -> String? {
            var out = String.UnicodeScalarView([s[i]])
            i += 1
            while i < s.count && s[i] != close {
                if escapes && s[i] == "\\" && i + 1 < s.count { out.append(s[i]); i += 1 }
                out.append(s[i]); i += 1
            }
            guard i < s.count else { return nil }
            out.append(close); i += 1
            return String(out)
        }
        guard let left = i < s.count && s[i] == "\"" ? delimited(by: "\"", escapes: true) : dotAtom() else { return value }
        guard i < s.count && s[i] == "@" else { return "<" + left + (i < s.count && s[i] == ">" ? ">" : "") }
        i += 1
        guard let right = i < s.count && s[i] == "[" ? delimited(by: "]", escapes: false) : dotAtom() else { return value }
        return "<" + left + "@" + right + ">"
    }
}
