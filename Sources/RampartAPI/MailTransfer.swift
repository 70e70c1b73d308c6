import Foundation

// Mail that crosses the edge of the system: messages imported from other mail software
// (.eml, mbox, Maildir), their original bytes kept for export, and the hand-off of outgoing
// mail to recipients who are not users of this server.

extension APIRoute {
    /// `POST` ``ImportRequest`` → ``ImportResponse``: stores one message the client has already
    /// sealed to the user's own key (an import). Idempotent on ``ImportRequest/id``.
    public static let importMessage = "/v1/mail/import"
    /// `GET` → the `MailPart` bytes (OpenPGP) of a message's original RFC 5322 form (imported,
    /// delivered from outside or sent), opened with ``SealedPartName/original``; 404 when the
    /// message has none.
    public static func messageOriginal(_ id: String) -> String { "/v1/messages/\(id)/original" }
    /// `POST` ``KnownMessagesRequest`` → ``KnownMessagesResponse``: which of these import ids the
    /// user already has (so a resumed import skips sealing and uploading them again).
    public static let importKnown = "/v1/mail/import/known"
}

/// Which import ids are already stored (at most ``KnownMessagesRequest/maximumIDs`` a call).
public struct KnownMessagesRequest: Codable, Sendable {
    /// The most ids one request may ask about.
    public static let maximumIDs = 500
    public var ids: [String]
    public init(ids: [String]) { self.ids = ids }
}

/// The ids of a ``KnownMessagesRequest`` that the user already has.
public struct KnownMessagesResponse: Codable, Sendable, Equatable {
    public var known: [String]
    public init(known: [String]) { self.known = known }
}

/// `POST labels`: the label with this name, created if the user has none of that name.
public struct LabelCreateRequest: Codable, Sendable {
    /// 1 to ``LabelCreateRequest/maximumNameLength`` characters, no control characters.
    public var name: String
    public static let maximumNameLength = 100
    public init(name: String) { self.name = name }
}

extension SealedPartName {
    /// The original RFC 5322 bytes of a message, kept so that export gives back exactly what
    /// came in.
    public static let original = "original"
}

/// One attachment of an ``ImportRequest``, sealed by the client.
public struct ImportAttachment: Codable, Sendable, Equatable {
    /// Chosen by the client (`ImportIdentity.attachmentID(messageID:index:)`); its part name is
    /// ``SealedPartName/attachment(_:)`` of its position.
    public var id: String
    public var name: String
    public var mimeType: String
    /// Size of the cleartext content in bytes.
    public var size: Int
    public var contentId: String?
    /// base64 of a `MailPart` bound to ``SealedPartName/attachment(_:)`` of its position.
    public var sealedData: String
    public init(id: String, name: String, mimeType: String, size: Int, contentId: String?, sealedData: String) {
        self.id = id; self.name = name; self.mimeType = mimeType; self.size = size
        self.contentId = contentId; self.sealedData = sealedData
    }
}

/// A message imported by its owner, sealed on the device to the owner's own public key before it
/// is sent (as Proton's importer does): the server never sees the imported mail in clear.
///
/// Trust-model row **inbox (low)** and **database (critical)**: the server checks only the shape
/// (ids, sizes, labels, that the parts are OpenPGP messages); the content is opaque to it.
public struct ImportRequest: Codable, Sendable {
    /// The message id, derived from the original bytes by `ImportIdentity.messageID(original:key:)`:
    /// the same message imported twice has the same id, so the second import is a no-op.
    public var id: String
    /// Seconds since 1970 (the message's Date header, else the time of import).
    public var time: Int64
    public var labelIds: [String]
    public var unread: Bool
    /// Size in bytes of the original message.
    public var size: Int64
    /// base64 of a `MailPart` holding the JSON of a ``MessageContent``.
    public var sealedBody: String
    /// base64 of a `MailPart` holding the original RFC 5322 bytes.
    public var sealedOriginal: String
    public var attachments: [ImportAttachment]
    public init(id: String, time: Int64, labelIds: [String], unread: Bool, size: Int64, sealedBody: String,
                sealedOriginal: String, attachments: [ImportAttachment]) {
        self.id = id; self.time = time; self.labelIds = labelIds; self.unread = unread; self.size = size
        self.sealedBody = sealedBody; self.sealedOriginal = sealedOriginal; self.attachments = attachments
    }
}

/// The answer to an ``ImportRequest``.
public struct ImportResponse: Codable, Sendable, Equatable {
    public var messageId: String
    /// `false` when the message was already there (an earlier or interrupted import stored it).
    public var created: Bool
    public init(messageId: String, created: Bool) { self.messageId = messageId; self.created = created }
}

/// How outgoing mail reached one recipient.
public struct DeliveryReport: Codable, Sendable, Equatable {
    public enum Route: String, Codable, Sendable {
        /// A user of this server: sealed to their key (end-to-end within the system).
        case local
        /// Outside this server: written in clear as an RFC 5322 file into the outbox for an MTA.
        /// Not end-to-end encrypted.
        case outbox
    }
    public var address: String
    public var route: Route
    public init(address: String, route: Route) { self.address = address; self.route = route }
}
