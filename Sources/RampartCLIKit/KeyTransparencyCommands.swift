import ArgumentParser
import Crypto
import Foundation
import RampartClient
import RampartCore

/// `rampart server witness --data DIR --server-info FILE`: the key log's witness, a process of its
/// own with its own key and state file (``KeyLogWitness``).
///
/// Trust-model row **the user's private and public keys (critical when modified)**: it cosigns a
/// head only when it extends the head it cosigned last; clients require its cosignature.
public struct ServerWitnessCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "witness",
        abstract: "Witness a server's key log: check each new head extends the last one and cosign it.",
        discussion: """
        Runs apart from the server, with its own key (DIR/witness-key, made at first use) and state \
        (DIR/state.json, the head it cosigned last). Each round it fetches the log's newest signed head, checks the \
        consistency proof from the head it cosigned last (a fork or a rewritten log is refused and never cosigned), \
        cosigns it (C2SP cosignature/v1) and gives the cosignature to the server, which serves the cosigned head. \
        --print-key prints the key to pin: put that line in the server's <data>/keylog-witnesses file (one key a line) \
        before `rampart server start`, so the server accepts its cosignatures and server.json pins it for clients.
        """)

    @Option(name: .customLong("data"), help: "The witness's own folder (0700).") var data: String
    @Option(name: .customLong("server-info"), help: "The server's server.json (URL, TLS pins, the log key).") var serverInfo: String?
    @Option(help: "The witness's key name.") var name = "rampart-witness"
    @Option(help: "Seconds between rounds.") var interval: Double = 5
    @Flag(help: "Run one round and exit.") var once = false
    @Flag(name: .customLong("print-key"), help: "Print the witness's cosignature key (made if missing) and exit.") var printKey = false

    public init() {}

    public func validate() throws {
        if !printKey && serverInfo == nil { throw ValidationError("Give --server-info FILE (or --print-key).") }
        guard interval >= 0.2 else { throw ValidationError("--interval is at least 0.2 seconds.") }
    }

    public func run() async throws {
        try await reportingErrors {
            ProcessHardening.disableCoreDumps()
            let witness = KeyLogWitness(directory: URL(fileURLWithPath: data), name: name)
            if printKey { print(try witness.verifierKey()); return }
            let endpoint = try ServerEndpoint.fromServerInfoFile(URL(fileURLWithPath: serverInfo ?? ""))
            guard let logKey = endpoint.keyLog?.logKey else { throw RuntimeError.badInput("\(serverInfo ?? "") pins no key log.") }
            let api = try APIClient(endpoint: endpoint)
            try await api.closing { api in
                repeat {
                    let now = UInt64(Date().timeIntervalSince1970)
                    switch try await witness.round(api: api, logKey: logKey, now: now) {
                    case .cosigned(let size): print("cosigned the head of \(size) entries")
                    case .unchanged(let size): if once { print("the head of \(size) entries is cosigned already") }
                    }
                    fflush(nil)
                    if !once { try await Task.sleep(for: .milliseconds(Int(interval * 1000))) }
                } while !once
            }
        }
    }
}

/// `rampart contacts verify ADDRESS`: the safety number of the user's key and the pinned key of
/// ADDRESS, to compare out of band; marks the contact verified.
///
/// Trust-model row **the user's private and public keys (critical when modified)**: what the key
/// log cannot prove (the first key of a server that lies to everyone alike) two people can
/// compare themselves, as Signal's safety numbers and Apple's Contact Key Verification do.
public struct VerifyContactCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Show the safety number of you and ADDRESS to compare out of band; mark the contact verified.",
        discussion: """
        The safety number is 60 digits made from both keys' fingerprints (SHA-256 of the two sorted fingerprints); \
        ADDRESS sees the same number on their device. Compare it in person or on a call: when it matches, the key \
        is marked verified (it is then used even if the key log cannot prove it). The key is pinned from the \
        directory first if it is not yet.
        """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var pinInput: PINOptions
    @Argument(help: "The correspondent's address.") var address: String

    public init() {}

    public func run() async throws {
        try await withUnlockedAccount(global, pinInput) { context in
            let contacts = ContactKeys(account: context.account)
            var pinned = try contacts.pinned(address)
            if pinned == nil {
                pinned = try await context.account.api().closing { api in try await contacts.lookup(address, api: api) }.pinned
                guard (try contacts.pinned(address)) != nil else { throw ClientError.notFound(kind: "key the key log proves (or any directory key)", id: address) }
            }
            guard let theirs = pinned else { throw ClientError.notFound(kind: "key", id: address) }
            let key = try context.account.mailboxKey()
            defer { key.wipe() }
            let mine = key.publicKey.fingerprint.hex
            print("Your key:         \(mine)")
            print("\(TerminalTextLine.clean(theirs.address)): \(theirs.fingerprint)")
            print("Safety number:    \(Self.safetyNumber(mine, theirs.fingerprint))")
            try contacts.markVerified(address)
            print("Marked \(TerminalTextLine.clean(theirs.address)) verified. If the number differs on their device, do not trust this key: `rampart contacts import-key` theirs.")
        }
    }

    /// Twelve groups of five digits from SHA-256 of the two fingerprints, sorted (the same on both sides).
    public static func safetyNumber(_ a: String, _ b: String) -> String {
        let digest = Array(SHA256.hash(data: Data([a.uppercased(), b.uppercased()].sorted().joined(separator: "\n").utf8)))
        return (0..<12).map { group in
            let chunk = digest[(group * 2)..<(group * 2 + 2)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            return String(format: "%05u", chunk % 100_000)
        }.joined(separator: " ")
    }
}

/// `rampart account audit`: the self-audit of key transparency.
///
/// Trust-model row **the user's private and public keys (critical when modified)**: every log entry
/// of the user's own addresses must hold only keys the user made; a foreign key is an alarm (the
/// server published a key for this account that the user never made).
public struct AuditCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Check the key log's entries for your addresses hold only keys you made.",
        discussion: """
        Fetches every entry the key log holds for your addresses, checks each inclusion proof in the witnessed head \
        (itself checked as for sending: log key, witness cosignature, age, consistency with the head this device \
        stored), and compares each entry's keys with the keys of your account. A key you did not make is an ALARM \
        (exit 11): someone may be reading mail sent to you. Limit: the server files entries under a keyed index of \
        each address; an entry it filed under another index is not among those it shows here.
        """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var pinInput: PINOptions

    public init() {}

    public func run() async throws {
        try await withUnlockedAccount(global, pinInput) { context in
            let account = context.account
            guard let pins = try account.session().endpoint.keyLog else {
                throw ClientError.badServer("this server publishes no key log (its server.json pins none)")
            }
            let keys = try account.mailboxKeys()
            defer { keys.forEach { $0.wipe() } }
            let result = try await account.api().closing { api in
                try await KeyTransparency(account: account, pins: pins).audit(api: api, ownKeys: keys.map(\.publicKey))
            }
            guard result.alarms.isEmpty else {
                for alarm in result.alarms {
                    print("ALARM: entry \(alarm.leafIndex) of \(TerminalTextLine.clean(alarm.address)) (\(Date(timeIntervalSince1970: TimeInterval(alarm.time)))) holds a key you did not make: \(alarm.foreignKeys.joined(separator: ", "))")
                }
                throw KeyTransparencyFailure(address: "your account", reason: "\(result.alarms.count) log entries hold keys you did not make")
            }
            print("Key log audit: \(result.entries) entries of your addresses, every key is yours.")
        }
    }
}
