import Foundation
import MIME
import MailSafety
import MailboxCrypto
import OpenPGP
import PGPMIME
import RampartAPI
import RampartCore
import SealedStore

/// Mail from outside Rampart that arrived protected with OpenPGP — PGP/MIME (RFC 3156) or inline
/// PGP — and that the server therefore stored as it came: it cannot read it, so the copy it made
/// shows only the encrypted part (or the armour) and the original holds the real message. The
/// client opens that original with the user's key and verifies it against the sender's pinned key.
///
/// Trust-model row **inbox (low)**: the original is hostile input read by `PGPMIME`; a modified
/// ciphertext is refused (exit 7), a signature that does not verify is reported as bad and the
/// content is still shown as unverified. The server can only withhold the protection (show the
/// encrypted copy), never make a message look signed.
public enum OutsidePGPMail {
    /// The attachment types a PGP/MIME message leaves in the server's copy.
    static let markerTypes: Set<String> = ["application/pgp-encrypted", "application/pgp-signature"]

    /// Whether a stored message may be PGP-protected mail from outside, worth opening its
    /// original: its copy lists a PGP/MIME version or signature part, or its body shows an armour
    /// block. (Only a hint for fetching the original; ``open(_:keys:verifiers:)`` decides.)
    public static func mayBeProtected(body: String, attachmentTypes: [String]) -> Bool {
        attachmentTypes.contains { markerTypes.contains($0.lowercased()) }
            || body.contains("-----BEGIN PGP MESSAGE-----") || body.contains("-----BEGIN PGP SIGNED MESSAGE-----")
    }

    /// A protected message, opened.
    public struct Opened: Sendable {
        /// How it was protected.
        public var protection: PGPMIMEProtection
        /// Its signature, checked against the keys for its From address.
        public var signature: PGPSignatureStatus
        /// The claimed sender (the From address of the original).
        public var sender: String
        /// The message as the client stores and shows it (subject, people, HTML, attachments).
        public var converted: ConvertedMail
    }

    /// Opens an original: `nil` when it is not PGP-protected; else the decrypted and verified
    /// content. `verifiers` gives the keys that may vouch for the From address (the pinned key).
    /// - Throws: `PGPMIME/PGPMIMEError/malformed(_:)` and `OpenPGP/OpenPGPError` (tampered, no
    ///   key to decrypt with) from `PGPMIME/open(_:decryptingWith:verifyingWith:limits:)`.
    public static func open(_ original: [UInt8], keys: [PGPPrivateKey],
                            verifiers: (String) async throws -> [PGPPublicKey]) async throws -> Opened? {
        let message = MIMEMessage(bytes: original)
        guard PGPMIME.protection(of: message) != .none else { return nil }
        let sender = message.from.first?.address.lowercased() ?? ""
        let opened = try PGPMIME.open(original, decryptingWith: keys, verifyingWith: try await verifiers(sender))
        return Opened(protection: opened.protection, signature: opened.signature, sender: sender,
                      converted: ConvertedMail(opened.message))
    }

    /// What `rampart send` says about the outside recipients: encrypted with OpenPGP to their
    /// pinned keys, or sent in clear but signed (and who had no key).
    public static func sendLine(outside: [String], keys: [String: PGPPublicKey]) -> String? {
        guard !outside.isEmpty else { return nil }
        let (protection, withoutKey) = PGPMIME.outgoingProtection(recipients: outside, keys: keys)
        switch protection {
        case .encrypted:
            return "End-to-end encrypted with OpenPGP (PGP/MIME, signed) to the pinned keys of: \(outside.joined(separator: ", ")) (outside this server, through the outbox)."
        case .signed:
            return "NOT end-to-end encrypted: \(outside.joined(separator: ", ")) (outside this server: sent in clear through the outbox, "
                + "signed with your key as PGP/MIME multipart/signed; no pinned key for \(withoutKey.joined(separator: ", ")))."
        }
    }
}

extension MessageReader {
    /// When `message` is PGP-protected mail from outside (stored as it came): the message as its
    /// opened original shows it (subject and body decrypted or verified) and the signature verdict
    /// against the pinned key of its From address; `nil` for every other message.
    /// - Throws: what ``OutsidePGPMail/open(_:keys:verifiers:)`` throws (a modified ciphertext:
    ///   tampered, exit 7, nothing shown).
    func openOutsidePGP(_ message: MailMessage, api: APIClient) async throws
        -> (message: MailMessage, signature: SignatureVerdict, attachments: [ConvertedMail.Attachment])? {
        let attachments = try account.store().mail.attachments(messageID: message.id)
        guard OutsidePGPMail.mayBeProtected(body: message.body, attachmentTypes: attachments.map(\.mimeType)) else { return nil }
        let keys = try account.mailboxKeys()
        let session = try account.session()
        let original: Data
        do {
            original = try await MailExporter(api: api, keys: keys, serverUserID: session.serverUserID).messageBytes(of: message.id)
        } catch ClientError.notFound {
            return nil
        }
        let check = SignatureCheck(account: account, ownKeys: keys.map(\.publicKey), ownAddresses: session.addresses, api: api)
        guard let opened = try await OutsidePGPMail.open([UInt8](original), keys: keys,
                                                         verifiers: { try await check.verifiers(for: $0) }) else { return nil }
        var shown = message
        shown.subject = opened.converted.content.subject
        shown.body = opened.converted.content.html
        return (shown, SignatureVerdict(opened.signature, notices: await check.notices), opened.converted.attachments)
    }

    /// The part with Content-ID `contentID` inside PGP-protected mail from outside, opened again
    /// from its original (such parts are not kept in the store or the attachment cache); `nil`
    /// when message `id` is not such mail or has no such part. The caller zeroizes the bytes.
    public func protectedPart(of id: String, contentID: String, api: APIClient) async throws -> EmbeddedAttachment? {
        guard let outside = try await openOutsidePGP(message(id), api: api) else { return nil }
        var found: EmbeddedAttachment?
        for var part in outside.attachments {
            if found == nil, part.contentID == contentID {
                found = EmbeddedAttachment(mimeType: part.mimeType, bytes: part.data)
            } else {
                part.data.withUnsafeMutableBytes { SecretBytes.zeroize($0) }
            }
        }
        return found
    }
}

extension Optional {
    /// `flatMap` with an asynchronous transform.
    func asyncFlatMap<U>(_ transform: (Wrapped) async throws -> U?) async rethrows -> U? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
