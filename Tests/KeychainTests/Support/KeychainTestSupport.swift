import Foundation
import Keychain
import RampartCore
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A fresh private temporary folder, removed when the value is released.
final class TemporaryFolder: @unchecked Sendable {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("rampart-keychain-tests-\(UUID().uuidString)", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true,
                                                 attributes: [.posixPermissions: 0o700])
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func child(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// A machine identity file holding `identity`, to simulate one machine or another.
    func machine(_ identity: String) throws -> MachineIdentity {
        let file = child("machine-id-\(identity)")
        try Data((identity + "\n").utf8).write(to: file)
        return MachineIdentity(sources: [file])
    }
}

func bytes(_ text: String) -> SecretBytes { SecretBytes(copying: Array(text.utf8)) }

func contents(_ secret: SecretBytes) throws -> [UInt8] { try secret.withUnsafeBytes { Array($0) } }

func fileMode(_ url: URL) -> mode_t {
    var info = stat()
    _ = lstat(url.path, &info)
    return info.st_mode & 0o777
}

/// The package root (two folders above this file's folder).
let packageRoot: URL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// Whether the Secret Service backend can run in this test process, and why not.
///
/// When no session bus is configured, the tests start the private one of
/// `scripts/services/secret-service.sh` themselves (it is idempotent). They skip (with the
/// reason printed) only when that fails; when `CI` is set and `RAMPART_SECRET_SERVICE=1`, a
/// failure to reach the service fails the tests instead.
enum SecretServiceAvailability {
    /// nil when available, else the reason.
    static let unavailableReason: String? = {
        #if canImport(CLibSecret)
        let environment = ProcessInfo.processInfo.environment
        if environment["DBUS_SESSION_BUS_ADDRESS"] == nil {
            startPrivateService()
        }
        do {
            try SecretServiceKeychain().probe()
            return nil
        } catch {
            return "\(error)"
        }
        #else
        return "this platform has no Secret Service backend"
        #endif
    }()

    /// CI promised the service (`CI` set and `RAMPART_SECRET_SERVICE=1`): never skip.
    static var required: Bool {
        let environment = ProcessInfo.processInfo.environment
        return environment["CI"] != nil && environment["RAMPART_SECRET_SERVICE"] == "1"
    }

    /// Whether Secret Service cases should run (they do when available or required).
    static let shouldRun: Bool = {
        if unavailableReason == nil { return true }
        if required { return true }
        print("Skipping Secret Service keychain tests: \(unavailableReason ?? "")")
        return false
    }()

    private static func startPrivateService() {
        let script = packageRoot.appendingPathComponent("scripts/services/secret-service.sh").path
        guard FileManager.default.fileExists(atPath: script) else { return }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", closeInheritedDescriptors + "source \"$0\" >&2 && printf '%s' \"$DBUS_SESSION_BUS_ADDRESS\"", script]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        do { try process.run() } catch { return }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let address = String(decoding: data, as: UTF8.self)
        if process.terminationStatus == 0, !address.isEmpty {
            setenv("DBUS_SESSION_BUS_ADDRESS", address, 1)
        }
    }
}

/// A bash prefix that closes every descriptor above 2 before the daemons are forked.
/// Foundation's `Process` on Linux notices a child's exit through a socket the child inherits;
/// a daemon keeping that socket would make `waitUntilExit` wait for the daemon.
let closeInheritedDescriptors =
    "for fd in /proc/$$/fd/*; do n=${fd##*/}; if [ \"$n\" -gt 2 ]; then eval \"exec $n>&-\"; fi; done 2>/dev/null; "

/// The built `rampart` executable, for tests that need a second process.
enum RampartExecutable {
    static let url: URL? = {
        var candidates: [URL] = []
        if let explicit = ProcessInfo.processInfo.environment["RAMPART_BIN"] {
            candidates.append(URL(fileURLWithPath: explicit))
        }
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        candidates.append(runner.deletingLastPathComponent().appendingPathComponent("rampart"))
        // The test bundle (`…/debug/RampartPackageTests.xctest`) sits in the products folder;
        // on Apple platforms the runner is inside the bundle.
        var bundle = Bundle.main.bundleURL
        for _ in 0..<4 {
            candidates.append(bundle.appendingPathComponent("rampart"))
            bundle.deleteLastPathComponent()
        }
        for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
            candidates.append(bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("rampart"))
        }
        candidates.append(packageRoot.appendingPathComponent(".build/debug/rampart"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()
}

/// A child process whose standard output goes to a file (read while it runs or after a kill).
final class ChildProcess: @unchecked Sendable {
    let process = Process()
    let outputFile: URL

    init(_ executable: URL, _ arguments: [String], outputFile: URL, environment: [String: String] = [:]) throws {
        self.outputFile = outputFile
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: outputFile)
        process.standardError = try FileHandle(forWritingTo: outputFile.appendingPathExtension("err").creatingEmpty())
    }

    func start() throws { try process.run() }

    /// Runs to the end with `input` on standard input; returns the exit status.
    @discardableResult
    func run(input: [UInt8] = []) throws -> Int32 {
        let pipe = Pipe()
        process.standardInput = pipe
        try process.run()
        pipe.fileHandleForWriting.write(Data(input))
        try pipe.fileHandleForWriting.close()
        process.waitUntilExit()
        return process.terminationStatus
    }

    var lines: [Substring] {
        let text = (try? String(contentsOf: outputFile, encoding: .utf8)) ?? ""
        return text.split(separator: "\n")
    }

    var errorText: String {
        (try? String(contentsOf: outputFile.appendingPathExtension("err"), encoding: .utf8)) ?? ""
    }

    /// Waits until a line equal to `line` is printed (or the process ends, or ~10 s pass).
    func waitForLine(_ line: String) -> Bool {
        for _ in 0..<2000 {
            if lines.contains(where: { $0 == line }) { return true }
            if !process.isRunning { return lines.contains(where: { $0 == line }) }
            usleep(5000)
        }
        return false
    }

    func kill() {
        sendSIGKILL(process.processIdentifier)
        process.waitUntilExit()
    }
}

private func sendSIGKILL(_ pid: pid_t) {
    _ = kill(pid, SIGKILL)
}

extension URL {
    func creatingEmpty() -> URL {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        return self
    }
}
