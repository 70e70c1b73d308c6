import Crypto
import Foundation
import MIME
import MailboxCrypto
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
    /// only; every part is an OpenPGP message (``MailPart``) it cannot open.
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
            if let row = try StorageRow.fetchOne(db, sql: "SELECT id, name FROM labels WHERE userId = ? AND (name = ? OR id = ?) ORDER BY rowid LIMIT 1",
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
    static func insertOriginal(_ db: any StorageConnection, messageID: String, userID: String, sealed: Data) throws {
        try db.execute(sql: "INSERT INTO messageOriginals (messageId, userId, sealedData) VALUES (?, ?, ?)",
                       arguments: [messageID, userID, sealed])
    }

    /// Decodes base64 and checks it has the shape of a binary encrypted OpenPGP message (``MailPart``).
    static func sealedPart(_ base64: String, what: String) throws -> Data {
        guard let data = Data(base64Encoded: base64), MailPart.hasSealedShape(data) else {
            throw ServerError.badRequest("\(what) is not an encrypted OpenPGP message (binary)")
        }
        return data
    }

    /// The migration that adds the originals table (registered by ``BackendStore``).
    static func registerOriginalsMigration(_ migrator: inout StorageMigrator) {
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

extension Mailbox {
    /// The most recipients one message may have (send and delivery from outside).
    static let maximumRecipients = 100

    /// A submission from a user, encrypted and signed on the sender's device: stored in each local
    /// recipient's inbox and in the sender's Sent folder (copies `<id>.<n>`, the same OpenPGP
    /// messages, which the client encrypted to all of them), and handed to the outbox for
    /// recipients outside this server.
    ///
    /// Trust-model row **outbox (moderate)**: a recipient outside has no key here, so that copy
    /// leaves in clear; the answer says so per recipient (``DeliveryReport``). The outside copy is
    /// the MIME message the client built, and its From must be one of the sender's addresses.
    /// Crash safety: the outbox file is staged in `tmp/` first, the database copies are committed
    /// in one transaction, then the file is renamed into `new/` (the hand-off); a crash in between
    /// leaves at most a stray file in `tmp/`, never an outside copy of a message that is not in Sent.
    /// - Throws: ``ServerError/unknownRecipient(_:)`` for an address in this server's own domains
    ///   that no account has (other domains go to the outbox); ``ServerError/badRequest(_:)`` for
    ///   no recipient, too many, or an outside recipient without a MIME message.
    func send(_ request: SendRequest, from userID: String, sender: Correspondent, senderAddresses: [String]) throws -> SendResponse {
        guard !request.to.isEmpty else { throw ServerError.badRequest("the message has no recipient") }
        guard request.to.count <= Self.maximumRecipients else {
            throw ServerError.badRequest("a message has at most \(Self.maximumRecipients) recipients")
        }
        var local: [(address: String, userID: String)] = []
        var outside: [String] = []
        for address in request.to {
            guard Self.looksLikeAddress(address) else { throw ServerError.badRequest("\"\(address.prefix(200))\" is not an e-mail address") }
            if let recipient = try localUser(address) {
                local.append((address, recipient))
            } else if try isLocalDomain(address) {
                // This server's own domain but no account: a typo, not mail for the outside.
                throw ServerError.unknownRecipient(address)
            } else {
                outside.append(address)
            }
        }
        var mime: Data?
        if let encoded = request.mime {
            guard let data = Data(base64Encoded: encoded) else { throw ServerError.badRequest("the MIME message is not base64") }
            mime = data
        }
        if !outside.isEmpty {
            guard let mime else {
                throw ServerError.badRequest("recipients outside this server (\(outside.joined(separator: ", "))) need the message in MIME form")
            }
            guard let outbox else { throw ServerError.unknownRecipient(outside[0]) }
            let from = MIMEMessage(bytes: [UInt8](mime)).from.map { $0.address.lowercased() }
            guard from.count == 1, senderAddresses.map({ $0.lowercased() }).contains(from[0]) else {
                throw ServerError.badRequest("the MIME message's From must be one of your addresses")
            }
        }
        guard SendRequest.isSubmissionID(request.id) else { throw ServerError.badRequest("the submission id \(request.id.prefix(80)) is not one") }
        guard request.subject.utf8.count <= SendRequest.maximumSubjectBytes else {
            throw ServerError.badRequest("the subject has at most \(SendRequest.maximumSubjectBytes) bytes")
        }
        let attachments = request.attachments ?? []
        guard attachments.count <= Self.maximumImportAttachments else {
            throw ServerError.badRequest("a message has at most \(Self.maximumImportAttachments) attachments")
        }
        // The body and attachments were encrypted and signed by the sender's device, once for
        // every recipient: each copy stores the same OpenPGP messages (bound to the submission id).
        let body = try Self.sealedPart(request.encryptedBody, what: "the body")
        var parts: [(part: IncomingMessage.Part, sealed: Data, size: Int)] = []
        for (index, attachment) in attachments.enumerated() {
            guard attachment.size >= 0 else { throw ServerError.badRequest("attachment \(index) has a negative size") }
            let sealed = try Self.sealedPart(attachment.encryptedData, what: "attachment \(index)")
            parts.append((IncomingMessage.Part(name: attachment.name, mimeType: attachment.mimeType, data: Data(),
                                               contentID: attachment.contentId), sealed, attachment.size))
        }
        let size = Int64(body.count + parts.reduce(0) { $0 + $1.size })
        let now = clock.now
        func copy(_ index: Int, to owner: String, labels: [String], unread: Bool) -> SealedMessage {
            SealedMessage(id: "\(request.id).\(index)", userID: owner, labels: labels, unread: unread, time: now, size: size,
                          sealedBody: body, parts: parts.map { (BackendStore.newID("a"), $0.part, $0.sealed, $0.size) },
                          sender: sender, subject: request.subject)
        }
        // Every copy is made first, then all are stored in one transaction: a crash leaves
        // either the Sent copy and every delivery, or none of them.
        var copies = [copy(0, to: userID, labels: [SystemLabel.sent], unread: false)]
        for (index, recipient) in local.enumerated() {
            copies.append(copy(index + 1, to: recipient.userID, labels: [SystemLabel.inbox], unread: true))
        }
        let originals = try mime.map { bytes in try copies.map { try sealOriginal(MailOriginal(kind: .message, bytes: bytes), for: $0) } }
        let staged = try outside.isEmpty ? nil : outbox?.stage(mime ?? Data())
        do {
            try store.write { db in
                for (index, copy) in copies.enumerated() {
                    try Self.insert(db, copy)
                    if let originals { try Self.insertOriginal(db, messageID: copy.id, userID: copy.userID, sealed: originals[index]) }
                }
            }
        } catch {
            staged?.discard()
            throw error
        }
        try staged?.handOff()
        copies.forEach(notify)
        return SendResponse(messageIds: copies.map(\.id),
                            deliveries: local.map { DeliveryReport(address: $0.address, route: .local) }
                                + outside.map { DeliveryReport(address: $0, route: .outbox) })
    }

    /// Delivery of one message from outside (what an MTA hands to the local delivery agent): it
    /// is sealed to each local recipient's public key on arrival, with its original bytes, and
    /// the server keeps no cleartext copy.
    ///
    /// Trust-model row **inbox (low)**: the message is parsed by the MIME library (bounded,
    /// never trapping); recipients come from `recipients` (like `sendmail ADDRESS…`) or else from
    /// its To and Cc (like `sendmail -t`). All copies are stored in one transaction: an unknown
    /// recipient or an unreadable message stores nothing.
    /// - Returns: the new message ids, one per recipient.
    /// - Throws: ``ServerError/unknownRecipient(_:)``, ``ServerError/badRequest(_:)`` for an
    ///   unreadable message or no recipient.
    func deliverFromOutside(_ raw: Data, recipients explicit: [String]) throws -> [String] {
        let message = MIMEMessage(bytes: [UInt8](raw))
        guard !raw.isEmpty, !message.headers.fields.isEmpty else {
            throw ServerError.badRequest("the input is not an RFC 5322 message (no header fields)")
        }
        var addresses = explicit
        if addresses.isEmpty { addresses = (message.to + message.cc).map(\.address) }
        var seen: Set<String> = []
        addresses = addresses.map { $0.lowercased() }.filter { seen.insert($0).inserted }
        guard !addresses.isEmpty else { throw ServerError.badRequest("the message names no recipient (no To or Cc, and none given)") }
        guard addresses.count <= Self.maximumRecipients else {
            throw ServerError.badRequest("a message has at most \(Self.maximumRecipients) recipients")
        }
        var users: [(id: String, address: String)] = []
        for address in addresses {
            guard let user = try localUser(address) else { throw ServerError.unknownRecipient(address) }
            if !users.contains(where: { $0.id == user }) { users.append((user, address)) }
        }
        let converted = ConvertedMail(message)
        let incoming = IncomingMessage(content: converted.content,
                                       attachments: converted.attachments.map {
                                           IncomingMessage.Part(name: $0.name, mimeType: $0.mimeType, data: $0.data, contentID: $0.contentID)
                                       },
                                       time: clock.now)
        let original = MailOriginal(kind: .message, bytes: raw)
        var copies: [(SealedMessage, Data)] = []
        for user in users {
            let copy = try seal(incoming, to: user.id, address: user.address, labels: [SystemLabel.inbox], unread: true)
            copies.append((copy, try sealOriginal(original, for: copy)))
        }
        try store.write { db in
            for (copy, sealedOriginal) in copies {
                try Self.insert(db, copy)
                try Self.insertOriginal(db, messageID: copy.id, userID: copy.userID, sealed: sealedOriginal)
            }
        }
        copies.forEach { notify($0.0) }
        return copies.map(\.0.id)
    }

    /// The local account that owns `address`, if any.
    func localUser(_ address: String) throws -> String? {
        try store.read { db in
            try String.fetchOne(db, sql: "SELECT userId FROM addresses WHERE address = ?", arguments: [address.lowercased()])
        }
    }

    /// Whether `address`'s domain is one this server has accounts in.
    func isLocalDomain(_ address: String) throws -> Bool {
        guard let at = address.lastIndex(of: "@") else { return false }
        let domain = address[address.index(after: at)...].lowercased()
        return try store.read { db in
            try Bool.fetchOne(db, sql: "SELECT 1 FROM addresses WHERE substr(address, instr(address, '@') + 1) = ? LIMIT 1",
                              arguments: [domain]) == true
        }
    }

    /// Encrypts an original (unsigned) to the owner of a copy, bound to that copy's id.
    func sealOriginal(_ original: MailOriginal, for copy: SealedMessage) throws -> Data {
        let publicKey = try self.publicKey(of: copy.userID)
        var encoded = original.encoded()
        defer { encoded.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
        return try MailPart.seal(encoded, to: [publicKey], signedBy: nil, messageID: copy.id, part: SealedPartName.original)
    }

    /// `local@domain` with no spaces, controls or angle brackets (a light check; routing decides).
    static func looksLikeAddress(_ address: String) -> Bool {
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, address.utf8.count <= 254 else { return false }
        return !address.unicodeScalars.contains { $0.properties.generalCategory == .control || " <>,;".unicodeScalars.contains($0) }
    }
}

/// The hand-off point for mail to recipients outside this server: a Maildir folder
/// (`tmp/`, `new/`, `cur/`) into which each outgoing message is written as a standard RFC 5322
/// file, for an MTA to pick up.
///
/// Trust-model row **outbox (moderate)**: mail to a recipient who is not a user of this server
/// and has no key leaves the system in clear; the sender is told so (`DeliveryReport/Route/outbox`).
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

    /// A message written to `tmp/`, not yet handed off.
    public struct Staged: Sendable {
        let temporary: URL
        public let final: URL

        /// Renames the file into `new/` (the hand-off an MTA watches for).
        public func handOff() throws {
            guard rename(temporary.path, final.path) == 0 else {
                let code = errno
                try? FileManager.default.removeItem(at: temporary)
                throw ServerError.storage("the outbox could not take the message (rename: errno \(code))")
            }
            PrivateFiles.syncDirectory(final.deletingLastPathComponent())
        }

        /// Removes the staged file (the send failed).
        public func discard() { try? FileManager.default.removeItem(at: temporary) }
    }

    /// Writes `message` durably into `tmp/`.
    public func stage(_ message: Data) throws -> Staged {
        try prepare()
        let name = Self.uniqueName()
        let staged = Staged(temporary: root.appendingPathComponent("tmp/\(name)"), final: root.appendingPathComponent("new/\(name)"))
        do { try PrivateFiles.writeAtomically(message, to: staged.temporary) } catch {
            staged.discard()
            throw ServerError.storage("the outbox could not take the message (\(error))")
        }
        return staged
    }

    /// Writes one message and hands it off; returns the file's URL in `new/`.
    @discardableResult
    public func write(_ message: Data) throws -> URL {
        let staged = try stage(message)
        try staged.handOff()
        return staged.final
    }

    /// The messages waiting in `new/`, oldest name first.
    public func pending() -> [URL] {
        let folder = root.appendingPathComponent("new", isDirectory: true)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { folder.appendingPathComponent($0) }
    }

    /// Maildir's unique name: `<seconds>.M<microseconds>P<pid>R<random>.<host>`.
    ///
    /// The seconds (ten digits until 2286) and the microseconds are zero-padded to fixed widths so
    /// that names sort in the order the messages were written, which ``pending()`` promises: an
    /// unpadded `M99` sorted after `M123456` of the same second.
    public static func uniqueName(at time: timeval? = nil) -> String {
        let now = time ?? Outbox.now()
        let random = UInt64.random(in: 0...UInt64.max)
        let host = ProcessInfo.processInfo.hostName.replacingOccurrences(of: "/", with: "\\057")
            .replacingOccurrences(of: ":", with: "\\072")
        let seconds = String(now.tv_sec), micros = String(now.tv_usec)
        let paddedSeconds = String(repeating: "0", count: max(0, 10 - seconds.count)) + seconds
        let paddedMicros = String(repeating: "0", count: max(0, 6 - micros.count)) + micros
        return "\(paddedSeconds).M\(paddedMicros)P\(getpid())R\(String(random, radix: 16)).\(host)"
    }

    static func now() -> timeval {
        var now = timeval()
        gettimeofday(&now, nil)
        return now
    }
}

extension Outbox {
    /// The outbox's folder name inside the server's data folder.
    public static let folderName = "outbox"
}

/// Delivery of mail from outside into a server's data folder: what `rampart server deliver`
/// runs (the local delivery agent an MTA calls, like `sendmail`), with or without the server
/// running (SQLite's WAL lets both write).
///
/// Trust-model row **inbox (low)**: see `Mailbox/deliverFromOutside(_:recipients:)`.
public enum OutsideDelivery {
    /// The largest message accepted on standard input.
    public static let maximumMessageSize = 64 * 1024 * 1024

    /// Delivers `message` to `recipients` (or its To/Cc when empty) of the server whose data
    /// folder is `dataDirectory`; returns one new message id per local recipient.
    /// - Throws: ``ServerError/unknownRecipient(_:)`` (nothing stored), ``ServerError/badRequest(_:)``
    ///   for an unreadable message, ``ServerError/startFailed(_:)`` when there is no server data there.
    public static func deliver(_ message: Data, recipients: [String], dataDirectory: URL,
                               clock: any RampartClock = SystemClock(), storage: ServerStorageOpener? = nil) throws -> [String] {
        guard message.count <= maximumMessageSize else {
            throw ServerError.payloadTooLarge(limit: maximumMessageSize)
        }
        let database = dataDirectory.appendingPathComponent("backend.sqlite")
        guard storage != nil || FileManager.default.fileExists(atPath: database.path) else {
            throw ServerError.startFailed("\(dataDirectory.path) holds no server data (start the server there once)")
        }
        let store = try BackendStore.open(dataDirectory, with: storage)
        let logger = ServerLogHandler.logger(file: dataDirectory.appendingPathComponent("server.log"), toStandardError: false)
        let push = PushDelivery(store: store, directory: dataDirectory.appendingPathComponent("push", isDirectory: true), logger: logger)
        let mailbox = Mailbox(store: store, push: push, clock: clock)
        return try mailbox.deliverFromOutside(message, recipients: recipients)
    }
}
