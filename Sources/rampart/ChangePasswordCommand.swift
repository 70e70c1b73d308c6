import ArgumentParser
import Foundation
import RampartCLIKit
import RampartClient
import RampartCore
import RampartRuntime

// MARK: - account change-password

extension AccountCommand {
    /// `rampart account change-password`: a new login password, set with SRP (a new salt and
    /// verifier; neither password is sent). Trust-model row **server (zero access)**.
    struct ChangePassword: UnlockedAccountCommand {
        static let configuration = CommandConfiguration(
            commandName: "change-password",
            abstract: "Change the login password (SRP: a new salt and verifier; the current password is required).",
            discussion: """
            The current password is proven with SRP on a fresh challenge and the server's proof is checked; \
            the new password never leaves this device either (only its salt and verifier do). \
            Other sessions of the account are ended by the server (other devices must log in again with the \
            new password) unless --keep-other-sessions is given; this session continues. In one-password mode \
            (the login password also unlocks the keys) the user key is re-locked under the new password in \
            the same request, so the new password is the mailbox password too; a separate mailbox password \
            (--two-password) is not changed. With --password-stdin the current \
            password is the first line and the new one the second (after the PIN with --pin-stdin).
            """)
        @OptionGroup var global: GlobalOptions
        @OptionGroup var pinInput: PINOptions
        @Flag(name: .customLong("password-stdin"), help: "Read the current and the new login password from standard input.") var passwordStdin = false
        @Flag(name: .customLong("keep-other-sessions"), help: "Do not end the account's other sessions.") var keepOtherSessions = false

        func run(with context: AccountSession) async throws {
            let record = try context.account.session()
            let input = SecretInput(fromStandardInput: passwordStdin)
            let old = try input.read("the current login password", prompt: "Current password: ")
            let new = try input.read("the new login password", prompt: "New password: ")
            defer { old.wipe(); new.wipe() }
            guard new.count > 0 else { throw RuntimeError.badInput("The new password is empty; nothing changed.") }
            let change = try await context.account.api().closing { api in
                try await api.changeLoginPassword(username: record.username, old: old, new: new, endOtherSessions: !keepOtherSessions)
            }
            let mailbox = change.mailboxPasswordFollowed ? "the keys are re-locked under it too (one-password mode)"
                : "the separate mailbox password is unchanged"
            print("Login password changed (new SRP salt and verifier); \(mailbox); \(change.endedSessions) other session(s) ended.")
        }
    }
}
