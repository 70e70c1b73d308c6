import ArgumentParser
import Foundation
import RampartBenchmarks
import RampartCLIKit

#if canImport(Glibc)
import Glibc
#endif

/// `rampart-dev bench bridge`: isync's mbsync mirrors a mailbox of N messages with attachments
/// from `rampart bridge` (over a `rampart server`) and from Dovecot (Debian `dovecot-imapd`, started
/// here on a Maildir of the same messages) in the same run: full sync, incremental sync of 100 new
/// messages, the bridge's peak memory (VmHWM), and the ratios against the targets (≤ 2× Dovecot,
/// < 200 MiB). Both are synced over loopback with plain-text login and the INBOX only.
struct BridgeBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bridge",
        abstract: "mbsync from rampart bridge and from Dovecot, same messages, same run (full, incremental, memory).")

    @Option(help: "Messages in the mailbox (the issue's size: 10000).") var messages = 10_000
    @Option(name: .customLong("attachment-kib"), help: "Attachment size per message, KiB (20: about 200 MB for 10,000).") var attachmentKiB = 20
    @Option(help: "New messages for the incremental sync.") var incremental = 100
    @Flag(help: "Keep the work folder (its path is printed).") var keep = false

    func run() async throws {
        try await reportingErrors {
            let tools = AgentHostPaths()
            let work = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-bench-bridge-\(getpid())")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            chmod(work.path, 0o711)   // Dovecot's mail processes (another uid) walk into its Maildir
            defer { if !keep { try? FileManager.default.removeItem(at: work) } else { print("work folder: \(work.path)") } }
            var children: [Process] = []
            defer { children.forEach(AgentHostPaths.stop) }
            #if DEBUG
            print("warning: debug build; build with -c release for the figures that count")
            #endif

            // The same messages twice: a Maildir for the import and for Dovecot.
            let source = work.appendingPathComponent("source"), extra = work.appendingPathComponent("extra")
            var bytes = 0
            bytes += try Corpus.writeMaildir(source, count: messages, attachmentKiB: attachmentKiB, seed: 1)
            _ = try Corpus.writeMaildir(extra, count: incremental, attachmentKiB: attachmentKiB, seed: 2)
            print("rampart bench bridge — \(messages) messages, \(bytes / 1_048_576) MiB, attachments of \(attachmentKiB) KiB; +\(incremental) new")

            // rampart server + account + bridge.
            let home = work.appendingPathComponent("home"), data = work.appendingPathComponent("server")
            let account = ["--home", home.path, "--user", "demo"]
            let server = try tools.spawn(tools.rampart, ["server", "start", "--data", data.path, "--port", "0"], log: work.appendingPathComponent("server.log"))
            children.append(server)
            try tools.waitFor(file: data.appendingPathComponent("server.json"), process: server)
            try tools.run(tools.rampart, account + ["login", "--server-info", data.appendingPathComponent("server.json").path, "--username", "demo",
                                                    "--password-stdin", "--mailbox-password-stdin"], stdin: "demo-login-password\ndemo-mailbox-password\n")
            // A long import must not meet the agent's autolock (5 minutes idle by default).
            try tools.run(tools.rampart.deletingLastPathComponent().appendingPathComponent("rampart-dev"), account + ["key", "autolock", "never"])
            try tools.run(tools.rampart, account + ["unlock"])
            defer { _ = try? tools.run(tools.rampart, ["agent", "stop", "--home", home.path]) }
            let imported = try Clock.time { try tools.run(tools.rampart, account + ["import", source.path]) }
            print(String(format: "import into the account: %.1f s", imported))
            var bridge: Process?
            let copied = try Clock.time {
                let child = try tools.spawn(tools.rampart, account + ["bridge", "start", "--foreground", "--imap-port", "0", "--smtp-port", "0"],
                                            log: work.appendingPathComponent("bridge.out"))
                bridge = child
                try tools.waitFor(file: home.appendingPathComponent("bridge/demo/bridge.json"), process: child, timeout: 7_200)
            }
            guard let bridge else { return }
            children.append(bridge)
            print(String(format: "bridge start (copies every message into its sealed store): %.1f s", copied))
            let status = try JSONSerialization.jsonObject(with: Data(contentsOf: home.appendingPathComponent("bridge/demo/bridge.json"))) as? [String: Any]
            let bridgePort = status?["imapPort"] as? Int ?? 0
            let info = try tools.run(tools.rampart, account + ["bridge", "info", "--json"])
            let password = (try JSONSerialization.jsonObject(with: Data(info.utf8)) as? [String: Any])?["password"] as? String ?? ""

            // Dovecot on a Maildir of the same messages.
            let dovecot = try Dovecot(folder: work.appendingPathComponent("dovecot"), messages: source, tools: tools)
            children.append(dovecot.process)

            let mbsync = MbsyncRun(tools: tools, work: work)
            let bridgeFull = try mbsync.sync(name: "bridge", port: bridgePort, user: "demo@rampart.test", password: password)
            let dovecotFull = try mbsync.sync(name: "dovecot", port: dovecot.port, user: "bench", password: "pw")
            // 100 new messages: imported into the account (the bridge reads the event stream),
            // dropped into Dovecot's Maildir; each side synced once the server shows them.
            try tools.run(tools.rampart, account + ["import", extra.path])
            try dovecot.add(extra)
            let expected = messages + incremental
            try tools.waitForMessages(port: bridgePort, user: "demo@rampart.test", password: password, atLeast: expected)
            let bridgeIncremental = try mbsync.sync(name: "bridge", port: bridgePort, user: "demo@rampart.test", password: password)
            let dovecotIncremental = try mbsync.sync(name: "dovecot", port: dovecot.port, user: "bench", password: "pw")
            // SEARCH: on flags (nothing read), on a header and on body text (every message read:
            // the bridge decrypts its sealed copies one at a time), over curl, on both servers.
            let searches = ["NOT DELETED", "SUBJECT \"Bench message 1-\(messages / 2)\"", "BODY \"of the bridge benchmark\""]
            var searchTimes: [(String, Double, Double, Int, Int)] = []
            for key in searches {
                var hits = (0, 0)
                let ours = try Clock.time { hits.0 = try tools.search(port: bridgePort, user: "demo@rampart.test", password: password, key: key) }
                let theirs = try Clock.time { hits.1 = try tools.search(port: dovecot.port, user: "bench", password: "pw", key: key) }
                searchTimes.append((key, ours, theirs, hits.0, hits.1))
            }
            let peak = tools.peakMemoryKiB(of: bridge.processIdentifier)

            func line(_ what: String, _ ours: Double, _ theirs: Double) {
                print(String(format: "%@: bridge %.2f s, Dovecot %.2f s, ratio %.2fx (target <= 2x)%@", what, ours, theirs, ours / theirs,
                             ours / theirs <= 2 ? "" : "  MISSED"))
            }
            line("full sync (\(expected - incremental) messages)", bridgeFull, dovecotFull)
            line("incremental sync (+\(incremental))", bridgeIncremental, dovecotIncremental)
            for (key, ours, theirs, a, b) in searchTimes {
                print(String(format: "UID SEARCH %@: bridge %.2f s (%d hits), Dovecot %.2f s (%d hits)", key, ours, a, theirs, b))
            }
            let mib = Double(peak) / 1024
            print(String(format: "bridge peak memory (VmHWM): %.1f MiB (target < 200 MiB)%@", mib, mib < 200 ? "" : "  MISSED"))
            for file in try mbsync.countFiles() { print(file) }
        }
    }
}

/// Wall-clock timing of one step.
enum Clock {
    static func time(_ body: () throws -> Void) rethrows -> Double {
        let start = ContinuousClock.now
        try body()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}

/// The generated messages: text, and one attachment of random bytes (base64), deterministic per seed.
enum Corpus {
    /// Writes `count` messages into `folder/cur` (Maildir); returns the bytes written.
    static func writeMaildir(_ folder: URL, count: Int, attachmentKiB: Int, seed: UInt64) throws -> Int {
        for sub in ["cur", "new", "tmp"] {
            try FileManager.default.createDirectory(at: folder.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        var random = SplitMix64(seed: seed)
        var total = 0
        for index in 0..<count {
            var blob = [UInt8](repeating: 0, count: attachmentKiB * 1024)
            for i in stride(from: 0, to: blob.count, by: 8) {
                let word = random.next()
                for j in 0..<min(8, blob.count - i) { blob[i + j] = UInt8(truncatingIfNeeded: word >> (8 * UInt64(j))) }
            }
            let date = Date(timeIntervalSince1970: 1_700_000_000 + Double(index) * 60 + Double(seed) * 1_000_000)
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
            let text = """
                From: Sender \(index) <sender\(index % 50)@elsewhere.example>\r
                To: demo@rampart.test\r
                Subject: Bench message \(seed)-\(index)\r
                Date: \(formatter.string(from: date))\r
                Message-ID: <bench-\(seed)-\(index)@elsewhere.example>\r
                MIME-Version: 1.0\r
                Content-Type: multipart/mixed; boundary="b\(index)"\r
                \r
                --b\(index)\r
                Content-Type: text/plain; charset=utf-8\r
                \r
                Message \(index) of the bridge benchmark. Numbers: \(random.next() % 1_000_000).\r
                --b\(index)\r
                Content-Type: application/octet-stream; name="data-\(index).bin"\r
                Content-Disposition: attachment; filename="data-\(index).bin"\r
                Content-Transfer-Encoding: base64\r
                \r
                \(Data(blob).base64EncodedString(options: [.lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed]))\r
                --b\(index)--\r

                """
            let bytes = Data(text.utf8)
            total += bytes.count
            try bytes.write(to: folder.appendingPathComponent("cur/\(seed)-\(index).bench:2,S"))
        }
        return total
    }
}

extension AgentHostPaths {
    /// One `UID SEARCH` in INBOX over curl (a login, the search, a logout); returns the number of hits.
    func search(port: Int, user: String, password: String, key: String) throws -> Int {
        let answer = try run(URL(fileURLWithPath: "/usr/bin/curl"), ["-s", "--max-time", "600", "-u", "\(user):\(password)",
                                                                    "imap://127.0.0.1:\(port)/INBOX", "-X", "UID SEARCH \(key)"])
        guard let line = answer.split(separator: "\r\n").first(where: { $0.hasPrefix("* SEARCH") }) else {
            throw Failed(description: "no SEARCH answer from port \(port): \(answer.prefix(200))")
        }
        return line.split(separator: " ").count - 2
    }
}
