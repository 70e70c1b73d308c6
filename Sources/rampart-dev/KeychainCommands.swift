import ArgumentParser
import RampartCLIKit
import Foundation
import Keychain
import RampartCore

/// `rampart keychain …`: list, store and delete items, and the hidden writer used by the crash and
/// concurrency tests of the file backend.
struct KeychainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keychain",
        abstract: "List, store and delete keychain items (file or Secret Service backend).",
        subcommands: [KeychainListCommand.self, KeychainPutCommand.self, KeychainDeleteCommand.self,
                      KeychainStressWriteCommand.self]
    )
}

/// Where the keychain commands look: `--backend file --dir D` or `--backend secret-service`.
struct KeychainLocationOptions: ParsableArguments {
    @Option(name: .long, help: "file or secret-service.")
    var backend: String = KeychainBackend.file.rawValue

    @Option(name: .long, help: "The file keychain folder (e.g. <home>/keychain); file backend only.")
    var dir: String?

    @Option(name: .long, help: "The access group.")
    var group: String = KeychainAccessGroup.app.name

    func validate() throws {
        guard UserID.isValid(group), group.utf8.count <= 64 else {
            throw ValidationError("--group must be 1–64 characters of letters, digits, '.', '_' or '-'.")
        }
        guard let kind = KeychainBackend(rawValue: backend), kind == .file || kind == .secretService else {
            throw ValidationError("--backend must be file or secret-service.")
        }
        if kind == .file, dir == nil { throw ValidationError("--dir is required with the file backend.") }
    }

    var accessGroup: KeychainAccessGroup { KeychainAccessGroup(group) }

    func makeKeychain() -> any Keychain {
        let home = URL(fileURLWithPath: dir ?? FileManager.default.currentDirectoryPath)
        let environment = RampartEnvironment(homeDirectory: home, settings: [KeychainBackend.settingKey: backend])
        if backend == KeychainBackend.file.rawValue, let dir {
            return FileKeychain(directory: URL(fileURLWithPath: dir))
        }
        return KeychainBackend.keychain(for: environment)
    }
}

struct KeychainListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the item addresses of one access group (never the values)."
    )

    @OptionGroup var location: KeychainLocationOptions

    func run() throws {
        try reportingErrors(withCode: true) {
            let keychain = location.makeKeychain()
            for id in try keychain.itemIDs(accessGroup: location.accessGroup) {
                print(id.description)
            }
        }
    }
}

struct KeychainPutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "put",
        abstract: "Store an item whose value is read from standard input (adds or updates)."
    )

    @OptionGroup var location: KeychainLocationOptions
    @Option(name: .long, help: "The item's service.") var service: String
    @Option(name: .long, help: "The item's account.") var account: String
    @Option(name: .long, help: "Accessibility (default afterFirstUnlockThisDeviceOnly).")
    var accessibility: String = KeychainAccessibility.default.rawValue

    func validate() throws {
        guard KeychainAccessibility(rawValue: accessibility) != nil else {
            throw ValidationError("--accessibility must be one of: \(KeychainAccessibility.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
    }

    func run() throws {
        var input = [UInt8](FileHandle.standardInput.readDataToEndOfFile())
        let value = SecretBytes(consuming: &input)
        try reportingErrors(withCode: true) {
            try location.makeKeychain().set(value, for: KeychainItemID(service: service, account: account, accessGroup: location.accessGroup),
                                            accessibility: KeychainAccessibility(rawValue: accessibility) ?? .default)
        }
    }
}

struct KeychainDeleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete one item.")

    @OptionGroup var location: KeychainLocationOptions
    @Option(name: .long, help: "The item's service.") var service: String
    @Option(name: .long, help: "The item's account.") var account: String

    func run() throws {
        try reportingErrors(withCode: true) {
            try location.makeKeychain().delete(KeychainItemID(service: service, account: account, accessGroup: location.accessGroup))
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
        try reportingErrors(withCode: true) {
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
