import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A private software TPM 2.0: its own `swtpm` process and state folder on a free loopback port
/// pair, for tests that need a TPM of their own (a second machine, changed dictionary-attack
/// settings, a power cut). The command line is the one of `scripts/services/swtpm.sh`:
/// `swtpm socket --tpm2 --tpmstate dir=STATE --server type=tcp,port=P,bindaddr=127.0.0.1
///  --ctrl type=tcp,port=P+1,bindaddr=127.0.0.1 --flags not-need-init,startup-clear`.
/// The state survives ``stop(kill:)`` and ``start()``; ``remove()`` deletes it.
public final class SoftwareTPM: @unchecked Sendable {
    /// Where the `swtpm` binary is, or nil when it is not installed (the only case in which TPM
    /// tests may skip).
    public static let binary: URL? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/local/bin"] {
            let candidate = URL(fileURLWithPath: directory).appendingPathComponent("swtpm")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }()

    public static var isInstalled: Bool { binary != nil }

    public let stateDirectory: URL
    public private(set) var port: Int = 0
    private var process: Process?
    private let isReady: (@Sendable (_ tcti: String) -> Bool)?

    /// The TCTI string for the TPM Software Stack (`RAMPART_TPM_TCTI`).
    public var tcti: String { "swtpm:host=127.0.0.1,port=\(port)" }

    /// Starts swtpm on a fresh state folder.
    /// - Parameter isReady: whether the TPM answers at a TCTI (a real TPM command); without it,
    ///   the TPM counts as ready once its port accepts a connection.
    public init(isReady: (@Sendable (_ tcti: String) -> Bool)? = nil) throws {
        stateDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-swtpm-\(UUID().uuidString)")
        self.isReady = isReady
        try FileManager.default.createDirectory(at: stateDirectory, withIntermediateDirectories: true)
        try start()
    }

    /// Starts swtpm on the state folder, on a free port pair (another pair if one is taken).
    public func start() throws {
        guard let binary = Self.binary else { throw TestSupportError.softwareTPMUnavailable("swtpm is not installed (apt-get install swtpm swtpm-tools)") }
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
                if isReady.map({ $0(tcti) }) ?? Self.accepts(candidate) {
                    self.process = process
                    return
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
            if process.isRunning { process.terminate(); process.waitUntilExit() }
            lastLog = (try? String(contentsOf: stateDirectory.appendingPathComponent("swtpm.log"), encoding: .utf8)) ?? ""
        }
        throw TestSupportError.softwareTPMUnavailable("swtpm did not start on 127.0.0.1: \(lastLog.suffix(300))")
    }

    /// ``init(isReady:)`` waiting on a thread of its own: an async test holds no cooperative
    /// thread while swtpm starts (it is polled for up to 10 s).
    public static func start(isReady: (@Sendable (_ tcti: String) -> Bool)? = nil) async throws -> SoftwareTPM {
        try await onThreadOfItsOwn(named: "swtpm-start") { try SoftwareTPM(isReady: isReady) }
    }

    /// Stops the swtpm process; the TPM state stays in the folder. `kill` sends SIGKILL (a
    /// power cut); otherwise swtpm is asked to shut down through its control channel
    /// (`swtpm_ioctl --tcp 127.0.0.1:P+1 -s`, swtpm-tools), SIGKILL only if that fails.
    /// (SIGTERM is no use: children of the test runner inherit its blocked-signal mask.)
    public func stop(kill: Bool = false) {
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
        if process.isRunning { sendKill(process.processIdentifier) }
        process.waitUntilExit()
        self.process = nil
    }

    /// Stops swtpm (SIGKILL) and deletes its state.
    public func remove() {
        stop(kill: true)
        try? FileManager.default.removeItem(at: stateDirectory)
    }

    static let swtpmIoctl: URL? = {
        let candidate = binary?.deletingLastPathComponent().appendingPathComponent("swtpm_ioctl")
        return candidate.flatMap { FileManager.default.isExecutableFile(atPath: $0.path) ? $0 : nil }
    }()

    /// A port pair (P, P+1) with nothing listening, chosen by binding port 0 and checking P+1.
    private static func freePortPair() -> Int {
        for _ in 0..<50 {
            let port = boundPort(0)
            if port > 0, port < 65534, boundPort(port + 1) == port + 1 { return port }
        }
        return Int.random(in: 20000..<60000) & ~1
    }

    /// Binds 127.0.0.1:`port` (0: any) and returns the port bound, or -1; the socket is closed.
    fileprivate static func boundPort(_ port: Int) -> Int {
        withLoopbackSocket(port) { fd, address in
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { return -1 }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let named = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            return named == 0 ? Int(UInt16(bigEndian: address.sin_port)) : -1
        } ?? -1
    }

    /// Whether something accepts a TCP connection on 127.0.0.1:`port`.
    private static func accepts(_ port: Int) -> Bool {
        withLoopbackSocket(port) { fd, address in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            } == 0
        } ?? false
    }

    /// A TCP socket and the address 127.0.0.1:`port`, for `body`; the socket is closed after.
    private static func withLoopbackSocket<T>(_ port: Int, _ body: (Int32, inout sockaddr_in) -> T) -> T? {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return body(fd, &address)
    }

    // MARK: Stop at exit

    nonisolated(unsafe) private static var atExit: [SoftwareTPM] = []
    private static let atExitLock = NSLock()

    /// Stops `tpm` and removes its state when the test process exits.
    public static func stopAtExit(_ tpm: SoftwareTPM) {
        atExitLock.lock()
        defer { atExitLock.unlock() }
        if atExit.isEmpty {
            atexit {
                SoftwareTPM.atExitLock.lock()
                let all = SoftwareTPM.atExit
                SoftwareTPM.atExitLock.unlock()
                for tpm in all { tpm.remove() }
            }
        }
        atExit.append(tpm)
    }
}

private func sendKill(_ pid: pid_t) {
    _ = kill(pid, SIGKILL)
}

/// A TCP port on 127.0.0.1 with nothing bound to it now (port 0 bound, read, closed), for a peer
/// program that takes its listening port on the command line (HAProxy, swtpm).
public enum LoopbackPort {
    /// The port, or -1 when no socket could be bound.
    public static func free() -> Int { SoftwareTPM.boundPort(0) }
}
