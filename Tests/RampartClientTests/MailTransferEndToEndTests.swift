import Foundation
import RampartAPI
import RampartCore
import RampartServer
import RampartServerTestSupport
import RampartTestSupport
import Testing

/// Real mail in and out through the reference client, as a user runs it: `rampart import` of an
/// mbox, a Maildir and an .eml; `rampart export` back out; `rampart server deliver` from outside;
/// `rampart send` with attachments to a recipient outside this server.
///
/// Trust-model rows **inbox (low)** (imported and delivered mail is parsed by the MIME library,
/// sealed on arrival, read only through the sanitizer) and **outbox (moderate)** (what leaves in
/// clear is said so).
@Suite("Mail import, export, delivery and sending out (end to end)", .serialized)
struct MailTransferEndToEndTests {
    static let pin = "482913"

    /// A world with the server running and `demo` logged in (protector: none).
    static func loggedIn() async throws -> (EndToEndWorld, ServerProcess, String) {
        let world = try EndToEndWorld()
        let server = try await world.startServer()
        let info = world.serverData.appendingPathComponent(EmbeddedServer.infoFileName).path
        let login = try await world.login(DemoAccounts.demo, user: "demo", serverInfo: info)
        guard login.status == 0 else {
            server.stop()
            throw MailTransferTestError("login failed: \(login.stderr)")
        }
        return (world, server, info)
    }

    static var python: String {
        if let path = ProcessInfo.processInfo.environment["RAMPART_PYTHON"], FileManager.default.isExecutableFile(atPath: path) { return path }
        return "/usr/bin/python3"
    }

    static var scripts: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/mime")
    }

    /// An mbox written by the benchmark's generator (Python's email package), plus hand-written
    /// entries: a body line starting with "From " (mboxrd quoting) and an HTML mail with an inline
    /// `cid:` image.
    static func makeMbox(_ path: URL, messages: Int, sizeMB: Int = 1) async throws {
        let generate = try await CLITool(path: URL(fileURLWithPath: python))
            .run([scripts.appendingPathComponent("make-mbox.py").path, path.path, "--messages", String(messages),
                  "--size-mb", String(sizeMB), "--seed", "11"])
        guard generate.status == 0 else { throw MailTransferTestError("make-mbox.py failed: \(generate.stderr.suffix(2000))") }
        let handle = try FileHandle(forWritingTo: path)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(handWritten.utf8))
        try handle.close()
    }

    static let handWritten = """
        From quoting@example.org Sat Jan  6 10:00:00 2024
        From: Quoting Test <quoting@example.org>
        To: demo@rampart.test
        Subject: Unicorn quoting check
        Date: Sat, 06 Jan 2024 10:00:00 +0000
        Message-ID: <quoting@example.org>

        A line that starts with the word:
        >From here on it is quoted in the file.
        >>From twice quoted.
        UNICORNBODYWORD ends it.

        From cid@example.org Sun Jan  7 10:00:00 2024
        From: Picture Sender <cid@example.org>
        To: demo@rampart.test
        Subject: Embedded picture inside
        Date: Sun, 07 Jan 2024 10:00:00 +0000
        MIME-Version: 1.0
        Content-Type: multipart/related; boundary="rel"

        --rel
        Content-Type: text/html; charset=utf-8

        <p>Look: <img src="cid:pixel@example.org" alt="pixel"></p><script>alert(1)</script>
        --rel
        Content-Type: image/png
        Content-ID: <pixel@example.org>
        Content-Transfer-Encoding: base64

        iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==
        --rel--


        """

    @Test func anMboxImportedThenExportedIsByteIdenticalAndAReimportStoresNothingTwice() async throws {
        let (world, server, _) = try await Self.loggedIn()
        defer { server.stopInBackground() }
        let mbox = world.root.appendingPathComponent("archive.mbox")
        try await Self.makeMbox(mbox, messages: 30)

        let first = try await world.rampart(["import", mbox.path, "--label", "Archive 2024", "--user", "demo"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("Import: imported 32, already there 0, failed 0."), "\(first.stdout)")
        #expect(first.stderr.contains("import: "), "progress lines on a non-terminal stderr")
        let again = try await world.rampart(["import", mbox.path, "--label", "Archive 2024", "--user", "demo"])
        #expect(again.stdout.contains("Import: imported 0, already there 32, failed 0."), "\(again.stdout)")

        // Listed, searchable by subject and body, once each.
        let list = try await world.rampart(["list", "--label", "Archive 2024", "--limit", "1000", "--user", "demo"])
        #expect(list.status == 0, "\(list.stderr)")
        let ids = list.lines.compactMap { $0.split(separator: " ").first { $0.hasPrefix("mi_") }.map(String.init) }
        #expect(ids.count == 32 && Set(ids).count == 32, "\(list.stdout)")
        let bySubject = try await world.rampart(["list", "--search", "unicorn", "--user", "demo"])
        #expect(bySubject.stdout.contains("Unicorn quoting check"), "\(bySubject.stdout)")
        let byBody = try await world.rampart(["list", "--search", "unicornbodyword", "--user", "demo"])
        #expect(byBody.stdout.contains("Unicorn quoting check"), "\(byBody.stdout)")

        // Export: the mbox comes back byte for byte; one message as .eml without mbox quoting.
        let out = world.root.appendingPathComponent("out.mbox")
        let export = try await world.rampart(["export", "--label", "Archive 2024", "--mbox", out.path, "--user", "demo"])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(try Data(contentsOf: out) == Data(contentsOf: mbox))
        let quotingID = try #require(messageID(in: list.stdout, subject: "Unicorn quoting check"))
        let eml = world.root.appendingPathComponent("one.eml")
        #expect(try await world.rampart(["export", quotingID, "--eml", eml.path, "--user", "demo"]).status == 0)
        let text = try String(contentsOf: eml, encoding: .utf8)
        #expect(text.hasPrefix("From: Quoting Test <quoting@example.org>\n"))
        #expect(text.contains("\nFrom here on it is quoted in the file.\n>From twice quoted.\n"), "\(text)")

        // The embedded picture is rendered through the sanitizer and its CSP: the cid: image
        // shows, the script does not survive.
        let pictureID = try #require(messageID(in: list.stdout, subject: "Embedded picture inside"))
        let page = world.root.appendingPathComponent("page.html")
        let read = try await world.rampart(["read", pictureID, "--html", page.path, "--user", "demo"])
        #expect(read.status == 0, "\(read.stderr)")
        let html = try String(contentsOf: page, encoding: .utf8)
        #expect(!html.contains("alert(1)") && !html.contains("<script>alert"))
        #expect(!html.contains("src=\"cid:"), "the cid: image is resolved")
        #expect(read.stdout.contains("(embedded image)"))

        // Errors: nothing there is "not found", a folder that is not a Maildir is bad input.
        #expect(try await world.rampart(["import", world.root.appendingPathComponent("nope").path, "--user", "demo"]).status == 6)
        #expect(try await world.rampart(["import", try world.folder.folder("plain-folder").path, "--user", "demo"]).status == 2)
        #expect(try await world.rampart(["export", "--label", "Archive 2024", "--user", "demo"]).status == 2)
    }

    @Test func aMaildirAndAnEmlImportAndALockedAccountIsExit3() async throws {
        let (world, server, _) = try await Self.loggedIn()
        defer { server.stopInBackground() }
        let maildir = try world.folder.folder("Maildir")
        for sub in ["cur", "new", "tmp"] { try FileManager.default.createDirectory(at: maildir.appendingPathComponent(sub), withIntermediateDirectories: true) }
        try Data("From: a@example.org\nSubject: Seen letter\n\nold\n".utf8).write(to: maildir.appendingPathComponent("cur/1.host:2,S"))
        try Data("From: b@example.org\nSubject: Fresh letter\n\nnew\n".utf8).write(to: maildir.appendingPathComponent("new/2.host"))
        try Data("half written".utf8).write(to: maildir.appendingPathComponent("tmp/3.host"))
        let imported = try await world.rampart(["import", maildir.path, "--user", "demo"])
        #expect(imported.stdout.contains("imported 2, already there 0, failed 0"), "\(imported.stdout) \(imported.stderr)")
        let inbox = try await world.rampart(["list", "--user", "demo"])
        let fresh = try #require(inbox.lines.first { $0.contains("Fresh letter") })
        let seen = try #require(inbox.lines.first { $0.contains("Seen letter") })
        #expect(fresh.hasPrefix("*") && !seen.hasPrefix("*"), "new/ is unread, cur/ with S is read")

        let eml = world.root.appendingPathComponent("note.eml")
        let bytes = Data("From: c@example.org\r\nSubject: =?UTF-8?B?w4lsw6h2ZQ==?=\r\n\r\nbody\r\n".utf8)
        try bytes.write(to: eml)
        #expect(try await world.rampart(["import", eml.path, "--user", "demo"]).stdout.contains("imported 1"))
        let id = try #require(messageID(in: try await world.rampart(["list", "--user", "demo"]).stdout, subject: "Élève"))
        let back = world.root.appendingPathComponent("back.eml")
        #expect(try await world.rampart(["export", id, "--eml", back.path, "--user", "demo"]).status == 0)
        #expect(try Data(contentsOf: back) == bytes)

        // Protected by a PIN and not unlocked: no PIN, no terminal → locked (exit 3).
        #expect(try await world.rampart(["protect", "--user", "demo", "--pin", "--pin-stdin"], stdin: "\(Self.pin)\n").status == 0)
        if FileHandle(forUpdatingAtPath: "/dev/tty") == nil {
            #expect(try await world.rampart(["import", eml.path, "--user", "demo"]).status == 3)
        }
        #expect(try await world.rampart(["import", eml.path, "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
            .stdout.contains("already there 1"))
    }

    /// Trust-model row **inbox (low)** and the "nothing lost on a crash" rule: an import killed
    /// halfway and run again leaves every message exactly once.
    @Test func anImportKilledHalfwayResumesWithEveryMessageExactlyOnce() async throws {
        let (world, server, _) = try await Self.loggedIn()
        defer { server.stopInBackground() }
        let mbox = world.root.appendingPathComponent("big.mbox")
        try await Self.makeMbox(mbox, messages: 400, sizeMB: 4)
        let child = try CLITool.rampart.spawn(["import", mbox.path, "--label", "Resume", "--user", "demo"], environment: world.environment)
        // Kill it once it has reported progress (messages are being stored), before it ends.
        _ = await child.waitForLines(timeout: .seconds(120)) { _ in child.stderr.contains("import: ") }
        child.kill(SIGKILL)
        let resumed = try await world.rampart(["import", mbox.path, "--label", "Resume", "--user", "demo"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let numbers = resumed.stdout.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        #expect(numbers.count >= 3 && numbers[0] + numbers[1] == 402 && numbers[2] == 0, "\(resumed.stdout)")
        let list = try await world.rampart(["list", "--label", "Resume", "--limit", "5000", "--user", "demo"])
        let ids = list.lines.compactMap { $0.split(separator: " ").first { $0.hasPrefix("mi_") }.map(String.init) }
        #expect(ids.count == 402 && Set(ids).count == 402, "\(ids.count) listed")
        let out = world.root.appendingPathComponent("resumed.mbox")
        #expect(try await world.rampart(["export", "--label", "Resume", "--mbox", out.path, "--user", "demo"]).status == 0)
        #expect(try Data(contentsOf: out) == Data(contentsOf: mbox))
    }

    @Test func mailFromOutsideIsDeliveredSealedAndBadDeliveriesStoreNothing() async throws {
        let (world, server, _) = try await Self.loggedIn()
        defer { server.stopInBackground() }
        let message = "From: Outside <out@elsewhere.example>\r\nTo: demo@rampart.test\r\nSubject: Delivered from outside\r\n\r\nDELIVERYMARKER body\r\n"
        let serverHome = world.folder.child("server-home").path
        func deliver(_ input: String, _ extra: [String] = []) async throws -> CLIResult {
            try await CLITool.rampart.run(["server", "deliver", "--data", world.serverData.path] + extra, stdin: input,
                                    environment: ["RAMPART_HOME": serverHome])
        }
        let ok = try await deliver(message)
        #expect(ok.status == 0 && ok.stdout.contains("Delivered to 1 mailbox"), "\(ok.stderr)")
        await #expect(try deliver(message, ["--to", "nobody@rampart.test"]).status == 6)
        await #expect(try deliver("").status == 2)
        await #expect(try deliver("not a message at all\n").status == 2)
        #expect(try await world.rampart(["sync", "--user", "demo"]).status == 0)
        let inbox = try await world.rampart(["list", "--user", "demo"])
        #expect(inbox.lines.filter { $0.contains("Delivered from outside") }.count == 1, "\(inbox.stdout)")
        let database = TemporaryHome.allBytes(under: world.serverData)
        #expect(database.range(of: Data("DELIVERYMARKER".utf8)) == nil, "no cleartext copy on the server")
        let id = try #require(messageID(in: inbox.stdout, subject: "Delivered from outside"))
        let eml = world.root.appendingPathComponent("delivered.eml")
        #expect(try await world.rampart(["export", id, "--eml", eml.path, "--user", "demo"]).status == 0)
        #expect(try String(contentsOf: eml, encoding: .utf8) == message)
    }

    /// Trust-model row **outbox (moderate)**: mail to a recipient outside this server leaves as
    /// a standard MIME message through the outbox, and `send` says it is not end-to-end encrypted.
    @Test func sendWithAttachmentsToAnOutsideRecipientWritesRealMIMEToTheOutbox() async throws {
        let (world, server, _) = try await Self.loggedIn()
        defer { server.stopInBackground() }
        let file = world.root.appendingPathComponent("notes.pdf")
        let content = Data((0..<3000).map { UInt8($0 % 251) })
        try content.write(to: file)
        let sent = try await world.rampart(["send", "--to", "zoe@elsewhere.example", "--to", "alice@rampart.test", "--subject", "Grüße aus Köln",
                                      "--text", "--attach", file.path, "--user", "demo"],
                                     stdin: "Hello Zoë,\nthe notes are attached.\n")
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(sent.stdout.contains("NOT end-to-end encrypted: zoe@elsewhere.example"), "\(sent.stdout)")
        #expect(!sent.stdout.contains("NOT end-to-end encrypted: alice"))
        let outbox = world.serverData.appendingPathComponent("outbox/new")
        let files = try FileManager.default.contentsOfDirectory(atPath: outbox.path)
        #expect(files.count == 1)
        let parsed = try await CLITool.rampartDev.run(["mime", "parse", outbox.appendingPathComponent(files[0]).path, "--json"])
        #expect(parsed.status == 0, "\(parsed.stderr)")
        let summary = try JSONSerialization.jsonObject(with: parsed.output) as? [String: Any]
        #expect(summary?["subject"] as? String == "Grüße aus Köln")
        #expect((summary?["text"] as? String)?.contains("Hello Zoë,") == true)
        // PGP/MIME multipart/signed (no pinned key for zoe): the signature is a part of its own.
        let attachments = (summary?["attachments"] as? [[String: Any]] ?? []).filter { $0["filename"] as? String != "signature.asc" }
        #expect(attachments.count == 1 && attachments.first?["filename"] as? String == "notes.pdf"
                && attachments.first?["size"] as? Int == content.count)
        let raw = try Data(contentsOf: outbox.appendingPathComponent(files[0]))
        #expect(String(decoding: raw, as: UTF8.self).split(separator: "\r\n").allSatisfy { $0.utf8.count <= 998 })
    }
}

struct MailTransferTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
