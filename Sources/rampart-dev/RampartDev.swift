import ArgumentParser
import RampartCLIKit

/// `rampart-dev`: the developer tool. Every module's lab commands and benchmarks, with the names,
/// flags, outputs and exit statuses they had under `rampart`; the user's tool stays free of them.
@main
struct RampartDev: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rampart-dev",
        abstract: "Rampart's developer tool: module lab commands, crash-test hooks and benchmarks.",
        discussion: """
        Run the key commands on a throwaway home (--home DIR): they act on the MainKey directly, \
        outside the agent. The user's commands are in `rampart`.

        \(ExitStatus.helpText)
        """,
        groupedSubcommands: [
            CommandGroup(name: "Keys and storage", subcommands: [
                KeyCommand.self, KeychainCommand.self, StoreCommand.self, VaultCommand.self,
            ]),
            CommandGroup(name: "Mail safety", subcommands: [HTML5Command.self, SanitizeCommand.self, MIMECommand.self]),
            CommandGroup(name: "Transport and push", subcommands: [
                PinCommand.self, TransportCommand.self, PushCommand.self,
            ]),
            CommandGroup(name: "Benchmarks", subcommands: [BenchCommand.self]),
        ]
    )

    /// Accepted before the subcommand too (`rampart-dev --home DIR key init`).
    @OptionGroup var global: GlobalOptions

    /// ArgumentParser's entry point, with usage errors exiting 2 (see ``CommandLineMain``).
    static func main() async { await CommandLineMain.run(self) }
}
