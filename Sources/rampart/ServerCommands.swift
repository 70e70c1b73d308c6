import ArgumentParser
import RampartCLIKit
import Foundation
import RampartAPI
import RampartCore
import RampartServer
import RampartServerPostgres

/// `rampart server …`: the embedded local backend (module RampartServer).
struct ServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "server",
        abstract: "The embedded local backend (TLS on 127.0.0.1, zero-access storage, demo mailboxes).",
        subcommands: [ServerStart.self, ServerInfoCommand.self, ServerInviteCommand.self, ServerResetPasswordCommand.self, ServerUsersCommand.self, ServerDeliver.self, ServerWitnessCommand.self]
    )
}

/// `rampart server start`: runs the backend in the foreground until SIGINT or SIGTERM.
struct ServerStart: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Start the backend on 127.0.0.1 and print its port and certificate pins.",
        discussion: """
        The first start creates the data folder (0700) with a self-signed CA and server certificate, \
        the SQLite database and the demo accounts:
          demo  / login password "\(DemoAccounts.demo.loginPassword)" / mailbox password "\(DemoAccounts.demo.mailboxPassword)"
          alice / login password "\(DemoAccounts.alice.loginPassword)" / mailbox password "\(DemoAccounts.alice.mailboxPassword)"
        The port and pins are written to <data>/server.json (see `rampart server info`). Sign-up (`rampart signup`) \
        needs a single-use code from `rampart server invite` unless --open-signup (kept in <data>/signup.json until \
        --no-open-signup); attempts are throttled per client address. Human verification (captcha, e-mail or SMS) is out \
        of scope: open sign-up only where that is acceptable.
        The server runs in the foreground; stop it with Ctrl-C or SIGTERM.
        """)

    @OptionGroup var options: ServerDataOptions

    @Option(help: "TCP port on 127.0.0.1 (0 = any free port).") var port: Int = 0

    @Flag(help: "Run in the foreground (the only mode; accepted for scripts).") var foreground = false

    @Flag(name: .customLong("no-demo"), help: "Do not create the demo accounts in a new data folder.") var noDemo = false

    @Flag(name: .customLong("open-signup"), inversion: .prefixedNo, help: "Let anyone sign up, or only with an invitation code (kept in the data folder; default: closed).") var openSignup: Bool?

    @Flag(help: "Print the server log on standard error too.") var verbose = false

    @Option(help: "postgresql://user:password@host:port/database (or ?host=/socket/folder); default: the data folder's config.json \"database\", else SQLite in <data>.") var database: String?

    @Option(name: .customLong("proxy-allow-local"), help: "HOST:PORT on this machine or network the remote-content proxy may fetch from (tests, labs; repeatable).") var proxyAllowLocal: [String] = []

    @Option(name: .customLong("info-file"), help: "Write the server description here instead of <data>/server.json (one file per process when several share a data folder).") var infoFile: String?

    func run() async throws {
        try await reportingErrors {
            ProcessHardening.disableCoreDumps()
            let signals = SignalWaiter([SIGINT, SIGTERM])
            let signup = try SignupPolicy.persisted(dataDirectory: options.dataDirectory, open: openSignup)
            var configuration = EmbeddedServerConfiguration(
                dataDirectory: options.dataDirectory, port: port, seedDemo: !noDemo, logToStandardError: verbose, signup: signup,
                proxyAllowLocal: proxyAllowLocal)
            configuration.infoFile = infoFile.map { URL(fileURLWithPath: $0) }
            let chosen = try ServerDatabase.choose(argument: database, dataDirectory: options.dataDirectory)
            configuration.storage = chosen?.open
            let server = try await EmbeddedServer.start(configuration: configuration)
            print("Rampart server listening on \(server.baseURL.absoluteString) (127.0.0.1:\(server.port))")
            print("Data folder: \(server.dataDirectory.path)")
            print("Database: \(chosen?.shown ?? "SQLite in the data folder")")
            print("Pins (SPKI SHA-256): \(server.pins.joined(separator: " "))")
            print("Server description: \(server.infoFile.path)")
            if !noDemo { print("Demo accounts: " + DemoAccounts.summary) }
            print("Sign-up: \(signup.open ? "open to anyone" : "by invitation (rampart server invite)") in @\(SignupPolicy.defaultDomain)")
            fflush(nil)
            let signal = await signals.next { _ = await server.waitUntilStopped() }
            if let signal { print("Signal \(signal): stopping.") }
            await server.stop()
        }
    }
}

/// `rampart server info`: prints the running server's `server.json`.
struct ServerInfoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Print the running server's port, pins and CA certificate (JSON).")

    @OptionGroup var options: ServerDataOptions

    func run() async throws {
        try await reportingErrors {
            try printJSON(try EmbeddedServer.info(dataDirectory: options.dataDirectory))
        }
    }
}

/// `rampart server invite`: prints a single-use sign-up invitation code (stored hashed).
struct ServerInviteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invite", abstract: "Make a single-use sign-up invitation code (printed alone on its line).",
        discussion: "Only its SHA-256 is stored, in <data>/backend.sqlite; give the code to one person (rampart signup --invite CODE).")
    @OptionGroup var options: ServerDataOptions
    @Option(help: "How long the code is valid: 7d, 12h, 30m, … (default 7d).") var expires = "7d"

    func run() async throws {
        try await reportingErrors {
            print(try EmbeddedServer.createInvitation(dataDirectory: options.dataDirectory, lifetime: Invitations.lifetime(expires), storage: ServerDatabase.choose(argument: nil, dataDirectory: options.dataDirectory)?.open))
        }
    }
}

/// `rampart server reset-password USER`: a single-use reset token (stored hashed) for `rampart account reset`.
struct ServerResetPasswordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset-password", abstract: "Make a one-time reset token for an account (printed alone on its line).",
        discussion: "Only its SHA-256 is stored. With it the user sets a new password and NEW keys (rampart account reset): mail sealed to the old key stays unreadable for good. A user who still has the recovery phrase should use rampart account recover instead, which keeps the mail.")
    @OptionGroup var options: ServerDataOptions
    @Argument(help: "The account's username.") var username: String
    @Option(help: "How long the token is valid: 24h, 30m, … (default 24h).") var expires = "24h"

    func run() async throws {
        try await reportingErrors {
            print(try EmbeddedServer.createPasswordReset(dataDirectory: options.dataDirectory, username: username, lifetime: Invitations.lifetime(expires), storage: ServerDatabase.choose(argument: nil, dataDirectory: options.dataDirectory)?.open))
            FileHandle.standardError.write(Data("rampart: the user's old mail will stay unreadable after a reset (new keys); the token is shown only now.\n".utf8))
        }
    }
}

/// `rampart server users list|disable|enable|delete`: the operator's view of accounts (no key, verifier or mail).
struct ServerUsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users", abstract: "List, disable, enable or delete accounts (operator).",
        discussion: "list: name, address, created, sessions, messages (count only: mail is end-to-end encrypted), recovery copy, disabled. disable: no login, and every session ends at once (its tokens stop working). delete: every row of the account, in one transaction; it cannot be undone.")
    @OptionGroup var options: ServerDataOptions
    @Argument(help: "list, disable, enable or delete.") var action: String
    @Argument(help: "The account's username (not for list).") var username: String?

    func validate() throws {
        guard ["list", "disable", "enable", "delete"].contains(action), (action == "list") == (username == nil) else {
            throw ValidationError("Use: rampart server users list | disable USER | enable USER | delete USER --data DIR")
        }
    }

    func run() async throws {
        try await reportingErrors {
            let data = options.dataDirectory, storage = try ServerDatabase.choose(argument: nil, dataDirectory: data)?.open
            switch (action, username ?? "") {
            case ("list", _):
                for user in try AccountAdministration.list(dataDirectory: data, storage: storage) {
                    print("\(user.username)  \(user.address)  created \(Date(timeIntervalSince1970: TimeInterval(user.created)))  sessions \(user.sessions)  messages \(user.messages)  recovery copy \(user.hasRecoveryCopy ? "yes" : "no")\(user.disabled ? "  DISABLED" : "")")
                }
            case ("disable", let name): print("Account \(name) disabled; \(try AccountAdministration.setDisabled(true, username: name, dataDirectory: data, storage: storage)) session(s) ended.")
            case ("enable", let name): try AccountAdministration.setDisabled(false, username: name, dataDirectory: data, storage: storage); print("Account \(name) enabled.")
            default: try AccountAdministration.delete(username: username ?? "", dataDirectory: data, storage: storage); print("Account \(username ?? "") deleted with all its data.")
            }
        }
    }
}
