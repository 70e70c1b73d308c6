import Foundation
import RampartTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The built tools, as a user runs them; the agent starts on demand as its own process. The
/// MainKey comes from `rampart-dev key init` (the key lab), the rest is the user's `rampart`.
private let fast = ["RAMPART_PIN_KDF_LOGN": "15"]
private let rampart = CLITool.rampart.with(environment: fast)
private let rampartDev = CLITool.rampartDev.with(environment: fast)

@Suite("rampart unlock/lock/status through the agent (CLI)", .serialized)
struct AgentCLITests {
    @Test func unlockStartsTheAgentOnDemandAndLockAndStopZeroizeIt() async throws {
        let (home, h) = try await pinProtectedAgentHome("agent", pin: "4821")

        let before = try await rampart.run(["status"] + h)
        #expect(before.status == 0)
        #expect(before.stdout.contains("state:       locked"))
        #expect(before.stdout.contains("agent:       not running"))

        let unlock = try await rampart.run(["unlock", "--pin-stdin", "--idle-exit", "120"] + h, stdin: "4821\n")
        #expect(unlock.status == 0, "\(unlock.stderr)")
        #expect(unlock.stdout.contains("Unlocked MainKey"))

        let unlocked = try await rampart.run(["status"] + h)
        #expect(unlocked.stdout.contains("state:       unlocked"), "\(unlocked.stdout)")
        #expect(unlocked.stdout.contains("agent:       running (pid "))
        let socket = home.child("agent/agent.sock").path
        let attributes = try FileManager.default.attributesOfItem(atPath: home.child("agent").path)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
        #expect(FileManager.default.fileExists(atPath: socket))

        // A wrong PIN through the agent: exit 4 with the attempts left; the key stays unlocked.
        #expect(try await rampart.run(["lock"] + h).status == 0)
        let locked = try await rampart.run(["status"] + h)
        #expect(locked.stdout.contains("state:       locked"), "\(locked.stdout)")
        #expect(locked.stdout.contains("agent:       running"))
        let wrong = try await rampart.run(["unlock", "--pin-stdin"] + h, stdin: "0000\n")
        #expect(wrong.status == 4)
        #expect(wrong.stderr.contains("9 attempts left"), "\(wrong.stderr)")

        let stop = try await rampart.run(["agent", "stop"] + h)
        #expect(stop.status == 0)
        #expect(try await rampart.run(["agent", "status"] + h).stdout.contains("not running"))
        #expect(!FileManager.default.fileExists(atPath: socket), "the socket is removed at stop")
        // Locking without an agent is not an error.
        #expect(try await rampart.run(["lock"] + h).status == 0)
    }

    @Test func aTerminatedAgentZeroizesAndRemovesItsSocket() async throws {
        let home = try TemporaryHome("agent", shortPath: true)
        let h = ["--home", home.path]
        #expect(try await rampartDev.run(["key", "init"] + h).status == 0)
        let started = try home.startAgent(idleExit: 120, using: rampart)
        #expect(started.status == 0, "\(started.stderr)")
        let second = try await rampart.run(["agent", "start"] + h)
        #expect(second.status == 10, "a second agent is refused with the agent-unavailable code")
        let unlock = try await rampart.run(["unlock"] + h)
        #expect(unlock.status == 0, "\(unlock.stderr)")
        let status = try await rampart.run(["status", "--json"] + h)
        let report = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        #expect(report?["unlocked"] as? Bool == true)
        let pid = try #require(report?["agentProcessID"] as? Int)
        #expect(kill(pid_t(pid), SIGTERM) == 0)
        let socket = home.child("agent/agent.sock").path
        var waited = 0
        while FileManager.default.fileExists(atPath: socket), waited < 300 {
            try await Task.sleep(for: .milliseconds(100))
            waited += 1
        }
        #expect(!FileManager.default.fileExists(atPath: socket), "SIGTERM: the agent removed its socket")
        waited = 0
        while kill(pid_t(pid), 0) == 0, waited < 300 {
            try await Task.sleep(for: .milliseconds(100))
            waited += 1
        }
        #expect(kill(pid_t(pid), 0) != 0, "the agent exited")
        let log = try String(contentsOf: home.child("agent/agent.log"), encoding: .utf8)
        #expect(log.contains("stopped; every MainKey was zeroized"))
        let after = try await rampart.run(["status"] + h)
        #expect(after.stdout.contains("state:       locked"))
    }
}
