import Foundation
import RampartServerTestSupport
import RampartTestSupport
import Testing

/// `rampart bridge` over a real `rampart server`, with the account unlocked in the agent, and real
/// mail programs against it: isync's mbsync, Python's imaplib (scripts/bridge/bridge_clients.py),
/// swaks, neomutt in tmux. Every program runs as a child process on a thread of its own.
@Suite(.serialized) struct BridgeEndToEndTests {
    static let script = BuiltExecutable.packageRoot.appendingPathComponent("scripts/bridge/bridge_clients.py").path

    /// One account on a real server with its bridge: what each phase needs.
    final class Setup: @unchecked Sendable {
        let home: TemporaryHome
        let server: ServerProcess
        var bridge: ChildProcess?
        var imapPort = 0, smtpPort = 0
        var username = "", password = ""
        var certificate: String { home.child("home/bridge/demo/certificate.pem").path }
        var rampart: CLITool { .rampart }
        var account: [String] { ["--home", home.child("home").path, "--user", "demo"] }

        init() async throws {
            home = try TemporaryHome("bridge", shortPath: true)
            server = try await ServerProcess.start(data: home.child("server"))
            home.stopsAgentAtEnd()
            let login = try await rampart.runOnThread(account + ["login", "--server-info", server.infoFile.path, "--username", "demo",
                                                                 "--password-stdin", "--mailbox-password-stdin"],
                                                      stdin: "demo-login-password\ndemo-mailbox-password\n")
            try #require(login.status == 0, "\(login.stdout)\n\(login.stderr)")
            let unlock = try await rampart.runOnThread(account + ["unlock"])
            try #require(unlock.status == 0, "\(unlock.stdout)\n\(unlock.stderr)")
        }

        /// `rampart bridge start --foreground` on free ports; waits for its first line.
        func startBridge() async throws {
            let child = try rampart.spawn(account + ["bridge", "start", "--foreground", "--imap-port", "0", "--smtp-port", "0"])
            bridge = child
            let started = await child.waitForLines(timeout: .seconds(120)) { $0.contains { $0.hasPrefix("IMAP 127.0.0.1:") } }
            try #require(started, "bridge: \(child.stdout)\n\(child.stderr)")
            let info = try await rampart.runOnThread(account + ["bridge", "info", "--json"])
            try #require(info.status == 0, "\(info.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: info.output) as? [String: Any])
            #expect(Set(json.keys) == ["imapPort", "smtpPort", "username", "password", "certificateSHA256"])
            imapPort = try #require(json["imapPort"] as? Int)
            smtpPort = try #require(json["smtpPort"] as? Int)
            username = try #require(json["username"] as? String)
            password = try #require(json["password"] as? String)
            #expect(username == "demo@rampart.test")
            #expect((json["certificateSHA256"] as? String)?.count == 64)
            #expect(child.lines.first?.contains(try #require(json["certificateSHA256"] as? String)) == true)
        }

        func stopBridge() {
            bridge?.kill(SIGTERM)
            bridge = nil
        }

        /// `rampart server deliver` of `message` (as an MTA hands mail over).
        func deliver(_ message: Data) async throws {
            let result = try await rampart.run(["server", "deliver", "--data", server.dataDirectory.path], input: message)
            try #require(result.status == 0, "\(result.stderr)")
        }

        func python(_ mode: String, _ extra: [String] = []) async throws -> CLIResult {
            let python = try #require(ProjectPython.executable, "No project Python: run scripts/setup.sh or set RAMPART_PYTHON")
            return try await CLITool(path: URL(fileURLWithPath: python))
                .runOnThread([BridgeEndToEndTests.script, mode, String(imapPort), username, password, certificate] + extra, timeout: .seconds(180))
        }

        deinit {
            bridge?.kill(SIGKILL)
            server.stopInBackground()
            home.remove()
        }
    }

    static func message(subject: String, body: String = "Caf\u{e9} at ten?") -> Data {
        Data(("From: Zoe <zoe@elsewhere.example>\r\nTo: demo@rampart.test\r\nSubject: \(subject)\r\n"
            + "Date: Sat, 28 Nov 2026 10:00:00 +0000\r\nMessage-ID: <\(UUID().uuidString)@elsewhere.example>\r\n"
            + "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n\(body)\r\n").utf8)
    }

    /// mbsync mirrors the account into a Maildir with the delivered bytes (CRLF stored as LF and
    /// the X-TUID line mbsync adds aside); a second run changes nothing; after a bridge restart
    /// the UIDs and UIDVALIDITY are the same, so a third run changes nothing either.
    @Test func mbsyncMirrorsExactlyAndUIDsSurviveARestart() async throws {
        let setup = try await Setup()
        let delivered = Self.message(subject: "mbsync exact")
        try await setup.deliver(delivered)
        try await setup.startBridge()
        let mail = try setup.home.folder("mbsync/mail")
        let rc = setup.home.child("mbsync/rc")
        func writeConfig() throws {
            try MbsyncConfiguration(port: setup.imapPort, user: setup.username, password: setup.password,
                                    certificate: setup.certificate, maildir: mail).write(to: rc)
        }
        try writeConfig()
        let mbsync = CLITool(path: URL(fileURLWithPath: "/usr/bin/mbsync"), environment: ["HOME": setup.home.path])
        let first = try await mbsync.runOnThread(["-c", rc.path, "-a"], timeout: .seconds(120))
        try #require(first.status == 0, "\(first.stdout)\n\(first.stderr)")
        let files = setup.home.regularFiles().filter { $0.hasPrefix("/mbsync/mail/") && !$0.contains(".mbsync") && !$0.contains(".uidvalidity") }
        #expect(files.filter { $0.hasPrefix("/mbsync/mail/INBOX/") }.count >= 6, "\(files)")
        #expect(files.contains { $0.hasPrefix("/mbsync/mail/All Mail/") })
        let copy = try #require(files.first { path in
            (try? String(contentsOf: setup.home.child(String(path.dropFirst())), encoding: .utf8))?.contains("Subject: mbsync exact") == true
                && path.hasPrefix("/mbsync/mail/INBOX/")
        })
        let stored = try Data(contentsOf: setup.home.child(String(copy.dropFirst())))
        let withoutTUID = String(decoding: stored, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("X-TUID: ") }.joined(separator: "\n")
        #expect(Data(withoutTUID.utf8) == Data(String(decoding: delivered, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n").utf8))

        let second = try await mbsync.runOnThread(["-c", rc.path, "-a"], timeout: .seconds(120))
        #expect(second.status == 0, "\(second.stdout)\n\(second.stderr)")
        let afterSecond = setup.home.regularFiles().filter { $0.hasPrefix("/mbsync/mail/") && !$0.contains(".mbsync") }
        #expect(Set(afterSecond) == Set(setup.home.regularFiles().filter { $0.hasPrefix("/mbsync/mail/") && !$0.contains(".mbsync") }))
        #expect(afterSecond.filter { !$0.contains(".uidvalidity") }.sorted() == files.sorted())

        setup.stopBridge()
        try await setup.startBridge()
        try writeConfig()
        let third = try await mbsync.runOnThread(["-c", rc.path, "-a"], timeout: .seconds(120))
        #expect(third.status == 0, "\(third.stdout)\n\(third.stderr)")
        #expect(!third.stderr.contains("UIDVALIDITY"), "\(third.stderr)")
        let afterRestart = setup.home.regularFiles().filter { $0.hasPrefix("/mbsync/mail/") && !$0.contains(".mbsync") && !$0.contains(".uidvalidity") }
        #expect(afterRestart.sorted() == files.sorted())
        setup.stopBridge()
    }

    /// The mailbox rules through imaplib (COPY adds a label, MOVE moves, EXPUNGE in a label / a
    /// folder / Trash, APPEND, CREATE, BODY[] exact, UID SEARCH NOT DELETED); new mail reaches an
    /// IDLE client within 2 s; `rampart lock` sends BYE [UNAVAILABLE] to an IDLE session and
    /// refuses logins with NO [UNAVAILABLE].
    @Test func imaplibRulesIdleAndLock() async throws {
        let setup = try await Setup()
        let rules = setup.home.child("rules.eml")
        let delivered = Self.message(subject: "bridge rules")
        try delivered.write(to: rules)
        try await setup.deliver(delivered)
        try await setup.startBridge()
        let result = try await setup.python("rules", [rules.path])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")

        let next = setup.home.child("idle.eml")
        try Self.message(subject: "while idling").write(to: next)
        let deliver = "\(try CLITool.rampart.url().path) server deliver --data \(setup.server.dataDirectory.path) < \(next.path)"
        let idle = try await setup.python("idle", ["/bin/sh", "-c", deliver])
        #expect(idle.status == 0, "\(idle.stdout)\n\(idle.stderr)")
        #expect(idle.stdout.contains("delay "), "\(idle.stdout)")

        let lock = [try CLITool.rampart.url().path] + setup.account + ["lock"]
        let bye = try await setup.python("bye", lock)
        #expect(bye.status == 0, "\(bye.stdout)\n\(bye.stderr)")
        let locked = try await setup.python("locked")
        #expect(locked.status == 0, "\(locked.stdout)\n\(locked.stderr)")
        setup.stopBridge()
    }

    /// Mail written in Rampart has no original bytes: its MIME rendering in Sent carries every
    /// attachment (`rampart send --attach`, one with a long non-ASCII name, one text file), with
    /// its name and bytes exact as Python's email package reads them, RFC822.SIZE the length of
    /// BODY[], and BODYSTRUCTURE's parts the sections of those bytes.
    @Test func sentMailCarriesItsAttachments() async throws {
        let setup = try await Setup()
        try await setup.startBridge()
        var random = SystemRandomNumberGenerator()
        let pdf = setup.home.child("R\u{e9}sum\u{e9} \u{2014} \u{e9}t\u{e9} 2026, version d\u{e9}finitive (sign\u{e9}e).pdf")
        try Data((0..<70_000).map { _ in UInt8.random(in: 0...255, using: &random) }).write(to: pdf)
        let notes = setup.home.child("notes.txt")
        try Data("line one\r\nline two, caf\u{e9}\nno newline at the end".utf8).write(to: notes)
        let subject = "Attachments written in Rampart \(UUID().uuidString.prefix(8))"
        let send = try await setup.rampart.runOnThread(setup.account + ["send", "--to", "alice@rampart.test", "--subject", subject,
                                                                        "--attach", pdf.path, "--attach", notes.path],
                                                       stdin: "Both files are attached.\n")
        try #require(send.status == 0, "\(send.stdout)\n\(send.stderr)")
        let result = try await setup.python("sentattachments", [subject, pdf.path, notes.path])
        let bridgeLog = "\(setup.bridge?.stdout ?? "")\n\(setup.bridge?.stderr ?? "")"
        #expect(result.status == 0 && result.stdout.contains("ok sentattachments"), "\(result.stdout)\n\(result.stderr)\nbridge: \(bridgeLog)")
        // Each copy is made once, with one attachment vault (vaults opened per message had their
        // index writes wait on each other, and the sync failed until they no longer collided).
        #expect(!bridgeLog.contains("sync failed"), "\(bridgeLog)")
        setup.stopBridge()
    }

    /// swaks submits with STARTTLS and AUTH PLAIN to another account of the server, which reads it
    /// with a verified signature; a From that is not the user's gets 550; the Sent copy is one.
    @Test func swaksSendsEndToEndAndForeignSendersAreRefused() async throws {
        let setup = try await Setup()
        try await setup.startBridge()
        let swaks = CLITool(path: URL(fileURLWithPath: "/usr/bin/swaks"))
        let messageID = "<swaks-\(UUID().uuidString)@rampart.test>"
        func send(from: String, to: String, subject: String, id: String? = nil) async throws -> CLIResult {
            try await swaks.runOnThread(["--server", "127.0.0.1:\(setup.smtpPort)", "--tls", "--tls-verify", "--tls-ca-path", setup.certificate,
                                         "--auth", "PLAIN", "--auth-user", setup.username, "--auth-password", setup.password,
                                         "--from", from, "--to", to, "--header", "Subject: \(subject)",
                                         "--body", "Hello from swaks", "--timeout", "60"] + (id.map { ["--header", "Message-Id: \($0)"] } ?? []),
                                        timeout: .seconds(120))
        }
        let sent = try await send(from: setup.username, to: "alice@rampart.test", subject: "swaks to alice", id: messageID)
        // The log names recipients without end-to-end encryption (none here).
        #expect(sent.status == 0, "\(sent.stdout)\n\(sent.stderr)")
        #expect(sent.stdout.contains("250 2.0.0"), "\(sent.stdout)")
        let outside = try await send(from: setup.username, to: "zoe@elsewhere.example", subject: "swaks outside")
        #expect(outside.status == 0, "\(outside.stdout)")
        #expect(outside.stdout.contains("NOT end-to-end encrypted: zoe@elsewhere.example"), "\(outside.stdout)")
        let foreign = try await send(from: "mallory@elsewhere.example", to: "alice@rampart.test", subject: "forged")
        #expect(foreign.stdout.contains("550 5.7.1"), "\(foreign.stdout)")

        let alice = try TemporaryHome("bridge-alice", shortPath: true)
        alice.stopsAgentAtEnd()
        let aliceAccount = ["--home", alice.path, "--user", "alice"]
        let login = try await setup.rampart.runOnThread(aliceAccount + ["login", "--server-info", setup.server.infoFile.path, "--username", "alice",
                                                                         "--password-stdin", "--mailbox-password-stdin"],
                                                        stdin: "alice-login-password\nalice-mailbox-password\n")
        try #require(login.status == 0, "\(login.stderr)")
        _ = try await setup.rampart.runOnThread(aliceAccount + ["sync"])
        let list = try await setup.rampart.runOnThread(aliceAccount + ["list"])
        let line = try #require(list.lines.first { $0.contains("swaks to alice") }, "\(list.stdout)")
        let id = try #require(line.split(separator: " ").map(String.init).first { $0.count > 20 })
        let read = try await setup.rampart.runOnThread(aliceAccount + ["read", id])
        #expect(read.stdout.contains("Signature: verified"), "\(read.stdout)\n\(read.stderr)")
        #expect(read.stdout.contains("Hello from swaks"), "\(read.stdout)")

        // One Sent copy per message, even when the mail program appends its own.
        let sentBox = try await setup.python("sentcount", ["swaks to alice", messageID])
        #expect(sentBox.status == 0, "\(sentBox.stdout)\n\(sentBox.stderr)")
        setup.stopBridge()
        alice.remove()
    }
}

/// neomutt (Debian) driven in tmux against the bridge, as a person uses it: open INBOX, read a
/// message, reply (sent through the bridge's SMTP, its Fcc to Sent kept once), save it to Archive
/// and sync (neomutt's COPY then EXPUNGE: the message ends in Archive, not in Trash).
@Suite(.serialized) struct NeomuttTests {
    /// One tmux session running neomutt; its screen read with `capture-pane`.
    /// A tmux server of its own (socket in the test's home), so no other tmux is touched.
    struct Screen {
        let name = "bridge"
        let socket: String
        let tmux = CLITool(path: URL(fileURLWithPath: "/usr/bin/tmux"))

        func start(_ command: String) async throws {
            // The tmux server must keep no descriptor of this process open (the runner waits for
            // the end of its pipes): bash closes every one above 2 before tmux starts.
            let script = "for fd in $(ls /proc/$$/fd); do [ \"$fd\" -gt 2 ] && eval \"exec $fd>&-\"; done; "
                + "exec /usr/bin/tmux -S \"$1\" new-session -d -s \"$2\" -x 160 -y 45 \"$3\" </dev/null >/dev/null 2>&1"
            let started = try await CLITool(path: URL(fileURLWithPath: "/bin/bash")).runOnThread(["-c", script, "sh", socket, name, command],
                                                                                           timeout: .seconds(60))
            try #require(started.status == 0, "tmux new-session: \(started.stderr)")
        }
        func keys(_ keys: String...) async throws { _ = try await tmux.runOnThread(["-S", socket, "send-keys", "-t", name] + keys, timeout: .seconds(60)) }
        func text() async throws -> String { try await tmux.runOnThread(["-S", socket, "capture-pane", "-p", "-t", name], timeout: .seconds(60)).stdout }
        /// Waits (up to 60 s) until the screen shows `wanted`; fails with the screen otherwise.
        func wait(for wanted: String, absent: Bool = false) async throws {
            let deadline = ContinuousClock.now + .seconds(60)
            var screen = ""
            while ContinuousClock.now < deadline {
                screen = try await text()
                if screen.contains(wanted) != absent { return }
                try await Task.sleep(for: .milliseconds(200))
            }
            Issue.record("the screen \(absent ? "still shows" : "does not show") \"\(wanted)\":\n\(screen)")
            throw CancellationError()
        }
        func stop() async { _ = try? await tmux.runOnThread(["-S", socket, "kill-server"], timeout: .seconds(60)) }
    }

    @Test func neomuttOpensReadsRepliesAndMovesToArchive() async throws {
        let setup = try await BridgeEndToEndTests.Setup()
        try await setup.startBridge()
        let editor = setup.home.child("editor.sh"), muttrc = setup.home.child("muttrc")
        try "#!/bin/sh\n{ printf 'Reply body from neomutt\\n\\n'; cat \"$1\"; } > \"$1.new\" && mv \"$1.new\" \"$1\"\n"
            .write(to: editor, atomically: true, encoding: .utf8)
        chmod(editor.path, 0o700)
        try """
            set folder="imap://demo%40rampart.test@127.0.0.1:\(setup.imapPort)/" imap_pass="\(setup.password)"
            set spoolfile="+INBOX" record="+Sent" postponed="+Drafts"
            set ssl_starttls=yes ssl_force_tls=yes certificate_file="\(setup.certificate)"
            set smtp_url="smtp://demo%40rampart.test@127.0.0.1:\(setup.smtpPort)/" smtp_pass="\(setup.password)"
            set from="demo@rampart.test" real_name="Dana Demo" editor="\(editor.path)"
            set fast_reply=yes include=yes askcc=no confirm_append=no delete=yes move=no wait_key=no sleep_time=0
            set header_cache="" message_cachedir="" sort=date

            """.write(to: muttrc, atomically: true, encoding: .utf8)
        let screen = Screen(socket: setup.home.child("tmux.sock").path)
        defer { Task { await screen.stop() } }
        try await screen.start("HOME=\(setup.home.path) /usr/bin/neomutt -n -F \(muttrc.path)")
        try await screen.wait(for: "Lunch on Thursday?")
        let row = try #require(try await screen.text().split(separator: "\n").first { $0.contains("Lunch on Thursday?") })
        let number = try #require(row.split(separator: " ").first.map(String.init))
        try await screen.keys(number, "Enter")          // jump to the message
        try await screen.keys("Enter")                  // open it
        try await screen.wait(for: "Are you free for lunch on Thursday?")
        try await screen.keys("r")                      // reply: the editor writes it, then the compose menu
        try await screen.wait(for: "Re: Lunch on Thursday?")
        try await screen.wait(for: "Send  q:Abort")
        try await screen.keys("y")
        try await screen.wait(for: "Send  q:Abort", absent: true)
        try await screen.keys("s")                      // save to Archive
        try await screen.wait(for: "Save to mailbox")
        try await screen.keys("C-u", "=Archive", "Enter")
        try await screen.keys("i")
        try await screen.wait(for: "Del:1")
        try await screen.keys("$")                      // sync: neomutt expunges INBOX
        try await screen.wait(for: "Lunch on Thursday?", absent: true)
        try await screen.keys("q")
        await screen.stop()
        let placed = try await setup.python("neomutt")
        #expect(placed.status == 0, "\(placed.stdout)\n\(placed.stderr)")
        setup.stopBridge()
    }
}
