import Foundation
import MailboxCrypto
import OpenPGP
import RampartAPI
import RampartCore
import SealedStore

/// How far a long operation (sync, drive transfer) has come. Carries counts and a phase name
/// only, never content (trust-model row **database**: progress output must not leak mail).
public struct TransferProgress: Sendable, Equatable {
    /// What is being done (`messages`, `upload report.pdf`, ...).
    public var phase: String
    public var done: Int64
    /// Nil while unknown.
    public var total: Int64?
    public init(phase: String, done: Int64, total: Int64?) { self.phase = phase; self.done = done; self.total = total }
}

public typealias ProgressHandler = @Sendable (TransferProgress) -> Void

/// What one sync applied (counts only; trust-model row **database (critical)**: the content went
/// into the sealed store).
public struct SyncSummary: Sendable, Equatable {
    public var messagesStored = 0
    public var messagesDeleted = 0
    public var labels = 0
    public var attachments = 0
    public var cursor: Int64 = 0
    /// Messages not encrypted to the account's current key at all (mail sealed to the key an
    /// operator's reset replaced): skipped, never stored; they cannot be read again.
    public var messagesSealedToOldKeys = 0
}

/// Brings the sealed store up to date from the server's event stream.
///
/// Trust-model rows **database (critical)**, **device storage (low)** and **inbox (low)**:
/// message bodies arrive as OpenPGP messages (`MailPart`), are decrypted in memory with the
/// private key (itself opened with the MainKey) and checked against their binding to the
/// message, and are written only through `SealedStore`, which seals every sensitive column
/// under the MainKey. Signatures are verified when a message is read (``SignatureCheck``). The event cursor is sealed too. Attachment contents are not fetched here
/// (see ``AttachmentVault``); their metadata is.
public struct MailSync: Sendable {
    public let account: ClientAccount

    public init(account: ClientAccount) { self.account = account }

    /// Applies every event after the stored cursor.
    /// - Throws: `LockedError`, ``ClientError``, `MailboxCryptoError.tampered` for a modified part.
    public func run(api: APIClient, progress: ProgressHandler? = nil) async throws -> SyncSummary {
        let store = try account.store()
        // Signed in and unlocked (the session is read only to fail early and clearly otherwise).
        _ = try account.session()
        let keys = try account.mailboxKeys()
        var summary = SyncSummary()
        // Mail rows deleted, inserted, replayed or edited on disk (found by the store's row
        // authentication): start over from the first event, so the server's copy comes back.
        if try store.mail.needsResync() { try store.mail.discardForResync() }
        var cursor = Int64(try store.mail.eventCursor() ?? "0") ?? 0
        let firstSync = cursor == 0
        var labelsDirty = firstSync
        var done: Int64 = 0
        while true {
            let page = try await api.events(since: cursor)
            // The last action per object wins (a message created then deleted is just deleted).
            var latest: [String: APIEvent] = [:]
            var order: [String] = []
            for event in page.events where event.kind == .message {
                if latest[event.objectId] == nil { order.append(event.objectId) }
                latest[event.objectId] = event
            }
            if page.events.contains(where: { $0.kind == .label }) { labelsDirty = true }
            let total = done + Int64(order.count)
            if labelsDirty {
                let labels = try await api.labels()
                for (index, label) in labels.enumerated() {
                    try store.mail.save(label: MailLabel(id: label.id, kind: Self.isSystem(label.id) ? 0 : 1,
                                                         sortOrder: index, name: label.name, color: ""))
                }
                summary.labels = labels.count
                labelsDirty = false
            }
            for id in order {
                guard let event = latest[id] else { continue }
                if event.action == .delete {
                    if try store.mail.deleteMessage(id: id) { summary.messagesDeleted += 1 }
                } else {
                    let response: MessageResponse
                    do {
                        response = try await api.message(id)
                    } catch ClientError.http(404, _) {
                        _ = try store.mail.deleteMessage(id: id)
                        continue
                    }
                    let message: MailMessage, attachments: [AttachmentMetadata]
                    do {
                        (message, attachments) = try Self.open(response, keys: keys)
                    } catch MailboxCryptoError.tampered(let what) {
                        // Not for this key at all (an account reset made new keys): skipped.
                        // Anything else that does not open stays an error.
                        guard Self.isSealedToAnotherKey(response, keys: keys) else { throw MailboxCryptoError.tampered(what) }
                        summary.messagesSealedToOldKeys += 1
                        done += 1
                        continue
                    }
                    try store.mail.insert(message: message)
                    for attachment in attachments { try store.mail.save(attachment: attachment) }
                    summary.messagesStored += 1
                    summary.attachments += attachments.count
                }
                done += 1
                progress?(TransferProgress(phase: "messages", done: done, total: total))
            }
            cursor = max(cursor, page.cursor)
            try store.mail.setEventCursor(String(cursor))
            if !page.more { break }
        }
        summary.cursor = cursor
        return summary
    }

    static func isSystem(_ id: String) -> Bool {
        [SystemLabel.inbox, SystemLabel.sent, SystemLabel.archive, SystemLabel.trash].contains(id)
    }

    /// Whether the body has no encrypted session key for `keys` at all (RNP finds no decryption
    /// key), as opposed to one that is modified or moved.
    static func isSealedToAnotherKey(_ response: MessageResponse, keys: [PGPPrivateKey]) -> Bool {
        guard let sealed = Data(base64Encoded: response.sealedBody) else { return false }
        do {
            var opened = try OpenPGP.decrypt(sealed, with: keys, verifyingWith: [])
            opened.data.withUnsafeMutableBytes { SecretBytes.zeroize($0) }
            return false
        } catch OpenPGPError.noDecryptionKey {
            return true
        } catch {
            return false
        }
    }

    /// Opens a message from the server into the store's records: decrypts its body and checks
    /// its binding to the message (the signature is verified when it is read, against the
    /// sender's key pinned then: ``MessageReader/verify(_:api:)``).
    /// - Throws: `MailboxCryptoError.tampered` when the body does not open (modified, moved,
    ///   another key): nothing of it is stored.
    public static func open(_ response: MessageResponse, keys: PGPPrivateKey) throws -> (MailMessage, [AttachmentMetadata]) {
        try open(response, keys: [keys])
    }

    /// Opens a message with any of the account's address keys (the same checks as with one key).
    public static func open(_ response: MessageResponse, keys: [PGPPrivateKey]) throws -> (MailMessage, [AttachmentMetadata]) {
        guard let sealed = Data(base64Encoded: response.sealedBody) else {
            throw ClientError.malformedResponse("the sealed body of message \(response.id) is not base64")
        }
        var opened = try MailPart.open(sealed, with: keys, messageID: response.id, part: SealedPartName.body)
        defer { opened.data.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
        let content: MessageContent
        do { content = try JSONDecoder().decode(MessageContent.self, from: opened.data) } catch {
            throw ClientError.malformedResponse("the body of message \(response.id) is not a message: \(error)")
        }
        var flags: MessageFlags = []
        if response.unread { flags.insert(.unread) }
        if !response.attachments.isEmpty { flags.insert(.hasAttachments) }
        let message = MailMessage(
            id: response.id, conversationID: response.conversationId, time: response.time, size: response.size,
            flags: flags, labelIDs: response.labelIds, subject: content.subject,
            sender: MailAddress(name: content.sender.name, address: content.sender.address),
            recipients: content.to.map { MailAddress(name: $0.name, address: $0.address) }, body: content.html)
        let attachments = response.attachments.enumerated().map { position, info in
            AttachmentMetadata(id: info.id, messageID: response.id, size: Int64(info.size), name: info.name, mimeType: info.mimeType,
                               keyPackets: AttachmentVault.encodeReference(contentID: info.contentId, position: position))
        }
        return (message, attachments)
    }
}
