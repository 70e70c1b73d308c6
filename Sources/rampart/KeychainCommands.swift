import ArgumentParser
import Foundation
import Keychain
import RampartCore

/// `rampart keychain …`: inspect a file keychain, and the hidden writer used by the crash and
/// concurrency tests of the file backend.
struct KeychainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keychain",
        abstract: "Inspect a Rampart file keychain.",
        subcommands: [KeychainListCommand.self, KeychainStressWriteCommand.self]
    )
}

/// Runs `body`, printing a keychain error on stderr with its exit code.
private func runKeychain(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as KeychainError {
        FileHandle.standardError.write(Data("rampart: \(error.description) [\(error.code)]\n".utf8))
        switch error {
        case .notFound: throw ExitCode(6)
        case .corruptItem, .boundToAnotherDevice: throw ExitCode(7)
        default: throw ExitCode(1)
        }
    }
}

struct KeychainListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the item addresses of one access group (never the values)."
    )

    @Option(name: .long, help: "The keychain folder (e.g. <home>/keychain).")
    var dir: String

    @Option(name: .long, help: "The access group.")
    var group: String = KeychainAccessGroup.app.name

    func validate() throws {
        guard UserID.isValid(group), group.utf8.count <= 64 else {
            throw ValidationError("--group must be 1–64 characters of letters, digits, '.', '_' or '-'.")
        }
    }

    func run() throws {
        try runKeychain {
            let keychain = FileKeychain(directory: URL(fileURLWithPath: dir))
            for id in try keychain.itemIDs(accessGroup: KeychainAccessGroup(group)) {
                let accessibility = (try? keychain.accessibility(of: id).rawValue) ?? "?"
                print("\(id)\t\(accessibility)")
            }
        }
    }
}

/// Rewrites or adds items as fast as it can, printing one acknowledgement line per completed
/// write, so that a test can kill it at any moment and check what survived.
///
/// Value of item `i` written in round `r` with tag `t`: `"t:r:i:"` followed by
/// `(r * 7 + i) % 200` letters `x` (lengths vary, so a torn write would show).
struct KeychainStressWriteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stress-write",
        abstract: "Test writer for the file keychain (crash and concurrency tests).",
        shouldDisplay: false
    )

    enum Mode: String, ExpressibleByArgument {
        /// Rewrites items `item-0 … item-(count-1)` round after round (`set`), printing `ack t r i`.
        case rewrite
        /// Adds `<prefix>-i` and tries to add `contested-i` for each i, printing `won i`/`lost i`.
        case add
    }

    @Option(name: .long, help: "The keychain folder.")
    var dir: String

    @Option(name: .long, help: "Number of items.")
    var count: Int = 20

    @Option(name: .long, help: "rewrite or add.")
    var mode: Mode = .rewrite

    @Option(name: .long, help: "Tag written into values (rewrite) or the name prefix of own items (add).")
    var tag: String = "0"

    @Option(name: .long, help: "Rounds in rewrite mode; 0 runs until killed.")
    var rounds: Int = 0

    @Option(name: .long, help: "Machine identity file (default: /etc/machine-id, /var/lib/dbus/machine-id).")
    var machineID: String?

    func validate() throws {
        guard (1...10_000).contains(count) else { throw ValidationError("--count must be 1...10000.") }
        guard rounds >= 0 else { throw ValidationError("--rounds must not be negative.") }
        guard !tag.isEmpty, !tag.contains(":") else { throw ValidationError("--tag must be non-empty without ':'.") }
    }

    static func value(tag: String, round: Int, index: Int) -> [UInt8] {
        Array("\(tag):\(round):\(index):".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: (round * 7 + index) % 200)
    }

    func run() throws {
        let identity = machineID.map { MachineIdentity(sources: [URL(fileURLWithPath: $0)]) } ?? .system
        let keychain = FileKeychain(directory: URL(fileURLWithPath: dir), machineIdentity: identity)
        let out = FileHandle.standardOutput
        func say(_ line: String) { out.write(Data((line + "\n").utf8)) }
        try runKeychain {
            switch mode {
            case .rewrite:
                say("ready")
                var round = 0
                while rounds == 0 || round < rounds {
                    for index in 0..<count {
                        let id = KeychainItemID(service: "stress", account: "item-\(index)")
                        var bytes = Self.value(tag: tag, round: round, index: index)
                        // Even items are this-device-only, odd ones portable: both key kinds.
                        try keychain.set(SecretBytes(consuming: &bytes), for: id,
                                         accessibility: index % 2 == 0 ? .afterFirstUnlockThisDeviceOnly : .afterFirstUnlock)
                        say("ack \(tag) \(round) \(index)")
                    }
                    round += 1
                }
            case .add:
                say("ready")
                for index in 0..<count {
                    var own = Self.value(tag: tag, round: 0, index: index)
                    try keychain.add(SecretBytes(consuming: &own),
                                     for: KeychainItemID(service: "stress", account: "\(tag)-\(index)"), accessibility: .default)
                    var contested = Self.value(tag: tag, round: 0, index: index)
                    do {
                        try keychain.add(SecretBytes(consuming: &contested),
                                         for: KeychainItemID(service: "stress", account: "contested-\(index)"), accessibility: .default)
                        say("won \(index)")
                    } catch KeychainError.duplicate {
                        say("lost \(index)")
                    }
                }
                say("done")
            }
        }
    }
}
