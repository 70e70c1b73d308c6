import Foundation
import OpenPGP
import RampartAPI
import RampartServer
import RampartServerTestSupport
import RampartTestSupport
import Testing

/// `rampart signup` as a user runs it, against `rampart server start --no-demo` in a child
/// process: invitations from `rampart server invite`, one- and two-password accounts that then
/// sync, send and read each other's mail with the other commands, the refusals' messages and exit
/// statuses, and proton-client's own SRP login (scripts/srp/proton_login.py) to accounts made so.
@Suite("rampart signup, end to end against the embedded server", .serialized)
struct SignupEndToEndTests {
    @Test func twoAccountsSignedUpOnTheirDevicesMailEachOther() async throws {
        let (world, server, info) = try await EndToEndWorld.withServer(["--no-demo"])
        defer { world.close(server) }
        await #expect(server.child.waitForLines { $0.contains { $0.contains("Sign-up: by invitation") } })

        func invite() async throws -> String {
            let made = try await world.rampart(["server", "invite", "--data", server.dataDirectory.path, "--expires", "1d"])
            #expect(made.status == 0, "\(made.stderr)")
            let code = try #require(made.lines.last)
            #expect(made.lines.count == 1 && code.hasPrefix("rmi-") && code.count == 36)
            return code
        }
        // No invitation on a closed server: refused before anything is made (status 1).
        let closed = try await world.rampart(["signup", "--user", "ann", "--server-info", info, "--username", "ann", "--password-stdin"],
                                       stdin: "ann password\n")
        #expect(closed.status == 1 && closed.stderr.contains("Sign-up is closed on this server"), "\(closed.stderr)")

        // Ann: one password (it also unlocks her key).
        let annCode = try await invite()
        let ann = try await world.rampart(["signup", "--user", "ann", "--server-info", info, "--username", "Ann", "--display-name", "Ann Example",
                                     "--invite", annCode, "--password-stdin"], stdin: "ann password\n")
        #expect(ann.status == 0, "\(ann.stderr)")
        #expect(ann.lines.first == "Account ann (ann@rampart.test) created on \(server.baseURL.absoluteString).")
        #expect(ann.stdout.contains("Logged in as ann (ann@rampart.test)") && ann.stdout.contains("MainKey "))
        // The code was used up.
        let reused = try await world.rampart(["signup", "--user", "eve", "--server-info", info, "--username", "eve", "--invite", annCode,
                                        "--password-stdin"], stdin: "eve password\n")
        #expect(reused.status == 1 && reused.stderr.contains("invitation code is unknown, already used or expired"))
        // Bob: two passwords.
        let bob = try await world.rampart(["signup", "--user", "bob", "--server-info", info, "--username", "bob", "--two-password",
                                     "--invite", try invite(), "--password-stdin", "--mailbox-password-stdin"],
                                    stdin: "bob login password\nbob mailbox password\n")
        #expect(bob.status == 0, "\(bob.stderr)")
        // A look-alike name and a taken one: exit 2 (bad input) and 1, with the server's sentence.
        let code = try await invite()
        let cyrillic = try await world.rampart(["signup", "--user", "mallory", "--server-info", info, "--username", "\u{0430}nn", "--invite", code,
                                          "--password-stdin"], stdin: "x\n")
        #expect(cyrillic.status == 2 && cyrillic.stderr.contains("look-alike letters of other scripts are refused"), "\(cyrillic.stderr)")
        let taken = try await world.rampart(["signup", "--user", "mallory", "--server-info", info, "--username", "BOB", "--invite", code,
                                       "--password-stdin"], stdin: "x\n")
        #expect(taken.status == 1 && taken.stderr.contains("The username bob is taken"), "\(taken.stderr)")

        // Mail between them, with the ordinary commands.
        let sent = try await world.rampart(["send", "--user", "ann", "--to", "bob@rampart.test", "--subject", "Made on my device"],
                                     stdin: "<p>Hello Bob</p>")
        #expect(sent.status == 0, "\(sent.stderr)")
        let read = try await world.syncAndRead(user: "bob", subject: "Made on my device")
        #expect(read.status == 0 && read.stdout.contains("Hello Bob") && read.stdout.contains("Signature: verified"), "\(read.stdout)")
        // The same accounts log in on another device: Ann with her one password on both lines.
        let again = try await world.rampart(["login", "--user", "ann2", "--server-info", info, "--username", "ann", "--password-stdin",
                                       "--mailbox-password-stdin"], stdin: "ann password\nann password\n")
        #expect(again.status == 0, "\(again.stderr)")
        let bobAgain = try await world.rampart(["login", "--user", "bob2", "--server-info", info, "--username", "bob", "--password-stdin",
                                          "--mailbox-password-stdin"], stdin: "bob login password\nbob mailbox password\n")
        #expect(bobAgain.status == 0, "\(bobAgain.stderr)")
        // Nothing the users typed reached the server's folder.
        let stored = TemporaryHome.allBytes(under: server.dataDirectory)
        for secret in ["ann password", "bob login password", "bob mailbox password", "Hello Bob"] {
            #expect(stored.range(of: Data(secret.utf8)) == nil, "\(secret) is in the server's data folder")
        }
    }

    @Test func protonClientLogsInToAccountsMadeByRampartSignupInBothPasswordModes() async throws {
        guard let python = ProjectPython.executable else {
            #expect(ProcessInfo.processInfo.environment["CI"] == nil, "no Python with proton-client under CI (scripts/deps/srp.pip)")
            return
        }
        let (world, server, info) = try await EndToEndWorld.withServer(["--no-demo", "--open-signup"])
        defer { world.close(server) }
        let one = try await world.rampart(["signup", "--user", "one", "--server-info", info, "--username", "onepass", "--password-stdin"],
                                    stdin: "only one pässword\n")
        #expect(one.status == 0, "\(one.stderr)")
        let two = try await world.rampart(["signup", "--user", "two", "--server-info", info, "--username", "twopass", "--two-password",
                                     "--password-stdin", "--mailbox-password-stdin"], stdin: "login secret\nmailbox secret\n")
        #expect(two.status == 0, "\(two.stderr)")

        let ca = world.folder.child("ca.pem"), key = world.folder.child("modulus.asc")
        try Data(server.info.certificatePEM.utf8).write(to: ca)
        try Data((server.info.modulusPublicKey ?? "").utf8).write(to: key)
        func protonLogin(_ username: String, _ password: String, expectFailure: Bool = false) async throws -> CLIResult {
            try await CLITool(path: URL(fileURLWithPath: python)).run(
                [BuiltExecutable.packageRoot.appendingPathComponent("scripts/srp/proton_login.py").path,
                 "--url", "https://127.0.0.1:\(server.info.port)", "--ca", ca.path, "--modulus-key", key.path,
                 "--fingerprint", server.info.modulusKeyFingerprint ?? "", "--username", username, "--password", password, "--count", "3"]
                + (expectFailure ? ["--expect-failure"] : []))
        }
        for (name, password) in [("onepass", "only one pässword"), ("twopass", "login secret")] {
            let run = try await protonLogin(name, password)
            #expect(run.status == 0, "\(name): \(run.stdout) \(run.stderr)")
            #expect(run.stdout.contains("\"logins\": 3"), "\(name): \(run.stdout)")
        }
        // The mailbox password is not the login password.
        let wrong = try await protonLogin("twopass", "mailbox secret", expectFailure: true)
        #expect(wrong.status == 0 && wrong.stdout.contains("\(SRPAPICode.wrongCredentials)"), "\(wrong.stdout) \(wrong.stderr)")
    }

    @Test func signupByURLChecksTheModulusAgainstThePinnedKeyBeforeAnythingIsMade() async throws {
        let (world, server, _) = try await EndToEndWorld.withServer(["--no-demo", "--open-signup"])
        defer { world.close(server) }
        let ca = world.folder.child("ca.pem"), key = world.folder.child("modulus.asc"), other = world.folder.child("other.asc")
        try Data(server.info.certificatePEM.utf8).write(to: ca)
        try Data((server.info.modulusPublicKey ?? "").utf8).write(to: key)
        let impostor = try PGPPrivateKey.generate(name: "Another modulus", address: "srp-modulus@elsewhere.example")
        try Data(impostor.publicKey.armored().utf8).write(to: other)
        func signup(_ user: String, modulusKey: URL, fingerprint: String) async throws -> CLIResult {
            try await world.rampart(["signup", "--user", user, "--url", server.baseURL.absoluteString]
                              + server.pins.flatMap { ["--pin", $0] }
                              + ["--ca", ca.path, "--modulus-key", modulusKey.path, "--modulus-fingerprint", fingerprint,
                                 "--username", "carol", "--password-stdin"], stdin: "carol password\n")
        }
        // A modulus signed by another key than the pinned one: exit 8, nothing made on the server
        // nor on this device.
        let refused = try await signup("impostor", modulusKey: other, fingerprint: impostor.fingerprint.hex)
        #expect(refused.status == 8 && refused.stderr.contains("modulus"), "\(refused.status) \(refused.stderr)")
        // The name is still free, and the right key signs up.
        let made = try await signup("carol", modulusKey: key, fingerprint: server.info.modulusKeyFingerprint ?? "")
        #expect(made.status == 0 && made.lines.first?.hasPrefix("Account carol (carol@rampart.test) created") == true, "\(made.stderr)")
        #expect(try await world.rampart(["status", "--user", "carol"]).status == 0)
        // A pinned key given with another fingerprint is refused too.
        let mismatch = try await signup("mallory", modulusKey: key, fingerprint: impostor.fingerprint.hex)
        #expect(mismatch.status == 8, "\(mismatch.status) \(mismatch.stderr)")
    }

    /// `rampart server start --data <world's> --port 0` plus `arguments`, in a child process.
}
