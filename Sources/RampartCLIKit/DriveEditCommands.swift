import ArgumentParser
import Foundation
import RampartClient
import RampartRuntime

/// `rampart drive rename ID NAME`: a new revision of the file's sealed metadata with the new
/// name (the blocks and the content key stay; the server never sees the name).
///
/// Trust-model row **database (nodes, revisions, blocks), critical**: the new name is sealed to
/// the account's key and signed for the node and the new revision id, like an upload's.
public struct DriveRenameCommand: UnlockedAccountCommand {
    public static let configuration = CommandConfiguration(commandName: "rename", abstract: "Rename a drive file or folder.")
    @OptionGroup public var global: GlobalOptions
    @Argument(help: "The file's id (see `rampart drive ls`).") var id: String
    @Argument(help: "The new name.") var name: String
    @OptionGroup public var pinInput: PINOptions

    public init() {}

    public func run(with context: AccountSession) async throws {
        let entry = try await context.withAPI { try await DriveClient(account: context.account).renameFile(id, to: name, api: $0) }
        print("Renamed \(entry.id) to \(TerminalTextLine.clean(entry.name)).")
    }
}

/// `rampart drive rm ID`: deletes the file on the server (its revisions and encrypted blocks).
///
/// Trust-model row **database (nodes, revisions, blocks), critical**: scoped to the session's
/// user by the server; the local list forgets the file too.
public struct DriveRemoveCommand: UnlockedAccountCommand {
    public static let configuration = CommandConfiguration(commandName: "rm", abstract: "Delete a drive file or an empty folder (a folder with something in it is refused).")
    @OptionGroup public var global: GlobalOptions
    @Argument(help: "The file's id (see `rampart drive ls`).") var id: String
    @OptionGroup public var pinInput: PINOptions

    public init() {}

    public func run(with context: AccountSession) async throws {
        try await context.withAPI { try await DriveClient(account: context.account).deleteFile(id, api: $0) }
        print("Deleted \(id).")
    }
}
