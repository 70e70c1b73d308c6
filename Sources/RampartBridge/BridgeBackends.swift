import Foundation
import IMAPServer
import MIME
import MailboxCrypto
import RampartAPI
import RampartClient
import RampartCore
import SMTPServer

/// The bridge's login check, shared by IMAP and SMTP: the username is one of the account's
/// addresses (or its username), the password the device's bridge password.
///
/// Trust-model row **bridge password (moderate)**: compared in constant time (`SecretBytes`);
/// while the account is locked every login is refused as unavailable, whatever the password.
struct BridgeLogin: Sendable {
    let account: BridgeAccount
    let username: String
    let password: SecretBytes

    func check(_ user: String, _ given: String) async -> Bool {
        let names = (account.addresses + [username]).map { $0.lowercased() }
        var bytes = Array(given.utf8)
        let offered = SecretBytes(consuming: &bytes)
        defer { offered.wipe() }
        let match = (try? offered.constantTimeEquals(password)) ?? false
        return match && names.contains(user.lowercased())
    }
}

/// ``IMAPBackend`` over ``BridgeAccount``.
struct BridgeIMAPBackend: IMAPBackend {
    let login: BridgeLogin

    func authenticate(username: String, password: String) async throws -> any IMAPAccount {
        try await login.account.ensureUnlocked()
        guard await login.check(username, password) else { throw IMAPBackendError.authenticationFailed }
        return BridgeIMAPAccount(account: login.account)
    }
}

/// One IMAP login's view of the account (mailbox rules: ``BridgeAccount``).
struct BridgeIMAPAccount: IMAPAccount {
    let account: BridgeAccount

    func mailboxes() async throws -> [IMAPMailboxInfo] {
        try await account.mailboxes().map { IMAPMailboxInfo(name: $0.name, attributes: $0.attributes) }
    }
    func snapshot(of mailbox: String) async throws -> IMAPMailboxSnapshot {
        try await account.snapshot(try await account.mailbox(mailbox)).snapshot
    }
    func messageBytes(in mailbox: String, uid: UInt32) async throws -> [UInt8] {
        try await account.messageBytes(try await account.mailbox(mailbox), uid: uid)
    }
    func storeFlags(in mailbox: String, uids: [UInt32], operation: IMAPFlagOperation, flags: [String]) async throws -> [UInt32: [String]] {
        try await account.storeFlags(try await account.mailbox(mailbox), uids: uids, operation: operation, flags: flags)
    }
    func copy(uids: [UInt32], from source: String, to destination: String) async throws -> IMAPCopyResult {
        try await account.copy(try await account.mailbox(source), uids: uids, to: try await account.mailbox(destination), move: false)
    }
    func move(uids: [UInt32], from source: String, to destination: String) async throws -> IMAPCopyResult {
        try await account.copy(try await account.mailbox(source), uids: uids, to: try await account.mailbox(destination), move: true)
    }
    func expunge(in mailbox: String, uids: [UInt32]?) async throws -> [UInt32] {
        try await account.expunge(try await account.mailbox(mailbox), uids: uids)
    }
    func append(to mailbox: String, message: [UInt8], flags: [String], internalDate: Date?) async throws -> (uidValidity: UInt32, uid: UInt32) {
        try await account.append(try await account.mailbox(mailbox), message: message, flags: flags, internalDate: internalDate)
    }
    func create(mailbox: String) async throws { try await account.create(mailbox) }
    func delete(mailbox: String) async throws {
        _ = try await account.mailbox(mailbox)
        throw IMAPBackendError.notPermitted("Mailboxes are deleted in Rampart, not through the bridge (their mail would go with them)")
    }
    func rename(mailbox: String, to newName: String) async throws {
        _ = try await account.mailbox(mailbox)
        throw IMAPBackendError.notPermitted("Mailboxes are renamed in Rampart, not through the bridge")
    }
    func changes(in mailbox: String) async -> AsyncStream<Void> { await account.watch() }
}

/// ``SubmissionBackend`` over the account's send path.
struct BridgeSubmissionBackend: SubmissionBackend {
    let login: BridgeLogin

    func authenticate(username: String, password: String) async throws -> any SubmissionAccount {
        guard await login.account.locked == false, login.account.isUnlocked() else {
            throw SubmissionError.temporaryFailure(BridgeAccount.lockedText)
        }
        guard await login.check(username, password) else { throw SubmissionError.authenticationFailed }
        return BridgeSubmission(account: login.account)
    }
}

/// Sending one message: it goes through `SendFlow` as `rampart send` does — OpenPGP to Rampart
/// users (keys pinned on first use), PGP/MIME to pinned outside keys, clear text through the
/// outbox otherwise — and the server keeps the one Sent copy.
///
/// Trust-model row **outbox (moderate)**: a recipient who does not get end-to-end encryption is
/// named in the final reply and in the bridge's log.
struct BridgeSubmission: SubmissionAccount {
    let account: BridgeAccount

    func checkSender(_ address: String) async throws {
        guard account.addresses.contains(where: { $0.caseInsensitiveCompare(address) == .orderedSame }) else {
            throw SubmissionError.senderRefused(address)
        }
    }

    func submit(_ envelope: SMTPEnvelope, message: [UInt8]) async throws -> SubmissionReceipt {
        let parsed = MIMEMessage(bytes: message)
        for from in parsed.from { try await checkSender(from.address) }
        guard account.isUnlocked() else { throw SubmissionError.temporaryFailure(BridgeAccount.lockedText) }
        let converted = ConvertedMail(bytes: message)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-bridge-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var files: [URL] = []
        if !converted.attachments.isEmpty {
            try PrivateFiles.ensurePrivateDirectory(folder)
            for (index, attachment) in converted.attachments.enumerated() {
                let name = attachment.name.isEmpty ? "attachment-\(index + 1)" : attachment.name.replacingOccurrences(of: "/", with: "_")
                let sub = folder.appendingPathComponent(String(index))
                try PrivateFiles.ensurePrivateDirectory(sub)
                let file = sub.appendingPathComponent(name)
                try PrivateFiles.writeAtomically(attachment.data, to: file)
                files.append(file)
            }
        }
        let mail = OutgoingMail(to: envelope.recipients, subject: converted.content.subject, body: converted.content.html,
                                isPlainText: false, attachments: files)
        let result: SendFlow.Result
        do {
            result = try await account.send(mail)
        } catch let error as ClientError {
            if case .badInput(let reason) = error { throw SubmissionError.messageRefused(reason) }
            throw SubmissionError.temporaryFailure("\(error)")
        }
        await account.rememberSent(messageID: parsed.messageID, copy: result.response.messageIds.first)
        await account.tick()
        var text = "Sent to \(envelope.recipients.joined(separator: ", "))"
        if let outside = result.outsideLine {
            text += ". " + outside
            account.log("sent: \(outside)")
        }
        return SubmissionReceipt(text: text)
    }
}
