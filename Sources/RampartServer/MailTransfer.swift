import Foundation
import GRDB
import RampartAPI
import RampartCore

// Mail that crosses the edge of the server: imports sealed by their owner, the original bytes
// kept for export, and the outbox for recipients outside this server.

extension Mailbox {
    /// The most attachments one imported message may carry.
    static let maximumImportAttachments = 1_000

    /// Stores a message its owner imported and sealed on the device.
    ///
    /// Idempotent: a message whose id is already stored for this user is left as it is and the
    /// answer says `created: false`, so an import interrupted by a crash is simply run again.
    /// Everything (message, labels, attachments, original, event) is written in one transaction.
    ///
    /// Trust-model rows **inbox (low)** and **database (critical)**: the server checks the shape
    /// only; every part is a ``SealedPart`` it cannot open.
    /// - Throws: ``ServerError/badRequest(_:)`` for a malformed request, ``ServerError/notFound(_:)``
    ///   for an unknown label, ``ServerError/conflict(_:)`` when the id belongs to another user.
    func importMessage(_ request: ImportRequest, userID: String) throws -> ImportResponse {
        guard ImportIdentity.isMessageID(request.id) else { throw ServerError.badRequest("the import id \(request.id) is not an import id") }
        guard request.attachments.count <= Self.maximumImportAttachments else {
            throw ServerError.badRequest("an imported message has at most \(Self.maximumImportAttachments) attachments")
        }
        guard request.size >= 0, request.time >= 0 else { throw ServerError.badRequest("negative size or time") }
        let body = try Self.sealedPart(request.sealedBody, what: "the body")
        let original = try Self.sealedPart(request.sealedOriginal, what: "the original")
        var attachments: [(ImportAttachment, Data)] = []
        for (index, attachment) in request.attachments.enumerated() {
            guard attachment.id == ImportIdentity.attachmentID(messageID: request.id, index: index) else {
                throw ServerError.badRequest("attachment \(index) has an id that is not derived from its message id")
            }
            guard attachment.size >= 0 else { throw ServerError.badRequest("attachment \(index) has a negative size") }
            attachments.append((attachment, try Self.sealedPart(attachment.sealedData, what: "attachment \(index)")))
        }
        let created: Bool = try store.write { db in
            if let owner = try String.fetchOne(db, sql: "SELECT userId FROM messages WHERE id = ?", arguments: [request.id]) {
                guard owner == userID else { throw ServerError.conflict("the message id \(request.id) is taken") }
                return false
            }
            try db.execute(sql: """
                INSERT INTO messages (id, userId, conversationId, time, size, unread, sealedBody) VALUES (?, ?, ?, ?, ?, ?, ?)
                """, arguments: [request.id, userID, BackendStore.newID("c"), request.time, request.size,
                                 request.unread ? 1 : 0, body])
            for label in Set(request.labelIds) {
                guard try Bool.fetchOne(db, sql: "SELECT 1 FROM labels WHERE userId = ? AND id = ?", arguments: [userID, label]) == true
                else { throw ServerError.notFound("The label \(label)") }
                try db.execute(sql: "INSERT INTO messageLabels (messageId, labelId) VALUES (?, ?)", arguments: [request.id, label])
            }
            for (position, item) in attachments.enumerated() {
                try db.execute(sql: """
                    INSERT INTO attachments (id, messageId, userId, position, name, mimeType, size, contentId, sealedData)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [item.0.id, request.id, userID, position, item.0.name, item.0.mimeType,
                                     item.0.size, item.0.contentId, item.1])
            }
            try Self.insertOriginal(db, messageID: request.id, userID: userID, sealed: original)
            try BackendStore.appendEvent(db, userID: userID, kind: .message, action: .create, objectID: request.id)
            return true
        }
        return ImportResponse(messageId: request.id, created: created)
    }

    /// Which of `request.ids` the user already has.
    func known(_ request: KnownMessagesRequest, userID: String) throws -> KnownMessagesResponse {
        guard request.ids.count <= KnownMessagesRequest.maximumIDs else {
            throw ServerError.badRequest("ask about at most \(KnownMessagesRequest.maximumIDs) ids at a time")
        }
        return try store.read { db in
            KnownMessagesResponse(known: try request.ids.filter { id in
                try Bool.fetchOne(db, sql: "SELECT 1 FROM messages WHERE id = ? AND userId = ?", arguments: [id, userID]) == true
            })
        }
    }

    /// The user's label named `name` (system labels by their name too), created if missing.
    func label(named name: String, userID: String) throws -> APILabel {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.count <= LabelCreateRequest.maximumNameLength,
              !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw ServerError.badRequest("a label name has 1 to \(LabelCreateRequest.maximumNameLength) characters, none of them control characters")
        }
        return try store.write { db in
            if let row = try Row.fetchOne(db, sql: "SELECT id, name FROM labels WHERE userId = ? AND (name = ? OR id = ?) ORDER BY rowid LIMIT 1",
                                          arguments: [userID, trimmed, trimmed]) {
                return APILabel(id: row["id"], name: row["name"])
            }
            let id = BackendStore.newID("l")
            try db.execute(sql: "INSERT INTO labels (userId, id, name) VALUES (?, ?, ?)", arguments: [userID, id, trimmed])
            try BackendStore.appendEvent(db, userID: userID, kind: .label, action: .create, objectID: id)
            return APILabel(id: id, name: trimmed)
        }
    }

    /// The sealed original RFC 5322 bytes of one of the user's messages.
    /// - Throws: ``ServerError/notFound(_:)`` when the message does not exist, is another
    ///   user's, or was written inside Rampart (it has no original).
    func original(userID: String, id: String) throws -> Data {
        try store.read { db in
            guard let data = try Data.fetchOne(db, sql: "SELECT sealedData FROM messageOriginals WHERE messageId = ? AND userId = ?",
                                               arguments: [id, userID])
            else { throw ServerError.notFound("The original of message \(id)") }
            return data
        }
    }

    /// Inserts the sealed original of a message (inside the caller's transaction).
    static func insertOriginal(_ db: Database, messageID: String, userID: String, sealed: Data) throws {
        try db.execute(sql: "INSERT INTO messageOriginals (messageId, userId, sealedData) VALUES (?, ?, ?)",
                       arguments: [messageID, userID, sealed])
    }

    /// Decodes base64 and checks it has the ``SealedPart`` shape (magic, version).
    static func sealedPart(_ base64: String, what: String) throws -> Data {
        guard let data = Data(base64Encoded: base64), SealedPart.hasSealedShape(data) else {
            throw ServerError.badRequest("\(what) is not a sealed part")
        }
        return data
    }

    /// The migration that adds the originals table (registered by ``BackendStore``).
    static func registerOriginalsMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v2-originals") { db in
            try db.execute(sql: """
                CREATE TABLE messageOriginals (
                    messageId TEXT PRIMARY KEY NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
                    userId TEXT NOT NULL,
                    sealedData BLOB NOT NULL);
                """)
        }
    }
}

/// The hand-off point for mail to recipients outside this server: a Maildir folder
/// (`tmp/`, `new/`, `cur/`) into which each outgoing message is written as a standard RFC 5322
/// file, for an MTA to pick up.
///
/// Trust-model row **outbox (moderate)**: mail to a recipient who is not a user of this server
/// and has no key leaves the system in clear; the sender is told so (``DeliveryReport/Route/outbox``).
/// Files are written to `tmp/`, flushed to disk, then renamed into `new/`, so an MTA never sees
/// half a message, and a crash leaves at most a stray file in `tmp/`.
public struct Outbox: Sendable {
    public let root: URL

    public init(root: URL) { self.root = root }

    /// Creates `tmp/`, `new/` and `cur/` (mode 0700).
    public func prepare() throws {
        for sub in ["tmp", "new", "cur"] {
            do {
                try FileManager.default.createDirectory(at: root.appendingPathComponent(sub, isDirectory: true),
                                                        withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            } catch {
                throw ServerError.storage("the outbox \(root.path) cannot be created (\(error))")
            }
        }
    }

    /// Writes one message; returns the file's URL in `new/`.
    @discardableResult
    public func write(_ message: Data) throws -> URL {
        try prepare()
        let name = Self.uniqueName()
        let temporary = root.appendingPathComponent("tmp/\(name)")
        let final = root.appendingPathComponent("new/\(name)")
        do {
            try PrivateFiles.writeAtomically(message, to: temporary)
            guard rename(temporary.path, final.path) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            PrivateFiles.syncDirectory(final.deletingLastPathComponent())
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw ServerError.storage("the outbox could not take the message (\(error))")
        }
        return final
    }

    /// The messages waiting in `new/`, oldest name first.
    public func pending() -> [URL] {
        let folder = root.appendingPathComponent("new", isDirectory: true)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { folder.appendingPathComponent($0) }
    }

    /// Maildir's unique name: `<seconds>.M<microseconds>P<pid>R<random>.<host>`.
    static func uniqueName() -> String {
        var now = timeval()
        gettimeofday(&now, nil)
        let random = UInt64.random(in: 0...UInt64.max)
        let host = ProcessInfo.processInfo.hostName.replacingOccurrences(of: "/", with: "\\057")
            .replacingOccurrences(of: ":", with: "\\072")
        return "\(now.tv_sec).M\(now.tv_usec)P\(getpid())R\(String(random, radix: 16)).\(host)"
    }
}
