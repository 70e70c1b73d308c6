import ArgumentParser
import Foundation
import OpenPGP
import RampartCLIKit
import RampartCore
import RampartRuntime

/// `rampart-dev bench openpgp`: Rampart's OpenPGP (RNP) against `gpg` and Sequoia's `sq` on the
/// same data in the same run: encrypt + sign and decrypt + verify of a 1 KiB and a 10 MiB
/// message (random bytes), Ed25519 signing and Curve25519 encryption keys for every tool,
/// binary (not armoured) messages, each tool with its own defaults otherwise (gpg and sq
/// compress, Rampart does not).
///
/// What is measured: the wall time of one operation as a user pays it. For gpg and sq that is
/// a process run (start-up, keyring or key-file loading, the work); for Rampart it is the same —
/// this executable started again in a hidden one-shot mode that loads the keys from files and
/// does one operation — and, on a line of its own, the library call in this process (what the
/// app pays: keys already loaded). Medians of `--runs` runs after one checked warm-up run; the
/// tools run interleaved so that load on the machine hits them alike. Ratios are
/// `gpg time / Rampart time` (≥ 1× means Rampart is at least as fast as gpg).
///
/// Trust-model rows **inbox** / **outbox**: the cost of opening and sealing each message.
struct BenchOpenPGP: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "openpgp",
        abstract: "Time OpenPGP encrypt+sign and decrypt+verify (1 KiB, 10 MiB) against gpg and sq in the same run.",
        discussion: "gpg and sq are run as processes, as users run them; Rampart is timed as a process too (this executable in a one-shot mode) and in-process. Build with -c release for meaningful numbers.")

    @Option(help: "Timed runs per tool, operation and size (the median is reported).") var runs = 5
    @Option(help: "The gpg executable.") var gpg = "/usr/bin/gpg"
    @Option(help: "The sq executable.") var sq = "/usr/bin/sq"

    // The one-shot mode the benchmark runs itself in (not for people).
    @Option(help: .hidden) var oneShot: String?
    @Option(help: .hidden) var keys: String?
    @Option(help: .hidden) var input: String?
    @Option(help: .hidden) var output: String?

    func run() throws {
        try reportingErrors {
            if let oneShot { return try OpenPGPOneShot.run(oneShot, keys: keys, input: input, output: output) }
            guard runs > 0 else { throw RuntimeError.badInput("--runs must be positive") }
            try OpenPGPBenchRun(runs: runs, gpg: gpg, sq: sq).run()
        }
    }
}

/// One encryption or decryption from key files, the way a command-line tool does it.
enum OpenPGPOneShot {
    static func run(_ operation: String, keys: String?, input: String?, output: String?) throws {
        guard let keys, let input, let output else { throw RuntimeError.badInput("--one-shot needs --keys, --input and --output") }
        let folder = URL(fileURLWithPath: keys)
        func secret(_ name: String) throws -> PGPPrivateKey {
            let bytes = try Data(contentsOf: folder.appendingPathComponent(name))
            return try PGPPrivateKey(unprotected: SecretBytes(copying: Array(bytes)))
        }
        func key(_ name: String) throws -> PGPPublicKey { try PGPPublicKey(binary: Data(contentsOf: folder.appendingPathComponent(name))) }
        let data = try Data(contentsOf: URL(fileURLWithPath: input))
        switch operation {
        case "encrypt":
            let message = try OpenPGP.encrypt(data, to: [try key("recipient.pub")], signedBy: try secret("sender.sec"))
            try message.write(to: URL(fileURLWithPath: output))
        case "decrypt":
            let sender = try key("sender.pub")
            let decrypted = try OpenPGP.decrypt(data, with: [try secret("recipient.sec")], verifyingWith: [sender])
            guard decrypted.signature == .verified(sender.fingerprint) else {
                throw RuntimeError.badInput("the signature did not verify: \(decrypted.signature)")
            }
            try decrypted.data.write(to: URL(fileURLWithPath: output))
        default:
            throw RuntimeError.badInput("unknown one-shot operation \(operation)")
        }
    }
}

struct OpenPGPBenchRun {
    let runs: Int
    let gpg: String
    let sq: String

    enum Tool: String, CaseIterable {
        case rampartInProcess = "Rampart (in-process)"
        case rampartProcess = "Rampart (process)"
        case gpg
        case sq
    }

    enum Operation: String, CaseIterable {
        case encrypt = "encrypt+sign"
        case decrypt = "decrypt+verify"
    }

    func run() throws {
        for tool in [gpg, sq] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw RuntimeError.badInput("\(tool) is not installed (scripts/setup.sh installs gnupg and sq)")
        }
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-bench-openpgp-\(UUID().uuidString.prefix(8))")
        try PrivateFiles.ensurePrivateDirectory(work)
        let gnupgHome = work.appendingPathComponent("gnupg")
        defer {
            _ = try? Self.process("/usr/bin/gpgconf", ["--homedir", gnupgHome.path, "--kill", "all"])
            try? FileManager.default.removeItem(at: work)
        }
        let setup = try Setup(work: work, gnupgHome: gnupgHome, gpg: gpg, sq: sq)

        #if DEBUG
        let configuration = "debug build (use -c release for meaningful Rampart figures)"
        #else
        let configuration = "release build"
        #endif
        print("rampart-dev bench openpgp — \(configuration); \(BenchSupport.machine())")
        print("peers: \(Self.firstLine(try Self.output(gpg, ["--version"]))), \(Self.firstLine(try Self.output(sq, ["--version"])))")
        print("keys: Ed25519 signing + Curve25519 encryption for every tool; messages binary; random (incompressible) data")
        print("measured: wall time per operation, median of \(runs) runs after a checked warm-up;")
        print("  gpg, sq and \"Rampart (process)\" are one process per operation (start-up + key loading + work),")
        print("  \"Rampart (in-process)\" is the library call with the keys already loaded (what the app pays).")
        print("  ratio = gpg (or sq) time / Rampart time: ≥ 1× means Rampart is at least as fast.")

        for (label, size) in [("1 KiB", 1 << 10), ("10 MiB", 10 << 20)] {
            // Random bytes in one read (a generator call per byte costs seconds of system time at 10 MiB).
            let urandom = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/urandom"))
            let plain = try urandom.read(upToCount: size) ?? Data()
            try urandom.close()
            guard plain.count == size else { throw RuntimeError.badInput("/dev/urandom gave \(plain.count) of \(size) bytes") }
            let input = work.appendingPathComponent("plain-\(size)")
            try plain.write(to: input)
            var times: [Tool: [Operation: Timing]] = [:]
            var messageSizes: [Tool: Int] = [:]
            for round in 0...runs {
                for tool in Tool.allCases {
                    let (encrypt, decrypt, messageSize) = try setup.measure(tool, input: input, plain: plain, check: round == 0)
                    guard round > 0 else { messageSizes[tool] = messageSize; continue }
                    times[tool, default: [:]][.encrypt, default: Timing()].samples.append(encrypt)
                    times[tool, default: [:]][.decrypt, default: Timing()].samples.append(decrypt)
                }
            }
            print("")
            print("\(label) message (\(size) bytes; message sizes: " + Tool.allCases.map { "\($0.rawValue) \(messageSizes[$0] ?? 0)" }
                .joined(separator: ", ") + ")")
            for operation in Operation.allCases {
                let median = { (tool: Tool) in times[tool]?[operation]?.median ?? .nan }
                print("  \(operation.rawValue.padding(toLength: 15, withPad: " ", startingAt: 0))"
                      + Tool.allCases.map { "\($0.rawValue) \(formatMillis(median($0)))" }.joined(separator: " | "))
                for rampart in [Tool.rampartProcess, .rampartInProcess] {
                    let gpgRatio = median(.gpg) / median(rampart)
                    let sqRatio = median(.sq) / median(rampart)
                    print(String(format: "    %@: %.2f× gpg (target ≥ 1×: %@), %.2f× sq", rampart.rawValue, gpgRatio,
                                 gpgRatio >= 1 ? "met" : "NOT met", sqRatio))
                }
            }
        }
    }

    /// The keys of every tool, made once.
    struct Setup {
        let work: URL
        let gnupgHome: URL
        let gpg: String
        let sq: String
        let rampartKeys: URL
        let sender: PGPPrivateKey
        let recipient: PGPPrivateKey
        let gpgSender: String
        let gpgRecipient: String

        init(work: URL, gnupgHome: URL, gpg: String, sq: String) throws {
            (self.work, self.gnupgHome, self.gpg, self.sq) = (work, gnupgHome, gpg, sq)
            sender = try PGPPrivateKey.generate(name: "Bench Sender", address: "sender@bench.example")
            recipient = try PGPPrivateKey.generate(name: "Bench Recipient", address: "recipient@bench.example")
            // The one-shot process reads the throwaway keys from this private folder (removed at the end).
            let keysFolder = work.appendingPathComponent("rampart-keys")
            rampartKeys = keysFolder
            try PrivateFiles.ensurePrivateDirectory(keysFolder)
            for (name, key) in [("sender.sec", sender), ("recipient.sec", recipient)] {
                let secret = try key.unprotectedExport()
                try secret.withUnsafeBytes { try Data($0).write(to: keysFolder.appendingPathComponent(name)) }
            }
            try sender.publicKey.binary.write(to: keysFolder.appendingPathComponent("sender.pub"))
            try recipient.publicKey.binary.write(to: keysFolder.appendingPathComponent("recipient.pub"))

            try PrivateFiles.ensurePrivateDirectory(gnupgHome)
            var fingerprints: [String] = []
            for (name, address) in [("Bench Sender", "sender@bench.example"), ("Bench Recipient", "recipient@bench.example")] {
                try OpenPGPBenchRun.process(gpg, Self.gpgBase(gnupgHome) + ["--passphrase", "", "--quick-gen-key", "\(name) <\(address)>",
                                                                             "ed25519", "sign,cert", "never"])
                let listed = String(decoding: try OpenPGPBenchRun.output(gpg, Self.gpgBase(gnupgHome) + ["--with-colons", "--list-keys", address]),
                                    as: UTF8.self)
                guard let line = listed.split(separator: "\n").first(where: { $0.hasPrefix("fpr:") }) else {
                    throw RuntimeError.badInput("gpg listed no fingerprint for \(address)")
                }
                let fingerprint = String(line.split(separator: ":", omittingEmptySubsequences: false)[9])
                try OpenPGPBenchRun.process(gpg, Self.gpgBase(gnupgHome) + ["--passphrase", "", "--quick-add-key", fingerprint, "cv25519", "encr", "never"])
                fingerprints.append(fingerprint)
            }
            (gpgSender, gpgRecipient) = (fingerprints[0], fingerprints[1])

            for name in ["sender", "recipient"] {
                try OpenPGPBenchRun.process(sq, ["key", "generate", "--userid", "<\(name)@bench.example>", "--cipher-suite", "cv25519",
                                                 "--export", work.appendingPathComponent("sq-\(name).key").path])
                try OpenPGPBenchRun.process(sq, ["key", "extract-cert", "--output", work.appendingPathComponent("sq-\(name).cert").path,
                                                 work.appendingPathComponent("sq-\(name).key").path])
            }
        }

        static func gpgBase(_ home: URL) -> [String] {
            ["--homedir", home.path, "--batch", "--yes", "--no-tty", "--pinentry-mode", "loopback", "--trust-model", "always"]
        }

        /// Encrypts+signs `input` and decrypts+verifies the result with `tool`; returns both times
        /// in milliseconds and the message size. With `check`, the decrypted bytes and the
        /// signature are checked (so that what is timed is the real work).
        func measure(_ tool: Tool, input: URL, plain: Data, check: Bool) throws -> (Double, Double, Int) {
            let message = work.appendingPathComponent("message-\(tool)")
            let decrypted = work.appendingPathComponent("decrypted-\(tool)")
            try? FileManager.default.removeItem(at: message)
            try? FileManager.default.removeItem(at: decrypted)
            var encrypt = Timing(), decrypt = Timing()
            let base = Self.gpgBase(gnupgHome)
            let dev = BenchSupport.selfPath()
            switch tool {
            case .rampartInProcess:
                var sealed = Data()
                try encrypt.measure { sealed = try OpenPGP.encrypt(plain, to: [recipient.publicKey], signedBy: sender) }
                var opened: PGPDecrypted?
                try decrypt.measure { opened = try OpenPGP.decrypt(sealed, with: [recipient], verifyingWith: [sender.publicKey]) }
                try sealed.write(to: message)
                if check {
                    guard opened?.data == plain, opened?.signature == .verified(sender.fingerprint) else {
                        throw RuntimeError.badInput("Rampart in-process: the decrypted data or signature is wrong")
                    }
                }
            case .rampartProcess:
                try encrypt.measure {
                    try OpenPGPBenchRun.process(dev, ["bench", "openpgp", "--one-shot", "encrypt", "--keys", rampartKeys.path,
                                                      "--input", input.path, "--output", message.path])
                }
                try decrypt.measure {
                    try OpenPGPBenchRun.process(dev, ["bench", "openpgp", "--one-shot", "decrypt", "--keys", rampartKeys.path,
                                                      "--input", message.path, "--output", decrypted.path])
                }
            case .gpg:
                try encrypt.measure {
                    try OpenPGPBenchRun.process(gpg, base + ["--local-user", gpgSender, "--recipient", gpgRecipient, "--sign", "--encrypt",
                                                             "--output", message.path, input.path])
                }
                let status = work.appendingPathComponent("gpg-status")
                try decrypt.measure {
                    try OpenPGPBenchRun.process(gpg, base + (check ? ["--status-file", status.path] : []) + ["--output", decrypted.path,
                                                                                                          "--decrypt", message.path])
                }
                if check {
                    let lines = try String(contentsOf: status, encoding: .utf8)
                    guard lines.contains("[GNUPG:] GOODSIG"), lines.contains("[GNUPG:] DECRYPTION_OKAY") else {
                        throw RuntimeError.badInput("gpg did not verify its own message: \(lines)")
                    }
                }
            case .sq:
                try encrypt.measure {
                    try OpenPGPBenchRun.process(sq, ["encrypt", "--binary", "--recipient-cert", work.appendingPathComponent("sq-recipient.cert").path,
                                                     "--signer-key", work.appendingPathComponent("sq-sender.key").path,
                                                     "--output", message.path, input.path])
                }
                // sq exits non-zero unless one signature by the --signer-cert verifies.
                try decrypt.measure {
                    try OpenPGPBenchRun.process(sq, ["decrypt", "--recipient-key", work.appendingPathComponent("sq-recipient.key").path,
                                                     "--signer-cert", work.appendingPathComponent("sq-sender.cert").path,
                                                     "--output", decrypted.path, message.path])
                }
            }
            if check, tool != .rampartInProcess {
                guard try Data(contentsOf: decrypted) == plain else { throw RuntimeError.badInput("\(tool.rawValue): decrypted data differs") }
            }
            let size = (try? FileManager.default.attributesOfItem(atPath: message.path)[.size] as? Int) ?? 0
            return (encrypt.median, decrypt.median, size)
        }
    }

    /// Runs a command with its output discarded; throws with its standard error when it fails.
    static func process(_ executable: String, _ arguments: [String]) throws {
        _ = try output(executable, arguments)
    }

    /// Runs a command and returns its standard output; throws with its standard error when it fails.
    @discardableResult
    static func output(_ executable: String, _ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read both streams at the same time so that neither can fill up and block the child.
        let errorCollector = StreamCollector(errors.fileHandleForReading)
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errorCollector.wait()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw RuntimeError.badInput("\(([executable] + arguments).joined(separator: " ")) failed (exit \(process.terminationStatus)): "
                                        + String(decoding: errorData.suffix(2000), as: UTF8.self))
        }
        return data
    }

    static func firstLine(_ data: Data) -> String {
        String(decoding: data, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? "?"
    }
}

/// Reads one pipe to its end on a thread of its own.
private final class StreamCollector: @unchecked Sendable {
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }.start()
    }

    /// Everything the pipe delivered, once it is closed.
    func wait() -> Data {
        done.wait()
        return data
    }
}
