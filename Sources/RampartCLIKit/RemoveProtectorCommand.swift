import ArgumentParser
import Keymaker
import RampartRuntime

/// `rampart remove-protector KIND` (and `rampart-dev key remove-protector KIND`): drops one way
/// of opening the MainKey.
///
/// Trust-model row **keychain (low)**: the MainKey is unlocked with the current protector first
/// and never changes, so no data is re-encrypted or lost; the last protector cannot be removed.
public struct RemoveProtectorCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "remove-protector",
        abstract: "Remove one protector (none, pin, hardware, hardwarePIN); at least one must stay.",
        discussion: "The MainKey is unlocked first (asking the current PIN if needed: the terminal, else a line of standard input) and never changes: no data is re-encrypted or lost.")
    @OptionGroup public var global: GlobalOptions
    @OptionGroup public var pinInput: PINOptions
    @Argument(help: "none | pin | hardware | hardwarePIN") public var kind: String

    public init() {}

    public func validate() throws {
        guard ProtectorKind(rawValue: kind) != nil else {
            throw ValidationError("Unknown protector '\(kind)'; choose none, pin, hardware or hardwarePIN.")
        }
    }

    public func run() async throws {
        try await reportingErrors {
            let parsed = ProtectorKind(rawValue: kind) ?? .none
            let active = try AccountKeys(global.runtime).removeProtector(parsed) {
                try pinInput.input.read("the current PIN", prompt: "Current PIN: ")
            }
            print("Removed the \(parsed) protector; active protectors: \(active.map(\.rawValue).joined(separator: ", ")).")
        }
    }
}
