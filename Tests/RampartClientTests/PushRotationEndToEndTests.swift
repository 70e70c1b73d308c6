import Crypto
import Foundation
import RampartAPI
import RampartServer
import RampartServerTestSupport
import RampartTestSupport
import Testing

/// Push keys under a forger: a forged push in the session's inbox is dropped without touching
/// the keys; a rotation happens only on request (or schedule), through the session, and the
/// server is told the new key at once, so the next real push still arrives.
@Suite("Push key rotation, end to end", .serialized)
struct PushRotationEndToEndTests {
    /// The registration the server holds for `user`'s sessions (public keys), read from its database.
    static func registeredKeys(_ world: EndToEndWorld) async throws -> [String] {
        let database = world.serverData.appendingPathComponent("backend.sqlite").path
        let python = CLITool(path: URL(fileURLWithPath: "/usr/bin/python3"))
        let result = try await python.run(["-c", """
            import json, sqlite3, sys
            db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
            for (r,) in db.execute("SELECT registration FROM pushSubscriptions ORDER BY sessionId"):
                print(json.loads(r)["publicKey"])
            """, database])
        #expect(result.status == 0, "\(result.stderr)")
        return result.lines
    }

    @Test func aForgedPushRotatesNothingAndARequestedRotationIsRegistered() async throws {
        let world = try EndToEndWorld()
        let (server, info) = try await world.startServerAndLogIn(DemoAccounts.demo, user: "demo")
        defer { server.stopInBackground() }
        #expect(try await world.login(DemoAccounts.alice, user: "alice", serverInfo: info).status == 0)
        let before = try await Self.registeredKeys(world)
        #expect(before.count == 2)

        // The forger drops 200 bytes (a well-formed header, then noise) into every inbox.
        let pushFolder = world.serverData.appendingPathComponent("push", isDirectory: true)
        var random = SystemRandomNumberGenerator()
        for session in try FileManager.default.contentsOfDirectory(atPath: pushFolder.path) where !session.contains(".") {
            let forger = [UInt8](P256.KeyAgreement.PrivateKey().publicKey.x963Representation)
            var forged = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) } + [0, 0, 0x10, 0x00, 65] + forger
            forged += (forged.count..<200).map { _ in UInt8.random(in: 0...255, using: &random) }
            try Data(forged).write(to: pushFolder.appendingPathComponent(session).appendingPathComponent("0-forged.push"))
        }
        let dropped = try await world.rampart(["notifications", "--user", "demo", "--server-info", info])
        #expect(dropped.status == 0, "\(dropped.stderr)")
        #expect(dropped.stderr.contains("1 push(es) did not open"), "\(dropped.stderr)")
        await #expect(try Self.registeredKeys(world) == before, "a forged push changes no registration")

        // A real push after the forgery opens.
        var send = try await world.rampart(["send", "--user", "alice", "--to", "demo@rampart.test", "--subject", "After the forgery"], stdin: "Hi\n")
        #expect(send.status == 0, "\(send.stderr)")
        var pushes = try await world.rampart(["notifications", "--user", "demo", "--server-info", info])
        #expect(pushes.stdout.contains("New mail from Alice Example: After the forgery"), "\(pushes.stdout) \(pushes.stderr)")

        // Rotation on request: the server gets the new key in the same command.
        let rotate = try await world.rampart(["sync", "--user", "demo", "--rotate-push-keys"])
        #expect(rotate.status == 0, "\(rotate.stderr)")
        #expect(rotate.stdout.contains("Push keys rotated and registered with the server."))
        let after = try await Self.registeredKeys(world)
        #expect(after.count == 2 && Set(after) != Set(before), "demo's registration changed: \(before) → \(after)")
        send = try await world.rampart(["send", "--user", "alice", "--to", "demo@rampart.test", "--subject", "After the rotation"], stdin: "Hi\n")
        #expect(send.status == 0, "\(send.stderr)")
        pushes = try await world.rampart(["notifications", "--user", "demo", "--server-info", info])
        #expect(pushes.stdout.contains("New mail from Alice Example: After the rotation"), "\(pushes.stdout) \(pushes.stderr)")
        // A plain sync rotates nothing (not due).
        let sync = try await world.rampart(["sync", "--user", "demo"])
        #expect(sync.status == 0 && !sync.stdout.contains("Push keys rotated"), "\(sync.stdout) \(sync.stderr)")
        await #expect(try Self.registeredKeys(world) == after)
    }
}
