import ArgumentParser
import Foundation
import RampartBridge
import RampartCore
import RampartRuntime

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `rampart bridge start|info|stop`: IMAP and SMTP on this machine for mail programs.
public struct BridgeCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "bridge",
        abstract: "IMAP and SMTP on 127.0.0.1, so Thunderbird, mutt and mbsync read and send through Rampart.",
        discussion: """
            IMAP on 127.0.0.1:1143 and SMTP submission on 127.0.0.1:1025 (a free port when one is taken; \
            bridge info says which). The username is your address; the password is this device's bridge \
            password (bridge info). STARTTLS uses a certificate the bridge made (its SHA-256 in bridge info, \
            the PEM in <home>/bridge/<user>/certificate.pem); plain text is accepted on loopback only.

            Mailboxes: INBOX, Sent, Drafts, Trash, Archive, Spam, All Mail, your folders (Folders/…) and \
            labels (Labels/…); a message with two labels shows in both.
              COPY adds the destination's label (the message stays where it was).
              MOVE to a folder takes the message out of every other folder; MOVE to a label takes it out of \
            the source label.
              EXPUNGE in a label removes that label; in Trash or Spam it deletes the message for good; in \
            another folder it takes the message out of it (to Trash when it is in no other folder).
              \\Seen and \\Flagged reach the server and your other devices; \\Answered, \\Draft, \\Deleted and \
            keywords stay on this device (sealed).
              APPEND imports the message (the same bytes twice are one message); a copy of mail just sent \
            through the bridge, appended to Sent, is not stored twice.
              UIDs and UIDVALIDITY stay the same across restarts and re-syncs (kept sealed).

            The bridge uses the key the agent holds (run rampart unlock first): while the account is \
            locked (rampart lock, autolock) logins get NO [UNAVAILABLE], open sessions get BYE and nothing \
            is decrypted.
            """,
        subcommands: [BridgeStartCommand.self, BridgeInfoCommand.self, BridgeStopCommand.self])

    public init() {}
}

/// `rampart bridge start [--foreground]`.
public struct BridgeStartCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(commandName: "start", abstract: "Start the bridge (in the background unless --foreground).")
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Run in the foreground (for scripts and service managers) until SIGINT or SIGTERM.") var foreground = false
    @Option(name: .customLong("imap-port"), help: "The IMAP port to try first (0: any free port).") var imapPort = BridgeService.defaultIMAPPort
    @Option(name: .customLong("smtp-port"), help: "The SMTP port to try first (0: any free port).") var smtpPort = BridgeService.defaultSMTPPort

    public init() {}

    public func run() async throws {
        try await reportingErrors {
            let user = try global.userID()
            if let running = BridgeService.status(home: global.homeDirectory, user: user) {
                print("The bridge already runs for \(user): IMAP 127.0.0.1:\(running.imapPort), SMTP 127.0.0.1:\(running.smtpPort) (pid \(running.pid)).")
                return
            }
            if foreground { return try await runForeground() }
            var arguments = ["--home", global.homeDirectory.path, "--user", user.rawValue]
            if let keychain = global.keychain { arguments += ["--keychain", keychain] }
            arguments += ["bridge", "start", "--foreground", "--imap-port", String(imapPort), "--smtp-port", String(smtpPort)]
            let process = Process()
            process.executableURL = AgentHost.currentExecutable
            process.arguments = arguments
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let deadline = Date().addingTimeInterval(120)
            while Date() < deadline, process.isRunning {
                if let status = BridgeService.status(home: global.homeDirectory, user: user), status.pid == process.processIdentifier {
                    print("Bridge started (pid \(status.pid)): IMAP 127.0.0.1:\(status.imapPort), SMTP 127.0.0.1:\(status.smtpPort). rampart bridge info shows the password.")
                    return
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            let log = BridgeService.folder(home: global.homeDirectory, user: user).appendingPathComponent("bridge.log").path
            throw RuntimeError.badInput("The bridge did not start; see \(log) (is the account unlocked? rampart unlock)")
        }
    }

    func runForeground() async throws {
        let service = try await BridgeService(options: global.runtime, imapPort: imapPort, smtpPort: smtpPort)
        try await service.run()
        let status = service.status
        print("IMAP 127.0.0.1:\(status.imapPort) SMTP 127.0.0.1:\(status.smtpPort) certificate SHA-256 \(service.credentials.certificateSHA256)")
        fflush(nil)
        let waiter = SignalWaiter([SIGINT, SIGTERM])
        _ = await waiter.next(orWhen: { while true { try? await Task.sleep(for: .seconds(3600)) } })
        await service.stop()
        print("Bridge stopped.")
    }
}

/// What `rampart bridge info --json` prints (exactly these keys).
struct BridgeInfoReport: Encodable {
    var imapPort, smtpPort: Int
    var username, password, certificateSHA256: String
}

/// `rampart bridge info [--json]`.
public struct BridgeInfoCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(commandName: "info",
                                                           abstract: "Show the ports, username, password and certificate fingerprint for mail programs.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var pinInput: PINOptions
    @Flag(help: "Print JSON: imapPort, smtpPort, username, password, certificateSHA256.") var json = false

    public init() {}

    public func run() async throws {
        try await reportingErrors {
            let context = try AccountSession.unlocked(global.runtime, pin: pinInput.input, role: .bridge)
            defer { context.finish() }
            let record = try context.account.session()
            let credentials = try BridgeCredentials.loadOrCreate(in: try context.account.store())
            let running = BridgeService.status(home: global.homeDirectory, user: context.userID)
            let report = BridgeInfoReport(imapPort: running?.imapPort ?? BridgeService.defaultIMAPPort,
                                          smtpPort: running?.smtpPort ?? BridgeService.defaultSMTPPort,
                                          username: record.addresses.first ?? record.username,
                                          password: try credentials.passwordText(), certificateSHA256: credentials.certificateSHA256)
            if running == nil {
                FileHandle.standardError.write(Data("rampart: the bridge is not running; the ports are the ones it tries first (rampart bridge start).\n".utf8))
            }
            if json { return try printJSON(report) }
            print("IMAP:      127.0.0.1:\(report.imapPort) (STARTTLS)")
            print("SMTP:      127.0.0.1:\(report.smtpPort) (STARTTLS)")
            print("Username:  \(report.username)")
            print("Password:  \(report.password)")
            print("Certificate SHA-256: \(report.certificateSHA256)")
            print("Certificate file:    \(BridgeService.folder(home: global.homeDirectory, user: context.userID).appendingPathComponent("certificate.pem").path)")
        }
    }
}

/// `rampart bridge stop`.
public struct BridgeStopCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(commandName: "stop", abstract: "Stop the bridge of this account.")
    @OptionGroup var global: GlobalOptions

    public init() {}

    public func run() async throws {
        try await reportingErrors {
            let user = try global.userID()
            guard let status = BridgeService.status(home: global.homeDirectory, user: user) else { throw BridgeError.notRunning(user) }
            kill(status.pid, SIGTERM)
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline, kill(status.pid, 0) == 0 { try await Task.sleep(for: .milliseconds(100)) }
            print("Bridge stopped (pid \(status.pid)).")
        }
    }
}
