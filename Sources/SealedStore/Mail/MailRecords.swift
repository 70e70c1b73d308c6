import Foundation
import GRDB

/// A mail address with an optional display name.
public struct MailAddress: Sendable, Hashable, Codable {
    public var name: String
    public var address: String
    public init(name: String = "", address: String) {
        self.name = name
        self.address = address
    }

    static func flatten(_ list: [MailAddress]) -> [String] { list.flatMap { [$0.name, $0.address] } }
    static func unflatten(_ list: [String]) throws -> [MailAddress] {
        guard list.count % 2 == 0 else { throw MalformedSealedContent() }
        return stride(from: 0, to: list.count, by: 2).map { MailAddress(name: list[$0], address: list[$0 + 1]) }
    }
}

/// Message flags kept in clear (sync and unread counts need them).
public struct MessageFlags: OptionSet, Sendable, Hashable {
    public let rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public static let unread = MessageFlags(rawValue: 1 << 0)
    public static let starred = MessageFlags(rawValue: 1 << 1)
    public static let replied = MessageFlags(rawValue: 1 << 2)
    public static let forwarded = MessageFlags(rawValue: 1 << 3)
    public static let hasAttachments = MessageFlags(rawValue: 1 << 4)
    public static let draft = MessageFlags(rawValue: 1 << 5)
    public static let sent = MessageFlags(rawValue: 1 << 6)
}

/// The clear `label_ids` column of messages and conversations: the ids joined with commas (label
/// ids never contain one), empty for none.
enum LabelIDsColumn {
    static func value(_ ids: [String]) -> DatabaseValue { ids.joined(separator: ",").databaseValue }

    static func decode(_ row: Row) throws -> [String] {
        let labels: String = try row.decode(forColumn: "label_ids")
        return labels.isEmpty ? [] : labels.split(separator: ",").map(String.init)
    }
}

/// The logged-in account. Trust-model row: **username — critical (ties the account to a
/// person)**: username, display name and addresses are sealed.
public struct AccountRecord: Sendable, Hashable, SealedRecord {
    public var id: String
    public var username: String
    public var displayName: String
    public var addresses: [String]

    public init(id: String, username: String, displayName: String, addresses: [String]) {
        self.id = id
        self.username = username
        self.displayName = displayName
        self.addresses = addresses
    }

    static let table = SealedTable(name: "accounts", keyColumns: ["id"], clearColumns: [],
                                   sealedColumns: ["username", "display_name", "addresses"])
    var keyValues: [DatabaseValue] { [id.databaseValue] }
    var clearValues: [DatabaseValue] { [] }
    var sealedPlaintexts: [[UInt8]] { [username.sealedBytes, displayName.sealedBytes, addresses.sealedBytes] }
    init(row: Row, opened: [Data]) throws {
        self.init(id: try row.decode(forColumn: "id"), username: try opened.string(0), displayName: try opened.string(1),
                  addresses: try opened.strings(2))
    }
}

/// A decrypted mail message. Trust-model row: **database (messages) — critical**: subject,
/// sender, recipients and body are sealed; id, conversation id, time, size, flags and label ids
/// stay clear for sorting, syncing and label lists.
public struct MailMessage: Sendable, Hashable, SealedRecord {
    public var id: String
    public var conversationID: String
    /// Unix time in seconds.
    public var time: Int64
    public var size: Int64
    public var flags: MessageFlags
    public var labelIDs: [String]
    public var subject: String
    public var sender: MailAddress
    public var recipients: [MailAddress]
    public var body: String

    public init(id: String, conversationID: String, time: Int64, size: Int64, flags: MessageFlags = [],
                labelIDs: [String], subject: String, sender: MailAddress, recipients: [MailAddress], body: String) {
        self.id = id
        self.conversationID = conversationID
        self.time = time
        self.size = size
        self.flags = flags
        self.labelIDs = labelIDs
        self.subject = subject
        self.sender = sender
        self.recipients = recipients
        self.body = body
    }

    static let table = SealedTable(name: "messages", keyColumns: ["id"],
                                   clearColumns: ["conversation_id", "time", "size", "flags", "label_ids"],
                                   sealedColumns: ["subject", "sender", "recipients", "body"],
                                   digestColumns: ["time", "label_ids"])
    var keyValues: [DatabaseValue] { [id.databaseValue] }
    var clearValues: [DatabaseValue] {
        [conversationID.databaseValue, time.databaseValue, size.databaseValue, flags.rawValue.databaseValue,
         LabelIDsColumn.value(labelIDs)]
    }
    var sealedPlaintexts: [[UInt8]] {
        [subject.sealedBytes, [sender.name, sender.address].sealedBytes,
         MailAddress.flatten(recipients).sealedBytes, body.sealedBytes]
    }
    init(row: Row, opened: [Data]) throws {
        let senderParts = try opened.strings(1)
        guard senderParts.count == 2 else { throw MalformedSealedContent() }
        self.init(id: try row.decode(forColumn: "id"), conversationID: try row.decode(forColumn: "conversation_id"), time: try row.decode(forColumn: "time"), size: try row.decode(forColumn: "size"),
                  flags: MessageFlags(rawValue: try row.decode(forColumn: "flags")), labelIDs: try LabelIDsColumn.decode(row),
                  subject: try opened.string(0), sender: MailAddress(name: senderParts[0], address: senderParts[1]),
                  recipients: try MailAddress.unflatten(opened.strings(2)), body: try opened.string(3))
    }
}

/// A conversation (thread): subject and senders sealed; time and counts clear for sorting.
public struct Conversation: Sendable, Hashable, SealedRecord {
    public var id: String
    public var time: Int64
    public var messageCount: Int
    public var unreadCount: Int
    public var labelIDs: [String]
    public var subject: String
    public var senders: [MailAddress]

    public init(id: String, time: Int64, messageCount: Int, unreadCount: Int, labelIDs: [String],
                subject: String, senders: [MailAddress]) {
        self.id = id
        self.time = time
        self.messageCount = messageCount
        self.unreadCount = unreadCount
        self.labelIDs = labelIDs
        self.subject = subject
        self.senders = senders
    }

    static let table = SealedTable(name: "conversations", keyColumns: ["id"],
                                   clearColumns: ["time", "message_count", "unread_count", "label_ids"],
                                   sealedColumns: ["subject", "senders"])
    var keyValues: [DatabaseValue] { [id.databaseValue] }
    var clearValues: [DatabaseValue] {
        [time.databaseValue, messageCount.databaseValue, unreadCount.databaseValue, LabelIDsColumn.value(labelIDs)]
    }
    var sealedPlaintexts: [[UInt8]] { [subject.sealedBytes, MailAddress.flatten(senders).sealedBytes] }
    init(row: Row, opened: [Data]) throws {
        self.init(id: try row.decode(forColumn: "id"), time: try row.decode(forColumn: "time"), messageCount: try row.decode(forColumn: "message_count"),
                  unreadCount: try row.decode(forColumn: "unread_count"), labelIDs: try LabelIDsColumn.decode(row),
                  subject: try opened.string(0), senders: try MailAddress.unflatten(opened.strings(1)))
    }
}

/// Attachment metadata (the encrypted content lives in the file vault): name, MIME type and
/// key packets sealed; size clear (quota display).
public struct AttachmentMetadata: Sendable, Hashable, SealedRecord {
    public var id: String
    public var messageID: String
    public var size: Int64
    public var name: String
    public var mimeType: String
    public var keyPackets: Data

    public init(id: String, messageID: String, size: Int64, name: String, mimeType: String, keyPackets: Data) {
        self.id = id
        self.messageID = messageID
        self.size = size
        self.name = name
        self.mimeType = mimeType
        self.keyPackets = keyPackets
    }

    static let table = SealedTable(name: "attachments", keyColumns: ["id"], clearColumns: ["message_id", "size"],
                                   sealedColumns: ["name", "mime_type", "key_packets"])
    var keyValues: [DatabaseValue] { [id.databaseValue] }
    var clearValues: [DatabaseValue] { [messageID.databaseValue, size.databaseValue] }
    var sealedPlaintexts: [[UInt8]] { [name.sealedBytes, mimeType.sealedBytes, keyPackets.sealedBytes] }
    init(row: Row, opened: [Data]) throws {
        self.init(id: try row.decode(forColumn: "id"), messageID: try row.decode(forColumn: "message_id"), size: try row.decode(forColumn: "size"), name: try opened.string(0),
                  mimeType: try opened.string(1), keyPackets: opened.data(2))
    }
}

/// A contact: name, addresses and card sealed.
public struct Contact: Sendable, Hashable, SealedRecord {
    public var id: String
    public var modified: Int64
    public var name: String
    public var emails: [String]
    public var card: String

    public init(id: String, modified: Int64, name: String, emails: [String], card: String) {
        self.id = id
        self.modified = modified
        self.name = name
        self.emails = emails
        self.card = card
    }

    static let table = SealedTable(name: "contacts", keyColumns: ["id"], clearColumns: ["modified"],
                                   sealedColumns: ["name", "emails", "card"])
    var keyValues: [DatabaseValue] { [id.databaseValue] }
    var clearValues: [DatabaseValue] { [modified.databaseValue] }
    var sealedPlaintexts: [[UInt8]] { [name.sealedBytes, emails.sealedBytes, card.sealedBytes] }
    init(row: Row, opened: [Data]) throws {
        self.init(id: try row.decode(forColumn: "id"), modified: try row.decode(forColumn: "modified"), name: try opened.string(0),
                  emails: try opened.strings(1), card: try opened.string(2))
    }
}

/// A label or folder: name and color sealed (a label name can say a lot); kind and order clear.
public struct MailLabel: Sendable, Hashable, SealedRecord {
    public var id: String
    public var kind: Int
    public var sortOrder: Int
    public var name: String
    public var color: String

    public init(id: String, kind: Int, sortOrder: Int, name: String, color: String) {
        self.id = id
        self.kind = kind
        self.sortOrder = sortOrder
        self.name = name
        self.color = color
    }

    static let table = SealedTable(name: "labels", keyColumns: ["id"], clearColumns: ["kind", "sort_order"],
                                   sealedColumns: ["name", "color"])
    var keyValues: [DatabaseValue] { [id.databaseValue] }
    var clearValues: [DatabaseValue] { [kind.databaseValue, sortOrder.databaseValue] }
    var sealedPlaintexts: [[UInt8]] { [name.sealedBytes, color.sealedBytes] }
    init(row: Row, opened: [Data]) throws {
        self.init(id: try row.decode(forColumn: "id"), kind: try row.decode(forColumn: "kind"), sortOrder: try row.decode(forColumn: "sort_order"), name: try opened.string(0),
                  color: try opened.string(1))
    }
}

/// The server's event-stream cursor (sealed: it is cheap to protect and reveals activity).
struct EventCursor: Sendable, Hashable, SealedRecord {
    var cursor: String
    static let table = SealedTable(name: "event_cursor", keyColumns: ["id"], clearColumns: [],
                                   sealedColumns: ["cursor"])
    var keyValues: [DatabaseValue] { [Int64(1).databaseValue] }
    var clearValues: [DatabaseValue] { [] }
    var sealedPlaintexts: [[UInt8]] { [cursor.sealedBytes] }
    init(cursor: String) { self.cursor = cursor }
    init(row: Row, opened: [Data]) throws { self.init(cursor: try opened.string(0)) }
}
