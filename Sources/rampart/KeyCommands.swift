import ArgumentParser
import Foundation
import RampartCLIKit
import RampartClient
import RampartCore

// MARK: - contacts (pinned OpenPGP keys)

/// `rampart contacts list | import-key FILE`: the correspondents' OpenPGP keys pinned on this
/// device (trust-model row **inbox (low)**: signatures are checked against these pins).
struct ContactsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contacts",
        abstract: "Correspondents' OpenPGP keys pinned on this device.",
        discussion: """
        A sender's key is pinned the first time it is needed (from this server's key directory); a different key the \
        server offers later is reported and not used (send stops; accept-key pins it). import-key pins the keys of an armored file (e.g. \
        `gpg --export --armor ADDRESS`) for their addresses, replacing earlier pins.
        """,
        subcommands: [List.self, ImportKey.self, VerifyContactCommand.self, AcceptKeyCommand.self], defaultSubcommand: List.self)

    struct List: UnlockedAccountCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "Address, fingerprint and source of every pinned key.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var pinInput: PINOptions

        func run(with context: AccountSession) async throws {
            let pins = try ContactKeys(account: context.account).all()
            if pins.isEmpty { print("No key pinned yet."); return }
            for pin in pins {
                print("\(TerminalTextLine.clean(pin.address))  \(pin.fingerprint)  \(pin.source.rawValue)  since \(Date(timeIntervalSince1970: TimeInterval(pin.firstSeen)))")
            }
        }
    }

    struct ImportKey: UnlockedAccountCommand {
        static let configuration = CommandConfiguration(commandName: "import-key", abstract: "Pin the OpenPGP public keys of an armored file for their addresses.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "An armored public key file (-----BEGIN PGP PUBLIC KEY BLOCK-----).") var file: String
        @OptionGroup var pinInput: PINOptions

        func run(with context: AccountSession) async throws {
            guard let data = FileManager.default.contents(atPath: file) else { throw RuntimeError.badInput("Cannot read \(file).") }
            let pinned = try ContactKeys(account: context.account).importKeys(armored: String(decoding: data, as: UTF8.self))
            for pin in pinned { print("Pinned \(TerminalTextLine.clean(pin.address))  \(pin.fingerprint)  (imported)") }
        }
    }
}

// MARK: - account public-key

/// `rampart account public-key [--armor]`: the account's OpenPGP public key, for other software
/// to encrypt to and verify with (trust-model row **the user's private and public keys**: only
/// the public half leaves).
struct AccountCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "account", abstract: "The account: its key, password, recovery, reset, deletion.", subcommands: [PublicKey.self, ChangePassword.self, RecoverCommand.self, RecoveryPhraseCommand.self, ResetCommand.self, DeleteAccountCommand.self, AddressCommand.self, AuditCommand.self, SessionsCommand.self])

    struct PublicKey: UnlockedAccountCommand {
        static let configuration = CommandConfiguration(commandName: "public-key",
                                                        abstract: "Write the account's OpenPGP public key to standard output (binary, or armored with --armor).")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "ASCII armor (-----BEGIN PGP PUBLIC KEY BLOCK-----).") var armor = false
        @OptionGroup var pinInput: PINOptions

        func run(with context: AccountSession) async throws {
            let key = try context.account.mailboxKey().publicKey
            if armor {
                FileHandle.standardOutput.write(Data(key.armored().utf8))
            } else {
                FileHandle.standardOutput.write(key.binary)
            }
            FileHandle.standardError.write(Data("rampart: public key \(key.fingerprint.hex)\n".utf8))
        }
    }
}
