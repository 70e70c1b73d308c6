import FileVault
import Foundation
import MailboxCrypto
import OpenPGP
import RampartAPI
import RampartCore
import SealedStore

/// Attachments: metadata from the sealed store, contents from the FileVault cache or the server.
///
/// Trust-model rows **database (critical)** — names and types are sealed in the store;
/// **device storage (low)** / *Attachments* — "kept encrypted in a cache for a few days or until
/// logout": an attachment fetched from the server (an OpenPGP `MailPart`) is opened once and
/// re-sealed into the account's FileVault `AttachmentCache` under a MainKey sub-key bound to
/// the user and the attachment id, with a sealed index, a time-to-live, a size cap with LRU
/// eviction and purge on logout and wipe; and **cleartext files (critical)** — previews are
/// FileVault `CleartextLease`s, ended by the caller, by a lock, or by the next start's sweep
/// after a crash.
public struct AttachmentVault: Sendable {
    public let account: ClientAccount
    /// The account's file vault (kept open as long as this value: its leases live in it).
    public let vault: Vault

    /// Opens the account's file vault (sweeping cleartext a crashed process left behind).
    /// - Throws: `FileVaultError`.
    public init(account: ClientAccount, configuration: Vault.Configuration = Vault.Configuration()) throws {
        self.account = account
        vault = try Vault(root: account.fileVaultRoot, provider: account.keys, clock: account.clock,
                          configuration: configuration)
    }

    /// What the record's `keyPackets` column holds (sealed with the record): the attachment's
    /// position in its message (the part name it is bound to) and its Content-ID. Each
    /// attachment is a whole OpenPGP message with its own key packets, so the column has no
    /// key packets to keep.
    struct Reference: Codable {
        var position: Int
        var contentId: String?
    }

    static func encodeReference(contentID: String?, position: Int) -> Data {
        (try? JSONEncoder().encode(Reference(position: position, contentId: contentID))) ?? Data()
    }

    static func reference(of attachment: AttachmentMetadata) -> Reference? {
        try? JSONDecoder().decode(Reference.self, from: attachment.keyPackets)
    }

    /// The Content-ID of an embedded image.
    public static func contentID(of attachment: AttachmentMetadata) -> String? {
        guard let id = reference(of: attachment)?.contentId, !id.isEmpty else { return nil }
        return id
    }

    /// The attachment's record. - Throws: ``ClientError/notFound(kind:id:)``.
    public func metadata(_ id: String) throws -> AttachmentMetadata {
        do { return try account.store().mail.attachment(id: id) } catch SealedStoreError.notFound {
            throw ClientError.notFound(kind: "attachment", id: id)
        }
    }

    /// The attachment's cleartext, in memory (fetched once, then from the encrypted cache).
    public func contents(of attachment: AttachmentMetadata, api: APIClient) async throws -> Data {
        if try vault.attachments.contains(attachment.id) {
            do { return try vault.attachments.get(attachment.id) } catch FileVaultError.attachmentTampered {
                // The cache dropped the damaged entry; fetch it again below.
            }
        }
        return try await fetchIntoCache(attachment, api: api)
    }

    /// Opens a cleartext lease on the attachment; end it when the preview closes (a lock ends
    /// it too).
    public func lease(_ attachment: AttachmentMetadata, api: APIClient) async throws -> CleartextLease {
        if !(try vault.attachments.contains(attachment.id)) {
            var clear = try await fetchIntoCache(attachment, api: api)
            clear.withUnsafeMutableBytes { SecretBytes.zeroize($0) }
        }
        return try vault.attachments.lease(attachment.id)
    }

    /// Removes expired cache entries. - Returns: how many.
    @discardableResult
    public func prune() -> Int {
        (try? vault.attachments.purgeExpired()) ?? 0
    }

    /// Downloads the sealed part, opens it with the mailbox key and seals the cleartext into the
    /// cache. - Returns: the cleartext (the caller zeroizes it when done).
    func fetchIntoCache(_ attachment: AttachmentMetadata, api: APIClient) async throws -> Data {
        var clear = try await fetch(attachment, api: api)
        do {
            try vault.attachments.put(clear, attachment: attachment.id, fileName: attachment.name, mimeType: attachment.mimeType)
        } catch {
            clear.withUnsafeMutableBytes { SecretBytes.zeroize($0) }
            throw error
        }
        return clear
    }

    /// Downloads the sealed part and opens it with the mailbox key.
    func fetch(_ attachment: AttachmentMetadata, api: APIClient) async throws -> Data {
        let sealed: Data
        do { sealed = try await api.attachment(attachment.id) } catch ClientError.http(404, _) {
            throw ClientError.notFound(kind: "attachment", id: attachment.id)
        }
        guard let position = Self.reference(of: attachment)?.position else {
            throw ClientError.tampered("The record of attachment \(attachment.id) (run `rampart sync` again)")
        }
        let keys = try account.mailboxKeys()
        // A signed message's attachments must be signed by the same key as its body: the server
        // could encrypt a part of its own to this key under the message's binding.
        let body = try await signerOfBody(attachment.messageID, keys: keys, api: api)
        var opened = try MailPart.open(sealed, with: keys, verifyingWith: body.verifiers, messageID: attachment.messageID,
                                       part: SealedPartName.attachment(position))
        if case .verified(let signer) = body.status {
            guard case .verified(let attachmentSigner) = opened.signature, attachmentSigner == signer else {
                opened.data.withUnsafeMutableBytes { SecretBytes.zeroize($0) }
                throw ClientError.tampered("Attachment \(attachment.id) (not signed by the key that signed its message)")
            }
        }
        return opened.data
    }
}

extension AttachmentVault {
    /// The signature status of message `messageID`'s body and the keys that verified it.
    func signerOfBody(_ messageID: String, keys: [PGPPrivateKey], api: APIClient) async throws
        -> (status: PGPSignatureStatus, verifiers: [PGPPublicKey]) {
        let response = try await api.message(messageID)
        guard let sealed = Data(base64Encoded: response.sealedBody) else {
            throw ClientError.malformedResponse("the sealed body of message \(messageID) is not base64")
        }
        var opened = try MailPart.open(sealed, with: keys, messageID: messageID, part: SealedPartName.body)
        defer { opened.data.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
        if case .none = opened.signature { return (.none, []) }
        guard let content = try? JSONDecoder().decode(MessageContent.self, from: opened.data) else {
            throw ClientError.malformedResponse("the body of message \(messageID) is not a message")
        }
        let check = SignatureCheck(account: account, ownKeys: keys.map(\.publicKey), ownAddresses: try account.session().addresses, api: nil)
        let verifiers = try await check.verifiers(for: content.sender.address)
        let status = try await check.status(of: opened.signature, sealed: sealed, claimedSender: content.sender.address,
                                            keys: keys, messageID: messageID)
        return (status, verifiers)
    }
}

extension ClientAccount {
    /// A cleartext lease holding a rendered (sanitized) message document, for a browser to open.
    ///
    /// Trust-model row **cleartext files (critical)**: FileVault's `CleartextLease` in the
    /// account's vault preview area (`<home>/vault/<user>/previews`, 0700, excluded from
    /// backups): the file is 0600, overwritten and deleted by `CleartextLease/end()`, when the
    /// lease is released, on a lock in this process, by ``CleartextSweep`` at `lock`, autolock
    /// and the next start of any command (also after `kill -9`), and by the vault's wipe at logout.
    /// - Throws: ``ClientError/file(_:)`` when the folder cannot be prepared, `FileVaultError`
    ///   when the file cannot be written.
    public func leaseDocument(_ document: String, name: String = "message.html") throws -> CleartextLease {
        // In the file vault's preview area, like every other cleartext: swept at lock, autolock,
        // logout and the next start (``CleartextSweep``); ended by a lock seen in this process.
        try PrivateFiles.ensurePrivateDirectory(fileVaultRoot)
        try PrivateFiles.ensurePrivateDirectory(Vault.folder(root: fileVaultRoot, user: userID))
        return try PreviewArea.lease(root: Vault.previewsFolder(root: fileVaultRoot, user: userID), provider: keys,
                                     fileName: name, contents: Data(document.utf8))
    }
}
