import ArgumentParser

/// Every top-level subcommand, one line per module's command group.
enum RampartCommands {
    static let all: [any ParsableCommand.Type] = [
        KeyCommand.self,
        BenchCommand.self,
        DemoCommand.self,
        KeychainCommand.self,
        HTML5Command.self,
        PinCommand.self,
        TransportCommand.self,
        StoreCommand.self,
        SanitizeCommand.self,
        PushCommand.self,
        LoginCommand.self,
        ProtectCommand.self,
        SyncCommand.self,
        ListCommand.self,
        ReadCommand.self,
        AttachmentCommand.self,
        DriveCommand.self,
        LogoutCommand.self,
        SendCommand.self,
        NotificationsCommand.self,
        SettingsCommand.self,
        ServerCommand.self,
        AgentCommand.self,
        UnlockCommand.self,
        LockCommand.self,
        StatusCommand.self,
        VaultCommand.self,
    ]
}
