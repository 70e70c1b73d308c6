import Crypto
import Foundation
import RampartAPI
import RampartCore
import RampartServer
import RampartServerTestSupport
import RampartTestSupport
import Testing

/// A home folder for the client, a data folder for the server, and an opener script.
final class EndToEndWorld {
    /// Everything below is inside this private folder, removed with the world.
    let folder: TemporaryHome
    let home: URL
    let serverData: URL
    let capture: URL
    let opener: URL

    init() throws {
        folder = try TemporaryHome("e2e")
        home = try folder.folder("home")
        serverData = folder.child("server")
        capture = folder.child("opened")
        opener = folder.child("opener.sh")
        // The "previewer": copies what it was given (and where it was) for the test to inspect.
        try """
        #!/bin/sh
        cat "$1" > "\(capture.path)"
        echo "$1" > "\(capture.path).path"
        ls -l "$1" > "\(capture.path).mode"
        """.write(to: opener, atomically: true, encoding: .utf8)
        chmod(opener.path, 0o755)
    }

    var environment: [String: String] {
        ["RAMPART_HOME": home.path, "RAMPART_PIN_KDF_LOGN": "15", "RAMPART_OPENER": opener.path, "RAMPART_USER": ""]
    }

    var root: URL { folder.url }

    /// The user's tool with this world's environment, waiting on a thread of its own: the test's
    /// cooperative threads stay free for the other suites and for servers running in this process.
    func rampart(_ arguments: [String], stdin: String? = nil) async throws -> CLIResult {
        try await CLITool.rampart.run(arguments, stdin: stdin, environment: environment)
    }

    /// The developer's tool (`key status`, `keychain list`) on this world's home.
    func rampartDev(_ arguments: [String], stdin: String? = nil) async throws -> CLIResult {
        try await CLITool.rampartDev.run(arguments, stdin: stdin, environment: environment)
    }

    /// `rampart server start` with `arguments` on this world's server data folder, in a child
    /// process: the server is not starved by other test suites sharing this process's thread pool.
    func startServer(_ arguments: [String] = []) async throws -> ServerProcess {
        try await ServerProcess.start(data: serverData, arguments: arguments, environment: ["RAMPART_HOME": folder.child("server-home").path])
    }

    /// A new world, its server started with `arguments` (``startServer(_:)``) and the path of the
    /// server's description file; end both with ``close(_:)``.
    static func withServer(_ arguments: [String]) async throws -> (EndToEndWorld, ServerProcess, info: String) {
        let world = try EndToEndWorld()
        do {
            let server = try await world.startServer(arguments)
            return (world, server, server.infoFile.path)
        } catch {
            world.folder.remove()
            throw error
        }
    }

    /// Stops `server` and removes the world's folder without waiting for either here (a `defer`
    /// calls this): the server's exit and the agent stops registered for the folder are awaited
    /// by background clean-ups (``ServerProcess/stopInBackground()``, ``TemporaryHome/remove()``).
    func close(_ server: ServerProcess) {
        server.stopInBackground()
        folder.remove()
    }

    /// `rampart sync` (expected to succeed), then `rampart read` of the message whose subject
    /// contains `subject`, as `user`.
    func syncAndRead(user: String, subject: String) async throws -> CLIResult {
        #expect(try await rampart(["sync", "--user", user]).status == 0)
        let listing = try await rampart(["list", "--user", user])
        let id = try #require(messageID(in: listing.stdout, subject: subject), "\(listing.stdout)")
        return try await rampart(["read", "--user", user, id])
    }

    /// `rampart login` of a demo account through the server's description file, passwords on
    /// standard input.
    func login(_ account: DemoAccount, user: String, serverInfo: String) async throws -> CLIResult {
        try await rampart(["login", "--user", user, "--server-info", serverInfo, "--username", account.username,
                     "--password-stdin", "--mailbox-password-stdin"],
                    stdin: "\(account.loginPassword)\n\(account.mailboxPassword)\n")
    }

    /// The server started (``startServer()``) and `account` logged in as `user` through its
    /// description file (expected to succeed); the server, to stop, and that file's path.
    func startServerAndLogIn(_ account: DemoAccount, user: String) async throws -> (server: ServerProcess, info: String) {
        let server = try await startServer()
        let info = serverData.appendingPathComponent(EmbeddedServer.infoFileName).path
        do {
            #expect(try await login(account, user: user, serverInfo: info).status == 0)
        } catch {
            server.stop()
            throw error
        }
        return (server, info)
    }

    /// Has `rampart agent stop` run for this world's home before its folder is deleted
    /// (``TemporaryHome/runsAtEnd(_:_:)``): for a `defer` block, which cannot await; the stop
    /// then waits for the agent off the cooperative pool.
    func stopAgent() {
        folder.runsAtEnd(CLITool.rampart.with(environment: environment), ["agent", "stop"])
    }

    /// Every regular file under the client's home, as paths relative to it.
    func homeFiles() -> [String] { TemporaryHome.regularFiles(under: home) }

    /// Every byte of every regular file under the client's home.
    func homeBytes() -> Data { TemporaryHome.allBytes(under: home) }
}

/// The id in the second column of a `rampart list` line whose subject contains `text`.
func messageID(in listing: String, subject text: String) -> String? {
    for line in listing.split(separator: "\n") where line.contains(text) {
        let columns = line.dropFirst(3).split(separator: " ", omittingEmptySubsequences: true)
        if let id = columns.first { return String(id) }
    }
    return nil
}

@Suite("rampart client, end to end against the embedded server", .serialized)
struct ClientEndToEndTests {
    static let pin = "135792"

    @Test func aUserLogsInReadsMailSafelyAndLeavesNothingBehindAfterLogout() async throws {
        let world = try EndToEndWorld()
        let server = try await world.startServer()
        defer { server.stopInBackground() }
        let info = world.serverData.appendingPathComponent(EmbeddedServer.infoFileName).path
        let demo = DemoAccounts.demo

        // Login (passwords from stdin), then protect with a PIN.
        let login = try await world.login(demo, user: "demo", serverInfo: info)
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stdout.contains("Logged in as demo"))
        #expect(login.stdout.contains("Push notifications registered"))
        let protect = try await world.rampart(["protect", "--user", "demo", "--pin", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(protect.status == 0, "\(protect.stderr)")

        // Sync with progress lines on a non-terminal stderr.
        let sync = try await world.rampart(["sync", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(sync.stdout.contains("Synced: "))
        #expect(sync.stderr.contains("messages: "))
        #expect(!sync.stderr.contains("\r"))

        // The inbox and a search over the sealed blind index.
        let inbox = try await world.rampart(["list", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(inbox.status == 0, "\(inbox.stderr)")
        let newsletterID = try #require(messageID(in: inbox.stdout, subject: "Northwind"))
        let planningID = try #require(messageID(in: inbox.stdout, subject: "Quarterly planning notes"))
        let search = try await world.rampart(["list", "--user", "demo", "--search", "northwind", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(search.status == 0)
        #expect(search.stdout.contains("Northwind"))
        #expect(!search.stdout.contains("Lunch on Thursday"))
        let byLabel = try await world.rampart(["list", "--user", "demo", "--label", "newsletters", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(byLabel.stdout.contains("Northwind") && !byLabel.stdout.contains("Lunch on Thursday"), "\(byLabel.stdout)")
        let badLabel = try await world.rampart(["list", "--user", "demo", "--label", "no-such-label", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(badLabel.status == 2 && badLabel.stderr.contains("Labels: "))
        let noMatch = try await world.rampart(["list", "--user", "demo", "--search", "zebra-crossing-unlikely", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(noMatch.stdout.contains("No message matches"))

        // Unknown ids are refused cleanly.
        let missing = try await world.rampart(["read", "no-such-message", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(missing.status == 6 && missing.stderr.contains("No message 'no-such-message'"), "\(missing.stderr)")

        // Reading the newsletter: trackers and remote images blocked and reported.
        let read = try await world.rampart(["read", newsletterID, "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout.contains("Subject: This week at Northwind"))
        let blocked = try #require(read.stderr.split(separator: "\n").first { $0.hasPrefix("Blocked: ") })
        let numbers = blocked.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        #expect(numbers.count >= 2 && numbers[0] >= 1 && numbers[1] >= 1, "\(blocked)")
        #expect(!read.stdout.unicodeScalars.contains { $0.value == 0x1B })

        // The same message with remote content allowed, to an HTML file: the backend fetched what
        // it could (the demo's hosts are not reachable here: empty images), the file holds every
        // image as a data: URI under a data:-only policy, so the browser that opens it contacts no
        // one — neither the sender's hosts nor the proxy.
        let htmlFile = world.root.appendingPathComponent("newsletter.html")
        let remote = try await world.rampart(["read", newsletterID, "--user", "demo", "--load-remote", "--html", htmlFile.path, "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(remote.status == 0, "\(remote.stderr)")
        let document = try String(contentsOf: htmlFile, encoding: .utf8)
        #expect(document.contains("img-src data:;"))
        #expect(!document.contains("remote-content.rampart.invalid"))
        #expect(!document.contains(" src=\"http"), "no remote URL is left to load (trackers stay inert as data-rampart-src)")
        #expect(document.contains("src=\"data:image/"))
        #expect(document.contains("script-src 'none'"))
        #expect(remote.stderr.contains("0 remote images"))
        // Beside it, what the backend could not fetch (the demo's hosts: all of them) is counted, not dropped.
        let through = try #require(remote.stderr.split(separator: "\n").first { $0.hasPrefix("Blocked: ") })
        let counts = try #require(through.firstMatch(of: #/Through the backend: ([0-9]+) remote resources? fetched, ([0-9]+) refused/#), "\(through)")
        #expect(Int(counts.output.1) == 0 && (Int(counts.output.2) ?? 0) >= 1, "\(through)")
        let blockedDocument = world.root.appendingPathComponent("blocked.html")
        _ = try await world.rampart(["read", newsletterID, "--user", "demo", "--html", blockedDocument.path, "--pin-stdin"], stdin: "\(Self.pin)\n")
        let strict = try String(contentsOf: blockedDocument, encoding: .utf8)
        #expect(strict.contains("content=\"default-src 'none'; img-src data:;"))
        #expect(!strict.contains(" src=\"http"))

        // A trusted sender (a sealed, MAC-checked setting) counts only for a message signed by the
        // sender's pinned key: the seeded newsletter came in clear, unsigned, so it stays blocked.
        // (Signed mail from a trusted sender: OpenPGPMailEndToEndTests.)
        let trust = try await world.rampart(["settings", "trust", "news@northwind.example", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(trust.status == 0 && trust.stdout.contains("news@northwind.example"), "\(trust.stderr)")
        let trusted = try await world.rampart(["read", newsletterID, "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(trusted.stdout.contains("Signature: none"), "\(trusted.stdout)")
        #expect(!trusted.stderr.contains("0 remote images") && trusted.stderr.contains("did not verify"), "\(trusted.stderr)")
        #expect(try await world.rampart(["settings", "untrust", "news@northwind.example", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n").status == 0)
        let untrusted = try await world.rampart(["read", newsletterID, "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(!untrusted.stderr.contains("0 remote images"), "\(untrusted.stderr)")

        // An attachment: opened through a cleartext lease that is gone afterwards; and saved.
        let planning = try await world.rampart(["read", planningID, "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        let attachmentLine = try #require(planning.stdout.split(separator: "\n").first { $0.contains("minutes.txt") })
        let attachmentID = String(attachmentLine.split(separator: " ")[1])
        let open = try await world.rampart(["attachment", attachmentID, "--open", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(open.status == 0, "\(open.stderr)")
        let opened = try Data(contentsOf: world.capture)
        #expect(!opened.isEmpty)
        let leasePath = try String(contentsOf: URL(fileURLWithPath: world.capture.path + ".path"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(leasePath.hasPrefix(world.home.path))
        #expect(try String(contentsOf: URL(fileURLWithPath: world.capture.path + ".mode"), encoding: .utf8).hasPrefix("-rw-------"))
        #expect(!FileManager.default.fileExists(atPath: leasePath), "the cleartext lease outlived the preview")
        let saved = world.root.appendingPathComponent("minutes-copy.txt")
        let save = try await world.rampart(["attachment", attachmentID, "--save", saved.path, "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(save.status == 0, "\(save.stderr)")
        #expect(try Data(contentsOf: saved) == opened)
        // The attachment is cached in the account's FileVault, sealed: blobs exist, and none
        // holds the cleartext.
        let vaultAttachments = world.home.appendingPathComponent("vault/demo/attachments")
        let blobs = try FileManager.default.contentsOfDirectory(at: vaultAttachments, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "blob" }
        #expect(!blobs.isEmpty)
        let probe = opened.prefix(24)
        for blob in blobs { #expect(try Data(contentsOf: blob).range(of: probe) == nil, "cleartext in \(blob.lastPathComponent)") }

        // Drive: a multi-block file goes up encrypted and comes back identical.
        let original = world.root.appendingPathComponent("payload.bin")
        try Data((0..<(2_500_000)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }).write(to: original)
        let upload = try await world.rampart(["drive", "upload", original.path, "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(upload.status == 0, "\(upload.stderr)")
        #expect(upload.stderr.contains("upload payload.bin: "))
        let nodeID = try #require(upload.stdout.split(separator: " ").last.map { String($0.dropLast(2)) })
        let ls = try await world.rampart(["drive", "ls", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(ls.stdout.contains("payload.bin") && ls.stdout.contains(nodeID))
        let back = world.root.appendingPathComponent("payload-back.bin")
        let download = try await world.rampart(["drive", "download", nodeID, back.path, "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(download.status == 0, "\(download.stderr)")
        #expect(try Data(contentsOf: back) == Data(contentsOf: original))

        // Drive folders: made by path, uploaded into, listed by path; a non-empty one is not deleted.
        for path in ["Reports", "Reports/2026"] {
            let made = try await world.rampart(["drive", "mkdir", path, "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
            #expect(made.status == 0 && made.stdout.hasPrefix("Created the folder "), "\(made.stderr)")
        }
        let twice = try await world.rampart(["drive", "mkdir", "Reports", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(twice.status != 0 && twice.stderr.contains("already exists"), "\(twice.stderr)")
        let noParent = try await world.rampart(["drive", "mkdir", "Missing/x", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(noParent.status == 6, "\(noParent.status) \(noParent.stderr)")
        let filed = try await world.rampart(["drive", "upload", original.path, "--to", "Reports/2026", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(filed.status == 0, "\(filed.stderr)")
        let inFolder = try await world.rampart(["drive", "ls", "Reports/2026", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(inFolder.stdout.contains("payload.bin") && inFolder.stdout.split(separator: "\n").count == 1, "\(inFolder.stdout)")
        let root = try await world.rampart(["drive", "ls", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(root.stdout.contains("Reports/") && !root.stdout.contains("2026/") && root.stdout.split(separator: "\n").count == 2, "\(root.stdout)")
        let reportsID = try #require(root.stdout.split(separator: "\n").first { $0.hasSuffix("Reports/") }?.split(separator: " ").first.map(String.init))
        let notEmpty = try await world.rampart(["drive", "rm", reportsID, "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(notEmpty.status != 0 && notEmpty.stderr.contains("is not empty (1 item in it)"), "\(notEmpty.stderr)")
        let renamed = try await world.rampart(["drive", "rename", reportsID, "Archive", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(renamed.status == 0, "\(renamed.stderr)")
        let moved = try await world.rampart(["drive", "ls", "Archive/2026", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(moved.stdout.contains("payload.bin"), "\(moved.stdout) \(moved.stderr)")

        // A wrong PIN is refused with the attempts left; the right one still works.
        let wrong = try await world.rampart(["list", "--user", "demo", "--pin-stdin"], stdin: "000000\n")
        #expect(wrong.status == 4)
        #expect(wrong.stderr.contains("attempts left"))

        // No PIN and no terminal to ask on: the account stays locked (exit 3). (Only checkable
        // when the test itself runs without a controlling terminal, as in CI.)
        if let terminal = FileHandle(forUpdatingAtPath: "/dev/tty") {
            try? terminal.close()
        } else {
            let locked = try await world.rampart(["list", "--user", "demo"])
            #expect(locked.status == 3, "\(locked.stderr)")
            #expect(locked.stderr.contains("locked"))
        }

        // A second account at once, in its own container.
        let alice = DemoAccounts.alice
        let aliceLogin = try await world.login(alice, user: "alice", serverInfo: info)
        #expect(aliceLogin.status == 0, "\(aliceLogin.stderr)")
        // Alice's first sync runs on a terminal (a pty from `script`): stderr carries a redrawn bar.
        let ttyRun = Process()
        ttyRun.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        ttyRun.arguments = ["-qec", "'\(try CLITool.rampart.url().path)' sync --user alice", "/dev/null"]
        ttyRun.environment = ProcessInfo.processInfo.environment.merging(world.environment) { $1 }
        let ttyOut = Pipe()
        ttyRun.standardOutput = ttyOut
        ttyRun.standardInput = FileHandle.nullDevice
        try ttyRun.run()
        let screen = String(decoding: ttyOut.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        ttyRun.waitUntilExit()
        #expect(ttyRun.terminationStatus == 0, "\(screen)")
        #expect(screen.contains("\rmessages [") && screen.contains("100%"), "\(screen)")
        let aliceList = try await world.rampart(["list", "--user", "alice"])
        #expect(aliceList.stdout.contains("Welcome to Rampart, Alice"))
        #expect(!aliceList.stdout.contains("Northwind"))

        // Alice writes to demo: demo's push process opens the notification without the PIN,
        // then a sync brings the message itself.
        let send = try await world.rampart(["send", "--user", "alice", "--to", "demo@rampart.test", "--subject", "Hello from Alice"],
                                     stdin: "Are you free on Friday?\n")
        #expect(send.status == 0, "\(send.stderr)")
        let pushes = try await world.rampart(["notifications", "--user", "demo", "--server-info", info])
        #expect(pushes.status == 0, "\(pushes.stderr)")
        #expect(pushes.stdout.contains("New mail from Alice Example: Hello from Alice"), "\(pushes.stdout)")
        #expect(try await world.rampart(["notifications", "--user", "demo", "--server-info", info]).stdout.contains("No new notifications."))
        let resync = try await world.rampart(["sync", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(resync.stdout.contains("Synced: 1 message stored"), "\(resync.stdout)")
        #expect(try await world.rampart(["list", "--user", "demo", "--search", "friday", "--pin-stdin"], stdin: "\(Self.pin)\n").stdout.contains("Hello from Alice"))

        // The sanitized document opened "in the browser" through a lease that is gone afterwards.
        let openDoc = try await world.rampart(["read", newsletterID, "--open", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(openDoc.status == 0, "\(openDoc.stderr)")
        let shown = try String(contentsOf: world.capture, encoding: .utf8)
        #expect(shown.hasPrefix("<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\""))
        let docPath = try String(contentsOf: URL(fileURLWithPath: world.capture.path + ".path"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!FileManager.default.fileExists(atPath: docPath))

        // Logout: server session ended, every local trace of the user erased.
        let keychainFolder = world.home.appendingPathComponent("keychain").path
        let pushKeysBefore = try await world.rampartDev(["keychain", "list", "--dir", keychainFolder, "--group", "rampart.shared"])
            .stdout.split(separator: "\n").filter { $0.contains("/push.key.") }.count
        let logout = try await world.rampart(["logout", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(logout.stdout.contains("Session ended on the server."))
        let status = try await world.rampartDev(["key", "status", "--user", "demo"])
        #expect(status.stdout.contains("MainKey:           none"))
        let after = try await world.rampart(["list", "--user", "demo"])
        #expect(after.status == 6)

        // Forensic check: no file under the home names demo (a folder, a lock file: the username
        // connects the account to a person), and none of its data is anywhere in it.
        let files = world.homeFiles()
        #expect(files.filter { $0.lowercased().contains("demo") }.isEmpty, "\(files)")
        let disk = world.homeBytes()
        for trace in ["Northwind", "demo@rampart.test", "Dana Demo", "Quarterly planning", "payload.bin", String(decoding: opened.prefix(24), as: UTF8.self)] {
            #expect(disk.range(of: Data(trace.utf8)) == nil, "found \(trace) under the home after logout")
        }
        for group in ["rampart.app", "rampart.shared"] {
            let keychainDump = try await world.rampartDev(["keychain", "list", "--dir", world.home.appendingPathComponent("keychain").path, "--group", group])
            #expect(keychainDump.status == 0, "\(keychainDump.stderr)")
            #expect(!keychainDump.stdout.contains("rampart.user.demo/"), "\(keychainDump.stdout)")
        }
        let pushKeysAfter = try await world.rampartDev(["keychain", "list", "--dir", keychainFolder, "--group", "rampart.shared"])
            .stdout.split(separator: "\n").filter { $0.contains("/push.key.") }.count
        #expect(pushKeysBefore == 2 && pushKeysAfter == 1, "push keys before \(pushKeysBefore), after \(pushKeysAfter)")
        // The other account is untouched.
        #expect(try await world.rampart(["list", "--user", "alice"]).stdout.contains("Welcome to Rampart, Alice"))
    }

    /// Trust-model row **device memory (moderate)**: with `rampart unlock` the MainKey lives in
    /// the agent; user commands then need no PIN, `rampart lock` takes that away again, and a
    /// logout leaves the agent without the erased account's key.
    @Test func commandsUseTheAgentsKeyUntilLockAndLogoutLocksTheAgent() async throws {
        let world = try EndToEndWorld()
        let server = try await world.startServer()
        defer { server.stopInBackground() }
        defer { world.stopAgent() }
        let info = world.serverData.appendingPathComponent(EmbeddedServer.infoFileName).path
        let demo = DemoAccounts.demo
        let login = try await world.login(demo, user: "demo", serverInfo: info)
        #expect(login.status == 0, "\(login.stderr)")
        #expect(try await world.rampart(["protect", "--user", "demo", "--pin", "--pin-stdin"], stdin: "\(Self.pin)\n").status == 0)

        // Unlock once in the agent (started on demand); sync and list then run without a PIN.
        let unlock = try await world.rampart(["unlock", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(unlock.status == 0, "\(unlock.stderr)")
        #expect(unlock.stdout.contains("in the agent"))
        let sync = try await world.rampart(["sync", "--user", "demo"])
        #expect(sync.status == 0, "\(sync.stderr)")
        let inbox = try await world.rampart(["list", "--user", "demo"])
        #expect(inbox.status == 0, "\(inbox.stderr)")
        #expect(inbox.stdout.contains("Northwind"))

        // Lock: the agent zeroizes the key; commands need the PIN again (in this process).
        #expect(try await world.rampart(["lock", "--user", "demo"]).status == 0)
        let locked = try await world.rampart(["status", "--user", "demo"])
        #expect(locked.stdout.contains("state:       locked"), "\(locked.stdout)")
        let withPIN = try await world.rampart(["list", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(withPIN.status == 0 && withPIN.stdout.contains("Northwind"), "\(withPIN.stderr)")
        #expect(try await world.rampart(["status", "--user", "demo"]).stdout.contains("state:       locked"))

        // Unlock again, log out without a PIN (the agent's key): the agent no longer holds it.
        #expect(try await world.rampart(["unlock", "--user", "demo", "--pin-stdin"], stdin: "\(Self.pin)\n").status == 0)
        let logout = try await world.rampart(["logout", "--user", "demo"])
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(logout.stdout.contains("Session ended on the server."), "\(logout.stdout)")
        let after = try await world.rampart(["status", "--user", "demo"])
        #expect(after.stdout.contains("state:       locked") && after.stdout.contains("MainKey:     none"), "\(after.stdout)")
        #expect(try await world.rampart(["list", "--user", "demo"]).status == 6)
    }

    /// Trust-model row **secure hardware (high)**: `rampart protect --hardware` seals the MainKey
    /// to a TPM 2.0 (a private swtpm started with the project's own service script); commands
    /// then open it through the TPM without a PIN, and with the TPM gone the account is not
    /// readable from the copied keychain alone.
    @Test func protectWithTheHardwareOpensThroughTheTPMAndNotWithoutIt() async throws {
        let world = try EndToEndWorld()
        let server = try await world.startServer()
        defer { server.stopInBackground() }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/services/swtpm.sh")
        let state = world.root.appendingPathComponent("swtpm").path
        let started = try await Self.shell("RAMPART_SWTPM_DIR='\(state)' RAMPART_SWTPM_PORT=2421; export RAMPART_SWTPM_DIR RAMPART_SWTPM_PORT; "
                                     + "source '\(script.path)'; echo \"$RAMPART_TPM_TCTI\"")
        world.folder.runsAtEnd(CLITool(path: URL(fileURLWithPath: "/bin/bash")), [script.path, "stop", state])
        let tcti = started.trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(tcti.hasPrefix("swtpm:"), "swtpm did not start (apt-get install swtpm swtpm-tools): \(started)")
        let info = world.serverData.appendingPathComponent(EmbeddedServer.infoFileName).path
        let demo = DemoAccounts.demo
        let login = try await world.login(demo, user: "demo", serverInfo: info)
        #expect(login.status == 0, "\(login.stderr)")

        var env = world.environment
        env["RAMPART_TPM_TCTI"] = tcti
        let protect = try await CLITool.rampart.run(["protect", "--user", "demo", "--hardware"], environment: env)
        #expect(protect.status == 0, "\(protect.stderr)")
        #expect(protect.stdout.contains("secure hardware"), "\(protect.stdout)")
        let status = try await CLITool.rampartDev.run(["key", "status", "--user", "demo"], environment: env)
        #expect(status.stdout.contains("hardware"), "\(status.stdout)")
        #expect(!status.stdout.contains("protectors:        none"), "\(status.stdout)")
        let sync = try await CLITool.rampart.run(["sync", "--user", "demo"], environment: env)
        #expect(sync.status == 0, "\(sync.stderr)")
        let inbox = try await CLITool.rampart.run(["list", "--user", "demo"], environment: env)
        #expect(inbox.status == 0 && inbox.stdout.contains("Northwind"), "\(inbox.stderr)")

        // The TPM stops (another machine, a removed chip): the keychain copy alone opens nothing.
        _ = try await Self.shell("bash '\(script.path)' stop '\(state)'")
        let without = try await CLITool.rampart.run(["list", "--user", "demo"], environment: env)
        #expect(without.status != 0, "\(without.stdout)")
        #expect(!without.stdout.contains("Northwind"))
    }

    /// Runs a bash command line; its standard output.
    static func shell(_ command: String) async throws -> String {
        try await CLITool(path: URL(fileURLWithPath: "/bin/bash")).run(["-c", command]).stdout
    }

    @Test func aPinMismatchIsAnAlertAndCutsTheConnection() async throws {
        let world = try EndToEndWorld()
        let server = try await world.startServer()
        defer { server.stopInBackground() }
        let ca = world.root.appendingPathComponent("ca.pem")
        try server.info.certificatePEM.write(to: ca, atomically: true, encoding: .utf8)
        let wrongPins = ["other live key", "other backup key"].map { Data(SHA256.hash(data: Data($0.utf8))).base64EncodedString() }
        let result = try await world.rampart(["login", "--user", "demo", "--url", server.baseURL.absoluteString,
                                        "--pin", wrongPins[0], "--pin", wrongPins[1], "--ca", ca.path,
                                        "--username", "demo", "--password-stdin", "--mailbox-password-stdin"],
                                       stdin: "\(DemoAccounts.demo.loginPassword)\n\(DemoAccounts.demo.mailboxPassword)\n")
        #expect(result.status == 8, "\(result.stderr)")
        #expect(result.stderr.contains("ALERT"))
        #expect(try await world.rampartDev(["key", "status", "--user", "demo"]).stdout.contains("MainKey:           none"))
        // The right TLS pins but a modulus key fingerprint that is not the server's: SRP refuses the
        // modulus (exit 8) and nothing is stored.
        let modulusKey = world.root.appendingPathComponent("modulus.asc")
        try (server.info.modulusPublicKey ?? "").write(to: modulusKey, atomically: true, encoding: .utf8)
        let otherModulusKey = try await world.rampart(["login", "--user", "demo", "--url", server.baseURL.absoluteString,
                                                 "--pin", server.pins[0], "--pin", server.pins[1], "--ca", ca.path,
                                                 "--modulus-key", modulusKey.path, "--modulus-fingerprint", String(repeating: "AB", count: 20),
                                                 "--username", "demo", "--password-stdin", "--mailbox-password-stdin"],
                                                stdin: "\(DemoAccounts.demo.loginPassword)\n\(DemoAccounts.demo.mailboxPassword)\n")
        #expect(otherModulusKey.status == 8, "\(otherModulusKey.stderr)")
        #expect(try await world.rampartDev(["key", "status", "--user", "demo"]).stdout.contains("MainKey:           none"))
        // With the right pins and modulus key (given by hand) the same login works.
        let good = try await world.rampart(["login", "--user", "demo", "--url", server.baseURL.absoluteString,
                                      "--pin", server.pins[0], "--pin", server.pins[1], "--ca", ca.path,
                                      "--modulus-key", modulusKey.path, "--modulus-fingerprint", server.info.modulusKeyFingerprint ?? "",
                                      "--username", "demo", "--password-stdin", "--mailbox-password-stdin"],
                                     stdin: "\(DemoAccounts.demo.loginPassword)\n\(DemoAccounts.demo.mailboxPassword)\n")
        #expect(good.status == 0, "\(good.stderr)")

        // Protector changes: none → PIN → another PIN → none.
        #expect(try await world.rampart(["protect", "--user", "demo", "--pin", "--pin-stdin"], stdin: "246802\n").status == 0)
        let change = try await world.rampart(["protect", "--user", "demo", "--pin", "--pin-stdin"], stdin: "246802\n135799\n")
        #expect(change.status == 0, "\(change.stderr)")
        #expect(try await world.rampart(["sync", "--user", "demo", "--pin-stdin"], stdin: "246802\n").status == 4)
        #expect(try await world.rampart(["sync", "--user", "demo", "--pin-stdin"], stdin: "135799\n").status == 0)
        let none = try await world.rampart(["protect", "--user", "demo", "--none", "--pin-stdin"], stdin: "135799\n")
        #expect(none.status == 0, "\(none.stderr)")
        #expect(try await world.rampart(["list", "--user", "demo"]).stdout.contains("Northwind"))
        // A TPM that does not answer: a clear failure, and the MainKey stays as it was.
        var noTPM = world.environment
        noTPM["RAMPART_TPM_TCTI"] = "swtpm:host=127.0.0.1,port=9"
        let hardware = try await CLITool.rampart.run(["protect", "--user", "demo", "--hardware"], environment: noTPM)
        #expect(hardware.status != 0 && hardware.stderr.contains("TPM"), "\(hardware.stderr)")
        #expect(try await world.rampart(["list", "--user", "demo"]).stdout.contains("Northwind"))
    }

    @Test func anExpiredSessionIsRefreshedOnceThenReportedAsExpired() async throws {
        let world = try EndToEndWorld()
        let clock = ManualClock(now: Date(), monotonicNanoseconds: 1_000_000_000)
        let server = try await EmbeddedServer.start(configuration: EmbeddedServerConfiguration(
            dataDirectory: world.serverData, port: 0, clock: clock, accessTokenLifetime: 60, refreshTokenLifetime: 600, threads: 2))
        let info = world.serverData.appendingPathComponent(EmbeddedServer.infoFileName).path
        let login = try await world.rampart(["login", "--user", "demo", "--server-info", info, "--username", "demo",
                                       "--password-stdin", "--mailbox-password-stdin"],
                                      stdin: "\(DemoAccounts.demo.loginPassword)\n\(DemoAccounts.demo.mailboxPassword)\n")
        #expect(login.status == 0, "\(login.stderr)")
        clock.advance(by: 120)   // the access token expired; the refresh token is valid
        let refreshed = try await world.rampart(["sync", "--user", "demo"])
        #expect(refreshed.status == 0, "\(refreshed.stderr)")
        clock.advance(by: 120)   // again: works only if the rotated refresh token was sealed back
        let again = try await world.rampart(["sync", "--user", "demo"])
        #expect(again.status == 0, "\(again.stderr)")
        clock.advance(by: 3600)  // both expired
        let expired = try await world.rampart(["sync", "--user", "demo"])
        #expect(expired.status == 9, "\(expired.stderr)")
        #expect(expired.stderr.contains("session expired"))
        // Local data stays readable; logout still erases everything even though the server refuses.
        #expect(try await world.rampart(["list", "--user", "demo"]).status == 0)
        let logout = try await world.rampart(["logout", "--user", "demo"])
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(logout.stderr.contains("the server session may still be open"))
        #expect(try await world.rampartDev(["key", "status", "--user", "demo"]).stdout.contains("MainKey:           none"))
        await server.stop()
    }
}
