import ArgumentParser
import RampartCLIKit
import RampartWeb

/// The `rampart` command-line tool: the reference client of the Rampart security core, its
/// commands grouped by the user's tasks. The module lab tools and benchmarks are in `rampart-dev`.
@main
struct Rampart: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rampart",
        abstract: "The Rampart reference client: your account, mail and drive, end-to-end encrypted.",
        discussion: ExitStatus.helpText,
        groupedSubcommands: [
            CommandGroup(name: "Account", subcommands: [
                SignupCommand.self, LoginCommand.self, LogoutCommand.self, StatusCommand.self, ProtectCommand.self, UnlockCommand.self,
                LockCommand.self, ChangePINCommand.self, RemoveProtectorCommand.self, SettingsCommand.self,
                AccountCommand.self,
            ]),
            CommandGroup(name: "Mail", subcommands: [
                SyncCommand.self, ListCommand.self, ReadCommand.self, SendCommand.self, AttachmentCommand.self,
                ImportCommand.self, ExportCommand.self, ContactsCommand.self,
            ]),
            CommandGroup(name: "Drive", subcommands: [DriveCommand.self]),
            CommandGroup(name: "Web app", subcommands: [WebCommand.self]),
            CommandGroup(name: "Mail programs", subcommands: [BridgeCommand.self]),
            CommandGroup(name: "Notifications", subcommands: [NotificationsCommand.self]),
            CommandGroup(name: "Local backend", subcommands: [ServerCommand.self]),
            CommandGroup(name: "Agent", subcommands: [AgentCommand.self]),
            CommandGroup(name: "Demo", subcommands: [DemoCommand.self]),
        ]
    )

    /// Accepted before the subcommand too (`rampart --home DIR status`); the subcommands
    /// declare the same group and receive the values.
    @OptionGroup var global: GlobalOptions

    /// ArgumentParser's entry point, with usage errors exiting 2 (see ``CommandLineMain``).
    static func main() async { await CommandLineMain.run(self) }
}
