import ArgumentParser
import Foundation
import HardwareKeys
import Keychain
import Keymaker
import MailSafety
import RampartAPI
import RampartAgent
import RampartClient
import RampartCore
import SealedStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - Shared plumbing

/// The containers, the Keymaker and the client account a user command works with.
///
/// The MainKey comes from the agent when it runs (see ``ClientContext/unlock(pinStdin:)``),
/// otherwise it is unwrapped in this process (PIN from `--pin-stdin` or a prompt) and dropped
/// when the command ends.
final class ClientContext {
    let key: KeyContext
    let environment: RampartEnvironment
    let account: ClientAccount
    /// The agent's MainKey, when an agent runs and holds this user's key unlocked
    /// (`rampart unlock`); `nil` means the key is unwrapped in this process.
    let agentKeys: AgentMainKeyProvider?

    init(_ options: GlobalOptions) throws {
        key = try KeyContext(options)
        environment = key.global.environment
        let agent = AgentClient(location: AgentLocation(homeDirectory: environment.homeDirectory))
        if agent.isRunning(), let status = try? agent.status(user: key.userID), status.unlocked {
            let provider = AgentMainKeyProvider(client: agent, userID: key.userID)
            agentKeys = provider
            account = ClientAccount(keys: provider, dependencies: key.user, environment: environment)
        } else {
            agentKeys = nil
            account = ClientAccount(dependencies: key.user, environment: environment)
        }
    }

    var keymaker: Keymaker { key.keymaker }
    var userID: UserID { key.userID }

    /// Makes the MainKey available: the agent's (when it holds it), already unlocked, the *none*
    /// protector, or the PIN.
    /// `inProcess` unwraps the key in this process even when the agent holds it (changing a
    /// protector needs this process's Keymaker unlocked).
    func unlock(pinStdin: Bool, inProcess: Bool = false) throws {
        guard try account.isLoggedIn() || keymaker.hasMainKey() else { throw ClientError.notLoggedIn(userID) }
        if let agentKeys, !inProcess {
            // The agent holds the key: this command counts as activity for its autolock timer.
            // If the agent autolocked in between, the account is locked: `rampart unlock` again.
            if (try? agentKeys.client.touch(user: userID)) != nil, agentKeys.isUnlocked { return }
            throw LockedError(userID: userID)
        }
        if keymaker.isUnlocked { return }
        let active = try keymaker.activeProtectors()
        if active.contains(.none) || active.contains(.hardware) {
            try keymaker.unlock(.none)
            return
        }
        // No PIN on stdin and no terminal to ask on: the account stays locked (exit 3).
        guard pinStdin || SecretPrompt.hasTerminal else { throw LockedError(userID: userID) }
        let pin = pinStdin ? try StandardInput.readSecretLine("the PIN") : try SecretPrompt.secret("PIN for \(userID): ")
        try keymaker.unlock(.pin(pin))
    }

    /// Runs `body` with an API client for the stored session, then closes it.
    func withAPI<R>(_ body: (APIClient) async throws -> R) async throws -> R {
        let api = try account.api()
        do {
            let result = try await body(api)
            await api.shutdown()
            return result
        } catch {
            await api.shutdown()
            throw error
        }
    }

    /// A context whose account is unlocked (``unlock(pinStdin:inProcess:)``); the caller
    /// `finish()`es it. If unlocking fails, the context is finished here.
    static func unlocked(_ global: GlobalOptions, pinStdin: Bool) throws -> ClientContext {
        let context = try ClientContext(global)
        do {
            try context.unlock(pinStdin: pinStdin)
        } catch {
            context.finish()
            throw error
        }
        return context
    }

    func finish() {
        account.close()
        agentKeys?.close()
        keymaker.lock()
    }

    /// After a logout: the agent (if one runs) must not keep the erased account's key.
    func lockAgent() {
        let agent = agentKeys?.client ?? AgentClient(location: AgentLocation(homeDirectory: environment.homeDirectory))
        if agent.isRunning() { try? agent.lock(user: userID) }
    }
}

/// Reads a secret from the terminal with echo off (or a line of standard input when it is not a terminal).
enum SecretPrompt {
    /// Whether a controlling terminal can be asked.
    static var hasTerminal: Bool {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return false }
        close(fd)
        return true
    }

    static func secret(_ prompt: String) throws -> SecretBytes {
        try fromTerminal(prompt) ?? StandardInput.readSecretLine(prompt.trimmingCharacters(in: .whitespaces))
    }

    /// Reads one line from the controlling terminal with echo off; `nil` when there is none.
    static func fromTerminal(_ prompt: String) -> SecretBytes? {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        _ = prompt.withCString { write(fd, $0, strlen($0)) }
        var original = termios()
        tcgetattr(fd, &original)
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(fd, TCSAFLUSH, &silent)
        defer {
            tcsetattr(fd, TCSAFLUSH, &original)
            _ = "\n".withCString { write(fd, $0, 1) }
        }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while readByte(fd, &byte), byte != 0x0A {
            if byte != 0x0D { bytes.append(byte) }
        }
        return SecretBytes(consuming: &bytes)
    }

    private static func readByte(_ fd: Int32, _ byte: inout UInt8) -> Bool {
        #if canImport(Glibc)
        Glibc.read(fd, &byte, 1) == 1
        #else
        Darwin.read(fd, &byte, 1) == 1
        #endif
    }

    static func readLine(_ prompt: String) -> String? {
        FileHandle.standardError.write(Data(prompt.utf8))
        return Swift.readLine(strippingNewline: true)
    }
}

/// Progress on stderr: a bar redrawn in place when stderr is a terminal, plain lines otherwise.
final class ProgressBar: @unchecked Sendable {
    private let lock = NSLock()
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private var lastPlainDecile: [String: Int64] = [:]
    private var drewBar = false

    var handler: ProgressHandler { { [self] progress in self.show(progress) } }

    func show(_ progress: TransferProgress) {
        lock.withLock {
            if isTerminal {
                let width = 30
                var line = "\r\(progress.phase) "
                if let total = progress.total, total > 0 {
                    let fraction = min(1, Double(progress.done) / Double(total))
                    let filled = Int(fraction * Double(width))
                    line += "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "]"
                    line += String(format: " %3d%% ", Int(fraction * 100)) + "\(Self.amount(progress.done, progress))/\(Self.amount(total, progress))"
                } else {
                    line += Self.amount(progress.done, progress)
                }
                FileHandle.standardError.write(Data((line + "\u{1B}[K").utf8))
                drewBar = true
            } else {
                // Plain lines: the start, every 25 %, and the end.
                let step: Int64 = progress.total.map { $0 > 0 ? min(4, Int64(Double(progress.done) / Double($0) * 4)) : 4 } ?? 0
                if let last = lastPlainDecile[progress.phase], last >= step, progress.done != progress.total { return }
                if lastPlainDecile[progress.phase] == step { return }
                lastPlainDecile[progress.phase] = step
                let total = progress.total.map { "/\(Self.amount($0, progress))" } ?? ""
                FileHandle.standardError.write(Data("\(progress.phase): \(Self.amount(progress.done, progress))\(total)\n".utf8))
            }
        }
    }

    func end() {
        lock.withLock { if drewBar { FileHandle.standardError.write(Data("\n".utf8)); drewBar = false } }
    }

    static func amount(_ value: Int64, _ progress: TransferProgress) -> String {
        guard progress.phase.hasPrefix("upload") || progress.phase.hasPrefix("download") else { return String(value) }
        return value == 0 ? "0 B" : ByteCountFormatter.string(fromByteCount: value, countStyle: .binary)
    }
}

// MARK: - login

/// `rampart login`: logs in, creates the MainKey, stores the session and keys sealed, registers push.
struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Log in to a Rampart server and set the account up on this device.",
        discussion: """
        The server is given by its server.json (--server-info, written by `rampart server start`) or by \
        --url plus at least two --pin (SPKI SHA-256, base64) and --ca (its root certificate, PEM). \
        With --password-stdin and --mailbox-password-stdin both, the login password is the first line and \
        the mailbox password the second. The new MainKey has no protector until `rampart protect`.
        """)
    @OptionGroup var global: GlobalOptions
    @Option(name: .customLong("server-info"), help: "A server.json written by `rampart server start`.") var serverInfo: String?
    @Option(help: "The server's base URL (https://host:port).") var url: String?
    @Option(name: .customLong("pin"), help: "An SPKI pin of the server (base64 SHA-256); give two or more.") var pins: [String] = []
    @Option(help: "The server's root certificate (PEM file) trusted as the only root.") var ca: String?
    @Option(help: "The login username (default: asked).") var username: String?
    @Flag(name: .customLong("password-stdin"), help: "Read the login password from standard input.") var passwordStdin = false
    @Flag(name: .customLong("mailbox-password-stdin"), help: "Read the mailbox password from standard input.") var mailboxPasswordStdin = false

    func validate() throws {
        guard (serverInfo == nil) != (url == nil) else { throw ValidationError("Give --server-info FILE, or --url URL with --pin (twice or more).") }
        if url != nil && pins.count < 2 { throw ValidationError("--url needs at least two --pin (the live key and a backup key).") }
    }

    func endpoint() throws -> ServerEndpoint {
        if let serverInfo { return try ServerEndpoint.fromServerInfoFile(URL(fileURLWithPath: serverInfo)) }
        guard let url, let parsed = URL(string: url), parsed.scheme == "https" else { throw ValidationError("--url must be an https URL.") }
        let pem = try ca.map { path -> String in
            do { return try String(contentsOfFile: path, encoding: .utf8) } catch { throw ValidationError("Cannot read \(path).") }
        }
        return ServerEndpoint(url: parsed, pins: pins, certificatePEM: pem)
    }

    func run() async throws {
        try await reportingErrors {
            let context = try ClientContext(global)
            defer { context.finish() }
            let endpoint = try endpoint()
            guard let name = username ?? SecretPrompt.readLine("Username: "), !name.isEmpty else {
                throw CLIError.badInput("A username is needed (--username).")
            }
            let password = passwordStdin ? try StandardInput.readSecretLine("the login password") : try SecretPrompt.secret("Password: ")
            let mailbox = mailboxPasswordStdin ? try StandardInput.readSecretLine("the mailbox password") : try SecretPrompt.secret("Mailbox password: ")
            let result = try await LoginFlow.login(endpoint: endpoint,
                                                   credentials: LoginCredentials(username: name, password: password, mailboxPassword: mailbox),
                                                   account: context.account, keymaker: context.keymaker)
            print("Logged in as \(result.session.username) (\(result.session.addresses.first ?? result.session.serverUserID)) on \(endpoint.url.absoluteString); local account '\(context.userID)'.")
            print("MainKey \(result.mainKeyFingerprint) created (protector: none). Protect it: rampart protect --pin")
            if let problem = result.pushProblem {
                FileHandle.standardError.write(Data("rampart: warning: push notifications not registered: \(problem)\n".utf8))
            } else {
                print("Push notifications registered for session \(result.session.sessionID).")
            }
        }
    }
}

// MARK: - protect

/// `rampart protect --pin | --hardware | --none`.
struct ProtectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "protect",
        abstract: "Choose how the MainKey is protected: a PIN, the secure hardware, both, or none.",
        discussion: """
        With --pin-stdin the new PIN is read from standard input (after the current PIN, if one is set). \
        --hardware seals the MainKey to this machine's TPM 2.0 (RAMPART_TPM_TCTI or /dev/tpmrm0): alone, no \
        secret is asked and the key opens only on this machine; with --pin as well, the PIN becomes the TPM \
        object's authorization, so every guess is counted by the TPM's lockout. A PIN protector already set \
        stays as the fallback for when the TPM is gone.
        """)
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Protect with a PIN.") var pin = false
    @Flag(help: "Protect with the secure hardware.") var hardware = false
    @Flag(help: "No protector: the MainKey is kept in clear in the keychain.") var none = false
    @Flag(name: .customLong("pin-stdin"), help: "Read the PIN(s) from standard input.") var pinStdin = false

    func validate() throws {
        guard !(none && (pin || hardware)), none || pin || hardware else {
            throw ValidationError("Choose --pin, --hardware (optionally with --pin), or --none.")
        }
    }

    func run() async throws {
        try await reportingErrors {
            let context = try ClientContext(global)
            defer { context.finish() }
            let keymaker = context.keymaker
            guard try keymaker.hasMainKey() else { throw ClientError.notLoggedIn(context.userID) }
            if hardware {
                try context.unlock(pinStdin: pinStdin, inProcess: true)
                let kind: ProtectorKind = pin ? .hardwarePIN : .hardware
                var credential = UnlockCredential.none
                if pin { credential = .pin(try newPIN()) }
                try keymaker.activate(kind, credential: credential)
                print("MainKey protected by the secure hardware (\(SecureHardware.found())); active protectors: \(try keymaker.activeProtectors().map(\.rawValue).joined(separator: ", ")).")
                return
            }
            let hasPIN = try keymaker.activeProtectors().contains(.pin)
            if none {
                try context.unlock(pinStdin: pinStdin, inProcess: true)
                try keymaker.disableProtection()
                print("MainKey protection removed: the key is in clear in the keychain.")
                return
            }
            let oldPIN = hasPIN ? (pinStdin ? try StandardInput.readSecretLine("the current PIN") : try SecretPrompt.secret("Current PIN: ")) : nil
            let newPIN = try newPIN()
            if let oldPIN {
                try keymaker.changePIN(from: oldPIN, to: newPIN)
            } else {
                try context.unlock(pinStdin: false, inProcess: true)
                try keymaker.activate(.pin, credential: .pin(newPIN))
            }
            print("MainKey protected by a PIN (\(keymaker.configuration.maxFailedAttempts) wrong PINs erase the account's local data).")
        }
    }

    /// The new PIN: a line of standard input, or asked twice on the terminal.
    private func newPIN() throws -> SecretBytes {
        if pinStdin { return try StandardInput.readSecretLine("the new PIN") }
        let first = try SecretPrompt.secret("New PIN: ")
        let again = try SecretPrompt.secret("New PIN again: ")
        guard first == again else { throw CLIError.badInput("The two PINs differ; nothing changed.") }
        return first
    }
}

// MARK: - sync, list

struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sync", abstract: "Fetch new mail into the sealed local store.")
    @OptionGroup var global: GlobalOptions
    @Flag(name: .customLong("pin-stdin"), help: "Read the PIN from standard input.") var pinStdin = false

    func run() async throws {
        try await reportingErrors {
            let context = try ClientContext.unlocked(global, pinStdin: pinStdin)
            defer { context.finish() }
            let bar = ProgressBar()
            let summary = try await context.withAPI { api in
                try await MailSync(account: context.account).run(api: api, progress: bar.handler)
            }
            bar.end()
            print("Synced: \(summary.messagesStored) message\(summary.messagesStored == 1 ? "" : "s") stored, \(summary.messagesDeleted) deleted, \(summary.labels) labels, \(summary.attachments) attachments (event cursor \(summary.cursor)).")
        }
    }
}

struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List messages of a label, or search them.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "A label name or id (default: Inbox).") var label: String?
    @Option(help: "Words to search for (sealed blind index: whole words).") var search: String?
    @Option(help: "At most this many messages.") var limit = 50
    @Flag(name: .customLong("pin-stdin"), help: "Read the PIN from standard input.") var pinStdin = false

    func run() async throws {
        try await reportingErrors {
            let context = try ClientContext.unlocked(global, pinStdin: pinStdin)
            defer { context.finish() }
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
    }

    static func labelID(_ text: String, in labels: [MailLabel]) throws -> String {
        if labels.contains(where: { $0.id == text }) { return text }
        if let byName = labels.first(where: { $0.name.lowercased() == text.lowercased() }) { return byName.id }
        if labels.isEmpty { return text }
        throw CLIError.badInput("No label '\(text)'. Labels: \(labels.map(\.name).joined(separator: ", ")).")
    }
}

/// One-line cleaning of text from mail for the terminal (no control characters).
enum TerminalTextLine {
    static func clean(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter {
            !($0.value < 0x20 || (0x7F...0x9F).contains($0.value) || (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value))
        }))
    }
}

// MARK: - read, attachment

struct ReadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read",
        abstract: "Show a message, sanitized: terminal text by default, or the HTML document with its CSP.",
        discussion: "Remote content (images, fonts, CSS backgrounds) is blocked unless --load-remote; trackers are always blocked. A line on stderr says what was blocked.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The message id.") var id: String
    @Flag(name: .customLong("load-remote"), help: "Load remote content for this message (CSP stage 3).") var loadRemote = false
    @Option(help: "Write the sanitized HTML document (with its CSP) to this file.") var html: String?
    @Flag(help: "Open the sanitized HTML document in the default browser.") var open = false
    @Flag(name: .customLong("pin-stdin"), help: "Read the PIN from standard input.") var pinStdin = false

    func validate() throws {
        if html != nil && open { throw ValidationError("Choose --html FILE or --open, not both.") }
    }

    func run() async throws {
        try await reportingErrors {
            let context = try ClientContext.unlocked(global, pinStdin: pinStdin)
            defer { context.finish() }
            let rendered = try await context.withAPI { api in
                try await MessageReader(account: context.account).render(id, loadRemote: loadRemote, api: api)
            }
            let message = rendered.message
            print("From:    \(TerminalTextLine.clean(message.sender.name)) <\(TerminalTextLine.clean(message.sender.address))>")
            print("To:      \(message.recipients.map { TerminalTextLine.clean($0.address) }.joined(separator: ", "))")
            print("Date:    \(Date(timeIntervalSince1970: TimeInterval(message.time)))")
            print("Subject: \(TerminalTextLine.clean(message.subject))")
            for attachment in rendered.attachments {
                let embedded = AttachmentVault.contentID(of: attachment) != nil ? " (embedded image)" : ""
                print("Attachment: \(attachment.id)  \(TerminalTextLine.clean(attachment.name))  \(attachment.mimeType)  \(attachment.size) bytes\(embedded)")
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
}

/// Opens files with the desktop's opener (`$RAMPART_OPENER`, else `xdg-open` / `open`) and waits.
enum Opener {
    static func command() -> [String] {
        if let custom = ProcessInfo.processInfo.environment["RAMPART_OPENER"], !custom.isEmpty { return [custom] }
        #if os(macOS)
        return ["/usr/bin/open", "-W"]
        #else
        return ["/usr/bin/env", "xdg-open"]
        #endif
    }

    /// Runs the opener on `url` and waits for it to exit. - Returns: its exit status.
    @discardableResult
    static func open(_ url: URL) throws -> Int32 {
        let process = Process()
        let argv = command()
        process.executableURL = URL(fileURLWithPath: argv[0])
        process.arguments = Array(argv.dropFirst()) + [url.path]
        do { try process.run() } catch { throw CLIError.badInput("Cannot start the opener \(argv[0]): \(error.localizedDescription)") }
        process.waitUntilExit()
        waitForPreviewToClose()
        return process.terminationStatus
    }

    /// `xdg-open` and `open` return as soon as the viewer starts, while the viewer still needs the
    /// file: with the default opener, the lease lasts until the user says the preview is closed
    /// (Enter on the terminal), or 20 s without a terminal. A `$RAMPART_OPENER` is expected to
    /// return when the preview closes.
    static func waitForPreviewToClose() {
        if let custom = ProcessInfo.processInfo.environment["RAMPART_OPENER"], !custom.isEmpty { return }
        if SecretPrompt.hasTerminal, let tty = FileHandle(forUpdatingAtPath: "/dev/tty") {
            tty.write(Data("Press Enter when you have closed the preview (the cleartext is then erased)… ".utf8))
            _ = tty.availableData
            try? tty.close()
        } else {
            Thread.sleep(forTimeInterval: 20)
        }
    }

    /// Writes the sanitized document into a cleartext lease, opens it, and ends the lease once the
    /// preview is closed (see ``waitForPreviewToClose()``).
    static func openDocument(_ document: String, account: ClientAccount) throws {
        let lease = try account.leaseDocument(document)
        defer { lease.end() }
        try open(lease.url)
    }
}

struct AttachmentCommand: AsyncParsableCommand {
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
    @Flag(name: .customLong("pin-stdin"), help: "Read the PIN from standard input.") var pinStdin = false

    func validate() throws {
        guard open != (save != nil) else { throw ValidationError("Choose --open or --save PATH.") }
    }

    func run() async throws {
        try await reportingErrors {
            let context = try ClientContext.unlocked(global, pinStdin: pinStdin)
            defer { context.finish() }
            let vault = try AttachmentVault(account: context.account)
            vault.prune()
            let attachment = try vault.metadata(id)
            if let save {
                var data = try await context.withAPI { try await vault.contents(of: attachment, api: $0) }
                defer { data.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
                let url = URL(fileURLWithPath: save)
                guard FileManager.default.createFile(atPath: url.path, contents: data, attributes: [.posixPermissions: 0o600]) else {
                    throw CLIError.badInput("Cannot write \(url.path).")
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
}

// MARK: - drive

struct DriveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drive",
        abstract: "Encrypted drive: upload, download, list.",
        subcommands: [Upload.self, Download.self, List.self])

    struct Upload: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Encrypt a file with a new per-file key and upload it.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The file to upload.") var file: String
        @Flag(name: .customLong("pin-stdin"), help: "Read the PIN from standard input.") var pinStdin = false

        func run() async throws {
            try await reportingErrors {
                let context = try ClientContext.unlocked(global, pinStdin: pinStdin)
                defer { context.finish() }
                let bar = ProgressBar()
                let entry = try await context.withAPI { try await DriveClient(account: context.account).upload(URL(fileURLWithPath: file), api: $0, progress: bar.handler) }
                bar.end()
                print("Uploaded \(entry.name) (\(entry.size) bytes) as \(entry.id).")
            }
        }
    }

    struct Download: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Download and decrypt a file.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The file's id (see `rampart drive ls`).") var id: String
        @Argument(help: "Where to write the cleartext.") var path: String
        @Flag(name: .customLong("pin-stdin"), help: "Read the PIN from standard input.") var pinStdin = false

        func run() async throws {
            try await reportingErrors {
                let context = try ClientContext.unlocked(global, pinStdin: pinStdin)
                defer { context.finish() }
                let bar = ProgressBar()
                let entry = try await context.withAPI { try await DriveClient(account: context.account).download(id, to: URL(fileURLWithPath: path), api: $0, progress: bar.handler) }
                bar.end()
                print("Downloaded \(TerminalTextLine.clean(entry.name)) (\(entry.size) bytes) to \(path).")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "ls", abstract: "List the drive's files.")
        @OptionGroup var global: GlobalOptions
        @Flag(name: .customLong("pin-stdin"), help: "Read the PIN from standard input.") var pinStdin = false

        func run() async throws {
            try await reportingErrors {
                let context = try ClientContext.unlocked(global, pinStdin: pinStdin)
                defer { context.finish() }
                let entries = try await context.withAPI { try await DriveClient(account: context.account).list(api: $0) }
                if entries.isEmpty { print("The drive is empty."); return }
                for entry in entries {
                    print("\(entry.id)  \(String(entry.size).padding(toLength: 10, withPad: " ", startingAt: 0))  \(TerminalTextLine.clean(entry.name))\(entry.isFolder ? "/" : "")")
                }
            }
        }
    }
}

// MARK: - logout

struct LogoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "End the session on the server and erase everything of the account on this device.")
    @OptionGroup var global: GlobalOptions
    @Flag(name: .customLong("pin-stdin"), help: "Read the PIN from standard input.") var pinStdin = false

    func run() async throws {
        try await reportingErrors {
            let context = try ClientContext(global)
            guard try context.keymaker.hasMainKey() || context.account.isLoggedIn() else { throw ClientError.notLoggedIn(context.userID) }
            try context.unlock(pinStdin: pinStdin)
            let result = await LogoutFlow.logout(account: context.account, keymaker: context.keymaker)
            context.lockAgent()
            if let problem = result.serverProblem {
                FileHandle.standardError.write(Data("rampart: warning: the server session may still be open: \(problem)\n".utf8))
            } else {
                print("Session ended on the server.")
            }
            print("Erased on this device: \(result.report.wiped.joined(separator: ", ")).")
            if !result.report.isComplete { throw KeymakerError.wipeIncomplete(result.report.failures) }
        }
    }
}

// MARK: - send, notifications

struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a message (the body, HTML or text, is read from standard input).",
        discussion: "The server seals the message to each recipient's public key and pushes a notification to their sessions.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "A recipient address (repeat for several).") var to: [String]
    @Option(help: "The subject.") var subject: String
    @Flag(name: .customLong("pin-stdin"), help: "Read the PIN from the first line of standard input (the body follows).") var pinStdin = false

    func validate() throws {
        guard !to.isEmpty else { throw ValidationError("Give at least one --to address.") }
    }

    func run() async throws {
        try await reportingErrors {
            let context = try ClientContext.unlocked(global, pinStdin: pinStdin)
            defer { context.finish() }
            var lines: [String] = []
            while let line = Swift.readLine(strippingNewline: true) { lines.append(line) }
            let body = lines.joined(separator: "\n")
            let html = body.contains("<") ? body : "<p>" + body.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: "\n", with: "<br>") + "</p>"
            let sent = try await context.withAPI { try await $0.send(SendRequest(to: to, subject: subject, html: html)) }
            print("Sent to \(to.joined(separator: ", ")) (\(sent.messageIds.count) message\(sent.messageIds.count == 1 ? "" : "s")).")
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
            let folder: URL
            if let pushDirectory {
                folder = URL(fileURLWithPath: pushDirectory)
            } else {
                let data: Data
                do { data = try Data(contentsOf: URL(fileURLWithPath: serverInfo!)) } catch { throw CLIError.badInput("Cannot read \(serverInfo!).") }
                guard let info = try? JSONDecoder().decode(ServerInfo.self, from: data), let push = info.pushDirectory else {
                    throw CLIError.badInput("\(serverInfo!) names no push folder.")
                }
                folder = URL(fileURLWithPath: push)
            }
            let environment = try global.environment()
            let inbox = PushInbox(directory: folder, keychain: KeychainBackend.keychain(for: environment))
            let only = global.user != nil || ProcessInfo.processInfo.environment["RAMPART_USER"].map({ !$0.isEmpty }) == true ? try global.userID() : nil
            let (deliveries, failures) = inbox.drain(only: only)
            for delivery in deliveries {
                print("\(only.map { "[\($0)] " } ?? "")New mail from \(TerminalTextLine.clean(delivery.notification.sender)): \(TerminalTextLine.clean(delivery.notification.subject)) (\(delivery.notification.messageId))")
            }
            if deliveries.isEmpty { print("No new notifications.") }
            if failures > 0 { FileHandle.standardError.write(Data("rampart: \(failures) push(es) did not open and were dropped.\n".utf8)) }
        }
    }
}

// MARK: - settings

struct SettingsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "Privacy settings (stored in the sealed store with a MAC under the MainKey).",
        discussion: """
        show | remote-content on|off | trust ADDRESS | untrust ADDRESS. A setting changed on disk without the \
        MainKey fails its check: its safe default (remote content blocked, nobody trusted) is used and a warning shown.
        """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "show, remote-content, trust or untrust") var action: String = "show"
    @Argument(help: "on|off for remote-content; an address for trust/untrust") var value: String?
    @Flag(name: .customLong("pin-stdin"), help: "Read the PIN from standard input.") var pinStdin = false

    func validate() throws {
        switch action {
        case "show": break
        case "remote-content": guard value == "on" || value == "off" else { throw ValidationError("remote-content takes on or off.") }
        case "trust", "untrust": guard let value, value.contains("@") else { throw ValidationError("\(action) takes a sender address.") }
        default: throw ValidationError("Unknown action '\(action)': show, remote-content, trust, untrust.")
        }
    }

    func run() async throws {
        try await reportingErrors {
            let context = try ClientContext.unlocked(global, pinStdin: pinStdin)
            defer { context.finish() }
            let store = try context.account.store()
            let readout = try store.privacySettings()
            for warning in readout.warnings { FileHandle.standardError.write(Data("rampart: warning: \(warning)\n".utf8)) }
            var settings = readout.settings
            switch action {
            case "remote-content": settings.autoLoadRemoteContent = value == "on"
            case "trust": if !settings.trustedSenders.contains(value!.lowercased()) { settings.trustedSenders.append(value!.lowercased()) }
            case "untrust": settings.trustedSenders.removeAll { $0 == value!.lowercased() }
            default: break
            }
            if action != "show" { try store.setPrivacySettings(settings) }
            print("remote content:   \(settings.autoLoadRemoteContent ? "loaded automatically (trackable)" : "blocked unless asked for")")
            print("trusted senders:  \(settings.trustedSenders.isEmpty ? "-" : settings.trustedSenders.joined(separator: ", "))")
            print("strip image metadata: \(settings.stripImageMetadata ? "on" : "off")")
        }
    }
}
