import ArgumentParser
import Foundation
import RampartAPI
import RampartCLIKit
import RampartClient
import RampartCore
import RampartServer
import RampartServerPostgres

// MARK: - import, export

/// `rampart import PATH`: real mail (.eml, mbox, Maildir) into the account, sealed on this device.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import mail from an .eml file, an mbox file or a Maildir folder.",
        discussion: """
        Each message is sealed on this device to your own key and uploaded (the server never sees it \
        in clear); its original bytes are kept, sealed, for `rampart export`. A message already \
        imported is not stored again, so an interrupted import is finished by running it again. \
        The messages are then synced into the local store (list, search, read).
        """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "An .eml file, an mbox file, or a Maildir folder (with cur/ and new/).") var path: String
    @Option(help: "Put the messages under this label (created if missing; default: Inbox).") var label: String?
    @OptionGroup var pinInput: PINOptions

    func run() async throws {
        try await reportingErrors {
            let source = try MailImportSource.detect(URL(fileURLWithPath: (path as NSString).expandingTildeInPath))
            let context = try AccountSession.unlocked(global.runtime, pin: pinInput.input)
            defer { context.finish() }
            let session = try context.account.session()
            let keys = try context.account.mailboxKey()
            let bar = ProgressBar()
            let summary = try await context.withAPI { api in
                var labelID = SystemLabel.inbox
                if let label { labelID = try await api.label(named: label).id }
                let importer = MailImporter(api: api, keys: keys, serverUserID: session.serverUserID)
                let summary = try await importer.run(source, labelIDs: [labelID]) { messages, read, total in
                    _ = messages
                    bar.show(TransferProgress(phase: "import", done: read, total: total > 0 ? total : nil))
                }
                bar.end()
                _ = try await MailSync(account: context.account).run(api: api)
                return summary
            }
            for warning in summary.warnings.prefix(20) { FileHandle.standardError.write(Data("rampart: warning: \(warning)\n".utf8)) }
            for failure in summary.failed { FileHandle.standardError.write(Data("rampart: failed: \(failure)\n".utf8)) }
            print("Import: \(summary.line).")
            if !summary.failed.isEmpty { throw ExitCode(ExitStatus.failure) }
        }
    }
}

/// `rampart export`: the original bytes of imported or delivered messages, back out.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write one message as .eml (MESSAGE_ID --eml FILE) or a label as mbox (--label NAME --mbox FILE).",
        discussion: "Only messages that came from outside (imported or delivered) have an original; an mbox imported into a label comes back byte for byte.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The message id (with --eml).") var messageID: String?
    @Option(help: "Write the message to this .eml file.") var eml: String?
    @Option(help: "Export every message of this label (name or id) ...") var label: String?
    @Option(help: "... to this mbox file.") var mbox: String?
    @OptionGroup var pinInput: PINOptions

    func validate() throws {
        let one = messageID != nil && eml != nil && label == nil && mbox == nil
        let many = messageID == nil && eml == nil && label != nil && mbox != nil
        guard one || many else { throw ValidationError("Give MESSAGE_ID --eml FILE, or --label NAME --mbox FILE.") }
    }

    func run() async throws {
        try await reportingErrors {
            let context = try AccountSession.unlocked(global.runtime, pin: pinInput.input)
            defer { context.finish() }
            let session = try context.account.session()
            let keys = try context.account.mailboxKeys()
            try await context.withAPI { api in
                let exporter = MailExporter(api: api, keys: keys, serverUserID: session.serverUserID)
                if let messageID, let eml {
                    try await exporter.exportEML(messageID, to: URL(fileURLWithPath: eml))
                    print("Wrote message \(messageID) to \(eml).")
                } else if let label, let mbox {
                    let labels = try await api.labels()
                    guard let found = labels.first(where: { $0.id == label || $0.name.lowercased() == label.lowercased() }) else {
                        throw RuntimeError.badInput("No label '\(label)'. Labels: \(labels.map(\.name).joined(separator: ", ")).")
                    }
                    let summary = try await exporter.exportMbox(labelID: found.id, to: URL(fileURLWithPath: mbox))
                    print("Wrote \(summary.exported) message\(summary.exported == 1 ? "" : "s") to \(mbox).")
                    if !summary.withoutOriginal.isEmpty {
                        print("Skipped \(summary.withoutOriginal.count) written inside Rampart (no original): \(summary.withoutOriginal.joined(separator: ", ")).")
                    }
                }
            }
        }
    }
}

// MARK: - server deliver

/// `rampart server deliver`: the local delivery agent for mail from outside (like `sendmail`).
struct ServerDeliver: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deliver",
        abstract: "Deliver one RFC 5322 message from standard input to local recipients.",
        discussion: """
        Recipients are the --to addresses, or else the message's To and Cc (like `sendmail -t`). The \
        message is sealed to each recipient's public key on arrival; no cleartext copy is kept. \
        Exit 6 for an unknown recipient, 2 for an unreadable message; in both cases nothing is stored.
        """)
    @OptionGroup var options: ServerDataOptions
    @Option(help: "A recipient address (repeat for several; default: the message's To and Cc).") var to: [String] = []

    func run() throws {
        try reportingErrors {
            // Read at most one byte past the limit: a larger message is refused, never held.
            var input = Data()
            while input.count <= OutsideDelivery.maximumMessageSize,
                  let chunk = try FileHandle.standardInput.read(upToCount: 1 << 16), !chunk.isEmpty {
                input.append(chunk)
            }
            let ids = try OutsideDelivery.deliver(input, recipients: to, dataDirectory: options.dataDirectory, storage: ServerDatabase.choose(argument: nil, dataDirectory: options.dataDirectory)?.open)
            print("Delivered to \(ids.count) mailbox\(ids.count == 1 ? "" : "es"): \(ids.joined(separator: ", ")).")
        }
    }
}
