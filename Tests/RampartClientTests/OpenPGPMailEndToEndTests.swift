import Crypto
import Foundation
import MailboxCrypto
import OpenPGP
import RampartAPI
@testable import RampartClient
import RampartCore
@testable import RampartServer
import RampartServerTestSupport
import RampartTestSupport
import Testing

/// OpenPGP mail end to end: `send` encrypts and signs on the device, `read` verifies against the
/// sender's pinned key, a trusted sender loads remote content only for mail it signed, and a
/// modified ciphertext is exit 7 with nothing shown.
///
/// Trust-model row **inbox (low)** — sender authentication.
@Suite("OpenPGP mail, end to end (signatures, pinning, forged senders)", .serialized)
struct OpenPGPMailEndToEndTests {
    static let pin = "246813"

    func fingerprint(of user: String, _ world: EndToEndWorld) async throws -> String {
        let export = try await world.rampart(["account", "public-key", "--armor", "--user", user, "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stdout.hasPrefix("-----BEGIN PGP PUBLIC KEY BLOCK-----"))
        let key = try PGPPublicKey(armored: export.stdout)
        #expect(export.stderr.contains(key.fingerprint.hex))
        return key.fingerprint.hex
    }

    /// A message claiming to come from `claimed`, put into demo's mailbox through the import route
    /// with demo's own session (what a malicious server, or anyone with the public key, can do):
    /// unsigned, or signed by `signer`.
    ///
    /// The client runs on threads of its own: the server (a child process) forgets an SRP
    /// session after 180 s of real time, and this process's shared pool can be held that long by
    /// other suites waiting for their child processes (a CI run failed this way).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func forge(claiming claimed: Correspondent, subject: String, signer: PGPPrivateKey?, info: ServerInfo) async throws {
        try await onThreadsOfItsOwn {
            try await forgeOnCurrentExecutor(claiming: claimed, subject: subject, signer: signer, info: info)
        }
    }

    private func forgeOnCurrentExecutor(claiming claimed: Correspondent, subject: String, signer: PGPPrivateKey?,
                                        info: ServerInfo) async throws {
        let api = try APIClient(endpoint: ServerEndpoint(serverInfo: info))
        defer { Task { await api.shutdown() } }
        let login = try await api.login(username: DemoAccounts.demo.username, password: DemoAccounts.demo.loginPassword)
        let demoKey = try PGPPublicKey(armored: try #require(login.keys.addressKeys.first).publicKey)   // mail goes to the address key
        let raw = Data("Subject: \(subject)\r\n\r\nforged\r\n".utf8)
        let id = ImportIdentity.messageID(original: raw, key: .init(size: .bits256))
        let content = MessageContent(subject: subject, sender: claimed, to: [Correspondent(name: "", address: DemoAccounts.demo.address)],
                                     html: "<p>Click here <img src=\"https://tracker.forged.example/p.png\" alt=\"promo\"></p>")
        let body = try MailPart.seal(try JSONEncoder().encode(content), to: [demoKey], signedBy: signer, messageID: id, part: SealedPartName.body)
        let original = try MailPart.seal(MailOriginal(kind: .message, bytes: raw).encoded(), to: [demoKey], signedBy: nil, messageID: id,
                                         part: SealedPartName.original)
        _ = try await api.importMessage(ImportRequest(id: id, time: Int64(Date().timeIntervalSince1970), labelIds: [SystemLabel.inbox],
                                                      unread: true, size: Int64(raw.count), sealedBody: body.base64EncodedString(),
                                                      sealedOriginal: original.base64EncodedString(), attachments: []))
        try? await api.logout()
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func signedMailVerifiesAndOnlyItsSignerCountsAsTheTrustedSender() async throws {
        let world = try EndToEndWorld()
        let server = try await world.startServer()
        defer { server.stopInBackground() }
        let infoPath = world.serverData.appendingPathComponent(EmbeddedServer.infoFileName).path
        let info = try JSONDecoder().decode(ServerInfo.self, from: Data(contentsOf: URL(fileURLWithPath: infoPath)))
        for (account, user) in [(DemoAccounts.demo, "demo"), (DemoAccounts.alice, "alice")] {
            let login = try await world.login(account, user: user, serverInfo: infoPath)
            #expect(login.status == 0, "\(login.stderr)")
            #expect(try await world.rampart(["protect", "--user", user, "--pin", "--pin-stdin"], stdin: "\(Self.pin)\n").status == 0)
        }
        let aliceFingerprint = try await fingerprint(of: "alice", world)
        let demoFingerprint = try await fingerprint(of: "demo", world)
        // Binary export: the same key.
        let binary = try await world.rampart(["account", "public-key", "--user", "alice", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(binary.status == 0 && !binary.stdout.contains("BEGIN PGP"))

        // Alice sends demo a signed message with a remote image and an attachment.
        let file = world.root.appendingPathComponent("plan.txt")
        try Data("the plan, signed".utf8).write(to: file)
        let send = try await world.rampart(["send", "--user", "alice", "--to", DemoAccounts.demo.address, "--subject", "Signed plan",
                                      "--attach", file.path, "--pin-stdin"],
                                     stdin: "\(Self.pin)\n<p>Plan inside <img src=\"https://images.example.org/plan.png\" alt=\"plan\"></p>\n")
        #expect(send.status == 0, "\(send.stderr)")
        #expect(send.stdout.contains("Pinned the key of \(DemoAccounts.demo.address): \(demoFingerprint)"), "\(send.stdout)")
        #expect(!send.stdout.contains("NOT end-to-end encrypted"))

        // Demo reads it: verified against Alice's key, pinned on first use.
        #expect(try await world.rampart(["sync", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n").status == 0)
        let list = try await world.rampart(["list", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        let signedID = try #require(messageID(in: list.stdout, subject: "Signed plan"), "\(list.stdout)")
        let read = try await world.rampart(["read", signedID, "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout.contains("Signature: verified \(aliceFingerprint)"), "\(read.stdout)")
        #expect(read.stderr.contains("Pinned the key of \(DemoAccounts.alice.address)"), "\(read.stderr)")
        #expect(!read.stderr.contains("0 remote images"))
        let json = try await world.rampart(["read", signedID, "--json", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        let parsed = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let signature = try #require(parsed?["signature"] as? [String: Any], "\(json.stdout)")
        #expect(signature["status"] as? String == "verified" && signature["fingerprint"] as? String == aliceFingerprint)
        let contacts = try await world.rampart(["contacts", "list", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(contacts.stdout.contains("\(DemoAccounts.alice.address)  \(aliceFingerprint)  server"), "\(contacts.stdout)")
        // The attachment is signed by the same key and opens.
        let attachmentLine = try #require(read.stdout.split(separator: "\n").first { $0.contains("plan.txt") })
        let saved = world.root.appendingPathComponent("plan-copy.txt")
        let save = try await world.rampart(["attachment", String(attachmentLine.split(separator: " ")[1]), "--save", saved.path, "--user", "demo",
                                      "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(save.status == 0, "\(save.stderr)")
        #expect(try Data(contentsOf: saved) == Data("the plan, signed".utf8))

        // Alice becomes a trusted sender: her signed message loads remote content.
        #expect(try await world.rampart(["settings", "trust", DemoAccounts.alice.address, "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n").status == 0)
        let trusted = try await world.rampart(["read", signedID, "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(trusted.stderr.contains("0 remote images") && trusted.stderr.contains("the sender is trusted"), "\(trusted.stderr)")

        // Forged senders: unsigned, and signed by another key that even names Alice's address.
        let alice = Correspondent(name: DemoAccounts.alice.displayName, address: DemoAccounts.alice.address)
        let mallory = try PGPPrivateKey.generate(name: "Alice Example", address: DemoAccounts.alice.address)
        try await forge(claiming: alice, subject: "Unsigned claim", signer: nil, info: info)
        try await forge(claiming: alice, subject: "Signed by another key", signer: mallory, info: info)
        #expect(try await world.rampart(["sync", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n").status == 0)
        let inbox = try await world.rampart(["list", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n").stdout
        for (subject, line) in [("Unsigned claim", "Signature: none"),
                                ("Signed by another key", "Signature: unknown key \(mallory.fingerprint.keyID.hex)")] {
            let id = try #require(messageID(in: inbox, subject: subject), "\(inbox)")
            let forged = try await world.rampart(["read", id, "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
            #expect(forged.status == 0, "\(forged.stderr)")
            #expect(forged.stdout.contains(line), "\(subject): \(forged.stdout)")
            #expect(!forged.stderr.contains("0 remote images") && !forged.stderr.contains("Remote content loaded"), "\(subject): \(forged.stderr)")
            #expect(forged.stderr.contains("did not verify against their pinned key"), "\(subject): \(forged.stderr)")
        }

        // The server offers another key for Alice later: reported, not used (the pin stays).
        let store = try BackendStore(url: world.serverData.appendingPathComponent("backend.sqlite"))
        let alicesKey = "FROM addressKeys WHERE address = 'alice@rampart.test'"   // the key directory serves the address key
        let original = try store.read { db in try Data.fetchOne(db, sql: "SELECT publicKey \(alicesKey)") }
        try store.write { db in try db.execute(sql: "UPDATE addressKeys SET publicKey = ? WHERE address = 'alice@rampart.test'", arguments: [mallory.publicKey.binary]) }
        let swapped = try await world.rampart(["read", signedID, "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(swapped.stdout.contains("Signature: verified \(aliceFingerprint)"), "\(swapped.stdout)")
        #expect(swapped.stderr.contains("WARNING: the server offers another key for \(DemoAccounts.alice.address) (\(mallory.fingerprint.hex))"),
                "\(swapped.stderr)")
        try store.write { db in try db.execute(sql: "UPDATE addressKeys SET publicKey = ? WHERE address = 'alice@rampart.test'", arguments: [original]) }

        // An imported key replaces the pin (e.g. from `gpg --export --armor`): Alice's real mail no
        // longer verifies as hers, the impostor's does; then Alice's key is imported back.
        let malloryFile = world.root.appendingPathComponent("mallory.asc")
        try mallory.publicKey.armored().write(to: malloryFile, atomically: true, encoding: .utf8)
        let imported = try await world.rampart(["contacts", "import-key", malloryFile.path, "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(imported.status == 0 && imported.stdout.contains("Pinned \(DemoAccounts.alice.address)  \(mallory.fingerprint.hex)  (imported)"),
                "\(imported.stdout) \(imported.stderr)")
        let afterImport = try await world.rampart(["read", signedID, "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(afterImport.stdout.contains("Signature: unknown key"), "\(afterImport.stdout)")
        #expect(!afterImport.stderr.contains("0 remote images"))
        let garbage = world.root.appendingPathComponent("garbage.asc")
        try "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nnot a key\n-----END PGP PUBLIC KEY BLOCK-----\n".write(to: garbage, atomically: true, encoding: .utf8)
        #expect(try await world.rampart(["contacts", "import-key", garbage.path, "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n").status == 2)

        // A modified ciphertext on the server: exit 7, nothing of the message shown.
        let aliceExport = world.root.appendingPathComponent("alice.asc")
        try await world.rampart(["account", "public-key", "--armor", "--user", "alice", "--pin-stdin"], stdin: "\(Self.pin)\n").stdout
            .write(to: aliceExport, atomically: true, encoding: .utf8)
        #expect(try await world.rampart(["contacts", "import-key", aliceExport.path, "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n").status == 0)
        let body = try #require(try store.read { db in try Data.fetchOne(db, sql: "SELECT sealedBody FROM messages WHERE id = ?", arguments: [signedID]) })
        var flipped = body
        flipped[flipped.count - 30] ^= 0x01
        try store.write { db in try db.execute(sql: "UPDATE messages SET sealedBody = ? WHERE id = ?", arguments: [flipped, signedID]) }
        let tampered = try await world.rampart(["read", signedID, "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(tampered.status == 7, "\(tampered.stdout) \(tampered.stderr)")
        #expect(!tampered.stdout.contains("Plan inside") && !tampered.stdout.contains("Signature:"), "\(tampered.stdout)")
        try store.write { db in try db.execute(sql: "UPDATE messages SET sealedBody = ? WHERE id = ?", arguments: [body, signedID]) }
        let restored = try await world.rampart(["read", signedID, "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(restored.stdout.contains("Signature: verified \(aliceFingerprint)"), "\(restored.stdout) \(restored.stderr)")
    }
}
