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
