import ArgumentParser
import RampartCLIKit
import Crypto
import FileVault
import Foundation
import RampartCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `rampart vault …`: the file vault (encrypted attachment cache and drive block store).
struct VaultCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vault",
        abstract: "The file vault: encrypted attachment cache and drive block store.",
        subcommands: [VaultHoldLeaseCommand.self, VaultSweepCommand.self]
    )
}

/// Hidden: opens a vault, stores a marked attachment and a marked drive file, opens a cleartext
/// lease on each, prints `lease <path>` for both and `ready`, then waits to be killed. The crash
/// test kills it with SIGKILL and checks that the next start sweeps the cleartext.
struct VaultHoldLeaseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hold-lease",
        abstract: "Open cleartext leases and wait to be killed (crash test; reads a hex MainKey on stdin).",
        shouldDisplay: false
    )

    @OptionGroup var hook: CrashHookOptions
    @Option(help: "A marker string written into the cleartext.") var marker: String = "RAMPART-CRASH-MARKER"

    func run() throws {
        let session = try hook.unlockedSession()
        try reportingErrors {
            let vault = try Vault(root: hook.rootURL, provider: session)
            var content = Data()
            for line in 0..<2_000 { content.append(Data("\(marker) line \(line)\n".utf8)) }
            try vault.attachments.put(content, attachment: "crash-attachment", fileName: "\(marker).txt",
                                      mimeType: "text/plain")
            let attachmentLease = try vault.attachments.lease("crash-attachment")
            let fileID = try vault.drive.upload(from: try attachmentLease.url(), name: "\(marker)-drive.txt")
            let driveLease = try vault.drive.lease(fileID)
            FileHandle.standardOutput.write(Data("lease \(attachmentLease.path)\nlease \(driveLease.path)\nready\n".utf8))
            withExtendedLifetime((vault, attachmentLease, driveLease)) {
                while true { sleep(60) }
            }
        }
    }
}

/// Hidden: removes cleartext left by crashed processes in a user's vault (what every start does
/// before anything else) and prints how many lease sessions were removed.
struct VaultSweepCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sweep",
        abstract: "Remove cleartext leases left by crashed processes (no key needed).",
        shouldDisplay: false
    )

    @OptionGroup var hook: CrashHookOptions

    func run() throws {
        let folder = Vault.folder(root: hook.rootURL, user: try hook.global.userID())
        let removed = PreviewArea.sweep(folder.appendingPathComponent("previews"))
        print("swept \(removed)")
    }
}

/// `rampart bench vault`: drive block store upload (encrypt) and download (verify + decrypt) of
/// one large file against `openssl speed -evp aes-256-gcm` measured in the same run, with the
/// peak resident memory of the process.
struct BenchVault: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vault",
        abstract: "Encrypt/decrypt a large file through the drive block store vs openssl speed aes-256-gcm (goal ≥ 0.7×, peak memory < 64 MiB)."
    )

    @Option(help: "File size in MiB.") var size: Int = 1024
    @Option(help: "Scratch folder (default: a new temporary folder, removed at the end).") var directory: String?
    @Option(help: "Seconds openssl speed runs.") var opensslSeconds: Int = 3

    func run() throws {
        #if DEBUG
        print("warning: debug build; run `swift build -c release` and .build/release/rampart bench vault for real numbers")
        #endif
        guard size > 0 else { throw ValidationError("--size must be at least 1 (MiB).") }
        let scratch = (directory.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory).appendingPathComponent("rampart-bench-vault-\(UUID().uuidString)")
        try PrivateFiles.ensurePrivateDirectory(scratch)
        defer { try? FileManager.default.removeItem(at: scratch) }

        let bytes = Int64(size) << 20
        let source = scratch.appendingPathComponent("source.bin")
        // The disk's own pace, as a second baseline: writing the source file and syncing it is
        // what any durable upload of that size must at least pay on this machine.
        var start = ContinuousClock.now
        try Self.writeSource(source, bytes: bytes)
        try Self.sync(source)
        let diskSeconds = Self.seconds(since: start)
        let rssBefore = Self.peakRSSKiB()

        let session = MainKeySession(userID: "bench")
        session.unlock(with: MainKey.generate())
        let vault = try Vault(root: scratch.appendingPathComponent("vault"), provider: session,
                              configuration: .init(drive: .init(maxFileBytes: bytes + 1)))

        start = ContinuousClock.now
        let id = try vault.drive.upload(from: source, name: "bench.bin")
        let encryptSeconds = Self.seconds(since: start)
        try FileManager.default.removeItem(at: source)

        start = ContinuousClock.now
        try vault.drive.verify(id)
        let verifySeconds = Self.seconds(since: start)

        let destination = scratch.appendingPathComponent("downloaded.bin")
        start = ContinuousClock.now
        try vault.drive.download(id, to: destination)
        let decryptSeconds = Self.seconds(since: start)
        try FileManager.default.removeItem(at: destination)
        let rssPeak = Self.peakRSSKiB()

        let openssl = try Self.opensslAES256GCM(seconds: opensslSeconds)
        let mb = Double(bytes) / 1e6
        func line(_ label: String, _ secs: Double) -> String {
            let rate = mb / secs
            return "\(label) \(String(format: "%8.1f MB/s", rate))  (\(String(format: "%.2f", secs)) s)  ratio \(String(format: "%.2f", rate / openssl))×"
        }
        print("rampart bench vault — drive block store, \(size) MiB file, 4 MiB blocks, AES-256-GCM + SHA-256 block hashes")
        print("scratch folder:          \(scratch.deletingLastPathComponent().path)")
        print("openssl speed (baseline): \(String(format: "%8.1f MB/s", openssl))  (openssl speed -evp aes-256-gcm, 16 KiB, \(opensslSeconds) s)")
        print("disk write + fsync (2nd baseline): \(String(format: "%8.1f MB/s", mb / diskSeconds))  (the source file, same size)")
        print(line("upload (encrypt):       ", encryptSeconds) + String(format: "   vs disk %.2f×", diskSeconds / encryptSeconds))
        print(line("verify (no cleartext):  ", verifySeconds))
        print(line("download (decrypt):     ", decryptSeconds))
        let (sealRate, hashRate) = Self.inMemoryParts(megabytes: min(size, 256))
        print("where the time goes (in memory, 4 MiB buffers, no disk):")
        print("  swift-crypto AES-256-GCM seal: \(String(format: "%8.1f MB/s", sealRate))  ratio \(String(format: "%.2f", sealRate / openssl))×")
        print("  SHA-256 of sealed blocks:      \(String(format: "%8.1f MB/s", hashRate))")
        print("peak memory (maxrss):    \(rssPeak / 1024) MiB (before the vault ran: \(rssBefore / 1024) MiB; goal < 64 MiB: \(rssPeak < 64 * 1024 ? "met" : "NOT met"))")
    }

    /// Throughput of the two CPU-bound steps of an upload, in memory: AES-256-GCM sealing and
    /// SHA-256 hashing of 4 MiB blocks (MB/s each).
    static func inMemoryParts(megabytes: Int) -> (seal: Double, hash: Double) {
        let block = Data((0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let key = SymmetricKey(size: .bits256)
        let rounds = max(1, megabytes / 4)
        var sealed = Data()
        var start = ContinuousClock.now
        for _ in 0..<rounds { sealed = (try? AES.GCM.seal(block, using: key).combined) ?? Data() }
        let sealSeconds = seconds(since: start)
        start = ContinuousClock.now
        var digest = SHA256.Digest?.none
        for _ in 0..<rounds { digest = SHA256.hash(data: sealed) }
        let hashSeconds = seconds(since: start)
        _ = digest
        let mb = Double(rounds * (4 << 20)) / 1e6
        return (mb / sealSeconds, mb / hashSeconds)
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return elapsed.inSeconds
    }

    /// Writes `bytes` of random-looking data with a 4 MiB buffer (memory stays flat).
    static func writeSource(_ url: URL, bytes: Int64) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw RuntimeError.badInput("cannot create \(url.path)")
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var generator = SystemRandomNumberGenerator()
        var buffer = [UInt64](repeating: 0, count: (4 << 20) / 8)
        for index in buffer.indices { buffer[index] = generator.next() }
        var written: Int64 = 0
        var counter: UInt64 = 0
        while written < bytes {
            buffer[0] = counter
            counter += 1
            let count = Int(min(Int64(4 << 20), bytes - written))
            try buffer.withUnsafeBytes { try handle.write(contentsOf: Data($0.prefix(count))) }
            written += Int64(count)
        }
    }

    /// `fsync` of a file (the disk baseline includes it, as the upload does).
    static func sync(_ url: URL) throws {
        let handle = try FileHandle(forUpdating: url)
        defer { try? handle.close() }
        try handle.synchronize()
    }

    /// Peak resident set size of this process in KiB (`getrusage`, `ru_maxrss`).
    static func peakRSSKiB() -> Int {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        #if canImport(Darwin)
        return Int(usage.ru_maxrss) / 1024
        #else
        return Int(usage.ru_maxrss)
        #endif
    }

    /// Runs `openssl speed -evp aes-256-gcm -bytes 16384` and returns MB/s (10^6 bytes per second).
    ///
    /// `openssl speed` stops each measurement with `SIGALRM`. Foundation's `Process` starts the
    /// child from a concurrency thread whose signal mask blocks it (openssl then never stops), so
    /// the child is spawned here with `posix_spawn`, an empty signal mask and default handlers.
    static func opensslAES256GCM(seconds: Int) throws -> Double {
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { throw RuntimeError.badInput("pipe failed: errno \(errno)") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
        posix_spawn_file_actions_addclose(&actions, pipeFDs[0])
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGALRM)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let arguments = ["openssl", "speed", "-seconds", String(seconds), "-bytes", "16384", "-evp", "aes-256-gcm"]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawnp(&pid, "openssl", &actions, &attributes, &argv, environ)
        close(pipeFDs[1])
        guard status == 0 else {
            close(pipeFDs[0])
            throw RuntimeError.badInput("cannot run openssl: \(String(cString: strerror(status)))")
        }
        let reader = FileHandle(fileDescriptor: pipeFDs[0], closeOnDealloc: true)
        let data = reader.readDataToEndOfFile()
        var exitStatus: Int32 = 0
        waitpid(pid, &exitStatus, 0)
        let text = String(decoding: data, as: UTF8.self)
        for line in text.split(separator: "\n") where line.uppercased().hasPrefix("AES-256-GCM") {
            if let field = line.split(separator: " ").last, field.hasSuffix("k"), let value = Double(field.dropLast()) {
                return value * 1000 / 1e6
            }
        }
        throw RuntimeError.badInput("could not read `openssl speed` output: \(text.suffix(300))")
    }
}
