import Foundation

/// Builds outgoing RFC 5322 / MIME messages.
///
/// Structure: the text and HTML bodies form a `multipart/alternative` (text first); inline images
/// are put with the HTML in a `multipart/related` (referenced as `cid:<contentID>`); attachments
/// make the whole a `multipart/mixed`. Headers with non-ASCII text are RFC 2047 encoded words
/// (UTF-8), non-ASCII file names use RFC 2231 (`filename*=utf-8''…`, with continuations),
/// text bodies are 7bit when they are short-lined ASCII, else quoted-printable or base64
/// (whichever is smaller), attachments are base64. Every line is at most 78 characters except
/// an encoded display name longer than that (it stays one encoded word so that parsers do not
/// insert blanks into it). Boundaries are random and checked not to occur in the content.
public struct MessageBuilder: Sendable {
    /// An attachment or inline image.
    public struct Attachment: Sendable, Equatable {
        /// The file name (RFC 2231 encoded when not short ASCII).
        public var filename: String?
        /// `type/subtype`.
        public var contentType: String
        /// The content (sent base64).
        public var data: [UInt8]
        /// For inline images: the Content-ID without `<>` (referenced from HTML as `cid:…`).
        public var contentID: String?
        /// Creates an attachment; give `contentID` for inline images.
        public init(filename: String?, contentType: String, data: [UInt8], contentID: String? = nil) {
            self.filename = filename; self.contentType = contentType; self.data = data; self.contentID = contentID
        }
    }

    /// Line endings of the output.
    public enum LineEnding: Sendable { case crlf, lf }

    /// The senders (at least one).
    public var from: [MailAddress] = []
    /// The To recipients.
    public var to: [MailAddress] = []
    /// The Cc recipients.
    public var cc: [MailAddress] = []
    /// The Reply-To addresses.
    public var replyTo: [MailAddress] = []
    /// The subject (RFC 2047 encoded when not ASCII).
    public var subject: String?
    /// The Date header (now when `nil`).
    public var date: Date?
    /// The Message-ID without `<>` (random `…@rampart.invalid` when `nil`).
    public var messageID: String?
    /// The plain-text body (LF or CRLF line endings; normalized).
    public var text: String?
    /// The HTML body.
    public var html: String?
    /// Images shown inside the HTML (need a `contentID`).
    public var inlineImages: [Attachment] = []
    /// Attachments (`Content-Disposition: attachment`).
    public var attachments: [Attachment] = []
    /// Further header fields (ASCII names; values RFC 2047 encoded when needed).
    public var extraHeaders: [(name: String, value: String)] = []
    /// CRLF (default, for SMTP) or LF (for local files).
    public var lineEnding: LineEnding = .crlf

    /// An empty builder.
    public init() {}

    var nl: [UInt8] { lineEnding == .crlf ? [0x0D, 0x0A] : [0x0A] }
    var nlString: String { lineEnding == .crlf ? "\r\n" : "\n" }

    static func randomHex(_ bytes: Int) -> String {
        var g = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &g)) }.joined()
    }

    func checkHeaderValue(_ field: String, _ v: String) throws {
        if v.contains("\r") || v.contains("\n") {
            throw MIMEError.invalidBuilderInput(field: field, reason: "contains a line break")
        }
    }

    /// Folds an unstructured header (`Name: value`) at blanks so lines stay ≤ 78 characters.
    func fold(_ name: String, _ value: String) -> String {
        var lines: [String] = []
        var cur = name + ":"
        for (n, word) in value.split(separator: " ", omittingEmptySubsequences: false).enumerated() {
            let piece = (n == 0 ? " " : " ") + word
            if cur.count + piece.count > 78 && cur.count > name.count + 1 {
                lines.append(cur); cur = piece
            } else { cur += piece }
        }
        lines.append(cur)
        return lines.joined(separator: nlString) + nlString
    }

    func encodeUnstructured(_ name: String, _ value: String) -> String {
        let encoded = EncodedWords.encode(value, fold: " ", startColumn: name.count + 5)
        return fold(name, encoded)
    }

    func encodeAddresses(_ name: String, _ list: [MailAddress]) throws -> String {
        var items: [String] = []
        for a in list {
            try checkHeaderValue(name, a.address)
            guard a.address.contains("@") else { throw MIMEError.invalidBuilderInput(field: name, reason: "address \"\(a.address)\" has no @") }
            if let n = a.name, !n.isEmpty {
                try checkHeaderValue(name, n)
                let ascii = n.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F } && !n.contains("=?")
                items.append("\(ascii ? AddressParser.quotePhraseIfNeeded(n) : singleWord(n)) <\(a.address)>")
            } else {
                items.append(a.address)
            }
        }
        // One address per line keeps lines short.
        return "\(name): " + items.joined(separator: "," + nlString + " ") + nlString
    }

    /// One encoded word for a whole display name (parsers put blanks between adjacent encoded
    /// words in phrases).
    func singleWord(_ n: String) -> String {
        let b = String(decoding: TransferEncoding.encodeBase64(Array(n.utf8), lineLength: 0), as: UTF8.self)
        return "=?utf-8?b?\(b)?="
    }

    /// Encodes a text body: (transfer encoding, encoded bytes with `nl` line endings).
    func encodeText(_ s: String) -> (String, [UInt8]) {
        // Normalize line endings to LF first, on bytes: CR LF and a lone CR become LF. (Foundation's
        // `replacingOccurrences` matches grapheme clusters and missed a CR LF followed by a combining
        // mark, turning it into two line ends.)
        var lf: [UInt8] = []
        lf.reserveCapacity(s.utf8.count)
        var afterCR = false
        for c in s.utf8 {
            if c == 0x0A, afterCR { afterCR = false; continue }
            afterCR = c == 0x0D
            lf.append(afterCR ? 0x0A : c)
        }
        var ascii = true, maxLine = 0, cur = 0, fromLine = false, atStart = true
        for (i, c) in lf.enumerated() {
            if c >= 0x80 || (c < 0x20 && c != 0x0A && c != 0x09) { ascii = false }
            if c == 0x0A { maxLine = max(maxLine, cur); cur = 0; atStart = true; continue }
            if atStart && c == UInt8(ascii: "F") && lf[i...].starts(with: Array("From ".utf8)) { fromLine = true }
            atStart = false
            cur += 1
        }
        maxLine = max(maxLine, cur)
        if ascii && maxLine <= 76 && !fromLine {
            var out: [UInt8] = []
            for c in lf { if c == 0x0A { out += nl } else { out.append(c) } }
            return ("7bit", out)
        }
        let qp = TransferEncoding.encodeQuotedPrintable(lf, lineBreak: nl)
        let b64 = TransferEncoding.encodeBase64(lf, lineBreak: nl)
        return qp.count <= b64.count ? ("quoted-printable", qp) : ("base64", b64)
    }

    /// RFC 2231 `name*=utf-8''…` (with continuations) or a quoted ASCII value.
    func parameter(_ name: String, _ value: String) -> String {
        let ascii = value.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F }
        // A quoted value with "=?" in it would be read back as an encoded word (readers decode them
        // in quoted names, as mail programs write them): such a value goes RFC 2231's way too.
        if ascii && value.count <= 60 && !value.contains("=?") {
            return "; \(name)=\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        var pct = ""
        for b in value.utf8 {
            let c = Unicode.Scalar(b)
            if b < 0x80 && (c.properties.isAlphabetic || ("0"..."9").contains(c) || "!#$&+-.^_`|~".unicodeScalars.contains(c)) { pct.unicodeScalars.append(c) }
            else { pct += String(format: "%%%02X", b) }
        }
        pct = "utf-8''" + pct
        // Continuations of at most ~60 characters, not splitting a %XX escape.
        var chunks: [String] = []
        var cur = ""
        var it = Array(pct)
        var i = 0
        while i < it.count {
            let step = it[i] == "%" ? 3 : 1
            if cur.count + step > 60 { chunks.append(cur); cur = "" }
            cur += String(it[i..<min(i + step, it.count)])
            i += step
        }
        it = []
        if !cur.isEmpty { chunks.append(cur) }
        if chunks.count == 1 { return ";" + nlString + " \(name)*=\(chunks[0])" }
        return chunks.enumerated().map { ";" + nlString + " \(name)*\($0.offset)*=\($0.element)" }.joined()
    }

    struct Node {
        var headers: String
        var body: [UInt8]
    }

    func leafText(_ s: String, subtype: String) -> Node {
        let (cte, bytes) = encodeText(s)
        let ascii = s.unicodeScalars.allSatisfy { $0.isASCII }
        return Node(headers: "Content-Type: text/\(subtype); charset=\"\(ascii ? "us-ascii" : "utf-8")\"" + nlString +
                    "Content-Transfer-Encoding: \(cte)" + nlString, body: bytes)
    }

    func leafAttachment(_ a: Attachment, inline: Bool) -> Node {
        var h = "Content-Type: \(a.contentType)"
        if let f = a.filename { h += parameter("name", f) }
        h += nlString
        h += "Content-Disposition: \(inline ? "inline" : "attachment")"
        if let f = a.filename { h += parameter("filename", f) }
        h += nlString
        if let cid = a.contentID { h += "Content-ID: <\(cid)>" + nlString }
        h += "Content-Transfer-Encoding: base64" + nlString
        return Node(headers: h, body: TransferEncoding.encodeBase64(a.data, lineBreak: nl))
    }

    func multipart(_ subtype: String, _ parts: [Node]) -> Node {
        var boundary: String
        var marker: [UInt8]
        repeat {
            boundary = "=_rampart_" + Self.randomHex(12)
            marker = Array("--\(boundary)".utf8)
        } while parts.contains { $0.body.firstRange(of: marker) != nil || Array($0.headers.utf8).firstRange(of: marker) != nil }
        var body: [UInt8] = []
        for p in parts {
            body += marker + nl
            body += Array(p.headers.utf8) + nl
            body += p.body
            body += nl
        }
        body += marker + Array("--".utf8) + nl
        return Node(headers: "Content-Type: multipart/\(subtype);" + nlString + " boundary=\"\(boundary)\"" + nlString, body: body)
    }

    /// The message bytes. Throws ``MIMEError/invalidBuilderInput(field:reason:)`` for header values
    /// with line breaks, addresses without `@`, inline images without a Content-ID.
    public func build() throws -> [UInt8] {
        guard !from.isEmpty else { throw MIMEError.invalidBuilderInput(field: "From", reason: "at least one sender is required") }
        for img in inlineImages where img.contentID == nil {
            throw MIMEError.invalidBuilderInput(field: "inlineImages", reason: "inline image \(img.filename ?? "") needs a contentID")
        }
        var h = ""
        h += try encodeAddresses("From", from)
        if !to.isEmpty { h += try encodeAddresses("To", to) }
        if !cc.isEmpty { h += try encodeAddresses("Cc", cc) }
        if !replyTo.isEmpty { h += try encodeAddresses("Reply-To", replyTo) }
        if let s = subject { try checkHeaderValue("Subject", s); h += encodeUnstructured("Subject", s) }
        h += "Date: \(MailDate.rfc5322(date ?? Date()))" + nlString
        let mid = messageID ?? "\(Self.randomHex(16))@rampart.invalid"
        try checkHeaderValue("Message-ID", mid)
        h += "Message-ID: <\(mid)>" + nlString
        for (n, v) in extraHeaders {
            try checkHeaderValue(n, v)
            guard !n.isEmpty, n.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F && $0 != ":" }) else {
                throw MIMEError.invalidBuilderInput(field: n, reason: "header names must be printable ASCII without ':'")
            }
            h += encodeUnstructured(n, v)
        }
        h += "MIME-Version: 1.0" + nlString

        var htmlNode: Node? = html.map { leafText($0, subtype: "html") }
        if let hn = htmlNode, !inlineImages.isEmpty {
            htmlNode = multipart("related", [hn] + inlineImages.map { leafAttachment($0, inline: true) })
        }
        let textNode: Node? = text.map { leafText($0, subtype: "plain") }
        var body: Node
        switch (textNode, htmlNode) {
        case let (t?, hn?): body = multipart("alternative", [t, hn])
        case let (t?, nil): body = t
        case let (nil, hn?): body = hn
        case (nil, nil): body = leafText("", subtype: "plain")
        }
        if html == nil && !inlineImages.isEmpty {
            body = multipart("mixed", [body] + inlineImages.map { leafAttachment($0, inline: true) })
        }
        if !attachments.isEmpty {
            body = multipart("mixed", [body] + attachments.map { leafAttachment($0, inline: false) })
        }
        return Array(h.utf8) + Array(body.headers.utf8) + nl + body.body
    }
}
