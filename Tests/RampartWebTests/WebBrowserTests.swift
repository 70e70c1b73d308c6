import Foundation
import RampartServer
import RampartServerTestSupport
import RampartTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `rampart web` in a real browser: `rampart server` and `rampart web` in child processes, the
/// demo account logged in and PIN-protected, the project's XSS corpus and a remote-content probe
/// delivered as mail, then Debian's chromium driven by Playwright for Python
/// (`scripts/web/browser_flow.py`, `scripts/deps/web.pip` and `web.apt`; no browser download).
///
/// Each check of the script is one expectation here, and the list of checks must be complete,
/// so a check that stops running fails the test. Screenshots of every page go to
/// `.build/test-output/web/`.
@Suite("rampart web in chromium", .serialized)
struct WebBrowserTests {
    static let pin = "482913"
    static let sentSubject = "Hello from the web app"
    static let checks = [
        "no-token-401", "wrong-token-401", "dns-rebinding-403", "token-signs-in", "cookie-httponly-samesite-strict", "app-headers",
        "used-token-401", "wrong-cookie-401", "unlock-with-pin", "cross-origin-post-403", "cross-origin-post-changed-nothing",
        "missing-csrf-403", "mailbox-lists", "mailbox-labels-unread", "mailbox-label-unread-exact", "mailbox-pagination", "search", "plain-get-does-not-mark-read", "viewer-sandbox-without-scripts",
        "viewer-csp-by-header", "xss-no-script-ran", "xss-no-request-left-the-app", "opening-in-the-app-marks-read", "viewer-lockdown-until-sanitized",
        "remote-blocked-before-consent", "remote-loads-after-consent", "remote-fetched-by-the-backend", "remote-trackers-still-blocked",
        "remote-token-bound-to-its-rendering", "cid-image-shows", "cid-image-from-its-rendering-path", "cid-token-bound-to-its-rendering",
        "trusted-sender-verified-loads",
        "trusted-sender-unverified-stays-blocked", "block-all-wins", "block-all-stored-read-honours-it", "attachment-download",
        "composer-csp-no-remote", "composer-quoted-sanitized", "composer-names-recipients-without-e2ee",
        "composer-shows-only-the-latest-recipients", "compose-and-send",
        "drive-upload-download", "drive-rename-delete", "drive-folders", "settings-and-account-pages", "account-sessions-end-one", "every-control-labelled", "keyboard-opens-a-message", "lock-empties-open-page",
        "unlock-again",
        "no-dialog-at-all",
    ]

    /// Every vector of MailSafety's XSS corpus in one HTML body (`{NL}` and friends decoded).
    static func xssMail() throws -> String {
        let corpus = BuiltExecutable.packageRoot.appendingPathComponent("Tests/MailSafetyTests/Resources/xss-vectors.txt")
        let replacements = ["{NL}": "\n", "{TAB}": "\t", "{CR}": "\r", "{NUL}": "\u{0}", "{FF}": "\u{0C}"]
        var vectors: [String] = []
        for line in try String(contentsOf: corpus, encoding: .utf8).split(separator: "\n") where !line.hasPrefix("#") && !line.isEmpty {
            vectors.append(replacements.reduce(String(line)) { $0.replacingOccurrences(of: $1.key, with: $1.value) })
        }
        #expect(vectors.count > 400)
        let html = "<html><body>" + vectors.joined(separator: "\n<hr>\n") + "</body></html>"
        return "From: Mallory <mallory@evil.example>\r\nTo: demo@rampart.test\r\nSubject: XSS vectors\r\nMIME-Version: 1.0\r\n"
            + "Content-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n"
            + Data(html.utf8).base64EncodedString(options: [.lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed]) + "\r\n"
    }

    /// Remote images (an image and a CSS background on the probe server) and a known tracker.
    static func remoteMail(_ probe: String) -> String {
        "From: Probe <probe@remote-probe.example>\r\nTo: demo@rampart.test\r\nSubject: Remote content probe\r\n"
        + "MIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
        + #"<p>Remote picture: <img src="\#(probe)/picture.png?utm_source=mail" alt="probe"></p>"#
        + #"<p style="background:url(\#(probe)/bg.png)">background</p>"#
        + #"<img src="https://t.hubspotemail.net/e1t/o/pixel.gif" width="1" height="1">"#
        + #"<p><a href="https://remote-probe.example/link">a link</a></p>"# + "\r\n"
    }

    /// An HTML body with an embedded (`cid:`) picture: a 3 x 2 PNG in the same multipart/related.
    static let cidMail = "From: Carol <carol@pictures.example>\r\nTo: demo@rampart.test\r\nSubject: Embedded picture\r\nMIME-Version: 1.0\r\n"
        + "Content-Type: multipart/related; boundary=\"rel\"\r\n\r\n--rel\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
        + #"<p>Our logo: <img src="cid:logo@pictures.example" alt="logo"></p>"# + "\r\n--rel\r\nContent-Type: image/png\r\n"
        + "Content-ID: <logo@pictures.example>\r\nContent-Disposition: inline; filename=\"logo.png\"\r\nContent-Transfer-Encoding: base64\r\n\r\n"
        + "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAEElEQVR4nGM4IScHQQxwFgBBAAYZPEVBlgAAAABJRU5ErkJggg==\r\n--rel--\r\n"

    @Test(.timeLimit(.minutes(15)))  // a hang guard, not a speed bound (a loaded CI run took 11 minutes)
    func theWholeAppWorksInChromiumWithoutLettingScriptsOrRequestsOut() async throws {
        let python = try #require(ProjectPython.executable, "no Python with Playwright: run scripts/setup.sh (scripts/deps/web.pip)")
        let home = try TemporaryHome("web", shortPath: true)  // it holds the agent's socket
        home.stopsAgentAtEnd()
        defer { home.remove() }
        let serverFolder = try TemporaryHome("web-server")
        defer { serverFolder.remove() }
        let serverHome = ["RAMPART_HOME": serverFolder.child("home").path]
        // The remote host of the mail: a probe server on loopback that logs what reaches it; the
        // backend may fetch from it (a lab entry), the browser must never reach it.
        let probeLog = serverFolder.child("probe.log")
        let probe = try CLITool(path: URL(fileURLWithPath: python)).spawn(
            [BuiltExecutable.packageRoot.appendingPathComponent("scripts/web/probe_server.py").path, "--port", "0", "--log", probeLog.path])
        defer { probe.kill() }
        #expect(await probe.waitForLines(timeout: .seconds(20)) { $0.first?.hasPrefix("port ") == true }, "\(probe.stderr)")
        let probePort = try #require(probe.lines.first.flatMap { Int($0.dropFirst(5)) })
        let probeBase = "http://127.0.0.1:\(probePort)"
        let server = try await ServerProcess.start(data: serverFolder.child("data"), arguments: ["--proxy-allow-local", "127.0.0.1:\(probePort)"],
                                                   environment: serverHome)
        defer { server.stopInBackground() }
        let environment = ["RAMPART_HOME": home.path, "RAMPART_PIN_KDF_LOGN": "15", "RAMPART_USER": "demo"]
        let rampart = CLITool.rampart.with(environment: environment)

        for (account, user) in [(DemoAccounts.demo, "demo"), (DemoAccounts.alice, "alice")] {
            let login = try await rampart.runOnThread(["login", "--user", user, "--server-info", server.infoFile.path, "--username", account.username,
                                                       "--password-stdin", "--mailbox-password-stdin"],
                                                      stdin: "\(account.loginPassword)\n\(account.mailboxPassword)\n")
            #expect(login.status == 0, "\(login.stderr)")
        }
        // 30 unread messages of one and the same second under a label of their own: two pages of
        // the mailbox, whose end falls inside that second.
        let maildir = serverFolder.child("bulk")
        for sub in ["cur", "new", "tmp"] { try FileManager.default.createDirectory(at: maildir.appendingPathComponent(sub), withIntermediateDirectories: true) }
        for n in 1...30 {
            let mail = "From: Bulk Sender <bulk@pages.example>\r\nTo: demo@rampart.test\r\nSubject: Bulk message \(n)\r\n"
                + "Date: Sat, 28 Nov 2026 10:00:00 +0000\r\nMessage-ID: <bulk-\(n)@pages.example>\r\n\r\nBody \(n)\r\n"
            try Data(mail.utf8).write(to: maildir.appendingPathComponent("new/\(1_700_000_000 + n).bulk\(n).host"))
        }
        let imported = try await rampart.runOnThread(["import", maildir.path, "--label", "Bulk"])
        #expect(imported.status == 0, "\(imported.stderr)")
        // A second device of demo's: the account page lists its session and ends it.
        let second = try TemporaryHome("web-second", shortPath: true)
        second.stopsAgentAtEnd()
        defer { second.remove() }
        let secondLogin = try await rampart.runOnThread(["--home", second.path, "login", "--server-info", server.infoFile.path, "--username",
                                                         DemoAccounts.demo.username, "--password-stdin", "--mailbox-password-stdin"],
                                                        stdin: "\(DemoAccounts.demo.loginPassword)\n\(DemoAccounts.demo.mailboxPassword)\n")
        #expect(secondLogin.status == 0, "\(secondLogin.stderr)")
        #expect(try await rampart.runOnThread(["--home", second.path, "sync"]).status == 0)
        let protect = try await rampart.runOnThread(["protect", "--pin", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(protect.status == 0, "\(protect.stderr)")
        // Alice's signed mail with a remote image, and one that only claims to be from her.
        let signed = try await rampart.runOnThread(["send", "--user", "alice", "--to", "demo@rampart.test", "--subject", "Signed remote"],
                                                   stdin: #"<p>From Alice: <img src="\#(probeBase)/trusted.png" alt="a"></p>"#)
        #expect(signed.status == 0, "\(signed.stderr)")
        let forged = "From: Alice Example <alice@rampart.test>\r\nTo: demo@rampart.test\r\nSubject: Forged from Alice\r\nMIME-Version: 1.0\r\n"
            + "Content-Type: text/html; charset=utf-8\r\n\r\n" + #"<p>Not Alice: <img src="\#(probeBase)/forged.png" alt="f"></p>"# + "\r\n"
        for mail in [try Self.xssMail(), Self.remoteMail(probeBase), forged, Self.cidMail] {
            let delivered = try await CLITool.rampart.runOnThread(["server", "deliver", "--data", server.dataDirectory.path], stdin: mail,
                                                                  environment: serverHome)
            #expect(delivered.status == 0, "\(delivered.stderr)")
        }

        // The first line of standard output is the one-time URL and nothing else; the same URL is in a 0600 file.
        let web = try rampart.spawn(["web", "--no-browser", "--port", "0"])
        defer { web.kill(SIGTERM) }
        #expect(await web.waitForLines(timeout: .seconds(60)) { !$0.isEmpty }, "\(web.stderr)")
        let url = try #require(web.lines.first)
        let pattern = #/^http:\/\/127\.0\.0\.1:([0-9]+)\/login\?token=[A-Za-z0-9_-]{43}$/#
        let port = try #require(url.wholeMatch(of: pattern)?.output.1, "first line: \(url)")
        let opener = home.child("web/open-\(port).html")
        #expect(try String(contentsOf: opener, encoding: .utf8).contains(url))
        let mode = try FileManager.default.attributesOfItem(atPath: opener.path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)

        let output = BuiltExecutable.packageRoot.appendingPathComponent(".build/test-output/web", isDirectory: true)
        try? FileManager.default.removeItem(at: output)
        let script = BuiltExecutable.packageRoot.appendingPathComponent("scripts/web/browser_flow.py").path
        let started = ContinuousClock.now
        let run = try await CLITool(path: URL(fileURLWithPath: python)).runOnThread(
            [script, "--url", url, "--out", output.path, "--rampart", try CLITool.rampart.url().path, "--pin", Self.pin,
             "--sent-subject", Self.sentSubject, "--probe-log", probeLog.path, "--probe-port", "\(probePort)"],
            environment: environment.merging(["PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"]) { $1 }, timeout: .seconds(600))
        let elapsed = ContinuousClock.now - started
        var seen: [String] = []
        for line in run.lines {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let name = object["check"] as? String else { continue }
            seen.append(name)
            if ["drive-upload-download", "lock-empties-open-page"].contains(name) { print("rampart web in chromium: \(name): \(object["detail"] ?? "")") }
            #expect(object["ok"] as? Bool == true, "\(name): \(object["detail"] ?? "")")
        }
        // As root the script also shows that another uid (`nobody`, through setpriv) holding the cookie is refused.
        let expected = getuid() == 0
            ? Self.checks.flatMap { $0 == "unlock-with-pin" ? [$0, "other-local-user-403"] : [$0] } : Self.checks
        #expect(run.status == 0 && seen == expected, "ran \(seen.count) of \(expected.count) checks; stderr: \(run.stderr.suffix(3000))")
        print("rampart web in chromium: the browser run took \(elapsed)")
        for page in ["unlock", "mailbox", "message-xss", "message-remote-blocked", "message-remote-loaded", "composer", "drive", "settings",
                     "account", "locked"] {
            #expect(FileManager.default.fileExists(atPath: output.appendingPathComponent("\(page).png").path), "no screenshot of \(page)")
        }

        // `rampart read --html` with remote content: the backend fetches it (the probe sees one more
        // request) and the file holds it as data: URIs under a data:-only CSP, so the browser that
        // opens it connects to nobody.
        let demoList = try await rampart.runOnThread(["list"])
        let remoteLine = try #require(demoList.lines.first { $0.contains("Remote content probe") }, "\(demoList.stdout)")
        let remoteID = String(remoteLine.dropFirst(3).split(separator: " ").first ?? "")
        let probed = { ((try? String(contentsOf: probeLog, encoding: .utf8)) ?? "").split(separator: "\n").count }
        let probedBefore = probed()
        let document = home.child("remote.html")
        let readHTML = try await rampart.runOnThread(["read", remoteID, "--load-remote", "--html", document.path])
        let written = (try? String(contentsOf: document, encoding: .utf8)) ?? ""
        #expect(readHTML.status == 0 && written.contains("data:image/png;base64,iVBOR") && !written.contains(probeBase)
                && written.contains("img-src data:;") && !written.contains("http:;"), "\(readHTML.stderr) \(written.suffix(600))")
        #expect(probed() >= probedBefore + 2, "the backend fetched nothing for rampart read")
        #expect(readHTML.stderr.contains("Through the backend: 2 remote resources fetched, 0 refused"), "\(readHTML.stderr)")

        // The session ended on the account page no longer works on its device.
        let ended = try await rampart.runOnThread(["--home", second.path, "sync"])
        #expect(ended.status != 0 && ended.stderr.lowercased().contains("session"), "\(ended.status) \(ended.stderr)")

        // The recipient reads what the browser sent, signed by the sender.
        #expect(try await rampart.runOnThread(["sync", "--user", "alice"]).status == 0)
        let list = try await rampart.runOnThread(["list", "--user", "alice"])
        let line = try #require(list.lines.first { $0.contains(Self.sentSubject) }, "\(list.stdout)")
        let id = String(line.dropFirst(3).split(separator: " ").first ?? "")
        let read = try await rampart.runOnThread(["read", id, "--user", "alice"])
        let text = read.stdout
        #expect(text.contains("Signature: verified") && text.contains("written in the browser") && text.contains("notes.txt"),
                "\(text) \(read.stderr)")

        // Ctrl-C: the server stops and removes its URL file.
        web.kill(SIGINT)
        #expect(await web.waitForExit(timeout: .seconds(30)))
        #expect(!FileManager.default.fileExists(atPath: opener.path))
    }
}
