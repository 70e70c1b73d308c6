import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A swtpm of the test's own (state folder kept across restarts), for the CLI: the command line
/// of scripts/services/swtpm.sh on a free loopback port pair.
private final class CLISoftwareTPM: @unchecked Sendable {
    static let binary: URL? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":").map(String.init) + ["/usr/bin"] {
            let candidate = URL(fileURLWithPath: directory).appendingPathComponent("swtpm")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }()

    let state: URL
    private var process: Process?
    private(set) var port = 0
    var tcti: String { "swtpm:host=127.0.0.1,port=\(port)" }

    init() throws {
        state = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-cli-swtpm-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        try start()
    }

    func start() throws {
        for _ in 0..<20 {
            let candidate = Int.random(in: 20000..<60000) & ~1
            let process = Process()
            process.executableURL = Self.binary
            process.arguments = ["socket", "--tpm2", "--tpmstate", "dir=\(state.path)",
                                 "--server", "type=tcp,port=\(candidate),bindaddr=127.0.0.1",
                                 "--ctrl", "type=tcp,port=\(candidate + 1),bindaddr=127.0.0.1",
                                 "--flags", "not-need-init,startup-clear"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            for _ in 0..<100 where process.isRunning {
                if Self.listening(candidate) {
                    self.process = process
                    port = candidate
                    return
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
            if process.isRunning { process.terminate(); process.waitUntilExit() }
        }
        throw CLIRunError("swtpm did not start")
    }

    func stop() {
        if let process, process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        process = nil
    }

    func remove() {
        stop()
        try? FileManager.default.removeItem(at: state)
    }

    private static func listening(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }
}

struct CLIRunError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

@Suite("rampart key with a TPM (CLI, swtpm)",
       .enabled(if: CLISoftwareTPM.binary != nil, "swtpm is not installed (apt-get install swtpm swtpm-tools): TPM CLI tests cannot run"))
struct HardwareKeysCLITests {
    /// Every command is a new `rampart` process: the TPM's lockout (3 failures; one forgiven per
    /// 1000 s) outlives the process that caused it, and a restart of the TPM.
    @Test func tpmLockoutOutlivesTheProcessAndTheTPMRestart() throws {
        let swtpm = try CLISoftwareTPM()
        defer { swtpm.remove() }
        let home = try temporaryHome().path
        defer { try? FileManager.default.removeItem(atPath: home) }
        func rampart(_ arguments: [String], stdin: String? = nil) throws -> CLIRun {
            try RampartBinary.run(["--home", home] + arguments, stdin: stdin,
                                  environment: ["RAMPART_TPM_TCTI": swtpm.tcti, "RAMPART_PIN_KDF_LOGN": "15"])
        }
        var run = try rampart(["key", "tpm-lockout", "--set", "3,1000,1000"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("0/3 failures"), "\(run.stdout)")
        run = try rampart(["key", "init"])
        #expect(run.status == 0, "\(run.stderr)")
        run = try rampart(["key", "protect", "--hardware", "--pin-stdin"], stdin: "2580\n")
        #expect(run.status == 0, "\(run.stderr)")
        run = try rampart(["key", "status"])
        #expect(run.stdout.contains("protectors:        hardwarePIN"), "\(run.stdout)")
        #expect(run.stdout.contains("secure hardware:   TPM 2.0"), "\(run.stdout)")
        run = try rampart(["key", "unlock", "--pin-stdin"], stdin: "2580\n")
        #expect(run.status == 0, "\(run.stderr)")

        for (index, guess) in ["1111", "2222", "3333"].enumerated() {
            run = try rampart(["key", "unlock", "--pin-stdin"], stdin: "\(guess)\n")
            #expect(run.status == 4, "\(run.stderr)")
            #expect(run.stderr.contains("\(9 - index) attempts left"), "\(run.stderr)")
        }
        // A new process, the right PIN: the TPM refuses it.
        run = try rampart(["key", "unlock", "--pin-stdin"], stdin: "2580\n")
        #expect(run.status == 4)
        #expect(run.stderr.contains("dictionary-attack lockout"), "\(run.stderr)")
        #expect(run.stderr.contains("IN LOCKOUT, 3/3 failures"), "\(run.stderr)")

        // Power-cut the TPM and start it again on the same state: still locked out.
        swtpm.stop()
        try swtpm.start()
        run = try rampart(["key", "unlock", "--pin-stdin"], stdin: "2580\n")
        #expect(run.status == 4)
        #expect(run.stderr.contains("IN LOCKOUT"), "\(run.stderr)")
        run = try rampart(["key", "status"])
        #expect(run.stdout.contains("IN LOCKOUT"), "\(run.stdout)")

        // The lockout authorization ends it; the MainKey comes back unchanged.
        run = try rampart(["key", "tpm-lockout", "--reset"])
        #expect(run.status == 0, "\(run.stderr)")
        run = try rampart(["key", "unlock", "--pin-stdin"], stdin: "2580\n")
        #expect(run.status == 0, "\(run.stderr)")
    }

    @Test func hardwareProtectorIsAddedBesideThePINAndRemovedWithoutDataLoss() throws {
        let swtpm = try CLISoftwareTPM()
        defer { swtpm.remove() }
        let home = try temporaryHome().path
        defer { try? FileManager.default.removeItem(atPath: home) }
        func rampart(_ arguments: [String], stdin: String? = nil, tcti: String? = nil) throws -> CLIRun {
            try RampartBinary.run(["--home", home] + arguments, stdin: stdin,
                                  environment: ["RAMPART_TPM_TCTI": tcti ?? swtpm.tcti, "RAMPART_PIN_KDF_LOGN": "15"])
        }
        var run = try rampart(["key", "init"])
        let fingerprint = run.stdout.split(separator: " ").dropFirst(2).first.map(String.init) ?? "?"
        run = try rampart(["key", "protect", "--pin-stdin"], stdin: "482913\n")
        #expect(run.status == 0, "\(run.stderr)")
        run = try rampart(["key", "protect", "--hardware", "--pin-stdin", "--keep"], stdin: "482913\n482913\n")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("active protectors: pin, hardwarePIN"), "\(run.stdout)")
        // TPM gone: the PIN protector still opens the same MainKey.
        run = try rampart(["key", "unlock", "--pin-stdin"], stdin: "482913\n", tcti: "swtpm:host=127.0.0.1,port=1")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains(fingerprint), "\(run.stdout)")
        // Remove the PIN-only protector: the TPM one keeps the same key.
        run = try rampart(["key", "remove-protector", "pin"], stdin: "482913\n")
        #expect(run.status == 0, "\(run.stderr)")
        run = try rampart(["key", "unlock", "--pin-stdin"], stdin: "482913\n")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains(fingerprint), "\(run.stdout)")
        // No TPM at all: a clear, typed message.
        run = try RampartBinary.run(["--home", home, "key", "unlock", "--pin-stdin"], stdin: "482913\n",
                                    environment: ["RAMPART_TPM_TCTI": "swtpm:host=127.0.0.1,port=1"])
        #expect(run.status != 0)
        #expect(run.stderr.contains("cannot be reached"), "\(run.stderr)")
    }

    /// The attacker's copy: the whole home folder (file keychain included) taken to another
    /// machine (a second swtpm with its own state). The right PIN does not help there; on the
    /// original machine the same copy opens, so the copy is complete.
    @Test func copiedKeychainOnAnotherMachineCannotUnlock() throws {
        let machine = try CLISoftwareTPM()
        defer { machine.remove() }
        let other = try CLISoftwareTPM()
        defer { other.remove() }
        let home = try temporaryHome()
        let copy = try temporaryHome()
        defer {
            try? FileManager.default.removeItem(at: home)
            try? FileManager.default.removeItem(at: copy)
        }
        func rampart(_ home: URL, _ tcti: String, _ arguments: [String], stdin: String? = nil) throws -> CLIRun {
            try RampartBinary.run(["--home", home.path] + arguments, stdin: stdin,
                                  environment: ["RAMPART_TPM_TCTI": tcti, "RAMPART_PIN_KDF_LOGN": "15"])
        }
        var run = try rampart(home, machine.tcti, ["key", "init"])
        #expect(run.status == 0, "\(run.stderr)")
        run = try rampart(home, machine.tcti, ["key", "protect", "--hardware", "--pin-stdin"], stdin: "2580\n")
        #expect(run.status == 0, "\(run.stderr)")
        try FileManager.default.removeItem(at: copy)
        try FileManager.default.copyItem(at: home, to: copy)

        run = try rampart(copy, other.tcti, ["key", "unlock", "--pin-stdin"], stdin: "2580\n")
        #expect(run.status != 0)
        #expect(run.stderr.contains("sealed by another TPM"), "\(run.stderr)")
        run = try rampart(copy, machine.tcti, ["key", "unlock", "--pin-stdin"], stdin: "2580\n")
        #expect(run.status == 0, "\(run.stderr)")
    }
}
