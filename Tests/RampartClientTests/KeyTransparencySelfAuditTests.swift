import Foundation
import OpenPGP
@testable import RampartClient
import RampartCore
import RampartServer
import RampartServerTestSupport
import RampartTestSupport
import Testing
import TransparencyLog

/// The agent's daily key log self-audit end to end: a real server with a witness, `rampart unlock`
/// starting the agent, `rampart status --json` reading what the agent recorded. The interval is
/// the agent's `RAMPART_KEYLOG_AUDIT_INTERVAL` (seconds), not a day of waiting.
@Suite(.serialized) struct KeyTransparencySelfAuditTests {
    static let pin = "135792"

    /// `rampart ARGS` with the world's environment and the agent's audit interval.
    static func rampart(_ world: EndToEndWorld, _ arguments: [String], stdin: String? = nil, interval: Int) async throws -> CLIResult {
        try await CLITool.rampart.run(arguments, stdin: stdin,
                                environment: world.environment.merging(["RAMPART_KEYLOG_AUDIT_INTERVAL": String(interval)]) { $1 })
    }

    /// The `keyLogAudit` of `rampart status --json` (nil: none recorded).
    static func audit(_ world: EndToEndWorld) async throws -> [String: Any]? {
        let status = try await world.rampart(["status", "--user", "demo", "--json"])
        try #require(status.status == 0, "\(status.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        return report["keyLogAudit"] as? [String: Any]
    }

    /// Polls the status until `done` holds for the recorded audit (at most 30 s).
    static func waitForAudit(_ world: EndToEndWorld, _ done: ([String: Any]) -> Bool) async throws -> [String: Any]? {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if let audit = try await audit(world), done(audit) { return audit }
            try await Task.sleep(for: .milliseconds(200))
        }
        return try await audit(world)
    }

    @Test func theAgentAuditsOnUnlockWhenDueOnlyOncePerIntervalAndAlarmsOnAForeignKey() async throws {
        let (world, first, info, witness) = try await KeyTransparencyEndToEndTests.worldWithWitness()
        var server = first
        defer { world.close(server) }
        defer { world.stopAgent() }
        #expect(try await world.login(DemoAccounts.demo, user: "demo", serverInfo: info).status == 0)
        await #expect(try KeyTransparencyEndToEndTests.witness(world, witness, info).status == 0)
        #expect(try await world.rampart(["protect", "--user", "demo", "--pin", "--pin-stdin"], stdin: "\(Self.pin)\n").status == 0)
        await #expect(try Self.audit(world) == nil)
        #expect(try await world.rampart(["status", "--user", "demo"]).stdout.contains("key log:     not audited yet"))

        // Unlock: the first audit is due, the agent runs it and records a pass.
        let unlock = try await Self.rampart(world, ["unlock", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n", interval: 3600)
        #expect(unlock.status == 0, "\(unlock.stderr)")
        let passed = try #require(try await Self.waitForAudit(world) { _ in true })
        #expect(passed["passed"] as? Bool == true && (passed["entries"] as? Int ?? 0) >= 1, "\(passed)")
        let firstTime = try #require(passed["time"] as? Double)
        #expect(try await world.rampart(["status", "--user", "demo"]).stdout.contains("every key is yours"))

        // Within the interval: neither another unlock nor a restarted agent runs it again (the
        // record is on disk, not in the agent's memory). The agent checks every second.
        #expect(try await world.rampart(["lock", "--user", "demo"]).status == 0)
        #expect(try await world.rampart(["agent", "stop"]).status == 0)
        #expect(try await Self.rampart(world, ["unlock", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n", interval: 3600).status == 0)
        try await Task.sleep(for: .milliseconds(2500))
        await #expect(try Self.audit(world)?["time"] as? Double == firstTime)

        // The server logs a key for demo's address that demo never made: a new entry, appended
        // (so the log stays consistent and the witness cosigns it).
        let row = try await KeyTransparencyEndToEndTests.sql(server, "SELECT id || '|' || hex(leaf) FROM keyLogLeaves ORDER BY id LIMIT 1")
        let parts = row.split(separator: "|").map(String.init)
        let original = try KeyLogLeaf(encoded: Array(SecretScanEndToEndTests.bytes(hex: parts[1])))
        let mallory = try PGPPrivateKey.generate(name: "Demo", address: DemoAccounts.demo.address)
        let forged = try KeyLogLeaf(index: original.index, time: original.time + 1, keys: [mallory.publicKey.binary])
        let hex = { (bytes: [UInt8]) in bytes.map { String(format: "%02X", $0) }.joined() }
        _ = try await KeyTransparencyEndToEndTests.sql(server, """
            INSERT INTO keyLogLeaves (id, indexKey, leaf, leafHash)
            SELECT MAX(id) + 1, (SELECT indexKey FROM keyLogLeaves WHERE id = \(parts[0])), X'\(hex(forged.encoded))',
                   X'\(hex(forged.leafHash.bytes))' FROM keyLogLeaves
            """)
        server = try await KeyTransparencyEndToEndTests.restart(world, server)
        let cosigned = try await KeyTransparencyEndToEndTests.witness(world, witness, info)
        #expect(cosigned.status == 0 && cosigned.stdout.contains("cosigned the head of"), "\(cosigned.stdout) \(cosigned.stderr)")

        // A day later (here: an agent whose interval is 1 s), the unlocked agent's audit finds it.
        #expect(try await world.rampart(["agent", "stop"]).status == 0)
        #expect(try await Self.rampart(world, ["unlock", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n", interval: 1).status == 0)
        let alarm = try #require(try await Self.waitForAudit(world) { ($0["time"] as? Double ?? 0) > firstTime })
        #expect(alarm["passed"] as? Bool == false, "\(alarm)")
        let alarms = alarm["alarms"] as? [String] ?? []
        #expect(alarms.count == 1 && alarms[0].contains("did not make") && alarms[0].contains(DemoAccounts.demo.address), "\(alarms)")
        let status = try await world.rampart(["status", "--user", "demo"])
        #expect(status.stdout.contains("key log:     ALARM"), "\(status.stdout)")
        // The alarm stays while the account is locked, and the command's own audit agrees.
        #expect(try await world.rampart(["lock", "--user", "demo"]).status == 0)
        #expect(try await world.rampart(["status", "--user", "demo"]).stdout.contains("key log:     ALARM"))
        let command = try await world.rampart(["account", "audit", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(command.status == KeyTransparencyEndToEndTests.keyNotInLog && command.stdout.contains("ALARM"), "\(command.stdout) \(command.stderr)")
    }
}
