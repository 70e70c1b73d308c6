import Foundation
import GRDB
import RampartCore
import RampartTestSupport
import Testing
@testable import SealedStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A writer process killed with SIGKILL in the middle of its transactions loses no committed
/// message and leaves a database that opens and passes `PRAGMA integrity_check`.
@Suite struct CrashTests {
    @Test func sigkilledWriterLosesNoCommittedMessage() async throws {
        var keyBytes = [UInt8](repeating: 0, count: 32)
        for index in keyBytes.indices { keyBytes[index] = UInt8.random(in: 0...255) }
        let hexKey = keyBytes.map { String(format: "%02x", $0) }.joined()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let files = StoreFiles(root: root.appendingPathComponent("stores"))

        var committed = Set<Int>()
        var kills = 0
        for round in 0..<6 {
            let writer = try CLITool.rampartDev.spawn(["store", "stress-write", "--root", files.root.path, "--user", "alice",
                                                       "--start", String(round * 10_000_000), "--batch", "25"],
                                                      stdin: hexKey + "\n")
            // Let it commit a few batches (a varying number each round), then kill it while it
            // is inside its next transaction.
            let target = 2 + (round * 3) % 7
            #expect(await writer.waitForLines { $0.count >= target }, "writer stopped early: \(writer.stderr)")
            // A random pause inside the next transaction (a batch takes a few milliseconds).
            usleep(UInt32.random(in: 0...4_000))
            writer.kill(SIGKILL)
            #expect(writer.process.terminationReason == .uncaughtSignal)
            kills += 1
            // Every line printed before the kill, including any still in the pipe at the kill.
            let lines = writer.lines
            for line in lines where line.hasPrefix("committed ") {
                let last = Int(line.dropFirst("committed ".count))!
                let first = last - 24
                committed.formUnion(first...last)
            }
        }
        #expect(kills == 6)
        #expect(committed.count >= 6 * 2 * 25)

        let session = MainKeySession(userID: "alice")
        session.unlock(with: try MainKey(adopting: SecretBytes(consuming: &keyBytes)))
        let store = try SealedStore(files: files, keys: session)
        defer { store.close() }
        let integrity = try await store.currentPool!.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
        #expect(integrity == ["ok"])
        for index in committed.sorted() {
            #expect(try store.mail.message(id: "stress-\(index)") == MailMessage.stress(index))
        }
        // Every stored message is a whole batch: no half transaction survived.
        let stored = try store.mail.messageCount()
        #expect(stored % 25 == 0)
        #expect(stored >= committed.count)
        // (A loaded machine lets a writer run long before its kill: 108,800 messages once.)
        let found = try store.mail.search(MailSearchQuery(words: ["stress"], limit: stored + 1))
        #expect(found.count == stored, "search found \(found.count) of \(stored) stored (\(committed.count) acknowledged)")
    }
}
