import Foundation
import RampartTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Every `rampart` and `rampart-dev` process may hold a MainKey, a private key or a PIN, so each
/// turns core dumps and `ptrace` attach off before it does anything else — also a command that
/// is only waiting for a password on standard input.
@Suite("Process hardening of the command-line tools (CLI)")
struct ProcessHardeningCLITests {
    #if os(Linux)
    @Test(arguments: [
        (BuiltExecutable.rampart, ["login", "--url", "https://127.0.0.1:9", "--pin", "AAAA", "--pin", "BBBB",
                                   "--username", "someone", "--password-stdin"]),
        (BuiltExecutable.rampartDev, ["key", "unlock", "--pin-stdin"]),
    ])
    func aCommandWaitingForASecretCannotBeDumpedOrTraced(executable: BuiltExecutable, arguments: [String]) throws {
        let home = try TemporaryHome("dump")
        let waiting = try WaitingCommand(executable: executable, arguments: ["--home", home.path] + arguments, home: home)
        defer { waiting.stop() }
        let pid = waiting.process.processIdentifier

        // The command sets these itself, right at its start, after `setpriv` has exec'd it (the
        // test process may already have a core limit of 0 that `setpriv` inherits): wait a few
        // seconds for the command itself, running as its user, to show all three.
        let deadline = ContinuousClock.now + .seconds(10)
        var limits = "", uidLine = ""
        var info = stat()
        func observe() -> Bool {
            limits = (try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)) ?? ""
            let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
            uidLine = status.split(separator: "\n").first { $0.hasPrefix("Uid:") }.map(String.init) ?? ""
            guard stat("/proc/\(pid)/mem", &info) == 0 else { return false }
            return coreLimitIsZero(limits) && uidLine.split(separator: "\t").dropFirst().first == Substring(String(waiting.uid))
                && info.st_uid == 0
        }
        while !observe() && ContinuousClock.now < deadline && waiting.process.isRunning { usleep(20_000) }
        #expect(waiting.process.isRunning, "the command must still be waiting for its secret on standard input")
        #expect(coreLimitIsZero(limits), "core dumps still allowed:\n\(limits)")
        // A non-dumpable process's /proc files belong to root, so its own user cannot read its
        // memory or attach to it. (Run as another user when the test itself is root.)
        #expect(uidLine.split(separator: "\t").dropFirst().first == Substring(String(waiting.uid)),
                "the checked process must be the command itself, running as uid \(waiting.uid): \(uidLine)")
        #expect(info.st_uid == 0, "/proc/\(pid)/mem belongs to uid \(info.st_uid): the process is still dumpable (ptrace-attachable)")
        #expect(waiting.uid != 0, "the check needs the command to run as a user other than root")
    }

    private func coreLimitIsZero(_ limits: String) -> Bool {
        guard let line = limits.split(separator: "\n").first(where: { $0.hasPrefix("Max core file size") }) else { return false }
        let fields = line.dropFirst("Max core file size".count).split(separator: " ")
        return fields.count >= 2 && fields[0] == "0" && fields[1] == "0"
    }
    #endif
}

#if os(Linux)
/// A command started with standard input left open (so it blocks reading its secret), run as
/// the unprivileged user `nobody` when the test runs as root.
private final class WaitingCommand: @unchecked Sendable {
    let process = Process()
    let stdin = Pipe()
    let uid: uid_t

    init(executable: BuiltExecutable, arguments: [String], home: TemporaryHome) throws {
        let binary = try executable.url().path
        if geteuid() == 0 {
            uid = 65534
            #expect(chown(home.path, 65534, 65534) == 0)
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", binary] + arguments
        } else {
            uid = geteuid()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = arguments
        }
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home.path
        process.environment = environment
        process.standardInput = stdin
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        try? stdin.fileHandleForWriting.close()
    }
}
#endif
