import Foundation
import MIME
import RampartAPI
import RampartCore

/// A real RFC 5322 message turned into what Rampart stores: the `MessageContent` sealed as the
/// body, the attachments (inline `cid:` images among them) sealed one by one, and the date.
///
/// Trust-model row **inbox (low)**: the conversion trusts nothing of the message. The HTML body
/// is kept as it came (the reader sanitizes it before display); a plain-text-only body is
/// HTML-escaped (`MessageContent.escapedHTML(plainText:)`), so text never becomes markup.
public struct ConvertedMail: Sendable {
    /// One attachment, decoded.
    public struct Attachment: Sendable, Equatable {
        public var name: String
        public var mimeType: String
        public var data: Data
        public var contentID: String?
        public init(name: String, mimeType: String, data: Data, contentID: String?) {
            self.name = name; self.mimeType = mimeType; self.data = data; self.contentID = contentID
        }
    }

    public var content: MessageContent
    public var attachments: [Attachment]
    /// The Date header in UTC, when it has one that parses.
    public var date: Date?
    /// What the parser could not decode as declared (kept as raw bytes), one sentence each.
    public var problems: [String]

    /// Converts a parsed message.
    public init(_ message: MIMEMessage) {
        func correspondent(_ address: MailAddress) -> Correspondent {
            Correspondent(name: address.name ?? "", address: address.address)
        }
        let sender = message.from.first.map(correspondent) ?? Correspondent(name: "", address: "")
        let html = message.htmlBody ?? message.textBody.map(MessageContent.escapedHTML(plainText:)) ?? ""
        let cc = message.cc.map(correspondent)
        content = MessageContent(subject: message.subject ?? "", sender: sender, to: message.to.map(correspondent),
                                 html: html, cc: cc.isEmpty ? nil : cc, messageId: message.messageID)
        attachments = message.attachments.enumerated().map { index, part in
            Attachment(name: part.filename.flatMap(Self.safeName) ?? Self.defaultName(index: index, type: part.contentType),
                       mimeType: part.contentType, data: Data(part.data), contentID: part.contentID)
        }
        date = message.date
        problems = message.problems.map(\.description)
    }

    /// Parses and converts the bytes of one message.
    public init(bytes: some Collection<UInt8>) { self.init(MIMEMessage(bytes: Array(bytes))) }

    /// A file name without path separators or control characters, at most 255 UTF-8 bytes.
    static func safeName(_ name: String) -> String? {
        var cleaned = String(name.unicodeScalars.filter { $0.properties.generalCategory != .control && $0 != "/" && $0 != "\\" })
        cleaned = cleaned.trimmingCharacters(in: .whitespaces)
        while cleaned.utf8.count > 255 { cleaned.removeLast() }
        return cleaned.isEmpty || cleaned == "." || cleaned == ".." ? nil : cleaned
    }

    /// `part-N.<extension>` for an attachment without a name.
    static func defaultName(index: Int, type: String) -> String {
        let known = ["text/plain": "txt", "text/html": "html", "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif",
                     "application/pdf": "pdf", "message/rfc822": "eml", "text/calendar": "ics"]
        return "part-\(index + 1).\(known[type] ?? "bin")"
    }
}

/// The original bytes of a message as they came in, with where they came from, sealed as the
/// message's `SealedPartName.original` part: export gives back exactly these bytes.
///
/// Format, version 1: `"RMOR" ‖ 0x01 ‖ kind (1) ‖ batch (u64 BE) ‖ sequence (u64 BE) ‖ bytes`.
/// `batch` is the import run (milliseconds since 1970 of its start) and `sequence` the position
/// in its source, so an mbox exported from a label comes out in the order it went in.
public struct MailOriginal: Sendable, Equatable {
    public enum Kind: UInt8, Sendable {
        /// One RFC 5322 message (.eml, Maildir file, delivery from outside, a sent message).
        case message = 1
        /// One mbox entry exactly as it stood in the file: its `From ` line, the message with
        /// the file's `>From` quoting, and the separator line.
        case mboxEntry = 2
    }

    public var kind: Kind
    public var batch: UInt64
    public var sequence: UInt64
    public var bytes: Data

    public init(kind: Kind, batch: UInt64 = 0, sequence: UInt64 = 0, bytes: Data) {
        self.kind = kind; self.batch = batch; self.sequence = sequence; self.bytes = bytes
    }

    static let magic = Data("RMOR".utf8)

    /// The encoded envelope (to be sealed).
    public func encoded() -> Data {
        var out = Self.magic
        out.append(1)
        out.append(kind.rawValue)
        for value in [batch, sequence] { withUnsafeBytes(of: value.bigEndian) { out.append(contentsOf: $0) } }
        out.append(bytes)
        return out
    }

    /// Decodes an opened envelope.
    /// - Throws: ``MailboxCryptoError/malformed(_:)`` or ``MailboxCryptoError/unsupportedVersion(_:)``.
    public init(decoding data: Data) throws {
        let bytes = [UInt8](data)
        guard bytes.count >= 22, Data(bytes[0..<4]) == Self.magic else { throw MailboxCryptoError.malformed("message original") }
        guard bytes[4] == 1 else { throw MailboxCryptoError.unsupportedVersion(bytes[4]) }
        guard let kind = Kind(rawValue: bytes[5]) else { throw MailboxCryptoError.malformed("message original (unknown kind \(bytes[5]))") }
        func u64(_ at: Int) -> UInt64 { bytes[at..<at + 8].reduce(0) { $0 << 8 | UInt64($1) } }
        self.init(kind: kind, batch: u64(6), sequence: u64(14), bytes: Data(bytes[22...]))
    }
}

extension MessageContent {
    /// A plain-text body as HTML that shows it as it is: every character that means something in
    /// HTML escaped, inside `<pre>` (lines kept, long lines wrapped by the reader's CSS).
    ///
    /// Trust-model row **inbox (low)**: text from outside never becomes markup.
    public static func escapedHTML(plainText: String) -> String {
        var out = "<pre style=\"white-space: pre-wrap\">"
        out.reserveCapacity(plainText.utf8.count + 64)
        for character in plainText {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out + "</pre>"
    }
}

/// The MIME library stays free of Rampart's modules; here its errors get their place in the
/// error model (code and kind), so the tools map them to the documented exit statuses.
extension MIMEError: RampartError {
    public var code: String {
        switch self {
        case .io: "mime.io"
        case .messageTooLarge: "mime.messageTooLarge"
        case .notAnMbox: "mime.notAnMbox"
        case .invalidBuilderInput: "mime.invalidBuilderInput"
        }
    }

    public var kind: RampartErrorKind {
        switch self {
        case .io: .notFound
        case .messageTooLarge, .notAnMbox, .invalidBuilderInput: .badInput
        }
    }
}
