import Foundation
import MIME
import MailboxCrypto
import OpenPGP
import PGPMIME
import RampartAPI
import RampartCore

/// A message the user writes: recipients, subject, a body (HTML or plain text) and files.
///
/// `request(from:signer:recipientKeys:outside:date:)` turns it into what the server takes: the
/// body and attachments encrypted on this device to every recipient's key and the sender's own,
/// signed by the sender (OpenPGP), and — only when some recipient is outside this server — the
/// same message as a standard RFC 5322 / MIME message (multipart/alternative for an HTML body,
/// attachments as multipart/mixed, encoded words for non-ASCII headers), which is what those
/// recipients receive.
///
/// Trust-model row **outbox (moderate)**: what leaves for a recipient outside this server is not
/// end-to-end encrypted; `SendResponse/deliveries` says which recipients those were, and the
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

    /// The send request from `sender`, encrypted and signed on this device: the body (a
    /// `MessageContent`) and each attachment as OpenPGP messages to every key of
    /// `recipientKeys` and the sender's own, signed by `signer`, bound to a fresh submission id.
    /// Recipients in `outside` (no key in this server's directory) need the message as MIME: it
    /// is added in clear only then.
    /// - Throws: ``ClientError/badInput(_:)`` for an unreadable or too large file, or a recipient
    ///   that is not an address.
    public func request(from sender: Correspondent, signer: PGPPrivateKey, recipientKeys: [PGPPublicKey],
                        outside: [String], outsideKeys: [String: PGPPublicKey] = [:], date: Date = Date()) throws -> SendRequest {
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
        var mime: String?
        if !outside.isEmpty {
            // PGP/MIME for the outside (OutsidePGPMail): encrypted to their pinned keys when all
            // have one, else signed; encrypted to every recipient here too, who keep it as the original.
            do {
                mime = Data(try PGPMIME.outgoing(try builder.build(), recipients: outside, keys: outsideKeys, signer: signer,
                                                 alsoEncryptingTo: recipientKeys).bytes).base64EncodedString()
            } catch {
                throw ClientError.badInput("The message cannot be written as MIME: \(error)")
            }
        }
        let id = SendRequest.newID()
        let keys = [signer.publicKey] + recipientKeys.filter { $0.fingerprint != signer.fingerprint }
        let content = MessageContent(subject: subject, sender: sender, to: builder.to.map { Correspondent(name: $0.name ?? "", address: $0.address) },
                                     html: html, messageId: builder.messageID)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var json = try encoder.encode(content)
        defer { json.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
        let encryptedBody = try MailPart.seal(json, to: keys, signedBy: signer, messageID: id, part: SealedPartName.body)
        var parts: [OutgoingAttachment] = []
        for (index, file) in files.enumerated() {
            let encrypted = try MailPart.seal(file.data, to: keys, signedBy: signer, messageID: id, part: SealedPartName.attachment(index))
            parts.append(OutgoingAttachment(name: file.name, mimeType: file.type, size: file.data.count,
                                            encryptedData: encrypted.base64EncodedString()))
        }
        var notificationSubject = subject
        while notificationSubject.utf8.count > SendRequest.maximumSubjectBytes { notificationSubject.removeLast() }
        return SendRequest(to: builder.to.map(\.address), id: id, subject: notificationSubject,
                           encryptedBody: encryptedBody.base64EncodedString(), attachments: parts.isEmpty ? nil : parts, mime: mime)
    }
}

/// Sending: recipients' keys from the pins (or the key directory, pinned on first use), the
/// message encrypted and signed on this device, then submitted.
///
/// Trust-model rows **outbox (moderate)** and **inbox (low)**: a recipient is encrypted to with
/// the key pinned on this device; a different key the server offers is reported and not used.
public enum SendFlow {
    /// What a send did.
    public struct Result: Sendable {
        public var response: SendResponse
        /// Key pinning news (new pins, different keys offered by the server).
        public var notices: [String]
        /// What happened to the recipients outside this server (``OutsidePGPMail/sendLine(outside:keys:)``).
        public var outsideLine: String?
    }

    /// Sends `mail` from `sender`, signed by `signer`. With `contacts` the recipients' keys are
    /// pinned (first use) and the pins used; without (a client with no local store), the key
    /// directory's keys are used as served.
    public static func send(_ mail: OutgoingMail, from sender: Correspondent, signer: PGPPrivateKey, api: APIClient,
                            contacts: ContactKeys?, date: Date = Date()) async throws -> Result {
        var keys: [PGPPublicKey] = []
        var outside: [String] = []
        var notices: [String] = []
        var outsideKeys: [String: PGPPublicKey] = [:]
        for address in mail.to {
            if let contacts {
                let lookup = try await contacts.lookup(address, api: api)
                // Trust on first use: a key pinned from the directory that changed stops the send.
                if let offered = lookup.offeredFingerprint, let pinned = lookup.pinned, pinned.source == .server {
                    throw ContactKeyChanged(address: pinned.address, pinned: pinned.fingerprint, offered: offered, pinnedSince: pinned.firstSeen)
                }
                // Key transparency: never encrypt to a directory key the log does not prove.
                if case .failed(let reason) = lookup.transparency { throw KeyTransparencyFailure(address: address, reason: reason) }
                if let notice = lookup.notice { notices.append(notice) }
                if let pinned = lookup.pinned { keys.append(try pinned.publicKey()) }
                if !lookup.inDirectory {
                    outside.append(address)
                    if let pinned = lookup.pinned { outsideKeys[address.lowercased()] = try pinned.publicKey() }
                }
            } else {
                do {
                    let served = try await api.publicKey(of: address)
                    do { keys.append(try PGPPublicKey(armored: served.publicKey)) } catch {
                        throw ClientError.malformedResponse("the key directory's key for \(address) is not an OpenPGP key")
                    }
                } catch ClientError.http(404, _) {
                    outside.append(address)
                }
            }
        }
        let request = try mail.request(from: sender, signer: signer, recipientKeys: keys, outside: outside,
                                       outsideKeys: outsideKeys, date: date)
        return Result(response: try await api.send(request), notices: notices,
                      outsideLine: OutsidePGPMail.sendLine(outside: outside, keys: outsideKeys))
    }
}
