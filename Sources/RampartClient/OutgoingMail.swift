import Foundation
import MIME
import RampartAPI

/// A message the user writes: recipients, subject, a body (HTML or plain text) and files.
///
/// ``request(from:date:)`` turns it into what the server takes: the fields for local recipients
/// (sealed to each by the server, as today) and the same message as a standard RFC 5322 / MIME
/// message (multipart/alternative for an HTML body, attachments as multipart/mixed, encoded
/// words for non-ASCII headers), which is kept as each copy's original and is what recipients
/// outside this server receive.
///
/// Trust-model row **outbox (moderate)**: what leaves for a recipient outside this server is not
/// end-to-end encrypted; ``SendResponse/deliveries`` says which recipients those were, and the
/// client tells the user.
public struct OutgoingMail: Sendable {
    /// The largest file attached, and the largest total (the server's JSON limit is 16 MiB
    /// after base64).
    public static let maximumAttachmentBytes = 10 * 1024 * 1024

    public var to: [String]
    public var subject: String
    public var body: String
    /// `true`: `body` is plain text (sent as text/plain, shown escaped); `false`: HTML.
    public var isPlainText: Bool
    public var attachments: [URL]

    public init(to: [String], subject: String, body: String, isPlainText: Bool, attachments: [URL] = []) {
        self.to = to; self.subject = subject; self.body = body; self.isPlainText = isPlainText; self.attachments = attachments
    }

    /// The send request, with its MIME form, from `sender`.
    /// - Throws: ``ClientError/badInput(_:)`` for an unreadable or too large file, or a recipient
    ///   that is not an address.
    public func request(from sender: Correspondent, date: Date = Date()) throws -> SendRequest {
        var files: [(name: String, type: String, data: Data)] = []
        var total = 0
        for url in attachments {
            guard let data = FileManager.default.contents(atPath: url.path) else {
                throw ClientError.badInput("Cannot read the file to attach: \(url.path)")
            }
            total += data.count
            guard total <= Self.maximumAttachmentBytes else {
                throw ClientError.badInput("Attachments are limited to \(Self.maximumAttachmentBytes / (1024 * 1024)) MiB in all")
            }
            files.append((url.lastPathComponent, DriveClient.mimeType(url.pathExtension), data))
        }
        var builder = MessageBuilder()
        builder.from = [MailAddress(name: sender.name.isEmpty ? nil : sender.name, address: sender.address)]
        builder.to = try to.map { address in
            guard let parsed = MailAddress.parseList(address).first, parsed.address.contains("@") else {
                throw ClientError.badInput("\"\(address)\" is not an e-mail address")
            }
            return parsed
        }
        builder.subject = subject
        builder.date = date
        builder.messageID = "\(UUID().uuidString.lowercased())@\(sender.address.split(separator: "@").last.map(String.init) ?? "rampart.local")"
        let html: String
        if isPlainText {
            builder.text = body
            html = MessageContent.escapedHTML(plainText: body)
        } else {
            builder.html = body
            // The text alternative, for mail programs that show only text/plain: the body's text as
            // the terminal reader renders it (the HTML5 tree's text, block structure kept).
            builder.text = TerminalText.render(sanitizedHTML: body)
            html = body
        }
        builder.attachments = files.map { MessageBuilder.Attachment(filename: $0.name, contentType: $0.type, data: [UInt8]($0.data)) }
        let mime: [UInt8]
        do { mime = try builder.build() } catch {
            throw ClientError.badInput("The message cannot be written as MIME: \(error)")
        }
        return SendRequest(to: builder.to.map(\.address), subject: subject, html: html,
                           attachments: files.isEmpty ? nil : files.map {
                               OutgoingAttachment(name: $0.name, mimeType: $0.type, data: $0.data.base64EncodedString())
                           },
                           mime: Data(mime).base64EncodedString())
    }
}
