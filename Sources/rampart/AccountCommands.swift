import ArgumentParser
import Foundation
import HardwareKeys
import Keymaker
import RampartCLIKit
import RampartClient
import RampartCore

// The account: login, protect, change-pin, remove-protector, logout, settings (unlock, lock and
// status are in AgentCommands.swift: they work through the agent).

// MARK: - login

/// `rampart login`: logs in, creates the MainKey, stores the session and keys sealed, registers push.
struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Log in to a Rampart server and set the account up on this device.",
        discussion: """
        The server is given by its server.json (--server-info, written by `rampart server start`) or by \
        --url plus at least two --pin (SPKI SHA-256, base64), --ca (its root certificate, PEM) and the SRP \
        modulus key (--modulus-key FILE --modulus-fingerprint HEX). The login password is proven with SRP and \
        never sent; a modulus not signed by the pinned key or a server that cannot prove it knows the \
        password verifier is refused (exit status 8) and nothing is stored. \
        With --password-stdin and --mailbox-password-stdin both, the login password is the first line and \
        the mailbox password the second. The new MainKey has no protector until `rampart protect`.
        """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var server: ServerOptions
    @Option(help: "The login username (default: asked).") var username: String?
    @Flag(name: .customLong("password-stdin"), help: "Read the login password from standard input.") var passwordStdin = false
    @Flag(name: .customLong("mailbox-password-stdin"), help: "Read the mailbox password from standard input.") var mailboxPasswordStdin = false

    func run() async throws {
        try await withAccountSession(global) { context in
            let endpoint = try server.endpoint()
            guard let name = username ?? SecretPrompt.readLine("Username: "), !name.isEmpty else {
                throw RuntimeError.badInput("A username is needed (--username).")
            }
            let password = try SecretInput(fromStandardInput: passwordStdin).read("the login password", prompt: "Password: ")
            let mailbox = try SecretInput(fromStandardInput: mailboxPasswordStdin).read("the mailbox password", prompt: "Mailbox password: ")
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
        object's authorization, so every guess is counted by the TPM's lockout. The hardware replaces a PIN \
        protector already set (and --pin alone replaces the hardware): no copy that the PIN alone opens stays \
        on disk, so without this machine's TPM the local data does not open (log in again to start over).
        """)
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Protect with a PIN.") var pin = false
    @Flag(help: "Protect with the secure hardware.") var hardware = false
    @Flag(help: "No protector: the MainKey is kept in clear in the keychain (the file keychain's binding to /etc/machine-id is not a secret: whoever copies the home folder and that file has the key).") var none = false
    @OptionGroup var pinInput: PINOptions

    func validate() throws {
        guard !(none && (pin || hardware)), none || pin || hardware else {
            throw ValidationError("Choose --pin, --hardware (optionally with --pin), or --none.")
        }
    }

    func run() async throws {
        try await withAccountSession(global) { context in
            let keymaker = context.keymaker
            guard try keymaker.hasMainKey() else { throw ClientError.notLoggedIn(context.userID) }
            let chosen: ProtectorKind = hardware ? (pin ? .hardwarePIN : .hardware) : (pin ? .pin : .none)
            let removed: [ProtectorKind]
            if chosen.needsPIN, try keymaker.activeProtectors() == [chosen] {
                // The same protection with a new PIN: the current one first, then the new one.
                let oldPIN = try pinInput.input.read("the current PIN", prompt: "Current PIN: ")
                try keymaker.changePIN(from: oldPIN, to: try newPIN())
                removed = []
            } else {
                // Unlocked here first (the current PIN if the current protection needs one), then
                // the Keymaker keeps only the chosen protector and says what it removed.
                try context.unlock(pinInput.input, inProcess: true)
                // Already stored beside others (an earlier version's state): kept, the others go.
                let kept = try keymaker.activeProtectors().contains(chosen)
                if chosen == .none {
                    removed = try keymaker.disableProtection()
                } else {
                    removed = try keymaker.activate(chosen, credential: chosen.needsPIN && !kept ? .pin(try newPIN()) : .none)
                }
            }
            switch chosen {
            case .none:
                print("MainKey protection removed: the key is in clear in the keychain.")
            case .pin:
                print("MainKey protected by a PIN (\(keymaker.configuration.maxFailedAttempts) wrong PINs erase the account's local data).")
            case .hardware, .hardwarePIN:
                print("MainKey protected by the secure hardware (\(SecureHardware.found())); active protectors: \(try keymaker.activeProtectors().map(\.rawValue).joined(separator: ", ")).")
            }
            if !removed.isEmpty {
                print("Removed protectors: \(removed.map(\.rawValue).joined(separator: ", ")) (only the protection you chose is kept).")
            }
        }
    }

    /// The new PIN: a line of standard input, or asked twice on the terminal.
    private func newPIN() throws -> SecretBytes { try pinInput.input.readNewPIN() }
}

// MARK: - logout

struct LogoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "End the session on the server and erase everything of the account on this device.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var pinInput: PINOptions

    func run() async throws {
        try await reportingErrors {
            let context = try AccountSession(global.runtime)
            guard try context.keymaker.hasMainKey() || context.account.isLoggedIn() else { throw ClientError.notLoggedIn(context.userID) }
            try context.unlock(pinInput.input)
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

// MARK: - settings

struct SettingsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "Privacy settings (stored in the sealed store with a MAC under the MainKey).",
        discussion: """
        show | remote-content on|off|block (block: block all, even when asked per message) | trust ADDRESS | untrust ADDRESS. A setting changed on disk without the \
        MainKey fails its check: its safe default (remote content blocked, nobody trusted) is used and a warning shown.
        """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "show, remote-content, trust or untrust") var action: String = "show"
    @Argument(help: "on|off|block for remote-content; an address for trust/untrust") var value: String?
    @OptionGroup var pinInput: PINOptions

    func validate() throws {
        switch action {
        case "show": break
        case "remote-content": guard ["on", "off", "block"].contains(value) else { throw ValidationError("remote-content takes on, off or block.") }
        case "trust", "untrust": guard let value, value.contains("@") else { throw ValidationError("\(action) takes a sender address.") }
        default: throw ValidationError("Unknown action '\(action)': show, remote-content, trust, untrust.")
        }
    }

    func run() async throws {
        try await withUnlockedAccount(global, pinInput) { context in
            let store = try context.account.store()
            let readout = try store.privacySettings()
            for warning in readout.warnings { FileHandle.standardError.write(Data("rampart: warning: \(warning)\n".utf8)) }
            var settings = readout.settings
            switch action {
            case "remote-content": (settings.autoLoadRemoteContent, settings.blockAllRemoteContent) = (value == "on", value == "block")
            case "trust": if !settings.trustedSenders.contains(value!.lowercased()) { settings.trustedSenders.append(value!.lowercased()) }
            case "untrust": settings.trustedSenders.removeAll { $0 == value!.lowercased() }
            default: break
            }
            if action != "show" { try store.setPrivacySettings(settings) }
            print("remote content:   \(settings.blockAllRemoteContent ? "always blocked (block all)" : settings.autoLoadRemoteContent ? "loaded automatically (trackable)" : "blocked unless asked for")")
            print("trusted senders:  \(settings.trustedSenders.isEmpty ? "-" : settings.trustedSenders.joined(separator: ", "))")
            print("strip image metadata: \(settings.stripImageMetadata ? "on" : "off")")
        }
    }
}

// MARK: - change-pin (remove-protector is RampartCLIKit's RemoveProtectorCommand, shared with `rampart-dev key`)

/// `rampart change-pin`: a new PIN for the account's MainKey.
struct ChangePINCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "change-pin",
        abstract: "Change the account's PIN (the MainKey, and every item it protects, is unchanged).",
        discussion: "Asks the current PIN, then the new one twice; with --pin-stdin reads the current PIN, then the new PIN, one per line.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var pinInput: PINOptions

    func run() async throws {
        try await withAccountKeys(global) { keys in
            guard try keys.keymaker.hasMainKey() else { throw ClientError.notLoggedIn(keys.userID) }
            try keys.changePIN(current: { try pinInput.input.read("the current PIN", prompt: "Current PIN: ") },
                               new: { try pinInput.input.readNewPIN() })
            print("PIN changed; the MainKey (and every item it protects) is unchanged.")
        }
    }
}
