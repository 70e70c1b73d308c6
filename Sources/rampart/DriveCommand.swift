import ArgumentParser
import Foundation
import RampartCLIKit
import RampartClient
import RampartCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - drive

struct DriveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drive",
        abstract: "Encrypted drive: upload, download, list, folders, rename, delete.",
        subcommands: [Upload.self, Download.self, DriveListCommand.self, DriveMakeFolderCommand.self, DriveRenameCommand.self, DriveRemoveCommand.self])

    struct Upload: UnlockedAccountCommand {
        static let configuration = CommandConfiguration(abstract: "Encrypt a file with a new per-file key and upload it.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The file to upload.") var file: String
        @Option(help: "The drive folder to upload into, by its names (e.g. Documents/2026); default: the root folder.") var to: String?
        @OptionGroup var pinInput: PINOptions

        func run(with context: AccountSession) async throws {
            let bar = ProgressBar(), drive = DriveClient(account: context.account)
            let entry = try await context.withAPI { try await drive.upload(URL(fileURLWithPath: file), into: try await drive.folder(atPath: to ?? "", api: $0)?.id, api: $0, progress: bar.handler) }
            bar.end()
            print("Uploaded \(entry.name) (\(entry.size) bytes) as \(entry.id).")
        }
    }

    struct Download: UnlockedAccountCommand {
        static let configuration = CommandConfiguration(abstract: "Download and decrypt a file.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The file's id (see `rampart drive ls`).") var id: String
        @Argument(help: "Where to write the cleartext.") var path: String
        @OptionGroup var pinInput: PINOptions

        func run(with context: AccountSession) async throws {
            let bar = ProgressBar()
            let entry = try await context.withAPI { try await DriveClient(account: context.account).download(id, to: URL(fileURLWithPath: path), api: $0, progress: bar.handler) }
            bar.end()
            print("Downloaded \(TerminalTextLine.clean(entry.name)) (\(entry.size) bytes) to \(path).")
        }
    }

}

/// Progress on stderr: a bar redrawn in place when stderr is a terminal, plain lines otherwise.
final class ProgressBar: @unchecked Sendable {
    private let lock = NSLock()
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private var lastPlainDecile: [String: Int64] = [:]
    private var drewBar = false

    var handler: ProgressHandler { { [self] progress in self.show(progress) } }

    func show(_ progress: TransferProgress) {
        lock.withLock {
            if isTerminal {
                let width = 30
                var line = "\r\(progress.phase) "
                if let total = progress.total, total > 0 {
                    let fraction = min(1, Double(progress.done) / Double(total))
                    let filled = Int(fraction * Double(width))
                    line += "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "]"
                    line += String(format: " %3d%% ", Int(fraction * 100)) + "\(Self.amount(progress.done, progress))/\(Self.amount(total, progress))"
                } else {
                    line += Self.amount(progress.done, progress)
                }
                FileHandle.standardError.write(Data((line + "\u{1B}[K").utf8))
                drewBar = true
            } else {
                // Plain lines: the start, every 25 %, and the end.
                let step: Int64 = progress.total.map { $0 > 0 ? min(4, Int64(Double(progress.done) / Double($0) * 4)) : 4 } ?? 0
                if let last = lastPlainDecile[progress.phase], last >= step, progress.done != progress.total { return }
                if lastPlainDecile[progress.phase] == step { return }
                lastPlainDecile[progress.phase] = step
                let total = progress.total.map { "/\(Self.amount($0, progress))" } ?? ""
                FileHandle.standardError.write(Data("\(progress.phase): \(Self.amount(progress.done, progress))\(total)\n".utf8))
            }
        }
    }

    func end() {
        lock.withLock { if drewBar { FileHandle.standardError.write(Data("\n".utf8)); drewBar = false } }
    }

    static func amount(_ value: Int64, _ progress: TransferProgress) -> String {
        guard progress.phase.hasPrefix("upload") || progress.phase.hasPrefix("download") else { return String(value) }
        return value == 0 ? "0 B" : ByteCountFormatter.string(fromByteCount: value, countStyle: .binary)
    }
}
