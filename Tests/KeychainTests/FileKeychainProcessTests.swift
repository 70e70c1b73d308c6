import Foundation
import Keychain
import RampartCore
import RampartTestSupport
import Testing

/// The file keychain under real processes: `rampart-dev keychain stress-write` writers running at
/// once, and killed with SIGKILL at random moments.
@Suite("File keychain across processes", .serialized)
struct FileKeychainProcessTests {
    let folder = TemporaryFolder()

    /// Parses a stress-write value `"tag:round:index:xxx…"` and checks its filler.
    static func parse(_ value: [UInt8]) -> (tag: String, round: Int, index: Int)? {
        let parts = String(decoding: value, as: UTF8.self).split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 4, let round = Int(parts[1]), let index = Int(parts[2]) else { return nil }
        guard value == Array("\(parts[0]):\(round):\(index):".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: (round * 7 + index) % 200)
        else { return nil }
        return (String(parts[0]), round, index)
    }

    @Test func twoProcessesWritingAtOnceLoseNoItem() async throws {
        let identity = folder.child("machine-id")
        try Data("machine-a\n".utf8).write(to: identity)
        let count = 150
        for attempt in 0..<3 {
            // A fresh, empty keychain each time, so the two writers also race to create it.
            let dir = folder.child("keychain-\(attempt)")
            let writers = try ["p", "q"].map { tag in
                try CLITool.rampartDev.spawn(["keychain", "stress-write", "--dir", dir.path, "--mode", "add",
                                              "--count", "\(count)", "--tag", tag, "--machine-id", identity.path])
            }
            for writer in writers { await writer.waitForExit() }
            for writer in writers {
                #expect(writer.process.terminationStatus == 0, "writer failed: \(writer.stderr)")
                #expect(writer.lines.last == "done")
            }
            let keychain = FileKeychain(directory: dir, machineIdentity: MachineIdentity(sources: [identity]))
            // Every item of both writers is there, with its writer's value.
            for tag in ["p", "q"] {
                for index in 0..<count {
                    let value = try contents(keychain.read(KeychainItemID(service: "stress", account: "\(tag)-\(index)")))
                    #expect(Self.parse(value).map { "\($0.tag)/\($0.index)" } == "\(tag)/\(index)")
                }
            }
            // Each contested item was added by exactly one writer, and holds that writer's value.
            let won = writers.map { Set($0.lines.filter { $0.hasPrefix("won ") }.compactMap { Int($0.dropFirst(4)) }) }
            #expect(won[0].intersection(won[1]).isEmpty)
            #expect(won[0].union(won[1]) == Set(0..<count))
            for index in 0..<count {
                let value = try contents(keychain.read(KeychainItemID(service: "stress", account: "contested-\(index)")))
                let winner = won[0].contains(index) ? "p" : "q"
                #expect(Self.parse(value)?.tag == winner)
            }
            #expect(try keychain.itemIDs(accessGroup: .app).count == 3 * count)
        }
    }

    @Test func writerKilledAtRandomMomentsNeverLeavesAnUnreadableKeychain() async throws {
        let identity = folder.child("machine-id")
        try Data("machine-a\n".utf8).write(to: identity)
        let dir = folder.child("keychain")
        let keychain = FileKeychain(directory: dir, machineIdentity: MachineIdentity(sources: [identity]))
        let count = 8
        var known: [Int: [UInt8]] = [:]
        var killsMidRun = 0
        var generator = SystemRandomNumberGenerator()
        for iteration in 0..<50 {
            let tag = "t\(iteration)"
            let writer = try CLITool.rampartDev.spawn(["keychain", "stress-write", "--dir", dir.path, "--count", "\(count)",
                                                       "--tag", tag, "--machine-id", identity.path])
            #expect(await writer.waitForLine("ready"), "the writer did not start: \(writer.stderr)")
            let delay = UInt32.random(in: 0...60_000, using: &generator)
            usleep(delay)
            writer.kill()
            #expect(writer.process.terminationReason == .uncaughtSignal, "the writer ended on its own: \(writer.stderr)")

            // Last acknowledged round per item in this iteration.
            var acked: [Int: Int] = [:]
            for line in writer.lines where line.hasPrefix("ack ") {
                let fields = line.split(separator: " ")
                if fields.count == 4, let round = Int(fields[2]), let index = Int(fields[3]) { acked[index] = round }
            }
            if !acked.isEmpty { killsMidRun += 1 }

            for index in 0..<count {
                let id = KeychainItemID(service: "stress", account: "item-\(index)")
                let value: [UInt8]?
                do {
                    value = try keychain.readIfPresent(id).map(contents)
                } catch {
                    Issue.record("iteration \(iteration) (killed after \(delay) µs): item \(index) unreadable: \(error)")
                    continue
                }
                // Allowed: the last acknowledged value, or the write in flight (one round more);
                // for an item not acknowledged in this run, the previous value or this run's first write.
                var allowed: [[UInt8]?] = []
                if let round = acked[index] {
                    allowed = [KeychainStressValue.make(tag, round, index), KeychainStressValue.make(tag, round + 1, index)]
                } else {
                    allowed = [known[index], KeychainStressValue.make(tag, 0, index)]
                }
                #expect(allowed.contains { $0 == value },
                        "iteration \(iteration): item \(index) holds \(value.map { String(decoding: $0.prefix(24), as: UTF8.self) } ?? "nothing")")
                known[index] = value
            }
            #expect(try keychain.itemIDs(accessGroup: .app).count == known.values.count)
        }
        print("crash test: \(killsMidRun) of 50 writers were killed after at least one completed write")
        #expect(killsMidRun >= 10, "too few kills landed during writes to prove anything")
        // A clean write afterwards removes the temporary files the killed writers left.
        try keychain.set(bytes("final"), for: KeychainItemID(service: "stress", account: "item-0"))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: keychain.groupDirectory(.app).path).filter { $0.hasSuffix(".tmp") }
        #expect(leftovers.isEmpty)
    }
}

/// The value format of `rampart-dev keychain stress-write` (kept in step with KeychainCommands.swift).
enum KeychainStressValue {
    static func make(_ tag: String, _ round: Int, _ index: Int) -> [UInt8] {
        Array("\(tag):\(round):\(index):".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: (round * 7 + index) % 200)
    }
}
