import ArgumentParser

/// Every top-level subcommand, one line per module's command group.
enum RampartCommands {
    static let all: [any ParsableCommand.Type] = [
        PushCommand.self,
        BenchCommand.self,
    ]
}
