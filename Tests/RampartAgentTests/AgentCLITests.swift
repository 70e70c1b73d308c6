import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Drives the built `rampart` executable: the agent starts on demand as its own process.
enum AgentCLI {
    struct Run {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// The `rampart` executable next to this test bundle (or `$RAMPART_BIN`).
    static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["RAMPART_BIN"], !path.isEmpty { return URL(fileURLWithPath: path) }
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("rampart")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        return Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("rampart")
    }

    static func run(_ arguments: [String], stdin: String? = nil) throws -> Run {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["RAMPART_PIN_KDF_LOGN"] = "15"
        process.environment = environment
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                   stderr: String(decoding: errData, as: UTF8.self))
    }
}

@Suite("rampart unlock/lock/status through the agent (CLI)", .serialized)
struct AgentCLITests {
    @Test func unlockStartsTheAgentOnDemandAndLockAndStopZeroizeIt() throws {
        let home = try shortHome()
        defer {
            _ = try? AgentCLI.run(["agent", "stop", "--home", home.path])
            try? FileManager.default.removeItem(at: home)
        }
        let h = ["--home", home.path]
        #expect(try AgentCLI.run(["key", "init"] + h).status == 0)
        #expect(try AgentCLI.run(["key", "protect", "--pin-stdin"] + h, stdin: "4821\n").status == 0)

        let before = try AgentCLI.run(["status"] + h)
        #expect(before.status == 0)
        #expect(before.stdout.contains("state:       locked"))
        #expect(before.stdout.contains("agent:       not running"))

        let unlock = try AgentCLI.run(["unlock", "--pin-stdin", "--idle-exit", "120"] + h, stdin: "4821\n")
        #expect(unlock.status == 0, "\(unlock.stderr)")
        #expect(unlock.stdout.contains("Unlocked MainKey"))

        let unlocked = try AgentCLI.run(["status"] + h)
        #expect(unlocked.stdout.contains("state:       unlocked"), "\(unlocked.stdout)")
        #expect(unlocked.stdout.contains("agent:       running (pid "))
        let socket = home.appendingPathComponent("agent/agent.sock").path
        let attributes = try FileManager.default.attributesOfItem(atPath: home.appendingPathComponent("agent").path)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
        #expect(FileManager.default.fileExists(atPath: socket))

        // A wrong PIN through the agent: exit 4 with the attempts left; the key stays unlocked.
        #expect(try AgentCLI.run(["lock"] + h).status == 0)
        let locked = try AgentCLI.run(["status"] + h)
        #expect(locked.stdout.contains("state:       locked"), "\(locked.stdout)")
        #expect(locked.stdout.contains("agent:       running"))
        let wrong = try AgentCLI.run(["unlock", "--pin-stdin"] + h, stdin: "0000\n")
        #expect(wrong.status == 4)
        #expect(wrong.stderr.contains("9 attempts left"), "\(wrong.stderr)")

        let stop = try AgentCLI.run(["agent", "stop"] + h)
        #expect(stop.status == 0)
        #expect(try AgentCLI.run(["agent", "status"] + h).stdout.contains("not running"))
        #expect(!FileManager.default.fileExists(atPath: socket), "the socket is removed at stop")
        // Locking without an agent is not an error.
        #expect(try AgentCLI.run(["lock"] + h).status == 0)
    }

    @Test func aTerminatedAgentZeroizesAndRemovesItsSocket() async throws {
        let home = try shortHome()
        defer {
            _ = try? AgentCLI.run(["agent", "stop", "--home", home.path])
            try? FileManager.default.removeItem(at: home)
        }
        let h = ["--home", home.path]
        #expect(try AgentCLI.run(["key", "init"] + h).status == 0)
        let started = try AgentCLI.run(["agent", "start", "--idle-exit", "120"] + h)
        #expect(started.status == 0, "\(started.stderr)")
        let second = try AgentCLI.run(["agent", "start"] + h)
        #expect(second.status == 10, "a second agent is refused with the agent-unavailable code")
        let unlock = try AgentCLI.run(["unlock"] + h)
        #expect(unlock.status == 0, "\(unlock.stderr)")
        let status = try AgentCLI.run(["status", "--json"] + h)
        let report = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        #expect(report?["unlocked"] as? Bool == true)
        let pid = try #require(report?["agentProcessID"] as? Int)
        #expect(kill(pid_t(pid), SIGTERM) == 0)
        let socket = home.appendingPathComponent("agent/agent.sock").path
        var waited = 0
        while FileManager.default.fileExists(atPath: socket), waited < 50 {
            try await Task.sleep(for: .milliseconds(100))
            waited += 1
        }
        #expect(!FileManager.default.fileExists(atPath: socket), "SIGTERM: the agent removed its socket")
        waited = 0
        while kill(pid_t(pid), 0) == 0, waited < 50 {
            try await Task.sleep(for: .milliseconds(100))
            waited += 1
        }
        #expect(kill(pid_t(pid), 0) != 0, "the agent exited")
        let log = try String(contentsOf: home.appendingPathComponent("agent/agent.log"), encoding: .utf8)
        #expect(log.contains("stopped; every MainKey was zeroized"))
        let after = try AgentCLI.run(["status"] + h)
        #expect(after.stdout.contains("state:       locked"))
    }
}
