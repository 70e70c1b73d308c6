import Foundation
import RampartCore
import RampartTestSupport
import Testing
@testable import RampartServer

/// The drive as the trust model's row **encrypted file blocks (low)** and **database (nodes,
/// revisions, blocks) — modified: critical** ask: a server that swaps or alters stored blocks
/// gets a tampering error (exit 7) and no cleartext file, partial or whole.
@Suite("Drive download against a modifying server (end to end)")
struct DriveTamperTests {
    @Test func swappedOrAlteredBlocksAreRefusedAndLeaveNoFile() async throws {
        let world = try EndToEndWorld()
        let server = try await EmbeddedServer.start(configuration: EmbeddedServerConfiguration(dataDirectory: world.serverData, port: 0, threads: 2))
        defer { Task { await server.stop() } }
        let info = world.serverData.appendingPathComponent(EmbeddedServer.infoFileName).path
        let login = try await world.rampart(["login", "--user", "demo", "--server-info", info, "--username", "demo",
                                                  "--password-stdin", "--mailbox-password-stdin"],
                                                 stdin: "\(DemoAccounts.demo.loginPassword)\n\(DemoAccounts.demo.mailboxPassword)\n")
        #expect(login.status == 0, "\(login.stderr)")
        let original = world.root.appendingPathComponent("three-blocks.bin")
        try Data((0..<(2_500_000)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }).write(to: original)
        let upload = try await world.rampart(["drive", "upload", original.path, "--user", "demo"])
        #expect(upload.status == 0, "\(upload.stderr)")
        let nodeID = try #require(upload.stdout.split(separator: " ").last.map { String($0.dropLast(2)) })

        let store = try BackendStore(url: world.serverData.appendingPathComponent("backend.sqlite"))
        let node = try DriveStorage(store: store, clock: SystemClock()).node(userID: try #require(
            try store.read { db in try String.fetchOne(db, sql: "SELECT userId FROM driveNodes WHERE id = ?", arguments: [nodeID]) }),
            id: nodeID)
        #expect(node.blockIds.count == 3)
        let destination = world.root.appendingPathComponent("back.bin")
        func downloadIsRefused(_ what: Comment) async throws {
            let download = try await world.rampart(["drive", "download", nodeID, destination.path, "--user", "demo"])
            #expect(download.status == 7, what)
            #expect(download.stderr.contains("modified") || download.stderr.contains("tamper"), "\(download.stderr)")
            let left = try FileManager.default.contentsOfDirectory(atPath: world.root.path).filter { $0.contains("back.bin") }
            #expect(left.isEmpty, "\(what): \(left)")
        }

        // Blocks 0 and 1 (same length) swapped: each still authenticates under the key, not at
        // the other's index.
        let blocks = try store.read { db in
            try node.blockIds.map { id in try Data.fetchOne(db, sql: "SELECT data FROM driveBlocks WHERE id = ?", arguments: [id])! }
        }
        try store.write { db in
            try db.execute(sql: "UPDATE driveBlocks SET data = ? WHERE id = ?", arguments: [blocks[1], node.blockIds[0]])
            try db.execute(sql: "UPDATE driveBlocks SET data = ? WHERE id = ?", arguments: [blocks[0], node.blockIds[1]])
        }
        try await downloadIsRefused("swapped blocks")

        // One bit of the last block flipped.
        var altered = blocks[2]
        altered[altered.count / 2] ^= 1
        try store.write { db in
            try db.execute(sql: "UPDATE driveBlocks SET data = ? WHERE id = ?", arguments: [blocks[0], node.blockIds[0]])
            try db.execute(sql: "UPDATE driveBlocks SET data = ? WHERE id = ?", arguments: [blocks[1], node.blockIds[1]])
            try db.execute(sql: "UPDATE driveBlocks SET data = ? WHERE id = ?", arguments: [altered, node.blockIds[2]])
        }
        try await downloadIsRefused("a flipped bit")

        // Restored: the same download succeeds and gives the original back.
        try store.write { db in
            try db.execute(sql: "UPDATE driveBlocks SET data = ? WHERE id = ?", arguments: [blocks[2], node.blockIds[2]])
        }
        let download = try await world.rampart(["drive", "download", nodeID, destination.path, "--user", "demo"])
        #expect(download.status == 0, "\(download.stderr)")
        #expect(try Data(contentsOf: destination) == Data(contentsOf: original))
    }
}
