import ArgumentParser
import Foundation
import RampartClient
import RampartCore
import RampartRuntime

/// The options of `rampart signup` besides the server (``ServerOptions``), and the reading of its
/// passwords: on the terminal (each asked twice, echo off) or as lines of standard input
/// (`--password-stdin`, then `--mailbox-password-stdin` in `--two-password` mode).
///
/// Trust-model row **mailbox password (critical)**: the passwords go straight into `SecretBytes`;
/// in one-password mode (the default) no mailbox password is asked and the login password also
/// unlocks the key (bcrypt(login password, key salt), made on the device, never sent).
public struct SignupOptions: PasswordOptions {
    @Option(help: "The username: 3-40 ASCII letters, digits, '.', '-', '_' (default: asked).") public var username: String?
    @Option(help: "The address (default: <username>@<the server's domain>).") public var address: String?
    @Option(name: .customLong("display-name"), help: "The name shown as sender (default: the username).") public var displayName: String?
    @Option(help: "The invitation code from the server's operator (rampart server invite).") public var invite: String?
    @Flag(name: .customLong("two-password"), help: "Lock the key with a separate mailbox password.") public var twoPassword = false
    @Flag(name: .customLong("password-stdin"), help: "Read the login password from standard input.") public var passwordStdin = false
    @Flag(name: .customLong("mailbox-password-stdin"), help: "With --two-password: read the mailbox password from standard input (second line).")
    public var mailboxPasswordStdin = false
    @OptionGroup public var recoveryPhrase: RecoveryPhraseOptions

    public init() {}

    /// Says the account was made and shows (or writes) its recovery phrase, once.
    public func created(username: String, address: String, on endpoint: ServerEndpoint, phrase: SecretBytes?) {
        Swift.print("Account \(username) (\(address)) created on \(endpoint.url.absoluteString).")
        if let phrase { recoveryPhrase.deliver(phrase) }
    }

    /// The credentials, the passwords read now.
    /// - Throws: `RuntimeError.badInput` (no username, two entries that differ, an empty password).
    public func credentials() throws -> SignupCredentials {
        let (name, password, mailbox) = try readPasswords(new: false)
        return SignupCredentials(username: name, address: address, displayName: displayName, password: password,
                                 mailboxPassword: mailbox, invitation: invite, recoveryPhrase: RecoveryFlow.newPhrase())
    }

    /// A new secret: a line of standard input, or asked twice on the terminal.
    static func newSecret(_ what: String, prompt: String, stdin: Bool) throws -> SecretBytes {
        let input = SecretInput(fromStandardInput: stdin)
        let secret = try input.read(what, prompt: "\(prompt): ")
        if !stdin && SecretPrompt.hasTerminal {
            let again = try input.read(what, prompt: "\(prompt) again: ")
            guard secret == again else { throw RuntimeError.badInput("The two entries of \(what) differ; nothing was sent.") }
        }
        guard secret.count > 0 else { throw RuntimeError.badInput("An empty \(what) is not allowed.") }
        return secret
    }
}

/// Options that read a username and a login password, and in `--two-password` mode a mailbox
/// password: `rampart signup` (``SignupOptions``), `recover` and `reset` (``NewPasswordOptions``).
public protocol PasswordOptions: ParsableArguments {
    /// `--username` (asked when nil).
    var username: String? { get }
    /// `--two-password`.
    var twoPassword: Bool { get }
    /// `--password-stdin`.
    var passwordStdin: Bool { get }
    /// `--mailbox-password-stdin`.
    var mailboxPasswordStdin: Bool { get }
}

extension PasswordOptions {
    public func validate() throws {
        if mailboxPasswordStdin && !twoPassword { throw ValidationError("--mailbox-password-stdin needs --two-password.") }
    }

    /// The username and the passwords, read now; `new`: a recovery's or reset's new passwords.
    func readPasswords(new: Bool) throws -> (username: String, password: SecretBytes, mailboxPassword: SecretBytes?) {
        guard let name = username ?? SecretPrompt.readLine("Username: "), !name.isEmpty else {
            throw RuntimeError.badInput("A username is needed (--username).")
        }
        let login = new ? ("the new login password", "New password") : ("the login password", "Password")
        let box = new ? ("the new mailbox password", "New mailbox password") : ("the mailbox password", "Mailbox password")
        let password = try SignupOptions.newSecret(login.0, prompt: login.1, stdin: passwordStdin)
        let mailbox = twoPassword ? try SignupOptions.newSecret(box.0, prompt: box.1, stdin: mailboxPasswordStdin) : nil
        return (name, password, mailbox)
    }
}
