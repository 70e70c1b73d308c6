import ArgumentParser
import Foundation
import RampartClient
import RampartRuntime

/// `rampart drive ls [PATH]`: the files and folders of the root folder or of folder PATH
/// (`Documents/2026`), names opened on this device.
///
/// Trust-model row **database (nodes, revisions, blocks), critical**: names are sealed to the
/// account's key and signed for their node; the server sees none (see `DriveClient`).
public struct DriveListCommand: UnlockedAccountCommand {
    public static let configuration = CommandConfiguration(commandName: "ls", abstract: "List the drive's files and folders.")
    @OptionGroup public var global: GlobalOptions
    @Argument(help: "A folder, by its names from the root (e.g. Documents/2026); default: the root folder.") var path: String?
    @OptionGroup public var pinInput: PINOptions

    public init() {}

    public func run(with context: AccountSession) async throws {
        let entries = try await context.withAPI { api in
            let drive = DriveClient(account: context.account)
            return try await drive.list(in: try await drive.folder(atPath: path ?? "", api: api)?.id, api: api)
        }
        if entries.isEmpty { print(path == nil ? "The drive is empty." : "The folder is empty."); return }
        for entry in entries.sorted(by: { $0.isFolder && !$1.isFolder }) {
            print("\(entry.id)  \(String(entry.size).padding(toLength: 10, withPad: " ", startingAt: 0))  \(TerminalTextLine.clean(entry.name))\(entry.isFolder ? "/" : "")")
        }
    }
}

/// `rampart drive mkdir PATH`: a new folder (its parent must exist), its name sealed as file
/// names are.
///
/// Trust-model row **database (nodes, revisions, blocks), critical**.
public struct DriveMakeFolderCommand: UnlockedAccountCommand {
    public static let configuration = CommandConfiguration(commandName: "mkdir", abstract: "Create a drive folder.")
    @Argument(help: "The new folder, by its names from the root (e.g. Documents or Documents/2026).") var path: String
    @OptionGroup public var global: GlobalOptions
    @OptionGroup public var pinInput: PINOptions
    public init() {}

    public func run(with context: AccountSession) async throws {
        let entry = try await context.withAPI { try await DriveClient(account: context.account).createFolder(atPath: path, api: $0) }
        print("Created the folder \(TerminalTextLine.clean(entry.name)) as \(entry.id).")
    }
}
