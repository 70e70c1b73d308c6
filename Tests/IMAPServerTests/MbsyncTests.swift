import Foundation
import IMAPServer
import RampartTestSupport
import Testing

/// isync's `mbsync` (Debian isync, scripts/deps/bridge.apt) mirrors the server into a Maildir and
/// pushes a flag back, as a user syncing through `rampart bridge` would.
struct MbsyncTests {
    @Test func mbsyncMirrorsEveryMailboxAndPushesFlagsBack() async throws {
        let mbsync = "/usr/bin/mbsync"
        guard FileManager.default.isExecutableFile(atPath: mbsync) else {
            Issue.record("mbsync is not installed: run scripts/setup.sh (scripts/deps/bridge.apt)"); return
        }
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("mbsync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home.appendingPathComponent("mail"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        let backend = try await sampleBackend()
        let server = IMAPServer(configuration: IMAPServerConfiguration(plaintextOnLoopback: true), backend: backend)
        try await server.start()
        do {
            let rc = home.appendingPathComponent("mbsyncrc")
            try MbsyncConfiguration(port: server.port, user: "alice", password: "pw", maildir: home.appendingPathComponent("mail")).write(to: rc)
            let tool = CLITool(path: URL(fileURLWithPath: mbsync), environment: ["HOME": home.path])
            let first = try await tool.runOnThread(["-c", rc.path, "-a"])
            #expect(first.status == 0, "\(first.stdout)\n\(first.stderr)")
            let inbox = home.appendingPathComponent("mail/INBOX")
            let files = try ["cur", "new"].flatMap { try FileManager.default.contentsOfDirectory(atPath: inbox.appendingPathComponent($0).path).map { "\($0)" } }
            #expect(files.count == 3, "\(files)")
            for box in ["Sent", "Drafts", "Trash", "Archive", "Spam", "All Mail"] {
                #expect(FileManager.default.fileExists(atPath: home.appendingPathComponent("mail/\(box)/cur").path), "\(box)")
            }
            // Mark the unseen multipart message seen in the Maildir; mbsync pushes \Seen.
            let cur = inbox.appendingPathComponent("cur"), new = inbox.appendingPathComponent("new")
            var marked = 0
            for dir in [cur, new] {
                for name in try FileManager.default.contentsOfDirectory(atPath: dir.path) {
                    let text = try String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8)
                    guard text.contains("Subject: Report attached") else { continue }
                    let base = name.components(separatedBy: ":2,").first ?? name
                    let flags = name.components(separatedBy: ":2,").dropFirst().first ?? ""
                    try FileManager.default.moveItem(at: dir.appendingPathComponent(name), to: cur.appendingPathComponent("\(base):2,\(flags)S"))
                    marked += 1
                }
            }
            #expect(marked == 1)
            let second = try await tool.runOnThread(["-c", rc.path, "-a"])
            #expect(second.status == 0, "\(second.stdout)\n\(second.stderr)")
            #expect(await backend.flags(of: "alice", mailbox: "INBOX")[2]?.contains("\\Seen") == true)
            try await server.stop()
        } catch {
            try? await server.stop()
            throw error
        }
    }
}
