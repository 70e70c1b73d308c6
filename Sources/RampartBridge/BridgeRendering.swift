import Foundation
import MIME
import RampartClient
import SealedStore

/// The MIME form of mail written in Rampart (no original bytes exist for it): what `BODY[]`
/// returns for it.
///
/// Trust-model row **inbox (low)** (the bridge's MIME rendering of mail written in Rampart):
/// built from the sealed store's fields by MIME's `MessageBuilder` (encoded words, quoted-printable, RFC 2231 file names, base64 attachments),
/// so no stored value can add a header: a media type that is not `type/subtype` of token
/// characters becomes `application/octet-stream` and a Content-ID with anything but printable
/// ASCII is left out; the text alternative is the terminal reader's rendering of the body.
enum BridgeRendering {
    /// A multipart/alternative message (text and HTML) with the stored headers, inside a
    /// multipart/mixed with `attachments` when there are any (those with a Content-ID go with
    /// the HTML as inline images); the date is the message's time and the Message-ID derives
    /// from its id (built once; the bridge keeps the bytes).
    static func mime(of message: MailMessage, attachments: [MessageBuilder.Attachment] = []) throws -> [UInt8] {
        var builder = MessageBuilder()
        builder.from = [MIME.MailAddress(name: message.sender.name.isEmpty ? nil : message.sender.name, address: message.sender.address)]
        builder.to = message.recipients.map { MIME.MailAddress(name: $0.name.isEmpty ? nil : $0.name, address: $0.address) }
        builder.subject = message.subject
        builder.date = Date(timeIntervalSince1970: TimeInterval(message.time))
        builder.messageID = messageID(of: message.id)
        builder.html = message.body
        builder.text = TerminalText.render(sanitizedHTML: message.body)
        builder.inlineImages = attachments.filter { $0.contentID != nil }
        builder.attachments = attachments.filter { $0.contentID == nil }
        return try builder.build()
    }

    /// The Message-ID a rendering of message `id` carries (a mail program's copy of it keeps it).
    static func messageID(of id: String) -> String { "\(id)@rampart.bridge" }

    /// Whether `copy`, the bridge's stored copy of message `id`, is one of its renderings made
    /// before renderings carried attachments: its Message-ID is the rendering's, and it has fewer
    /// parts that are not text than the message has attachments. Originals of imported and
    /// delivered mail (another Message-ID) are never taken for one.
    static func isRenderingWithoutAttachments(_ copy: [UInt8], id: String, attachments: Int) -> Bool {
        guard attachments > 0 else { return false }
        let parsed = MIMEMessage(bytes: copy)
        guard parsed.messageID == messageID(of: id) else { return false }
        return parsed.root.walk().filter { !$0.hasChildren && $0.contentType.mainType != "text" }.count < attachments
    }

    /// A stored attachment record and its cleartext as a part of the rendering: the media type
    /// and Content-ID only when they are safe in a header (see the type's trust-model note).
    static func attachment(_ record: AttachmentMetadata, contentID: String?, data: [UInt8]) -> MessageBuilder.Attachment {
        MessageBuilder.Attachment(filename: record.name.isEmpty ? nil : record.name, contentType: mediaType(record.mimeType),
                                  data: data, contentID: contentID.flatMap { isPrintableASCII($0, excluding: "<>") ? $0 : nil })
    }

    /// `type/subtype` (lowercased) when both are RFC 2045 tokens, else `application/octet-stream`.
    static func mediaType(_ value: String) -> String {
        let parts = value.trimmingCharacters(in: .whitespaces).lowercased().split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && isPrintableASCII(String($0), excluding: "()<>@,;:\\\"/[]?= ") }) else {
            return "application/octet-stream"
        }
        return parts.joined(separator: "/")
    }

    static func isPrintableASCII(_ value: String, excluding: String) -> Bool {
        !value.isEmpty && value.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F && !excluding.unicodeScalars.contains($0) }
    }
}
