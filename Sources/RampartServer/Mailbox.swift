import Crypto
import Foundation
import MailboxCrypto
import OpenPGP
import RampartAPI
import RampartCore

/// A message as it arrives at the server, before it is sealed (from the demo seed or a local
/// submission). It exists only in memory for the time of `Mailbox/deliver(_:to:labels:unread:)`.
///
/// Trust-model row **database (critical)**: it is sealed before anything is stored.
public struct IncomingMessage: Sendable {
    public struct Part: Sendable {
        public var name: String
        public var mimeType: String
        public var data: Data
        public var contentID: String?
        public init(name: String, mimeType: String, data: Data, contentID: String? = nil) {
            self.name = name; self.mimeType = mimeType; self.data = data; self.contentID = contentID
        }
    }
    public var content: MessageContent
    public var attachments: [Part]
    public var time: Date
    public init(content: MessageContent, attachments: [Part] = [], time: Date) {
        self.content = content; self.attachments = attachments; self.time = time
    }
}

/// Messages, attachments, labels and the event log of each user.
///
/// Trust-model row **database (critical)**: a message is stored as a ``MailPart`` (OpenPGP) of
/// its ``MessageContent`` JSON (subject, sender, recipients, HTML) to the recipient's public key,
/// bound to the message id and the part name; each attachment likewise (part: its position). The server
/// keeps in clear only what routing and listing need: ids, time, size, unread flag, labels, and
/// attachment names, types and sizes.
struct Mailbox: Sendable {
    let store: BackendStore
    let push: PushDelivery
    let clock: any RampartClock
    /// Where mail to recipients outside this server is handed off (`<data>/outbox`); `nil`
    /// refuses such recipients.
    var outbox: Outbox? = nil

    /// The largest page of ``list(userID:label:page:pageSize:)``.
    static let maximumPageSize = 200
    /// The most events one call returns.
    static let eventPage = 500

    /// A message sealed for one recipient, ready to be inserted.
    struct SealedMessage {
        let id: String
        let userID: String
        let labels: [String]
        let unread: Bool
        let time: Date
        let size: Int64
        let sealedBody: Data
        /// Each attachment: its id, its description, the encrypted content and the cleartext size.
        let parts: [(id: String, part: IncomingMessage.Part, sealed: Data, size: Int)]
        let sender: Correspondent
        let subject: String
    }

    /// Seals `message` to `userID`'s key and stores it with `labels`, appends the event, then
    /// writes a push to each of the user's registered sessions. Returns the new message id.
    @discardableResult
    func deliver(_ message: IncomingMessage, to userID: String, labels: [String], unread: Bool = true) throws -> String {
        let sealed = try seal(message, to: userID, labels: labels, unread: unread)
        try store.write { db in try Self.insert(db, sealed) }
        notify(sealed)
        return sealed.id
    }

    /// Seals a message for one recipient (no storage yet).
    func seal(_ message: IncomingMessage, to userID: String, address: String? = nil, labels: [String], unread: Bool) throws -> SealedMessage {
        let messageID = BackendStore.newID("m")
        let publicKey = try self.publicKey(of: userID, address: address)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var bodyJSON = try encoder.encode(message.content)
        defer { bodyJSON.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
        // Mail that reached the server in clear (the demo seed, mail from outside) is encrypted
        // to the recipient's key, unsigned: no person vouches for it.
        let sealedBody = try MailPart.seal(bodyJSON, to: [publicKey], signedBy: nil, messageID: messageID, part: SealedPartName.body)
        var sealedParts: [(id: String, part: IncomingMessage.Part, sealed: Data, size: Int)] = []
        for (position, part) in message.attachments.enumerated() {
            let id = BackendStore.newID("a")
            sealedParts.append((id, part, try MailPart.seal(part.data, to: [publicKey], signedBy: nil, messageID: messageID,
                                                            part: SealedPartName.attachment(position)), part.data.count))
        }
        let size = Int64(bodyJSON.count + message.attachments.reduce(0) { $0 + $1.data.count })
        return SealedMessage(id: messageID, userID: userID, labels: labels, unread: unread, time: message.time, size: size,
                             sealedBody: sealedBody, parts: sealedParts, sender: message.content.sender, subject: message.content.subject)
    }

    /// The OpenPGP public key a user's mail is encrypted to: the key of `address` when it is one of
    /// the user's, else the primary address's key (Proton's address keys, ``KeyList``).
    /// - Throws: ``ServerError/notFound(_:)`` for an unknown user, ``ServerError/storage(_:)``
    ///   for an unreadable stored key.
    func publicKey(of userID: String, address: String? = nil) throws -> PGPPublicKey {
        try store.read { db in
            if let address, try String.fetchOne(db, sql: "SELECT userId FROM addresses WHERE address = ?", arguments: [address.lowercased()]) == userID,
               let key = try KeyList.activeKey(db, address: address) {
                return key
            }
            guard let key = try KeyList.primaryKey(db, userID: userID) else { throw ServerError.notFound("The recipient") }
            return key
        }
    }

    /// The key directory: the active key of `address`.
    /// - Throws: ``ServerError/notFound(_:)`` when no account here has that address (a removed
    ///   address is not answered).
    func publicKey(ofAddress address: String) throws -> PublicKeyResponse {
        guard let userID = try localUser(address) else { throw ServerError.notFound("A key for \(address.prefix(254))") }
        return PublicKeyResponse(address: address.lowercased(), publicKey: try publicKey(of: userID, address: address).armored())
    }

    /// Inserts a sealed message and its event (inside the caller's transaction).
    static func insert(_ db: any StorageConnection, _ message: SealedMessage) throws {
        guard try Bool.fetchOne(db, sql: "SELECT 1 FROM messages WHERE id = ?", arguments: [message.id]) != true else {
            throw ServerError.conflict("the message id \(message.id) is taken")
        }
        try db.execute(sql: """
            INSERT INTO messages (id, userId, conversationId, time, size, unread, sealedBody) VALUES (?, ?, ?, ?, ?, ?, ?)
            """, arguments: [message.id, message.userID, BackendStore.newID("c"), Int64(message.time.timeIntervalSince1970),
                             message.size, message.unread ? 1 : 0, message.sealedBody])
        for label in Set(message.labels) {
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM labels WHERE userId = ? AND id = ?", arguments: [message.userID, label]) == true
            else { throw ServerError.notFound("The label \(label)") }
            try db.execute(sql: "INSERT INTO messageLabels (messageId, labelId) VALUES (?, ?)", arguments: [message.id, label])
        }
        for (position, item) in message.parts.enumerated() {
            try db.execute(sql: """
                INSERT INTO attachments (id, messageId, userId, position, name, mimeType, size, contentId, sealedData)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [item.id, message.id, message.userID, position, item.part.name, item.part.mimeType,
                                 item.size, item.part.contentID, item.sealed])
        }
        try BackendStore.appendEvent(db, userID: message.userID, kind: .message, action: .create, objectID: message.id)
    }

    /// Pushes a delivered inbox message to the recipient's sessions (after the commit).
    func notify(_ message: SealedMessage) {
        guard message.labels.contains(SystemLabel.inbox) else { return }
        push.notify(userID: message.userID, messageID: message.id, sender: message.sender, subject: message.subject)
    }

    /// One page of the user's messages, newest first, optionally only those with `label`.
    func list(userID: String, label: String?, page: Int, pageSize: Int) throws -> MessageListResponse {
        try store.read { db in
            var filter = "m.userId = ?"
            var arguments: StorageArguments = [userID]
            if let label {
                filter += " AND EXISTS (SELECT 1 FROM messageLabels l WHERE l.messageId = m.id AND l.labelId = ?)"
                arguments += [label]
            }
            let total = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM messages m WHERE \(filter)", arguments: arguments) ?? 0
            let rows = try StorageRow.fetchAll(db, sql: """
                SELECT * FROM messages m WHERE \(filter) ORDER BY m.time DESC, m.id DESC LIMIT ? OFFSET ?
                """, arguments: arguments + [pageSize, page * pageSize])
            return MessageListResponse(messages: try rows.map { try Self.response(db, $0) }, total: total)
        }
    }

    func message(userID: String, id: String) throws -> MessageResponse {
        try store.read { db in
            guard let row = try StorageRow.fetchOne(db, sql: "SELECT * FROM messages WHERE id = ? AND userId = ?", arguments: [id, userID])
            else { throw ServerError.notFound("The message \(id)") }
            return try Self.response(db, row)
        }
    }

    static func response(_ db: any StorageConnection, _ row: StorageRow) throws -> MessageResponse {
        let id: String = row["id"]
        let labels = try String.fetchAll(db, sql: "SELECT labelId FROM messageLabels WHERE messageId = ? ORDER BY labelId", arguments: [id])
        let attachments = try StorageRow.fetchAll(db, sql: "SELECT * FROM attachments WHERE messageId = ? ORDER BY position", arguments: [id])
            .map { AttachmentInfo(id: $0["id"], name: $0["name"], mimeType: $0["mimeType"], size: $0["size"], contentId: $0["contentId"]) }
        return MessageResponse(id: id, conversationId: row["conversationId"], labelIds: labels, time: row["time"],
                               size: row["size"], unread: (row["unread"] as Int) != 0,
                               sealedBody: row.data("sealedBody").base64EncodedString(), attachments: attachments)
    }

    /// The sealed bytes of an attachment of one of the user's messages.
    func attachment(userID: String, id: String) throws -> Data {
        try store.read { db in
            guard let data = try Data.fetchOne(db, sql: "SELECT sealedData FROM attachments WHERE id = ? AND userId = ?", arguments: [id, userID])
            else { throw ServerError.notFound("The attachment \(id)") }
            return data
        }
    }

    func markRead(userID: String, id: String, unread: Bool = false) throws {
        try store.write { db in
            try db.execute(sql: "UPDATE messages SET unread = ? WHERE id = ? AND userId = ?", arguments: [unread ? 1 : 0, id, userID])
            guard db.changesCount == 1 else { throw ServerError.notFound("The message \(id)") }
            try BackendStore.appendEvent(db, userID: userID, kind: .message, action: .update, objectID: id)
        }
    }

    func changeLabels(userID: String, id: String, _ change: LabelChangeRequest) throws {
        try store.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM messages WHERE id = ? AND userId = ?", arguments: [id, userID]) == true
            else { throw ServerError.notFound("The message \(id)") }
            for label in change.add {
                guard try Bool.fetchOne(db, sql: "SELECT 1 FROM labels WHERE userId = ? AND id = ?", arguments: [userID, label]) == true
                else { throw ServerError.notFound("The label \(label)") }
                try db.execute(sql: "INSERT OR IGNORE INTO messageLabels (messageId, labelId) VALUES (?, ?)", arguments: [id, label])
            }
            for label in change.remove {
                try db.execute(sql: "DELETE FROM messageLabels WHERE messageId = ? AND labelId = ?", arguments: [id, label])
            }
            try BackendStore.appendEvent(db, userID: userID, kind: .message, action: .update, objectID: id)
        }
    }

    func delete(userID: String, id: String) throws {
        try store.write { db in
            try db.execute(sql: "DELETE FROM messages WHERE id = ? AND userId = ?", arguments: [id, userID])
            guard db.changesCount == 1 else { throw ServerError.notFound("The message \(id)") }
            try BackendStore.appendEvent(db, userID: userID, kind: .message, action: .delete, objectID: id)
        }
    }

    func labels(userID: String) throws -> [APILabel] {
        try store.read { db in
            try StorageRow.fetchAll(db, sql: "SELECT id, name FROM labels WHERE userId = ? ORDER BY rowid", arguments: [userID])
                .map { APILabel(id: $0["id"], name: $0["name"]) }
        }
    }

    /// Creates a custom label (demo seed); returns its id.
    @discardableResult
    func createLabel(userID: String, name: String) throws -> String {
        let id = BackendStore.newID("l")
        try store.write { db in
            try db.execute(sql: "INSERT INTO labels (userId, id, name) VALUES (?, ?, ?)", arguments: [userID, id, name])
            try BackendStore.appendEvent(db, userID: userID, kind: .label, action: .create, objectID: id)
        }
        return id
    }

    /// Events after `since`, oldest first. The cursor is the last event's id (or the user's latest
    /// event id when there is nothing new), so a client can resume from it.
    func events(userID: String, since: Int64) throws -> EventsResponse {
        try store.read { db in
            let rows = try StorageRow.fetchAll(db, sql: "SELECT * FROM events WHERE userId = ? AND id > ? ORDER BY id LIMIT ?",
                                        arguments: [userID, since, Self.eventPage + 1])
            let more = rows.count > Self.eventPage
            let events = rows.prefix(Self.eventPage).compactMap { row -> APIEvent? in
                guard let kind = APIEvent.Kind(rawValue: row["kind"]), let action = APIEvent.Action(rawValue: row["action"]) else { return nil }
                return APIEvent(id: row["id"], kind: kind, action: action, objectId: row["objectId"])
            }
            let latest = try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM events WHERE userId = ?", arguments: [userID]) ?? 0
            return EventsResponse(cursor: events.last?.id ?? max(since, latest), more: more, events: events)
        }
    }

}
