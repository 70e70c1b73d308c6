import ArgumentParser
import Foundation
import Keymaker
import RampartClient
import RampartCore
import RampartRuntime

/// Where a new recovery phrase goes: shown once on standard output, or with
/// `--recovery-phrase-file FILE` written there instead (0600, one line, for scripts).
///
/// Trust-model row **the user's private and public keys (critical)**: the phrase opens the
/// account's key; it is never stored by Rampart, only shown or written where the user said.
public struct RecoveryPhraseOptions: ParsableArguments {
    @Option(name: .customLong("recovery-phrase-file"),
            help: "Write the new recovery phrase to this file (created 0600, one line) instead of showing it.")
    public var file: String?

    public init() {}

    /// Shows or writes `phrase`, then wipes it. A file that cannot be written falls back to
    /// showing the phrase (it must not be lost), with a warning on standard error.
    public func deliver(_ phrase: SecretBytes) {
        defer { phrase.wipe() }
        if let file {
            do {
                var line = try phrase.withUnsafeBytes { Array($0) } + [0x0A]
                defer { line.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
                try PrivateFiles.writeAtomically(line, to: URL(fileURLWithPath: file))
                Swift.print("Recovery phrase written to \(file) (0600). Keep it offline; it is not shown again.")
                return
            } catch {
                FileHandle.standardError.write(Data("rampart: warning: cannot write \(file) (\(error)); the phrase is shown instead.\n".utf8))
            }
        }
        let text = (try? phrase.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }) ?? ""
        Swift.print("Recovery phrase: \(text)")
        Swift.print("Write these 12 words down and keep them offline: with them you can recover the account and its mail if you forget your password (rampart account recover). They are shown only this once.")
    }
}

/// The new password(s) of a recovery or a reset: one password (it also unlocks the key) unless
/// `--two-password`; read from the terminal (twice, echo off) or from standard input lines.
public struct NewPasswordOptions: PasswordOptions {
    @Option(help: "The account's username (default: asked).") public var username: String?
    @Flag(name: .customLong("password-stdin"), help: "Read the new login password from standard input.") public var passwordStdin = false
    @Flag(name: .customLong("two-password"), help: "Lock the key with a separate new mailbox password.") public var twoPassword = false
    @Flag(name: .customLong("mailbox-password-stdin"), help: "With --two-password: read the new mailbox password from standard input (after the login password).")
    public var mailboxPasswordStdin = false

    public init() {}

    /// The name and new passwords, read now (after any phrase the caller read first).
    public func credentials() throws -> RecoveryCredentials {
        let (name, password, mailbox) = try readPasswords(new: true)
        return RecoveryCredentials(username: name, password: password, mailboxPassword: mailbox)
    }
}

/// `rampart account recover`: a forgotten password, recovered with the recovery phrase.
public struct RecoverCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "recover",
        abstract: "Recover the account with its recovery phrase and set a new password (old mail still opens).",
        discussion: """
        The server is given as for `rampart login`. The phrase (asked with echo off, or the first line of \
        standard input with --phrase-stdin) is checked here first: a mistyped word or checksum is reported \
        before anything is sent. It opens the recovery copy of the account's key on this device; the same \
        key is locked under the new password and the server gets only a new SRP verifier, the locked key and \
        a signature by the key. Every session of the account ends; then this device is set up as by login. \
        The account has one password afterwards (it also unlocks the key), or with --two-password a separate \
        new mailbox password (with --password-stdin --mailbox-password-stdin: the lines after the phrase). \
        A wrong phrase, another account's phrase and an unknown name get the same refusal (exit 1).
        """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var server: ServerOptions
    @OptionGroup var passwords: NewPasswordOptions
    @Flag(name: .customLong("phrase-stdin"), help: "Read the recovery phrase from standard input (first line).") var phraseStdin = false

    public init() {}

    public func run() async throws {
        try await replaceCredentials(global, server) { endpoint, context in
            let phrase = try RecoveryFlow.normalized(try SecretInput(fromStandardInput: phraseStdin).read("the recovery phrase", prompt: "Recovery phrase: "))
            let result = try await RecoveryFlow.recover(endpoint: endpoint, phrase: phrase, credentials: try passwords.credentials(),
                                                        account: context.account, keymaker: context.keymaker)
            print("Account recovered: new password set, the same key (old mail still opens); \(result.endedSessions) session(s) ended.")
            return result
        }
    }
}

/// `rampart account recovery-phrase --regenerate`: a new phrase replaces the old one.
public struct RecoveryPhraseCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "recovery-phrase",
        abstract: "Make a new recovery phrase (shown once); the old phrase stops working.",
        discussion: """
        Rampart never stores the phrase, so it cannot show the current one: --regenerate makes a new phrase and \
        a new recovery copy of the (unlocked) key, which replaces the copy on the server. Needs a logged-in, \
        unlocked account (the PIN as for other commands).
        """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var pinInput: PINOptions
    @OptionGroup var output: RecoveryPhraseOptions
    @Flag(help: "Make a new phrase and replace the recovery copy on the server.") var regenerate = false

    public init() {}

    public func validate() throws {
        guard regenerate else { throw ValidationError("The phrase is never stored, so it cannot be shown again; give --regenerate to make a new one.") }
    }

    public func run() async throws {
        try await withUnlockedAccount(global, pinInput) { context in
            output.deliver(try await RecoveryFlow.regenerate(account: context.account))
            print("The recovery copy on the server was replaced; the old phrase no longer opens anything.")
        }
    }
}

/// `rampart account reset`: the operator's reset token, a new password and NEW keys.
public struct ResetCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "reset",
        abstract: "Reset the account with the operator's token: new password and NEW keys (old mail becomes unreadable).",
        discussion: """
        For a lost password AND a lost recovery phrase. The operator runs `rampart server reset-password USER` \
        and gives you the single-use token. This device makes a new SRP verifier, a NEW OpenPGP key and a new \
        recovery phrase (shown once, or --recovery-phrase-file). Mail and files sealed to the old key can never \
        be read again, here or anywhere. Every session of the account ends; then this device is set up as by login.
        """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var server: ServerOptions
    @OptionGroup var passwords: NewPasswordOptions
    @OptionGroup var output: RecoveryPhraseOptions
    @Option(help: "The reset token from the operator (rmr-…).") var token: String

    public init() {}

    public func run() async throws {
        try await replaceCredentials(global, server) { endpoint, context in
            let result = try await RecoveryFlow.reset(endpoint: endpoint, token: token, credentials: try passwords.credentials(),
                                                      account: context.account, keymaker: context.keymaker)
            print("Account reset with NEW keys: mail sealed to the old key can no longer be read. \(result.endedSessions) session(s) ended.")
            if let phrase = result.newPhrase { output.deliver(phrase) }
            return result
        }
    }
}

/// What `recover` and `reset` share: in an account session, `flow` replaces the credentials on the
/// server (it reports what it did); then this device is set up as by login.
private func replaceCredentials(_ global: GlobalOptions, _ server: ServerOptions,
                                _ flow: (ServerEndpoint, AccountSession) async throws -> RecoveryResult) async throws {
    try await withAccountSession(global) { context in
        let endpoint = try server.endpoint()
        let result = try await flow(endpoint, context)
        LoginReport.print(result.login, endpoint: endpoint, localUser: context.userID)
    }
}

/// `rampart account delete`: the account erased on the server, then this device wiped as by logout.
public struct DeleteAccountCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete the account on the server (password required) and erase it from this device.",
        discussion: """
        The login password is proven with SRP on a fresh challenge (--password-stdin: one line after the PIN). \
        The server erases every row of the account in one transaction: mail, originals, drive, sessions, push \
        subscriptions, keys, address, recovery copy and verifier; then this device is wiped as by logout. It \
        cannot be undone. Without --yes the username is asked as a confirmation.
        """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var pinInput: PINOptions
    @Flag(name: .customLong("password-stdin"), help: "Read the login password from standard input.") var passwordStdin = false
    @Flag(help: "Do not ask for the username as a confirmation.") var yes = false

    public init() {}

    public func run() async throws {
        try await reportingErrors {
            let context = try AccountSession(global.runtime)
            guard try context.keymaker.hasMainKey() || context.account.isLoggedIn() else { throw ClientError.notLoggedIn(context.userID) }
            try context.unlock(pinInput.input)
            let username = try context.account.session().username
            if !yes {
                guard SecretPrompt.readLine("Type the username (\(username)) to delete the account for good: ") == username else {
                    throw RuntimeError.badInput("The confirmation did not match; nothing was deleted.")
                }
            }
            let password = try SecretInput(fromStandardInput: passwordStdin).read("the login password", prompt: "Password: ")
            let report = try await LogoutFlow.deleteAccount(account: context.account, keymaker: context.keymaker, password: password)
            context.lockAgent()
            print("Account \(username) deleted on the server (every message, file, key and session).")
            print("Erased on this device: \(report.wiped.joined(separator: ", ")).")
            if !report.isComplete { throw KeymakerError.wipeIncomplete(report.failures) }
        }
    }
}
