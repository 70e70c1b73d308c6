import ArgumentParser
import Foundation
import RampartClient
import RampartCore
import RampartRuntime

/// `rampart contacts accept-key ADDRESS --fingerprint FPR`: after a correspondent's key changed
/// (``ContactKeyChanged``), pin the key the server offers now, once its fingerprint was compared
/// with the correspondent out of band.
///
/// Trust-model row **inbox (low)**: the new key replaces the pin only when the fingerprint the
/// user typed is the offered key's (and, with a key log, the log proves it).
public struct AcceptKeyCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "accept-key",
        abstract: "Pin the key the server now offers for an address (after a key change), given its fingerprint.",
        discussion: """
        When a correspondent's key changes (they reset their account, or someone substitutes a key), `rampart send` \
        stops and says so. Ask them for their new fingerprint by another channel (in person, by phone); give it here. \
        A different fingerprint pins nothing.
        """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var pinInput: PINOptions
    @Argument(help: "The correspondent's address.") var address: String
    @Option(help: "The new key's fingerprint as the correspondent gave it (40 hex digits).") var fingerprint: String

    public init() {}

    public func run() async throws {
        try await withUnlockedAccount(global, pinInput) { context in
            let pinned = try await context.withAPI { api in
                try await ContactKeys(account: context.account).acceptOffered(address, fingerprint: fingerprint, api: api)
            }
            print("Pinned \(pinned.address)  \(pinned.fingerprint)  (server, accepted by you)")
        }
    }
}
