import Foundation
import GRDB
import RampartCore
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
    /// `RAMPART_BIN`, or the `rampart` executable next to the test bundle (SwiftPM puts both in
    /// `.build/<configuration>/`).
    static func rampartBinary() throws -> URL {
        if let path = ProcessInfo.processInfo.environment["RAMPART_BIN"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        var candidates: [URL] = []
        for start in [Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments[0])] {
            var folder = start.deletingLastPathComponent()
            for _ in 0..<4 {
                candidates.append(folder.appendingPathComponent("rampart"))
                folder = folder.deletingLastPathComponent()
            }
        }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw BinaryNotFound(searched: candidates.map(\.path))
        }
        return found
    }

    struct BinaryNotFound: Error, CustomStringConvertible {
        let searched: [String]
        var description: String {
            "The rampart executable was not found (build it with `swift build --product rampart`, or set RAMPART_BIN). Searched: \(searched)"
        }
    }

    /// The messages `rampart store stress-write` writes (see StressMessage in StoreCommands.swift).
    static func expected(_ index: Int) -> MailMessage {
        MailMessage(
            id: "stress-\(index)", conversationID: "c\(index / 10)", time: Int64(1_700_000_000 + index), size: Int64(index),
            labelIDs: ["inbox"], subject: "Stress subject \(index)",
            sender: MailAddress(name: "Writer", address: "writer@example.org"),
            recipients: [MailAddress(address: "reader@example.org")],
            body: String(repeating: "stress body \(index) ", count: 40))
    }

    @Test func sigkilledWriterLosesNoCommittedMessage() throws {
        let binary = try Self.rampartBinary()
        var keyBytes = [UInt8](repeating: 0, count: 32)
        for index in keyBytes.indices { keyBytes[index] = UInt8.random(in: 0...255) }
        let hexKey = keyBytes.map { String(format: "%02x", $0) }.joined()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let files = StoreFiles(root: root.appendingPathComponent("stores"))

        var committed = Set<Int>()
        var kills = 0
        for round in 0..<6 {
            let process = Process()
            process.executableURL = binary
            process.arguments = ["store", "stress-write", "--root", files.root.path, "--user", "alice",
                                 "--start", String(round * 100_000), "--batch", "25"]
            let input = Pipe(), output = Pipe(), errors = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            input.fileHandleForWriting.write(Data((hexKey + "\n").utf8))
            try input.fileHandleForWriting.close()
            // Let it commit a few batches (a varying number each round), then kill it while it
            // is inside its next transaction.
            let target = 2 + (round * 3) % 7
            var buffer = Data()
            var lines: [String] = []
            while lines.count < target {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: 0x0A) {
                    lines.append(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                    buffer = Data(buffer[(newline + 1)...])
                }
            }
            #expect(lines.count >= target, "writer stopped early: \(String(decoding: errors.fileHandleForReading.availableData, as: UTF8.self))")
            // A random pause inside the next transaction (a batch takes a few milliseconds).
            usleep(UInt32.random(in: 0...4_000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal)
            kills += 1
            // Lines printed before the kill include any still in the pipe.
            buffer.append(output.fileHandleForReading.readDataToEndOfFile())
            lines += String(decoding: buffer, as: UTF8.self).split(separator: "\n").map(String.init)
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
        let integrity = try store.currentPool!.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
        #expect(integrity == ["ok"])
        for index in committed.sorted() {
            #expect(try store.mail.message(id: "stress-\(index)") == Self.expected(index))
        }
        // Every stored message is a whole batch: no half transaction survived.
        let stored = try store.mail.messageCount()
        #expect(stored % 25 == 0)
        #expect(stored >= committed.count)
        #expect(try store.mail.search(MailSearchQuery(words: ["stress"], limit: 100_000)).count == stored)
    }
}
