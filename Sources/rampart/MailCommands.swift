import ArgumentParser
import Foundation
import Keychain
import MailSafety
import RampartAPI
import RampartCLIKit
import RampartClient
import RampartCore
import SealedStore

// MARK: - sync, list

struct SyncCommand: UnlockedAccountCommand {
    static let configuration = CommandConfiguration(commandName: "sync", abstract: "Fetch new mail into the sealed local store.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var pinInput: PINOptions
    @Flag(name: .customLong("rotate-push-keys"), help: "Replace this session's push key pair now and register the new one with the server (otherwise done when the pair is 7 days old).") var rotatePushKeys = false

    func run(with context: AccountSession) async throws {
        let bar = ProgressBar()
        let (summary, rotation) = try await context.withAPI { api in
            let summary = try await MailSync(account: context.account).run(api: api, progress: bar.handler)
            // Push keys rotate here (on schedule or on request) and never after a bad push.
            if rotatePushKeys {
                return (summary, try await PushKeyRotation.run(account: context.account, api: api, force: true))
            }
            do {
                return (summary, try await PushKeyRotation.run(account: context.account, api: api))
            } catch {
                FileHandle.standardError.write(Data("rampart: warning: the scheduled push key rotation failed (the current key stays in use): \(error)\n".utf8))
                return (summary, PushKeyRotation.Outcome.notDue)
            }
        }
        bar.end()
        if case .rotated = rotation { print("Push keys rotated and registered with the server.") }
        print("Synced: \(summary.messagesStored) message\(summary.messagesStored == 1 ? "" : "s") stored, \(summary.messagesDeleted) deleted, \(summary.labels) labels, \(summary.attachments) attachments (event cursor \(summary.cursor)).")
        if summary.messagesSealedToOldKeys > 0 { FileHandle.standardError.write(Data("rampart: \(summary.messagesSealedToOldKeys) message(s) are sealed to the key an account reset replaced: they cannot be read and were skipped.\n".utf8)) }
    }
}

struct ListCommand: UnlockedAccountCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List messages of a label, or search them.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "A label name or id (default: Inbox).") var label: String?
    @Option(help: "Words to search for (sealed blind index: whole words).") var search: String?
    @Option(help: "At most this many messages.") var limit = 50
    @OptionGroup var pinInput: PINOptions

    func run(with context: AccountSession) async throws {
        let store = try context.account.store()
        let labels = try store.mail.labels()
        var messages: [MailMessage]
        if let search {
            let words = search.split(whereSeparator: { $0.isWhitespace }).map(String.init)
            let ids = try store.mail.search(MailSearchQuery(words: words, limit: limit))
            messages = try ids.map { try store.mail.message(id: $0) }
            if let label {
                let id = try Self.labelID(label, in: labels)
                messages = messages.filter { $0.labelIDs.contains(id) }
            }
        } else {
            let id = try Self.labelID(label ?? SystemLabel.inbox, in: labels)
            messages = try store.mail.messages(label: id, limit: limit)
        }
        if messages.isEmpty { print(search == nil ? "No messages (run `rampart sync`?)." : "No message matches."); return }
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        for message in messages {
            let unread = message.flags.contains(.unread) ? "*" : " "
            let clip = message.flags.contains(.hasAttachments) ? "@" : " "
            let from = TerminalTextLine.clean(message.sender.name.isEmpty ? message.sender.address : message.sender.name)
            print("\(unread)\(clip) \(message.id) \(formatter.string(from: Date(timeIntervalSince1970: TimeInterval(message.time))))  \(from.prefix(24).padding(toLength: 24, withPad: " ", startingAt: 0))  \(TerminalTextLine.clean(message.subject))")
        }
    }

    static func labelID(_ text: String, in labels: [MailLabel]) throws -> String {
        if labels.contains(where: { $0.id == text }) { return text }
        if let byName = labels.first(where: { $0.name.lowercased() == text.lowercased() }) { return byName.id }
        if labels.isEmpty { return text }
        throw RuntimeError.badInput("No label '\(text)'. Labels: \(labels.map(\.name).joined(separator: ", ")).")
    }
}

// MARK: - read, attachment

struct ReadCommand: UnlockedAccountCommand {
    static let configuration = CommandConfiguration(
        commandName: "read",
        abstract: "Show a message, sanitized: terminal text by default, or the HTML document with its CSP.",
        discussion: "Remote content (images, fonts, CSS backgrounds) is blocked unless --load-remote; trackers are always blocked. A line on stderr says what was blocked.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The message id.") var id: String
    @Flag(name: .customLong("load-remote"), help: "Load remote content for this message (CSP stage 3).") var loadRemote = false
    @Option(help: "Write the sanitized HTML document (with its CSP) to this file.") var html: String?
    @Flag(help: "Open the sanitized HTML document in the default browser.") var open = false
    @Flag(help: "Print the message as JSON (headers, signature, text, what was blocked).") var json = false
    @OptionGroup var pinInput: PINOptions

    func validate() throws {
        if html != nil && open { throw ValidationError("Choose --html FILE or --open, not both.") }
        if json && (html != nil || open) { throw ValidationError("--json prints the message; it does not combine with --html or --open.") }
    }

    /// The `--json` form: the signature as `{"status": verified|none|bad|unknownKey, "fingerprint": …}`.
    struct JSONMessage: Encodable {
        struct Signature: Encodable { var status: String; var fingerprint: String?; var keyId: String? }
        var id: String
        var from: String
        var to: [String]
        var time: Int64
        var subject: String
        var signature: Signature
        var remoteContent: String
        var blocked: String
        var text: String
    }

    func run(with context: AccountSession) async throws {
        let rendered = try await context.withAPI { api in  // a document for a browser: remote content inlined by the backend
            let made = try await MessageReader(account: context.account).render(id, loadRemote: loadRemote, api: api, proxy: html != nil || open ? MessageReader.inlineProxy : nil)
            return html != nil || open ? await MessageReader.inliningRemoteContent(made, api: api).0 : made
        }
        let message = rendered.message
        let signature = rendered.signature ?? SignatureVerdict(.none)
        for notice in signature.notices { FileHandle.standardError.write(Data("rampart: \(TerminalTextLine.clean(notice))\n".utf8)) }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let out = JSONMessage(id: message.id, from: message.sender.address, to: message.recipients.map(\.address), time: message.time,
                                  subject: message.subject,
                                  signature: .init(status: signature.status, fingerprint: signature.fingerprint, keyId: signature.keyID),
                                  remoteContent: rendered.remote.allowsRemote ? "loaded" : "blocked",
                                  blocked: rendered.blockedSummary, text: rendered.text)
            print(String(decoding: try encoder.encode(out), as: UTF8.self))
            return
        }
        print("From:    \(TerminalTextLine.clean(message.sender.name)) <\(TerminalTextLine.clean(message.sender.address))>")
        print("To:      \(message.recipients.map { TerminalTextLine.clean($0.address) }.joined(separator: ", "))")
        print("Date:    \(Date(timeIntervalSince1970: TimeInterval(message.time)))")
        print("Subject: \(TerminalTextLine.clean(message.subject))")
        print(signature.line)
        for attachment in rendered.attachments {
            let embedded = AttachmentVault.contentID(of: attachment) != nil ? " (embedded image)" : ""
            print("Attachment: \(attachment.id)  \(TerminalTextLine.clean(attachment.name))  \(attachment.mimeType)  \(attachment.size) bytes\(embedded)")
        }
        for attachment in rendered.protectedAttachments {
            let embedded = attachment.contentID != nil ? " (embedded image)" : ""
            print("Attachment: (inside the OpenPGP message)  \(TerminalTextLine.clean(attachment.name))  \(TerminalTextLine.clean(attachment.mimeType))  \(attachment.size) bytes\(embedded)")
        }
        if let html {
            let url = URL(fileURLWithPath: html)
            try PrivateFiles.writeAtomically(Data(rendered.document.utf8), to: url)
            print("Wrote the sanitized document (CSP: \(rendered.policy.headerValue)) to \(url.path).")
        } else if open {
            try Opener.openDocument(rendered.document, account: context.account)
        } else {
            print("")
            print(rendered.text)
        }
        for warning in rendered.settingsWarnings { FileHandle.standardError.write(Data("rampart: warning: \(warning)\n".utf8)) }
        FileHandle.standardError.write(Data("\(rendered.blockedSummary)\n".utf8))
        if !rendered.sanitized.report.trackers.isEmpty {
            for tracker in rendered.sanitized.report.trackers {
                FileHandle.standardError.write(Data("  tracker: \(TerminalTextLine.clean(tracker.url))\(tracker.vendor.map { " (\($0))" } ?? "")\n".utf8))
            }
        }
    }
}

struct AttachmentCommand: UnlockedAccountCommand {
    static let configuration = CommandConfiguration(
        commandName: "attachment",
        abstract: "Open or save an attachment.",
        discussion: """
        --open writes the cleartext to a private lease file, runs the opener ($RAMPART_OPENER, else xdg-open) \
        and deletes the cleartext when it returns. The previewer is not under Rampart's control: a file may \
        carry content it runs; that risk is yours.
        """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The attachment id (see `rampart read`).") var id: String
    @Flag(help: "Open it with the default application, through a cleartext lease.") var open = false
    @Option(help: "Save the cleartext to this path.") var save: String?
    @OptionGroup var pinInput: PINOptions

    func validate() throws {
        guard open != (save != nil) else { throw ValidationError("Choose --open or --save PATH.") }
    }

    func run(with context: AccountSession) async throws {
        let vault = try AttachmentVault(account: context.account)
        vault.prune()
        let attachment = try vault.metadata(id)
        if let save {
            var data = try await context.withAPI { try await vault.contents(of: attachment, api: $0) }
            defer { data.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
            let url = URL(fileURLWithPath: save)
            guard FileManager.default.createFile(atPath: url.path, contents: data, attributes: [.posixPermissions: 0o600]) else {
                throw RuntimeError.badInput("Cannot write \(url.path).")
            }
            print("Saved \(TerminalTextLine.clean(attachment.name)) (\(data.count) bytes) to \(url.path).")
        } else {
            let lease = try await context.withAPI { try await vault.lease(attachment, api: $0) }
            defer { lease.end() }
            FileHandle.standardError.write(Data("rampart: opening \(TerminalTextLine.clean(attachment.name)) from a cleartext lease; the previewer is not under Rampart's control.\n".utf8))
            let status = try Opener.open(try lease.url())
            lease.end()
            print("Closed \(TerminalTextLine.clean(attachment.name)); the cleartext lease was erased (opener exit status \(status)).")
        }
    }
}

// MARK: - send, notifications

struct SendCommand: UnlockedAccountCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a message (the body, HTML or text, is read from standard input).",
        discussion: """
        The body and attachments are encrypted on this device with OpenPGP to every recipient's key \
        on this server (pinned on first use; see `rampart contacts`) and your own, and signed with your \
        key. Recipients elsewhere get it through the server's outbox as PGP/MIME: encrypted to their \
        keys when every one of them has a pinned key (`rampart contacts import-key`), else in clear but \
        signed (multipart/signed), NOT end-to-end encrypted — the command says which. \
        With --pin-stdin the PIN is the first line of standard input and the body follows.
        """)
    @OptionGroup var global: GlobalOptions
    @Option(help: "A recipient address (repeat for several).") var to: [String]
    @Option(help: "The subject.") var subject: String
    @Option(help: "Attach a file (repeat for several).") var attach: [String] = []
    @Flag(help: "The body is plain text (sent as text/plain), not HTML.") var text = false
    @Option(help: "Send from this address of yours, signed with its key (default: the primary address).") var from: String?
    @OptionGroup var pinInput: PINOptions

    func validate() throws {
        guard !to.isEmpty else { throw ValidationError("Give at least one --to address.") }
    }

    func run(with context: AccountSession) async throws {
        var lines: [String] = []
        while let line = Swift.readLine(strippingNewline: true) { lines.append(line) }
        var body = lines.joined(separator: "\n")
        if !text && !body.contains("<") {
            body = "<p>" + body.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: "\n", with: "<br>") + "</p>"
        }
        let (sender, signer) = try context.account.sender(from: from)
        let mail = OutgoingMail(to: to, subject: subject, body: body, isPlainText: text,
                                attachments: attach.map { URL(fileURLWithPath: ($0 as NSString).expandingTildeInPath) })
        let result = try await context.withAPI {
            try await SendFlow.send(mail, from: sender, signer: signer, api: $0, contacts: ContactKeys(account: context.account))
        }
        for notice in result.notices { print(TerminalTextLine.clean(notice)) }
        let sent = result.response
        print("Sent to \(to.joined(separator: ", ")) (\(sent.messageIds.count) message\(sent.messageIds.count == 1 ? "" : "s")).")
        let outside = (sent.deliveries ?? []).filter { $0.route == .outbox }.map(\.address)
        if !outside.isEmpty {
            print(result.outsideLine ?? "NOT end-to-end encrypted: \(outside.joined(separator: ", ")) (outside this server: sent as ordinary e-mail through the outbox).")
        }
    }
}

struct NotificationsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notifications",
        abstract: "The push process: open the pushes waiting for this device's sessions (no PIN needed).",
        discussion: """
        Reads <push folder>/<session>/*.push (the embedded server's stand-in for a push service), opens each with the \
        session's push key from the keychain's shared group only, prints sender and subject, and deletes the push. \
        Works while the MainKey is locked.
        """)
    @OptionGroup var global: GlobalOptions
    @Option(name: .customLong("server-info"), help: "The server's server.json (gives the push folder).") var serverInfo: String?
    @Option(name: .customLong("push-dir"), help: "The push folder itself.") var pushDirectory: String?

    func validate() throws {
        guard (serverInfo == nil) != (pushDirectory == nil) else { throw ValidationError("Give --server-info FILE or --push-dir DIR.") }
    }

    func run() async throws {
        try await reportingErrors {
            let folder = try pushDirectory.map { URL(fileURLWithPath: $0) }
                ?? PushInbox.directory(serverInfoFile: URL(fileURLWithPath: serverInfo ?? ""))
            let environment = try global.environment()
            let inbox = PushInbox(directory: folder, keychain: CompositionRoot.global(role: .notifications, environment: environment).keychain)
            let only = global.runtime.namesUser ? try global.userID() : nil
            let (deliveries, failures) = inbox.drain(only: only)
            for delivery in deliveries {
                print("\(only.map { "[\($0)] " } ?? "")New mail from \(TerminalTextLine.clean(delivery.notification.sender)): \(TerminalTextLine.clean(delivery.notification.subject)) (\(delivery.notification.messageId))")
            }
            if deliveries.isEmpty { print("No new notifications.") }
            if failures > 0 { FileHandle.standardError.write(Data("rampart: \(failures) push(es) did not open and were dropped.\n".utf8)) }
        }
    }
}
