import ArgumentParser
import Foundation
import RampartClient
import RampartCore
import RampartRuntime

/// `rampart account address add|list|remove`: the account's addresses, each with its own key.
///
/// Trust-model rows **the user's private and public keys (critical)** (every address key is made
/// on this device and locked with a token of the user key) and **username (critical)** (the
/// server takes only free addresses of its own domain).
public struct AddressCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "address",
        abstract: "The account's addresses: add (with a key of its own, made here), list, remove.",
        discussion: """
        Mail to any address of the account reaches it, and `rampart send --from ADDRESS` sends from one. \
        Each address has its own OpenPGP key, made on this device and locked with a random token that is \
        encrypted to and signed by your user key (Proton's key model); the key directory answers for every \
        address. An address must be in the server's domain; the first address (made at sign-up) cannot be \
        removed. A removed address gets no more mail and leaves the key directory; its key stays with the \
        account so the mail it received still opens.
        """,
        subcommands: [Add.self, List.self, Remove.self])

    public init() {}

    /// `rampart account address add ADDRESS`.
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Add an address, with a new key made on this device.")
        @OptionGroup var change: AddressChangeOptions
        func run() async throws {
            try await change.run(AddressFlow.add) { "Added \($0) with a key of its own. Addresses: \($1)." }
        }
    }

    /// `rampart account address list`.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the account's addresses (the primary first).")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var pinInput: PINOptions
        @Flag(help: "Print a JSON array.") var json = false

        func run() async throws {
            try await withUnlockedAccount(global, pinInput) { context in
                let addresses = try await AddressFlow.list(account: context.account)
                if json { try JSONOutput.print(addresses) } else { addresses.forEach { print($0) } }
            }
        }
    }

    /// `rampart account address remove ADDRESS`.
    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove an address (not the primary one); its old mail still opens.")
        @OptionGroup var change: AddressChangeOptions
        func run() async throws {
            try await change.run(AddressFlow.remove) { "Removed \($0): no more mail is delivered to it. Addresses: \($1)." }
        }
    }
}

/// What `address add` and `address remove` take: the account (as every command) and the address.
public struct AddressChangeOptions: ParsableArguments {
    @OptionGroup var global: GlobalOptions
    @OptionGroup var pinInput: PINOptions
    @Argument(help: "The address (name@the server's domain).") var address: String
    public init() {}

    /// Runs `change` on the unlocked account and prints `done(address, the account's addresses)`.
    func run(_ change: (String, ClientAccount) async throws -> [String], done: (String, String) -> String) async throws {
        let address = self.address
        try await withUnlockedAccount(global, pinInput) { context in
            let addresses = try await change(address, context.account)
            print(done(address.lowercased(), addresses.joined(separator: ", ")))
        }
    }
}
