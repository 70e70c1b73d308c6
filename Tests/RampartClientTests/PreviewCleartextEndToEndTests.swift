import Foundation
import RampartServer
import RampartServerTestSupport
import RampartTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `read --open` writes the rendered message (embedded images included, as `data:` URIs) in
/// clear for a viewer: that file must not outlive a lock, even when `read --open` and its viewer
/// were killed with SIGKILL, and a lock must take it from a viewer that is still open.
@Suite("Cleartext previews and the lock, end to end", .serialized)
struct PreviewCleartextEndToEndTests {
    /// Regular files under the home that hold the rendered document.
    static func cleartextDocuments(_ world: EndToEndWorld) -> [String] {
        world.homeFiles().filter { path in
            guard let data = FileManager.default.contents(atPath: world.home.appendingPathComponent(path).path) else { return false }
            return data.range(of: Data("Content-Security-Policy".utf8)) != nil
        }
    }

    /// A viewer that records its pid and the file, then stays open.
    static func blockingViewer(_ world: EndToEndWorld) throws -> (URL, URL) {
        let script = world.root.appendingPathComponent("viewer.sh")
        let pidFile = world.root.appendingPathComponent("viewer.pid")
        try """
        #!/bin/sh
        echo "$1" > "\(pidFile.path).path"
        echo $$ > "\(pidFile.path)"
        exec sleep 600
        """.write(to: script, atomically: true, encoding: .utf8)
        chmod(script.path, 0o755)
        return (script, pidFile)
    }

    static func waitForFile(_ url: URL, seconds: Double = 60) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let text = try? String(contentsOf: url, encoding: .utf8), text.hasSuffix("\n") { return true }
            usleep(50_000)
        }
        return false
    }

    @Test func aKilledPreviewLeavesNoCleartextAfterLockAndLockEndsALivePreview() async throws {
        let world = try EndToEndWorld()
        let (server, _) = try await world.startServerAndLogIn(DemoAccounts.demo, user: "demo")
        defer { server.stopInBackground() }
        #expect(try await world.rampart(["sync", "--user", "demo"]).status == 0)
        let inbox = try await world.rampart(["list", "--user", "demo"])
        let id = try #require(messageID(in: inbox.stdout, subject: "Northwind"))
        let (viewer, pidFile) = try Self.blockingViewer(world)
        var environment = world.environment
        environment["RAMPART_OPENER"] = viewer.path
        let tool = CLITool.rampart.with(environment: environment)

        /// Starts `read --open`, waits for the viewer, and returns both processes' handles.
        func openPreview() throws -> (ChildProcess, pid_t) {
            try? FileManager.default.removeItem(at: pidFile)
            let reader = try tool.spawn(["read", id, "--open", "--user", "demo"])
            #expect(Self.waitForFile(pidFile), "the viewer started: \(reader.stderr)")
            let pid = try #require(pid_t(try String(contentsOf: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(!Self.cleartextDocuments(world).isEmpty, "the preview exists while it is open")
            return (reader, pid)
        }

        // 1. kill -9 of `read --open` and of its viewer, then `lock` (no agent runs).
        var (reader, viewerPID) = try openPreview()
        // The reader first: killed after its viewer, it could see the viewer end and erase the
        // preview itself (its normal path) before the SIGKILL arrives.
        reader.kill(SIGKILL)
        kill(viewerPID, SIGKILL)
        #expect(!Self.cleartextDocuments(world).isEmpty, "SIGKILL left the cleartext behind (what the lock must sweep)")
        let lock = try await world.rampart(["lock", "--user", "demo"])
        #expect(lock.status == 0, "\(lock.stderr)")
        #expect(Self.cleartextDocuments(world).isEmpty, "after lock: \(Self.cleartextDocuments(world))")

        // 2. The same, then the next command of the account sweeps it before it runs.
        (reader, viewerPID) = try openPreview()
        reader.kill(SIGKILL)
        kill(viewerPID, SIGKILL)
        #expect(try await world.rampart(["list", "--user", "demo"]).status == 0)
        #expect(Self.cleartextDocuments(world).isEmpty, "after the next start: \(Self.cleartextDocuments(world))")

        // 3. A live preview (the agent holds the key): `lock` erases it under the open viewer.
        let unlock = try await world.rampart(["unlock", "--user", "demo", "--idle-exit", "60"])
        #expect(unlock.status == 0, "\(unlock.stderr)")
        defer { world.stopAgent() }
        (reader, viewerPID) = try openPreview()
        defer { kill(viewerPID, SIGKILL); reader.kill(SIGKILL) }
        #expect(try await world.rampart(["lock", "--user", "demo"]).status == 0)
        #expect(Self.cleartextDocuments(world).isEmpty, "a lock erases a live preview: \(Self.cleartextDocuments(world))")
    }
}
