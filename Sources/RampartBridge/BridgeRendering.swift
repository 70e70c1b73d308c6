import Foundation
import MIME
import RampartClient
import SealedStore

/// The MIME form of mail written in Rampart (no original bytes exist for it): what `BODY[]`
/// returns for it.
///
/// Trust-model row **inbox (low)**: built from the sealed store's fields by MIME's
/// `MessageBuilder` (encoded words, quoted-printable), so no stored value can add a header; the
/// text alternative is the terminal reader's rendering of the body.
enum BridgeRendering {
    /// A multipart/alternative message (text and HTML) with the stored headers; the date is the
    /// message's time and the Message-ID derives from its id (built once; the bridge keeps the bytes).
    static func mime(of message: MailMessage) throws -> [UInt8] {
        var builder = MessageBuilder()
        builder.from = [MIME.MailAddress(name: message.sender.name.isEmpty ? nil : message.sender.name, address: message.sender.address)]
        builder.to = message.recipients.map { MIME.MailAddress(name: $0.name.isEmpty ? nil : $0.name, address: $0.address) }
        builder.subject = message.subject
        builder.date = Date(timeIntervalSince1970: TimeInterval(message.time))
        builder.messageID = "\(message.id)@rampart.bridge"
        builder.html = message.body
        builder.text = TerminalText.render(sanitizedHTML: message.body)
        return try builder.build()
    }
}
