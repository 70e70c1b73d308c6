import Foundation
import HardwareKeys
import Keychain
import Keymaker
import RampartCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Where the `swtpm` binary is, or nil when it is not installed. The TPM tests are skipped
/// only in that case; with swtpm installed they always run (and fail if it cannot start).
let swtpmBinary: URL? = {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    let directories = path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/local/bin"]
    for directory in directories {
        let candidate = URL(fileURLWithPath: directory).appendingPathComponent("swtpm")
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
    }
    return nil
}()

let swtpmInstalled = swtpmBinary != nil
let noSwtpmMessage: Comment = "swtpm is not installed (apt-get install swtpm swtpm-tools, see scripts/deps/hardwarekeys.apt): the TPM tests cannot run"

/// The TPM most tests share: `RAMPART_TPM_TCTI` when set (exported by
/// `scripts/services/swtpm.sh`, which scripts/test.sh sources), else a swtpm this test process
/// starts itself on a free loopback port pair (stopped when the process exits).
func sharedTPM() throws -> TPMConfiguration {
    try SharedSoftwareTPM.instance.configuration()
}

private final class SharedSoftwareTPM: @unchecked Sendable {
    static let instance = SharedSoftwareTPM()
    private let lock = NSLock()
    private var started: PrivateSoftwareTPM?
    private var failure: (any Error)?

    func configuration() throws -> TPMConfiguration {
        let environment = ProcessInfo.processInfo.environment[TPMConfiguration.environmentVariable] ?? ""
        if !environment.trimmingCharacters(in: .whitespaces).isEmpty {
            return TPMConfiguration(tcti: environment)
        }
        lock.lock()
        defer { lock.unlock() }
        if let started { return started.configuration }
        if let failure { throw failure }
        do {
            let tpm = try PrivateSoftwareTPM()
            started = tpm
            PrivateSoftwareTPM.stopAtExit(tpm)
            return tpm.configuration
        } catch {
            failure = error
            throw error
        }
    }
}

/// Why a software TPM could not be started.
struct SoftwareTPMError: Error, CustomStringConvertible {
    let description: String
}

/// A private software TPM: its own `swtpm` process and state folder, for tests that need a
/// second machine or change the dictionary-attack settings. The command line is the one of
/// `scripts/services/swtpm.sh`:
/// `swtpm socket --tpm2 --tpmstate dir=STATE --server type=tcp,port=P,bindaddr=127.0.0.1
///  --ctrl type=tcp,port=P+1,bindaddr=127.0.0.1 --flags not-need-init,startup-clear`.
final class PrivateSoftwareTPM: @unchecked Sendable {
    let stateDirectory: URL
    private(set) var port: Int = 0
    private var process: Process?

    var configuration: TPMConfiguration { TPMConfiguration(tcti: "swtpm:host=127.0.0.1,port=\(port)") }

    init() throws {
        stateDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("rampart-swtpm-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: stateDirectory, withIntermediateDirectories: true)
        try start()
    }

    /// Starts swtpm on the state folder, on a free port pair (another pair if one is taken).
    func start() throws {
        guard let binary = swtpmBinary else { throw SoftwareTPMError(description: "swtpm is not installed") }
        var lastLog = ""
        for _ in 0..<20 {
            let candidate = Self.freePortPair()
            let process = Process()
            process.executableURL = binary
            process.arguments = ["socket", "--tpm2", "--tpmstate", "dir=\(stateDirectory.path)",
                                 "--server", "type=tcp,port=\(candidate),bindaddr=127.0.0.1",
                                 "--ctrl", "type=tcp,port=\(candidate + 1),bindaddr=127.0.0.1",
                                 "--flags", "not-need-init,startup-clear",
                                 "--log", "file=\(stateDirectory.path)/swtpm.log"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            port = candidate
            for _ in 0..<200 where process.isRunning {
                if (try? TPMDevice(configuration: configuration).dictionaryAttackStatus()) != nil {
                    self.process = process
                    return
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
            if process.isRunning { process.terminate(); process.waitUntilExit() }
            lastLog = (try? String(contentsOf: stateDirectory.appendingPathComponent("swtpm.log"), encoding: .utf8)) ?? ""
        }
        throw SoftwareTPMError(description: "swtpm did not start on 127.0.0.1: \(lastLog.suffix(300))")
    }

    /// Stops the swtpm process; the TPM state stays in the folder. `kill` sends SIGKILL (a
    /// power cut); otherwise swtpm is asked to shut down through its control channel
    /// (`swtpm_ioctl --tcp 127.0.0.1:P+1 -s`, swtpm-tools), SIGKILL only if that fails.
    /// (SIGTERM is no use: children of the test runner inherit its blocked-signal mask.)
    func stop(kill: Bool = false) {
        guard let process else { return }
        if process.isRunning, !kill, let ioctl = Self.swtpmIoctl {
            let shutdown = Process()
            shutdown.executableURL = ioctl
            shutdown.arguments = ["--tcp", "127.0.0.1:\(port + 1)", "-s"]
            shutdown.standardOutput = FileHandle.nullDevice
            shutdown.standardError = FileHandle.nullDevice
            if (try? shutdown.run()) != nil { shutdown.waitUntilExit() }
            for _ in 0..<100 where process.isRunning { Thread.sleep(forTimeInterval: 0.05) }
        }
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        self.process = nil
    }

    func remove() {
        stop(kill: true)
        try? FileManager.default.removeItem(at: stateDirectory)
    }

    static let swtpmIoctl: URL? = {
        let candidate = swtpmBinary?.deletingLastPathComponent().appendingPathComponent("swtpm_ioctl")
        return candidate.flatMap { FileManager.default.isExecutableFile(atPath: $0.path) ? $0 : nil }
    }()

    /// A port pair (P, P+1) with nothing listening, chosen by binding port 0 and checking P+1.
    private static func freePortPair() -> Int {
        for _ in 0..<50 {
            let port = boundPort(0)
            if port > 0, port < 65534, boundPort(port + 1) == port + 1 { return port }
        }
        return Int.random(in: 20000..<60000)
    }

    /// Binds 127.0.0.1:`port` (0: any) and returns the port bound, or -1; the socket is closed.
    private static func boundPort(_ port: Int) -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { return -1 }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { return -1 }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    // MARK: Stop at exit

    nonisolated(unsafe) private static var atExit: [PrivateSoftwareTPM] = []
    private static let atExitLock = NSLock()

    /// Stops `tpm` and removes its state when the test process exits.
    static func stopAtExit(_ tpm: PrivateSoftwareTPM) {
        atExitLock.lock()
        defer { atExitLock.unlock() }
        if atExit.isEmpty {
            atexit {
                PrivateSoftwareTPM.atExitLock.lock()
                let all = PrivateSoftwareTPM.atExit
                PrivateSoftwareTPM.atExitLock.unlock()
                for tpm in all { tpm.remove() }
            }
        }
        atExit.append(tpm)
    }
}

struct KeymakerDependencies: Keymaker.Dependencies {
    var keychain: any Keychain = InMemoryKeychain()
    var clock: any RampartClock = ManualClock()
    var wipeRegistry = WipeRegistry()
}

func pin(_ text: String) -> SecretBytes { SecretBytes(copying: Array(text.utf8)) }
func keyBytes(_ key: MainKey) throws -> [UInt8] { try key.withUnsafeKeyBytes { Array($0) } }
