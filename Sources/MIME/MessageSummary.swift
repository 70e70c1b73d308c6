import Crypto
import Foundation

/// The summary of a message that `rampart-dev mime parse FILE --json` prints and the
/// differential test compares with CPython's `email` package (scripts/mime/reference.py).
///
/// - `text`/`html`: the bodies `get_body(("plain",))` / `get_body(("html",))` pick, decoded with
///   their charset (unknown charset: UTF-8 with U+FFFD), line endings as in the message.
/// - `attachments`: see ``MIMEMessage/attachmentParts``; `size` and `sha256` are of the
///   transfer-decoded bytes (no charset conversion), `contentId` has no `<>`.
/// - `date`: UTC, `YYYY-MM-DDTHH:MM:SSZ`; `messageId` without `<>`.
public struct MessageSummary: Codable, Sendable, Equatable {
    /// One address.
    public struct Address: Codable, Sendable, Equatable {
        /// Display name or `nil`.
        public var name: String?
        /// The addr-spec.
        public var address: String
        /// Creates an address entry.
        public init(name: String?, address: String) { self.name = name; self.address = address }
    }
    /// One attachment.
    public struct Attachment: Codable, Sendable, Equatable {
        /// File name or `nil`.
        public var filename: String?
        /// `type/subtype`.
        public var contentType: String
        /// Content-ID without `<>`, or `nil`.
        public var contentId: String?
        /// `inline` or `attachment`.
        public var disposition: String
        /// Size of the transfer-decoded bytes.
        public var size: Int
        /// Lowercase hex SHA-256 of the transfer-decoded bytes.
        public var sha256: String
        /// Creates an attachment entry.
        public init(filename: String?, contentType: String, contentId: String?, disposition: String, size: Int, sha256: String) {
            self.filename = filename; self.contentType = contentType; self.contentId = contentId
            self.disposition = disposition; self.size = size; self.sha256 = sha256
        }
    }

    /// Decoded Subject or `nil`.
    public var subject: String?
    /// From addresses.
    public var from: [Address]
    /// To addresses (groups flattened).
    public var to: [Address]
    /// Cc addresses.
    public var cc: [Address]
    /// Date in UTC, `YYYY-MM-DDTHH:MM:SSZ`, or `nil`.
    public var date: String?
    /// Message-ID without `<>`, or `nil`.
    public var messageId: String?
    /// The decoded text/plain body or `nil`.
    public var text: String?
    /// The decoded text/html body or `nil`.
    public var html: String?
    /// Every attachment (see the type's documentation).
    public var attachments: [Attachment]

    enum CodingKeys: String, CodingKey { case subject, from, to, cc, date, messageId, text, html, attachments }

    /// Decodes the JSON form (`null` for absent values).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        subject = try c.decodeIfPresent(String.self, forKey: .subject)
        from = try c.decode([Address].self, forKey: .from)
        to = try c.decode([Address].self, forKey: .to)
        cc = try c.decode([Address].self, forKey: .cc)
        date = try c.decodeIfPresent(String.self, forKey: .date)
        messageId = try c.decodeIfPresent(String.self, forKey: .messageId)
        text = try c.decodeIfPresent(String.self, forKey: .text)
        html = try c.decodeIfPresent(String.self, forKey: .html)
        attachments = try c.decode([Attachment].self, forKey: .attachments)
    }

    /// Summarizes a parsed message.
    public init(_ m: MIMEMessage) {
        func conv(_ a: [MailAddress]) -> [Address] { a.map { Address(name: $0.name, address: $0.address) } }
        subject = m.subject
        from = conv(m.from); to = conv(m.to); cc = conv(m.cc)
        date = m.date.map(MailDate.iso8601)
        messageId = m.messageID
        text = m.textBody
        html = m.htmlBody
        attachments = m.attachments.map {
            Attachment(filename: $0.filename, contentType: $0.contentType, contentId: $0.contentID,
                       disposition: $0.disposition, size: $0.data.count, sha256: sha256Hex($0.data))
        }
    }

    /// The JSON object, keys in the documented order, `null` for absent values.
    public func json() -> String {
        func s(_ v: String?) -> String { v.map(jsonString) ?? "null" }
        func addrs(_ a: [Address]) -> String {
            "[" + a.map { "{\"name\":\(s($0.name)),\"address\":\(jsonString($0.address))}" }.joined(separator: ",") + "]"
        }
        let atts = attachments.map {
            "{\"filename\":\(s($0.filename)),\"contentType\":\(jsonString($0.contentType)),\"contentId\":\(s($0.contentId)),\"disposition\":\(jsonString($0.disposition)),\"size\":\($0.size),\"sha256\":\(jsonString($0.sha256))}"
        }.joined(separator: ",")
        return "{\"subject\":\(s(subject)),\"from\":\(addrs(from)),\"to\":\(addrs(to)),\"cc\":\(addrs(cc)),\"date\":\(s(date)),\"messageId\":\(s(messageId)),\"text\":\(s(text)),\"html\":\(s(html)),\"attachments\":[\(atts)]}"
    }
}

extension MIMEMessage {
    /// The ``MessageSummary``.
    public var summary: MessageSummary { MessageSummary(self) }
    /// The summary as JSON (what `rampart-dev mime parse FILE --json` prints).
    public func summaryJSON() -> String { summary.json() }
}

/// Lowercase hex SHA-256.
func sha256Hex(_ data: [UInt8]) -> String {
    let digest = SHA256.hash(data: data)
    let hex: [UInt8] = Array("0123456789abcdef".utf8)
    var out = [UInt8](); out.reserveCapacity(64)
    for b in digest { out.append(hex[Int(b >> 4)]); out.append(hex[Int(b & 15)]) }
    return String(decoding: out, as: UTF8.self)
}

/// A JSON string literal (RFC 8259 escaping).
func jsonString(_ s: String) -> String {
    var out = "\""
    out.reserveCapacity(s.utf8.count + 2)
    for u in s.unicodeScalars {
        switch u {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default:
            if u.value < 0x20 {
                let h = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - h.count) + h
            } else { out.unicodeScalars.append(u) }
        }
    }
    return out + "\""
}
