import ArgumentParser
import RampartCLIKit
import Crypto
import Foundation
import Keychain
import PushCrypto
import RampartCore

/// `rampart-dev push …`: encrypted push notifications (module PushCrypto).
///
/// `push decrypt` is the push extension's process: it is given the shared keychain group only
/// and never asks for a PIN or touches the MainKey.
struct PushCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Encrypted push notifications (RFC 8291 Web Push).",
        subcommands: [PushSubscribe.self, PushDecrypt.self, PushEncrypt.self, PushLogout.self]
    )
}

/// Options shared by the push commands that open the keychain under `--home`.
struct PushKeychainOptions: ParsableArguments {
    @OptionGroup var global: GlobalOptions

    /// The keychain chosen by the global options (`--home`, `--keychain`), limited to `groups`
    /// (the entitlement of this process).
    func keychain(groups: Set<KeychainAccessGroup>) throws -> any Keychain {
        let base = KeychainBackend.keychain(for: try global.environment())
        return AccessGroupLimitedKeychain(base, allowedGroups: groups)
    }

    func userID() throws -> UserID { try global.userID() }
}

/// Standard input of the push commands.
enum PushStandardInput {
    static func read(limit: Int) throws -> [UInt8] {
        // One byte more than the limit, so an oversized payload is reported as such.
        var data = Data()
        while data.count <= limit, let chunk = try FileHandle.standardInput.read(upToCount: limit + 1 - data.count), !chunk.isEmpty {
            data += chunk
        }
        return [UInt8](data)
    }
}

struct PushSubscribe: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscribe",
        abstract: "At login: generate a new push key pair in the shared keychain group and print the registration record."
    )
    @OptionGroup var keychainOptions: PushKeychainOptions
    @Option(help: "The session id given by the server at login.") var session: String

    func run() throws {
        try reportingErrors(withCode: true) {
            let userID = try keychainOptions.userID()
            let keyring = PushKeyring(keychain: try keychainOptions.keychain(groups: [.shared]), clock: SystemClock(), userID: userID)
            print(try keyring.subscribe(sessionID: PushSessionID(session)).jsonString())
        }
    }
}

struct PushDecrypt: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decrypt",
        abstract: "The push process: decrypt an aes128gcm payload from stdin and print the notification JSON.",
        discussion: "Reads only the push keys of the shared keychain group: works while the MainKey is locked."
    )
    @OptionGroup var keychainOptions: PushKeychainOptions
    @Option(help: "The session id the push was sent for.") var session: String
    @Option(name: .customLong("access-group"), help: "The keychain access group this process is entitled to.")
    var accessGroup: String = KeychainAccessGroup.shared.name

    func run() throws {
        try reportingErrors(withCode: true) {
            let sessionID = try PushSessionID(session)
            guard UserID.isValid(accessGroup), accessGroup.utf8.count <= 64 else {
                throw ValidationError("invalid access group name")
            }
            let keychain = try keychainOptions.keychain(groups: [KeychainAccessGroup(accessGroup)])
            let body = try PushStandardInput.read(limit: WebPushMessage.maximumBodyLength)
            let userID = try PushKeyring.user(ofSession: sessionID, in: keychain)
            let keyring = PushKeyring(keychain: keychain, clock: SystemClock(), userID: userID)
            let notification = try PushReceiver(keyring: keyring, sessionID: sessionID).decrypt(body)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            var json = try encoder.encode(notification)
            defer { json.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
            FileHandle.standardOutput.write(json + Data("\n".utf8))
        }
    }
}

struct PushEncrypt: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encrypt",
        abstract: "The sender (embedded backend, tests): encrypt notification JSON from stdin to a registration record; the body goes to stdout."
    )
    @Option(help: "The registration record JSON ({sessionId, publicKey, authSecret}).") var registration: String
    @Option(help: "Zero bytes of padding to hide the length.") var padding: Int = 0

    func run() throws {
        try reportingErrors(withCode: true) {
            let record = try JSONDecoder().decode(PushRegistration.self, from: Data(registration.utf8))
            var input = try PushStandardInput.read(limit: WebPushMessage.maximumPlaintextLength)
            let notification = try PushNotification(decoding: SecretBytes(consuming: &input))
            FileHandle.standardOutput.write(Data(try WebPushSender.encrypt(notification, to: record, paddingLength: padding)))
        }
    }
}

struct PushLogout: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "logout", abstract: "At logout: delete every push key and replay ledger of the user.")
    @OptionGroup var keychainOptions: PushKeychainOptions

    func run() throws {
        try reportingErrors(withCode: true) {
            let keyring = PushKeyring(keychain: try keychainOptions.keychain(groups: [.shared]), clock: SystemClock(), userID: try keychainOptions.userID())
            try keyring.logout()
        }
    }
}

// MARK: - Benchmark

/// Decrypt latency of a push payload against a bare P-256 ECDH (the floor of any RFC 8291 receiver).
struct PushBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Push decrypt latency (median, p99) against a bare P-256 ECDH, as a ratio."
    )
    @Option(help: "Number of payloads.") var count: Int = 2000

    func run() throws {
        guard count > 0 else { throw ValidationError("--count must be positive") }
        try reportingErrors(withCode: true) {
            let sessionID = try PushSessionID("bench")
            let user: UserID = "bench-user"
            let pair = try PushKeyPair.generate(sessionID: sessionID, now: Date())
            let registration = try pair.registration()
            let notification = PushNotification(sender: "Alice Example", subject: "Quarterly report, second draft", messageId: "msg-000001", userId: user)
            let bodies = try (0..<count + warmup).map { _ in try WebPushSender.encrypt(notification, to: registration) }
            let senderKeys = try bodies.map { try P256.KeyAgreement.PublicKey(x963Representation: $0[21..<86]) }

            // Baseline: one bare ECDH per payload, with the same sender keys.
            let ecdh = try measure(count) { index in _ = try pair.privateKey.sharedSecretFromKeyAgreement(with: senderKeys[index]) }
            // Crypto path: header checks, ECDH, two HKDFs, AES-GCM, padding.
            let open = try measure(count) { index in _ = try WebPushMessage.open(bodies[index], with: [pair]) }
            // The push process's whole path: keys from the keychain, replay ledger, JSON.
            let keychain = InMemoryKeychain()
            let keyring = PushKeyring(keychain: keychain, clock: SystemClock(), userID: user)
            let ownRegistration = try keyring.subscribe(sessionID: sessionID)
            let ownBodies = try (0..<count + warmup).map { _ in try WebPushSender.encrypt(notification, to: ownRegistration) }
            let receiver = PushReceiver(keyring: keyring, sessionID: sessionID)
            let full = try measure(count) { index in _ = try receiver.decrypt(ownBodies[index]) }

            #if DEBUG
            print("build: debug (ratios are meaningful, absolute times are not release times)")
            #endif
            print("payloads: \(count), body \(bodies[0].count) bytes")
            for (name, sample) in [("bare P-256 ECDH (baseline)", ecdh), ("WebPushMessage.open", open), ("PushReceiver.decrypt (keychain + ledger + JSON)", full)] {
                print(String(format: "%@: median %.1f µs, p99 %.1f µs", name, sample.median, sample.p99))
            }
            print(String(format: "ratio open/ECDH: median %.2f, p99 %.2f", open.median / ecdh.median, open.p99 / ecdh.p99))
            print(String(format: "ratio receiver/ECDH: median %.2f, p99 %.2f", full.median / ecdh.median, full.p99 / ecdh.p99))
        }
    }

    struct Sample { let median: Double; let p99: Double }

    /// Payloads used only to warm up (indices `count..<count + warmup`, never measured).
    var warmup: Int { 50 }

    /// Times `body` for each index (after a warm-up on other indices) and returns median and
    /// p99 in microseconds.
    func measure(_ count: Int, _ body: (Int) throws -> Void) throws -> Sample {
        for index in count..<count + warmup { try body(index) }
        var times: [Double] = []
        times.reserveCapacity(count)
        let clock = ContinuousClock()
        for index in 0..<count {
            let start = clock.now
            try body(index)
            let elapsed = clock.now - start
            times.append(elapsed.inSeconds * 1e6)
        }
        times.sort()
        return Sample(median: times[times.count / 2], p99: times[min(times.count - 1, Int(Double(times.count) * 0.99))])
    }
}
