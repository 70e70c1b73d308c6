import Foundation
import RampartTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Many `rampart unlock` processes started at once for one home: they must share one agent (the
/// one that won the start lock), be served or queued without resets or hangs, and leave no
/// agent behind once it is stopped.
private let fast = ["RAMPART_PIN_KDF_LOGN": "15"]
private let rampart = CLITool.rampart.with(environment: fast)
private let rampartDev = CLITool.rampartDev.with(environment: fast)

/// A short-path home whose agent is stopped with it, holding a MainKey from `rampart-dev key init`
/// protected by `pin`, and its `--home` arguments.
func pinProtectedAgentHome(_ label: String, pin: String) async throws -> (TemporaryHome, [String]) {
    let home = try TemporaryHome(label, shortPath: true)
    home.stopsAgentAtEnd(using: rampart)
    let h = ["--home", home.path]
    #expect(try await rampartDev.run(["key", "init"] + h).status == 0)
    #expect(try await rampartDev.run(["key", "protect", "--pin-stdin"] + h, stdin: "\(pin)\n").status == 0)
    return (home, h)
}

/// The process ids of every `rampart agent start --foreground` serving `home`.
func agentProcesses(home: String) -> [pid_t] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { entry -> pid_t? in
        guard let pid = pid_t(entry),
              let raw = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
        let arguments = raw.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        guard arguments.count > 5, arguments.contains("--foreground"),
              let at = arguments.firstIndex(of: "agent"), arguments.count > at + 1, arguments[at + 1] == "start",
              let homeAt = arguments.firstIndex(of: "--home"), arguments.count > homeAt + 1,
              URL(fileURLWithPath: arguments[homeAt + 1]).standardizedFileURL.path == URL(fileURLWithPath: home).standardizedFileURL.path
        else { return nil }
        return pid
    }
}

@Suite("Starting the agent under many clients (CLI)", .serialized)
struct AgentStartRaceCLITests {
    @Test func fiftyParallelUnlocksShareOneAgentAndEveryClientAnswers() async throws {
        let (home, h) = try await pinProtectedAgentHome("race", pin: "482913")
        #expect(agentProcesses(home: home.path).isEmpty)

        let started = Date()
        let children = try (0..<50).map { index in
            try rampart.spawn(["unlock", "--pin-stdin"] + h, stdin: String(format: "%06d\n", 100_000 + index))
        }
        var results: [CLIResult] = []
        for child in children { results.append(try await child.result(timeout: .seconds(120))) }
        let elapsed = Date().timeIntervalSince(started)
        let statuses = results.map(\.status)
        let wrong = results.filter { $0.status == 4 }.count
        let wiped = results.filter { $0.status == 5 }.count
        #expect(statuses.allSatisfy { [4, 5, 6].contains($0) },
                "every client answers 4, or 5/6 once wiped: \(statuses) \(results.filter { ![4, 5, 6].contains($0.status) }.map(\.stderr))")
        #expect(wrong + wiped <= 10, "tries evaluated: \(wrong) wrong + \(wiped) wiping")
        #expect(wiped == 1, "statuses \(statuses)")
        // How long the 50 took is not checked (the suite runs beside every other one); that each
        // answered within its own 120 s is.
        print("AgentStartRaceCLITests: 50 clients answered in \(Int(elapsed)) s")
        let agents = agentProcesses(home: home.path)
        #expect(agents.count == 1, "exactly one agent serves the home: \(agents)")

        #expect(try await rampart.run(["agent", "stop"] + h).status == 0)
        var waited = 0
        while !agentProcesses(home: home.path).isEmpty, waited < 300 {
            try await Task.sleep(for: .milliseconds(100))
            waited += 1
        }
        let left = agentProcesses(home: home.path)
        #expect(left.isEmpty, "no agent is left after stop: \(left)")
        for pid in left { kill(pid, SIGTERM) }
    }
}
