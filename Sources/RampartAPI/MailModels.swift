import Foundation

// Mail: labels, messages, attachments and sending.

/// A label (folder) of the mailbox.
///
/// Trust-model row **database (critical)**: label names and membership are metadata the server
/// sees.
public struct APILabel: Codable, Sendable, Equatable {
    /// A ``SystemLabel`` id or a random id for a custom label.
    public var id: String
    /// The label's name.
    public var name: String
    /// A label.
    public init(id: String, name: String) { self.id = id; self.name = name }
}

/// The well-known label ids every mailbox has (custom labels have random ids).
///
/// Trust-model row **database (critical)**: label membership is metadata the server sees.
public enum SystemLabel {
    /// Incoming mail.
    public static let inbox = "inbox"
    /// Mail the user sent.
    public static let sent = "sent"
    /// Archived mail.
    public static let archive = "archive"
    /// Deleted mail (kept until removed from the trash).
    public static let trash = "trash"
}

/// `GET /v1/labels`.
public struct LabelListResponse: Codable, Sendable {
    /// Every label of the mailbox, system labels first.
    public var labels: [APILabel]
    /// A list of labels.
    public init(labels: [APILabel]) { self.labels = labels }
}

/// `POST /v1/messages/{id}/labels`: labels to add to and remove from one message.
public struct LabelChangeRequest: Codable, Sendable {
    /// Label ids to add.
    public var add: [String]
    /// Label ids to remove.
    public var remove: [String]
    /// A label change (both lists empty by default).
    public init(add: [String] = [], remove: [String] = []) { self.add = add; self.remove = remove }
}

/// What the server says about an attachment of a message; its content is fetched from
/// `GET /v1/attachments/{id}` as a `MailPart` named ``SealedPartName/attachment(_:)`` of its position.
///
/// Trust-model row **database (critical)**: the name and type are metadata; the content is sealed.
public struct AttachmentInfo: Codable, Sendable, Equatable {
    /// The attachment's id.
    public var id: String
    /// The file name (from mail: untrusted, the client cleans it before use).
    public var name: String
    /// The MIME type (untrusted).
    public var mimeType: String
    /// The size of the content in bytes.
    public var size: Int
    /// Set for an embedded image referenced as `cid:<contentId>` from the body.
    public var contentId: String?
    /// An attachment description.
    public init(id: String, name: String, mimeType: String, size: Int, contentId: String? = nil) {
        self.id = id; self.name = name; self.mimeType = mimeType; self.size = size; self.contentId = contentId
    }
}

/// `GET /v1/messages/{id}`, and each entry of ``MessageListResponse``.
///
/// Trust-model row **database (critical)**: everything that names people or says what the message
/// is about is inside ``sealedBody``; the rest is routing metadata.
public struct MessageResponse: Codable, Sendable {
    /// The message's id.
    public var id: String
    /// The conversation the message belongs to.
    public var conversationId: String
    /// The labels the message carries (``SystemLabel`` or custom ids).
    public var labelIds: [String]
    /// Seconds since 1970.
    public var time: Int64
    /// The size of the message in bytes, attachments included.
    public var size: Int64
    /// Whether the message is still unread.
    public var unread: Bool
    /// base64 of a `MailPart` (OpenPGP) holding the JSON of a ``MessageContent``.
    public var sealedBody: String
    /// The message's attachments (content fetched separately).
    public var attachments: [AttachmentInfo]
    /// A message as the server returns it.
    public init(id: String, conversationId: String, labelIds: [String], time: Int64, size: Int64, unread: Bool, sealedBody: String, attachments: [AttachmentInfo]) {
        self.id = id; self.conversationId = conversationId; self.labelIds = labelIds; self.time = time
        self.size = size; self.unread = unread; self.sealedBody = sealedBody; self.attachments = attachments
    }
}

/// `GET /v1/messages`: one page of messages, newest first.
///
/// Trust-model row **database (critical)**: each message's content is a `MailPart` only the
/// mailbox key opens.
public struct MessageListResponse: Codable, Sendable {
    /// The messages of this page.
    public var messages: [MessageResponse]
    /// Messages matching the filter, over all pages.
    public var total: Int
    /// A page of messages.
    public init(messages: [MessageResponse], total: Int) { self.messages = messages; self.total = total }
}

/// A sender or recipient: a display name and an address.
///
/// Trust-model row **inbox (incoming mail), low trust**: names come from mail and are shown as
/// text, never interpreted.
public struct Correspondent: Codable, Sendable, Equatable {
    /// The display name (may be empty).
    public var name: String
    /// The mail address.
    public var address: String
    /// A correspondent.
    public init(name: String, address: String) { self.name = name; self.address = address }
}

/// What the sealed body of a message holds once opened: every header that says something about
/// the people involved is inside, so the server stores none of it in clear.
///
/// Trust-model rows **database (critical)** (sealed at rest on the server) and **inbox (incoming
/// mail), low trust** (``html`` is hostile until the client's sanitizer has processed it).
public struct MessageContent: Codable, Sendable, Equatable {
    /// The subject line.
    public var subject: String
    /// Who sent the message.
    public var sender: Correspondent
    /// The recipients.
    public var to: [Correspondent]
    /// The HTML body, unsanitized. A message that came with a plain-text body only carries that
    /// text here, HTML-escaped inside a `<pre>` (`MessageContent.escapedHTML(plainText:)`).
    public var html: String
    /// Carbon-copy recipients (messages from outside and imports; absent in older bodies).
    public var cc: [Correspondent]?
    /// The `Message-ID` of the original message, without `<>` (messages from outside and imports).
    public var messageId: String?
    /// A message's content.
    public init(subject: String, sender: Correspondent, to: [Correspondent], html: String,
                cc: [Correspondent]? = nil, messageId: String? = nil) {
        self.subject = subject; self.sender = sender; self.to = to; self.html = html
        self.cc = cc; self.messageId = messageId
    }
}

/// An attachment of a ``SendRequest``, encrypted by the sender's device.
///
/// Trust-model row **outbox (composer), moderate**: the content is an OpenPGP message
/// (`MailPart`) to every recipient's key and the sender's own, signed by the sender; the name,
/// type and size are routing metadata the server sees.
public struct OutgoingAttachment: Codable, Sendable {
    /// The file name.
    public var name: String
    /// The MIME type.
    public var mimeType: String
    /// The size of the cleartext in bytes.
    public var size: Int
    /// base64 of the `MailPart` bound to the submission id and ``SealedPartName/attachment(_:)``
    /// of the attachment's position.
    public var encryptedData: String
    /// Set for an image the body embeds as `cid:<contentId>`.
    public var contentId: String?
    /// An attachment to send.
    public init(name: String, mimeType: String, size: Int, encryptedData: String, contentId: String? = nil) {
        self.name = name; self.mimeType = mimeType; self.size = size; self.encryptedData = encryptedData; self.contentId = contentId
    }
}

/// `POST /v1/mail/send`: a message the client has encrypted and signed, for recipients of this
/// server (each gets a copy, the sender keeps one in `sent`) and, through the outbox, for
/// recipients outside it.
///
/// Trust-model row **outbox (composer), moderate**: the body (a ``MessageContent``: subject,
/// people, HTML) and each attachment are OpenPGP messages encrypted on the device to every local
/// recipient's key and the sender's own, signed by the sender's key; the server cannot read or
/// change them. The copies are stored as `<id>.<n>` (the sender's is `<id>.0`).
public struct SendRequest: Codable, Sendable {
    /// The most bytes of ``subject``.
    public static let maximumSubjectBytes = 500
    /// Recipient addresses: local accounts get a copy; others get the MIME message through the outbox.
    public var to: [String]
    /// The submission id the parts are bound to (``SendRequest/newID()``: `ms_` + 32 hex digits).
    public var id: String
    /// The subject line in clear, for the recipients' push notifications only (as with Proton,
    /// the subject is metadata the server sees; the stored copy is inside ``encryptedBody``).
    public var subject: String
    /// base64 of the `MailPart` (part ``SealedPartName/body``) holding the JSON of a ``MessageContent``.
    public var encryptedBody: String
    /// Attachments, if any, in order.
    public var attachments: [OutgoingAttachment]?
    /// base64 of the RFC 5322 message the client built, in clear: written to the outbox for
    /// recipients outside this server (required when there are such recipients) and kept,
    /// encrypted by the server to each copy's owner, as that copy's original.
    public var mime: String?
    /// A message to send.
    public init(to: [String], id: String, subject: String, encryptedBody: String,
                attachments: [OutgoingAttachment]? = nil, mime: String? = nil) {
        self.to = to; self.id = id; self.subject = subject; self.encryptedBody = encryptedBody
        self.attachments = attachments; self.mime = mime
    }

    static let idPrefix = "ms_"

    /// A fresh random submission id.
    public static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        return idPrefix + (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// Whether `id` has the shape of a submission id.
    public static func isSubmissionID(_ id: String) -> Bool { WireID.hasShape(id, prefix: idPrefix, hexDigits: 32) }
}

/// `GET /v1/keys?address=A`: the key directory's answer.
///
/// Trust-model row **inbox (low)**: the server could hand out a key of its own; the client pins
/// the first key it sees for an address and reports (does not use) a different one later.
public struct PublicKeyResponse: Codable, Sendable, Equatable {
    /// The address asked about (lower case).
    public var address: String
    /// The armored OpenPGP public key.
    public var publicKey: String
    /// A key directory answer.
    public init(address: String, publicKey: String) { self.address = address; self.publicKey = publicKey }
}

/// `POST /v1/mail/send` answer.
public struct SendResponse: Codable, Sendable {
    /// The ids of the messages created (the sender's copy and one per recipient).
    public var messageIds: [String]
    /// How each recipient was reached (absent from older servers).
    public var deliveries: [DeliveryReport]?
    /// A send answer.
    public init(messageIds: [String], deliveries: [DeliveryReport]? = nil) {
        self.messageIds = messageIds; self.deliveries = deliveries
    }
}

/// `POST /v1/remote/fetch`: a remote image or font of a message the reader allowed remote content
/// for, to be fetched by the backend (its address, not the reader's, reaches the sender's server).
public struct RemoteFetchRequest: Codable, Sendable, Equatable {
    /// The `http(s)` URL, as the message names it.
    public var url: String
    public init(url: String) { self.url = url }
}
