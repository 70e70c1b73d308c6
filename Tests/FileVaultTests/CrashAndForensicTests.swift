import Foundation
import RampartCore
import RampartTestSupport
import Testing
@testable import FileVault
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Cleartext after a crash: a process killed with SIGKILL while leases are open leaves cleartext
/// that the next start sweeps before anything else; and a byte-level scan of the vault folders
/// after storing marked files finds no marker.
@Suite struct CrashAndForensicTests {
    @Test func sigkilledProcessLeavesNoCleartextAfterTheNextStart() async throws {
        let folder = TemporaryFolder("crash"); defer { folder.remove() }
        let marker = "CRASH-MARKER-\(UUID().uuidString)"
        var keyBytes = (0..<32).map { _ in UInt8.random(in: 0...255) }
        let hexKey = keyBytes.map { String(format: "%02x", $0) }.joined()

        // `rampart-dev vault hold-lease`: opens two leases, prints them and "ready", then waits.
        let child = try CLITool.rampartDev.spawn(["vault", "hold-lease", "--root", folder.url.path, "--user", "alice", "--marker", marker],
                                                 stdin: hexKey + "\n")
        try await child.requireLine("ready")
        let leasePaths = child.lines.filter { $0.hasPrefix("lease ") }.map { String($0.dropFirst(6)) }
        #expect(leasePaths.count == 2)
        for path in leasePaths {
            let data = try #require(FileManager.default.contents(atPath: path))
            #expect(data.range(of: Data(marker.utf8)) != nil)
        }

        child.kill(SIGKILL)
        #expect(child.process.terminationReason == .uncaughtSignal)
        #expect(child.process.terminationStatus == SIGKILL)
        let vaultFolder = Vault.folder(root: folder.url, user: "alice")
        // The kill left the cleartext on disk: nothing ran to delete it.
        #expect(leasePaths.allSatisfy { FileManager.default.fileExists(atPath: $0) })
        #expect(!filesContaining(marker, under: vaultFolder).isEmpty)

        // The next start sweeps before anything else, even with the key still locked.
        let session = MainKeySession(userID: "alice")
        let vault = try Vault(root: folder.url, provider: session)
        #expect(vault.previews.sweptSessions == 1)
        #expect(leasePaths.allSatisfy { !FileManager.default.fileExists(atPath: $0) })
        #expect(filesContaining(marker, under: vaultFolder).isEmpty)
        #expect(leaseFiles(vault).isEmpty)

        // The sealed data survived the crash and opens with the key.
        session.unlock(with: try MainKey(adopting: SecretBytes(consuming: &keyBytes)))
        #expect(try String(decoding: vault.attachments.get("crash-attachment"), as: UTF8.self).hasPrefix(marker))
        #expect(vault.drive.fileIDs().count == 1)
    }

    @Test func forensicScanOfTheVaultFindsNoMarker() async throws {
        let folder = TemporaryFolder("forensic"); defer { folder.remove() }
        let marker = "FORENSIC-MARKER-7f3a9c"
        let vault = try Vault(root: folder.url.appendingPathComponent("vault"), provider: unlockedSession(),
                              configuration: .init(drive: .init(blockSize: 64 * 1024)))
        var content = Data()
        for line in 0..<20_000 { content.append(Data("\(marker) \(line)\n".utf8)) }
        // Attachments: id, file name, MIME type and body all carry the marker.
        for index in 0..<3 {
            try await vault.attachments.put(content, attachment: "\(marker)-\(index)", fileName: "\(marker)-\(index).txt",
                                      mimeType: "text/\(marker)")
        }
        try vault.attachments.withCleartext("\(marker)-0") { _ in }
        let lease = try vault.attachments.lease("\(marker)-1")
        lease.end()
        // Drive: body, node name and thumbnail carry the marker (file ids are random).
        let source = try writeFile(content, in: folder.url.appendingPathComponent("src"), name: "upload.txt")
        for _ in 0..<2 {
            try vault.drive.upload(from: source, name: "\(marker).txt", thumbnail: Data("\(marker) thumbnail".utf8))
        }
        try FileManager.default.removeItem(at: source)  // the upload's cleartext source is the caller's
        let files = allFiles(under: vault.folder)
        let scanned = files.reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: $1.url.path)[.size] as? Int) ?? 0) }
        #expect(scanned > 3 * content.count)  // the sealed data is really there
        #expect(filesContaining(marker, under: vault.folder) == [])
        // Even the first 16 bytes of the marker do not occur (no partial leak).
        #expect(filesContaining(String(marker.prefix(16)), under: vault.folder) == [])
    }
}
