import ArgumentParser
import RampartCLIKit
import Foundation
import HardwareKeys
import Keychain
import Keymaker
import RampartCore

/// `rampart-dev key …`: the MainKey's life cycle from a terminal or a script, on a throwaway home
/// (`--home`); the user's tool does the same through `rampart protect`, `unlock`, `change-pin`…
struct KeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Create, protect, unlock and inspect the MainKey.",
        subcommands: [Init.self, Protect.self, RemoveProtectorCommand.self, ChangePIN.self, Unlock.self, Status.self, Autolock.self, Wipe.self, TPMLockout.self]
    )

    struct Init: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a new MainKey (protector: none).")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await withAccountKeys(global) { context in
                let key = try context.keymaker.createMainKey()
                print("Created MainKey \(key.fingerprint) for \(context.userID) (protector: none; keychain: \(context.keychain.backendName)).")
                print("Protect it with `rampart-dev key protect --pin-stdin`.")
            }
        }
    }

    struct Protect: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Choose the MainKey's protector: a PIN, secure hardware, or none.",
            discussion: "The current protector must be unlockable: with a PIN protector, the current PIN is read first (one line), then the new one.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var pin: PINOptions
        @Flag(name: .long, help: "Remove every protector: the MainKey is kept in clear in the keychain.") var none = false
        @Flag(name: .long, help: "Protect with the secure hardware (TPM 2.0 via RAMPART_TPM_TCTI or /dev/tpmrm0; Secure Enclave on Apple) — combined with --pin-stdin, hardware + PIN: the PIN becomes the TPM object's authorization, checked and rate-limited by the TPM.") var hardware = false

        func validate() throws {
            guard pin.pinStdin || none || hardware else { throw ValidationError("Choose --pin-stdin, --hardware or --none.") }
            guard !(none && (pin.pinStdin || hardware)) else { throw ValidationError("--none excludes the other protectors.") }
        }

        func run() async throws {
            try await withAccountKeys(global) { context in
                let keymaker = context.keymaker
                try context.unlockForChange()
                if none {
                    try keymaker.disableProtection()
                    print("MainKey protection removed: the key is in clear in the keychain (\(context.keychain.backendName)).")
                    return
                }
                let kind: ProtectorKind = hardware ? (pin.pinStdin ? .hardwarePIN : .hardware) : .pin
                let credential: UnlockCredential = pin.pinStdin ? .pin(try StandardInput.readSecretLine("the new PIN")) : .none
                // A PIN-only envelope never stays beside a hardware one: the Keymaker replaces it.
                let removed = try keymaker.activate(kind, credential: credential)
                print("MainKey protected by \(kind); active protectors: \(try keymaker.activeProtectors().map(\.rawValue).joined(separator: ", ")).")
                if !removed.isEmpty { print("Removed protectors: \(removed.map(\.rawValue).joined(separator: ", ")).") }
            }
        }
    }

    struct TPMLockout: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "tpm-lockout",
            abstract: "Show the TPM's dictionary-attack state; provision its parameters or end a lockout.",
            discussion: "--set and --reset need the TPM's lockout authorization, which Rampart assumes empty (a fresh or test TPM such as swtpm). On a real machine the OS owner provisions these.")
        @OptionGroup var global: GlobalOptions
        @Option(name: .customLong("set"), help: "MAX_TRIES,RECOVERY_SECONDS,LOCKOUT_RECOVERY_SECONDS, e.g. 3,1000,1000.") var parameters: String?
        @Flag(name: .long, help: "End a lockout and zero the failure counter.") var reset = false

        func validate() throws {
            if let parameters {
                let parts = parameters.split(separator: ",").compactMap { UInt32($0) }
                guard parts.count == 3, parts[0] >= 1 else {
                    throw ValidationError("--set takes three numbers: MAX_TRIES,RECOVERY_SECONDS,LOCKOUT_RECOVERY_SECONDS (MAX_TRIES >= 1).")
                }
            }
        }

        func run() async throws {
            try await reportingErrors {
                #if os(Linux)
                let configuration = TPMConfiguration.fromEnvironment()
                let device = TPMDevice(configuration: configuration)
                if let parameters {
                    let parts = parameters.split(separator: ",").compactMap { UInt32($0) }
                    try device.setDictionaryAttackParameters(
                        TPMDictionaryAttackParameters(maxTries: parts[0], recoveryTime: parts[1], lockoutRecovery: parts[2]))
                }
                if reset { try device.resetDictionaryAttackLockout() }
                print(try device.describe())
                #else
                throw HardwareKeysError.noTPM("the TPM commands are Linux only")
                #endif
            }
        }
    }

    struct ChangePIN: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "change-pin", abstract: "Change the PIN (reads the old PIN, then the new PIN, one per line).")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var pin: PINOptions

        func validate() throws {
            guard pin.pinStdin else { throw ValidationError("change-pin reads the PINs from standard input: pass --pin-stdin.") }
        }

        func run() async throws {
            try await reportingErrors {
                try AccountKeys(global.runtime).changePIN(current: { try StandardInput.readSecretLine("the current PIN") },
                                                          new: { try StandardInput.readSecretLine("the new PIN") })
                print("PIN changed; the MainKey (and every item it protects) is unchanged.")
            }
        }
    }

    struct Unlock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the PIN (or hardware) and unwrap the MainKey.",
            discussion: "Without the agent, the key is unwrapped, checked and dropped when the command ends. A wrong PIN exits with status 4 and says how many attempts are left.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var pin: PINOptions

        func run() async throws {
            try await withAccountKeys(global) { context in
                let credential: UnlockCredential = pin.pinStdin ? .pin(try StandardInput.readSecretLine("the PIN")) : .none
                try context.keymaker.unlock(credential)
                if let warning = context.keymaker.autolockWarning {
                    FileHandle.standardError.write(Data("warning: \(warning)\n".utf8))
                }
                let fingerprint = try context.keymaker.currentMainKey().fingerprint
                context.keymaker.lock()
                print("Unlocked MainKey \(fingerprint) for \(context.userID).")
            }
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the MainKey's protectors and state.")
        @OptionGroup var global: GlobalOptions
        @Flag(name: .long, help: "Print JSON.") var json = false

        func run() async throws {
            try await withAccountKeys(global) { context in
                let status = try context.keymaker.status()
                if json { try printJSON(status); return }
                print("user:              \(status.userID)")
                print("MainKey:           \(status.hasMainKey ? "present" : "none (run `rampart key init`)")")
                print("state:             \(status.unlocked ? "unlocked" : "locked")")
                print("protectors:        \(status.activeProtectors.isEmpty ? "-" : status.activeProtectors.map(\.rawValue).joined(separator: ", "))")
                print("failed PINs:       \(status.failedAttempts) of \(status.maxFailedAttempts) before wipe")
                print("autolock:          \(status.unlocked ? status.autolock : "the stored policy, checked against the MainKey at unlock")")
                if let warning = status.autolockWarning { print("autolock warning:  \(warning)") }
                print("keychain:          \(status.keychainBackend)")
                print("secure hardware:   \(SecureHardware.found())")
                for entry in status.availableProtectors {
                    print("protector \(entry.kind.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0))\(entry.available ? "available" : "unavailable"): \(entry.detail)")
                }
            }
        }
    }

    struct Autolock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set the autolock policy: never, background, or minutes (1, 2, 5, 10, 15, 30, 60).",
            discussion: "The policy is stored authenticated under the MainKey, so the key is unlocked first: with a PIN protector, the current PIN is read from standard input (one line).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "never | background | 1 | 2 | 5 | 10 | 15 | 30 | 60") var policy: String

        func run() async throws {
            try await withAccountKeys(global) { context in
                let parsed = try AutolockPolicy(parsing: policy)
                try context.unlockForChange()
                defer { context.keymaker.lock() }
                try context.keymaker.setAutolockPolicy(parsed)
                print("Autolock: \(parsed).")
            }
        }
    }

    struct Wipe: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Erase the MainKey and every local item of the account.")
        @OptionGroup var global: GlobalOptions
        @Flag(name: .long, help: "Confirm the erase.") var yes = false

        func validate() throws {
            guard yes else { throw ValidationError("This erases every local item of the account; pass --yes to confirm.") }
        }

        func run() async throws {
            try await withAccountKeys(global) { context in
                let report = context.keymaker.wipe(reason: .userRequest)
                print("Wiped: \(report.wiped.joined(separator: ", ")).")
                if !report.isComplete { throw KeymakerError.wipeIncomplete(report.failures) }
            }
        }
    }
}

extension AccountKeys {
    /// Unlocks for a protector change, reading the current PIN (when one is needed) from standard input.
    func unlockForChange() throws {
        try unlockForChange { try StandardInput.readSecretLine("the current PIN") }
    }
}
