import Foundation
import RampartServer
import RampartTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Outside correspondents who use GnuPG, end to end through the CLI: mail to a pinned outside key
/// leaves the outbox as PGP/MIME gpg decrypts and verifies; mail to an outside address without a
/// key leaves signed (multipart/signed) and `send` says it is not encrypted; PGP/MIME and inline
/// PGP delivered with `rampart server deliver` are stored as they came and opened by `read`.
///
/// Trust-model rows **outbox (moderate)** and **inbox (low)**.
@Suite("PGP/MIME with outside correspondents, end to end", .serialized)
struct PGPMIMEEndToEndTests {
    /// `gpg --batch` in a private home, status lines on standard error.
    struct Peer {
        let home: TemporaryHome
        var tool: CLITool { CLITool(path: URL(fileURLWithPath: "/usr/bin/gpg"), environment: ["GNUPGHOME": home.path]) }

        init() throws {
            home = try TemporaryHome("gpg", shortPath: true)
            home.stopsGnuPGAgentAtEnd()
            try "s2k-count 65536\n".write(to: home.child("gpg-agent.conf"), atomically: true, encoding: .utf8)
        }

        func run(_ arguments: [String], input: Data? = nil) async throws -> CLIResult {
            try await tool.run(["--batch", "--no-tty", "--pinentry-mode", "loopback", "--passphrase", "", "--trust-model", "always",
                          "--status-fd", "2"] + arguments, input: input, timeout: .seconds(60))
        }

        func file(_ name: String, _ data: Data) throws -> String {
            try data.write(to: home.child(name))
            return home.child(name).path
        }

        /// Stops the gpg-agent this home started, and removes the home.
        func close() { home.remove() }
    }

    /// `rampart web` serves the embedded image of PGP/MIME mail from outside (not in the store or
    /// the attachment cache: opened again from the original for the answer) at the viewer
    /// document's rendering path, to a request without the session cookie, as the sandboxed frame
    /// makes it.
    static func webServesTheEmbeddedPart(_ world: EndToEndWorld, messageID: String, png: Data) async throws {
        let web = try CLITool.rampart.spawn(["web", "--no-browser", "--port", "0", "--user", "demo"], environment: world.environment)
        defer { web.kill(SIGTERM); world.stopAgent() }
        #expect(await web.waitForLines(timeout: .seconds(60)) { !$0.isEmpty }, "\(web.stderr)")
        let url = try #require(web.lines.first)
        let base = String(try #require(url.firstMatch(of: #/^http:\/\/127\.0\.0\.1:[0-9]+/#)?.output, "\(url)"))
        let jar = world.root.appendingPathComponent("web-cookies").path
        let curl = CLITool(path: URL(fileURLWithPath: "/usr/bin/curl"))
        func get(_ address: String, cookie: Bool = true, arguments: [String] = []) async throws -> CLIResult {
            try await curl.run(["-s", "--max-time", "60"] + (cookie ? ["-b", jar, "-c", jar] : []) + arguments + [address], input: nil)
        }
        _ = try await get(url)
        let unlockPage = try await get(base + "/unlock").stdout
        let csrf = try #require(unlockPage.firstMatch(of: #/data-csrf="([^"]+)"/#)?.output.1, "\(unlockPage)")
        _ = try await get(base + "/unlock", arguments: ["-H", "Origin: \(base)", "--data-urlencode", "csrf=\(csrf)"])
        let document = try await get(base + "/viewer/" + messageID, arguments: ["-D", "-"]).stdout
        let source = try #require(document.firstMatch(of: #/src="(http://127\.0\.0\.1:[0-9]+/viewer/[^"/]+/cid/[^"]+)"/#)?.output.1,
                                  "\(document)")
        // The image is served at the rendering's path, not inlined as a data: URI (the policy still
        // allows data: for images a body carries inline).
        #expect(document.contains("img-src \(source.prefix(upTo: source.range(of: "/cid/")!.upperBound)) data:;")
                && !document.contains("src=\"data:"), "\(document)")
        let image = try await get(String(source), cookie: false, arguments: ["-D", world.root.appendingPathComponent("cid-headers").path])
        let headers = try String(contentsOf: world.root.appendingPathComponent("cid-headers"), encoding: .utf8).lowercased()
        #expect(image.output == png && headers.contains("content-type: image/png") && headers.contains("x-content-type-options: nosniff"),
                "\(headers) \(image.output.count) bytes")
    }

    @Test func outsideMailIsPGPMIMEBothWays() async throws {
        let (world, server, _) = try await MailTransferEndToEndTests.loggedIn()
        defer { server.stopInBackground() }
        let peer = try Peer()
        defer { peer.close() }
        let created = try await peer.run(["--quick-gen-key", "Peer <peer@elsewhere.example>", "future-default", "default", "never"])
        let peerFingerprint = try #require(created.stderr.split(separator: "\n").first { $0.contains("KEY_CREATED") }?
            .split(separator: " ").last.map(String.init), "\(created.stderr)")
        let peerKey = try await peer.file("peer.asc", try peer.run(["--armor", "--export", peerFingerprint]).output)
        let demoKey = try await world.rampart(["account", "public-key", "--armor", "--user", "demo"])
        #expect(demoKey.status == 0, "\(demoKey.stderr)")
        #expect(try await peer.run(["--import"], input: Data(demoKey.stdout.utf8)).status == 0)
        let demoFingerprint = try #require(demoKey.stderr.split(whereSeparator: { !$0.isHexDigit }).map(String.init)
            .first { $0.count == 40 }, "\(demoKey.stderr)")
        #expect(try await world.rampart(["contacts", "import-key", peerKey, "--user", "demo"]).status == 0)
        let outbox = world.serverData.appendingPathComponent("outbox/new")
        // The one file a send added (by difference, not by name order).
        var seen = Set((try? FileManager.default.contentsOfDirectory(atPath: outbox.path)) ?? [])
        func newestOutboxFile() async throws -> Data {
            let names = Set(try FileManager.default.contentsOfDirectory(atPath: outbox.path)).subtracting(seen)
            #expect(names.count == 1, "\(names)")
            seen.formUnion(names)
            return try Data(contentsOf: outbox.appendingPathComponent(try #require(names.first)))
        }

        // To the pinned outside key: PGP/MIME, encrypted and signed; gpg opens it.
        let sent = try await world.rampart(["send", "--to", "peer@elsewhere.example", "--subject", "Encrypted outside", "--text", "--user", "demo"],
                                     stdin: "OUTSIDEMARKER for the peer\n")
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(sent.stdout.contains("End-to-end encrypted with OpenPGP (PGP/MIME, signed) to the pinned keys of: peer@elsewhere.example"),
                "\(sent.stdout)")
        let encrypted = await String(decoding: try newestOutboxFile(), as: UTF8.self)
        #expect(encrypted.contains("Content-Type: multipart/encrypted;") && encrypted.contains("protocol=\"application/pgp-encrypted\""))
        #expect(encrypted.contains("Subject: Encrypted outside") && !encrypted.contains("OUTSIDEMARKER"))
        let begin = try #require(encrypted.range(of: "-----BEGIN PGP MESSAGE-----"))
        let end = try #require(encrypted.range(of: "-----END PGP MESSAGE-----"))
        let armored = try peer.file("out.asc", Data(encrypted[begin.lowerBound..<end.upperBound].utf8))
        let decrypted = try await peer.run(["--output", "-", "--decrypt", armored])
        #expect(decrypted.status == 0, "\(decrypted.stderr)")
        #expect(decrypted.stderr.contains("[GNUPG:] VALIDSIG \(demoFingerprint)"), "\(decrypted.stderr)")
        #expect(decrypted.stdout.contains("OUTSIDEMARKER for the peer") && decrypted.stdout.contains("Content-Type: text/plain"))

        // To an outside address without a key: in clear but signed, and send says so.
        let clear = try await world.rampart(["send", "--to", "nokey@elsewhere.example", "--subject", "Signed outside", "--text", "--user", "demo"],
                                      stdin: "CLEARMARKER signed only\n")
        #expect(clear.status == 0, "\(clear.stderr)")
        #expect(clear.stdout.contains("NOT end-to-end encrypted: nokey@elsewhere.example") && clear.stdout.contains("multipart/signed"),
                "\(clear.stdout)")
        let signed = await String(decoding: try newestOutboxFile(), as: UTF8.self)
        #expect(signed.contains("Content-Type: multipart/signed;") && signed.contains("CLEARMARKER signed only"))

        // From the peer: PGP/MIME (gpg --encrypt --sign of an inner MIME entity) and inline
        // clear-signed, delivered from outside, opened by read.
        // The inner entity carries an attachment and an embedded image: read lists both.
        let pdf = Data("%PDF-1.4 test".utf8).base64EncodedString()
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0]).base64EncodedString()
        let innerLines: [String] = [
            "Content-Type: multipart/mixed; boundary=\"in1\"", "",
            "--in1", "Content-Type: text/html; charset=utf-8", "",
            "<p>INCOMINGMARKER encrypted by gpg</p><img src=\"cid:logo@peer\">",
            "--in1", "Content-Type: application/pdf; name=\"report.pdf\"",
            "Content-Disposition: attachment; filename=\"report.pdf\"", "Content-Transfer-Encoding: base64", "", pdf,
            "--in1", "Content-Type: image/png", "Content-ID: <logo@peer>", "Content-Disposition: inline; filename=\"logo.png\"",
            "Content-Transfer-Encoding: base64", "", png,
            "--in1--", "",
        ]
        let inner = Data(innerLines.joined(separator: "\r\n").utf8)
        let ciphertext = try await peer.run(["--armor", "--encrypt", "--sign", "--recipient", demoFingerprint, "--local-user", peerFingerprint,
                                       "--output", "-", try peer.file("inner.eml", inner)])
        #expect(ciphertext.status == 0, "\(ciphertext.stderr)")
        let head = "From: Peer <peer@elsewhere.example>\r\nTo: demo@rampart.test\r\nMIME-Version: 1.0\r\n"
        let pgpMIME = head + "Subject: PGP/MIME from gpg\r\n"
            + "Content-Type: multipart/encrypted; protocol=\"application/pgp-encrypted\"; boundary=\"b1\"\r\n\r\n"
            + "--b1\r\nContent-Type: application/pgp-encrypted\r\n\r\nVersion: 1\r\n\r\n"
            + "--b1\r\nContent-Type: application/octet-stream\r\n\r\n\(ciphertext.stdout)\r\n--b1--\r\n"
        let clearsigned = try await peer.run(["--clearsign", "--local-user", peerFingerprint, "--output", "-",
                                        try peer.file("inline.txt", Data("INLINEMARKER clear-signed by gpg\n".utf8))])
        let inline = head + "Subject: Inline from gpg\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n\(clearsigned.stdout)"
        let serverHome = world.folder.child("server-home").path
        for message in [pgpMIME, inline] {
            let delivered = try await CLITool.rampart.run(["server", "deliver", "--data", world.serverData.path], stdin: message,
                                                    environment: ["RAMPART_HOME": serverHome])
            #expect(delivered.status == 0, "\(delivered.stderr)")
        }
        #expect(try await world.rampart(["sync", "--user", "demo"]).status == 0)
        let list = try await world.rampart(["list", "--user", "demo"]).stdout
        for (subject, marker) in [("PGP/MIME from gpg", "INCOMINGMARKER encrypted by gpg"), ("Inline from gpg", "INLINEMARKER clear-signed by gpg")] {
            let id = try #require(messageID(in: list, subject: subject), "\(list)")
            let read = try await world.rampart(["read", id, "--user", "demo"])
            #expect(read.status == 0, "\(subject): \(read.stderr)")
            #expect(read.stdout.contains(marker), "\(subject): \(read.stdout)")
            #expect(read.stdout.contains("Signature: verified \(peerFingerprint)"), "\(subject): \(read.stdout)")
        }
        let pgpMIMEID = try #require(messageID(in: list, subject: "PGP/MIME from gpg"))
        let withParts = try await world.rampart(["read", pgpMIMEID, "--user", "demo"])
        #expect(withParts.stdout.contains("Attachment: (inside the OpenPGP message)  report.pdf  application/pdf  13 bytes\n"), "\(withParts.stdout)")
        #expect(withParts.stdout.contains("Attachment: (inside the OpenPGP message)  logo.png  image/png  12 bytes (embedded image)"),
                "\(withParts.stdout)")
        let document = world.folder.child("pgp-mime.html")
        #expect(try await world.rampart(["read", pgpMIMEID, "--user", "demo", "--html", document.path]).status == 0)
        let html = try String(contentsOf: document, encoding: .utf8)
        #expect(html.contains("data:image/png;base64,\(png)") || html.contains("rampart-cid:"),
                "the embedded image resolves from the decrypted part: \(html)")
        try await Self.webServesTheEmbeddedPart(world, messageID: pgpMIMEID, png: try #require(Data(base64Encoded: png)))

        // A modified ciphertext: read refuses it (exit 7) and shows nothing of it.
        var lines = ciphertext.stdout.components(separatedBy: "\n")
        let index = try #require(lines.indices.dropFirst(3).first { lines[$0].count >= 60 })
        var chars = Array(lines[index])
        chars[30] = chars[30] == "A" ? "B" : "A"
        lines[index] = String(chars)
        let tampered = pgpMIME.replacingOccurrences(of: "PGP/MIME from gpg", with: "Tampered PGP/MIME")
            .replacingOccurrences(of: ciphertext.stdout, with: lines.joined(separator: "\n"))
        #expect(try await CLITool.rampart.run(["server", "deliver", "--data", world.serverData.path], stdin: tampered,
                                        environment: ["RAMPART_HOME": serverHome]).status == 0)
        #expect(try await world.rampart(["sync", "--user", "demo"]).status == 0)
        let tamperedID = try #require(messageID(in: try await world.rampart(["list", "--user", "demo"]).stdout, subject: "Tampered PGP/MIME"))
        let refused = try await world.rampart(["read", tamperedID, "--user", "demo"])
        #expect(refused.status == 7, "\(refused.stdout) \(refused.stderr)")
        #expect(!refused.stdout.contains("INCOMINGMARKER"))
    }
}
