import Foundation
import RampartCLIKit

#if canImport(Glibc)
import Glibc
#endif

/// The programs `bench bridge` runs: `rampart` beside this executable, mbsync, Dovecot, curl.
struct AgentHostPaths {
    let rampart: URL
    init() {
        let me = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        rampart = me.deletingLastPathComponent().appendingPathComponent("rampart")
    }

    struct Failed: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts a program with its output in `log`.
    func spawn(_ tool: URL, _ arguments: [String], log: URL, environment: [String: String] = [:]) throws -> Process {
        guard FileManager.default.isExecutableFile(atPath: tool.path) else {
            throw Failed(description: "\(tool.path) is missing or not executable: the bench runs the `\(tool.lastPathComponent)` built beside rampart-dev (swift build -c release builds both)")
        }
        FileManager.default.createFile(atPath: log.path, contents: nil)
        let process = Process()
        process.executableURL = tool
        process.arguments = arguments
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Runs a program to its end (`BenchSupport.run`); returns its standard output.
    @discardableResult
    func run(_ tool: URL, _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]) throws -> String {
        String(decoding: try BenchSupport.run([tool.path] + arguments, input: stdin, environment: environment), as: UTF8.self)
    }

    /// SIGTERM, then SIGKILL after 10 s (Dovecot's master can wait long for its auth process).
    static func stop(_ process: Process) {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning, Date() < deadline { usleep(50_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
    }

    /// Waits until `file` exists (a server's or bridge's published status).
    func waitFor(file: URL, process: Process, timeout: TimeInterval = 120) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !FileManager.default.fileExists(atPath: file.path) {
            guard process.isRunning, Date() < deadline else { throw Failed(description: "\(file.path) did not appear") }
            usleep(50_000)
        }
    }

    /// Waits until the IMAP server's INBOX holds `atLeast` messages (curl's `STATUS`).
    func waitForMessages(port: Int, user: String, password: String, atLeast: Int, timeout: TimeInterval = 3_600) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let answer = (try? run(URL(fileURLWithPath: "/usr/bin/curl"), ["-s", "--max-time", "60", "-u", "\(user):\(password)",
                                                                              "imap://127.0.0.1:\(port)/", "-X", "STATUS INBOX (MESSAGES)"])) ?? ""
            if let count = answer.split(separator: " ").last.flatMap({ Int($0.trimmingCharacters(in: CharacterSet(charactersIn: ")\r\n"))) }),
               count >= atLeast { return }
            usleep(200_000)
        }
        throw Failed(description: "the INBOX on port \(port) did not reach \(atLeast) messages")
    }

    /// The peak resident memory of a process (VmHWM), KiB.
    func peakMemoryKiB(of pid: Int32) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}

/// Dovecot (Debian dovecot-imapd) serving one Maildir on 127.0.0.1, plain-text login `bench`/`pw`.
/// Mail processes run as `nobody` when the bench runs as root (Dovecot refuses uid 0).
struct Dovecot {
    let process: Process
    let port: Int
    let maildir: URL

    init(folder: URL, messages: URL, tools: AgentHostPaths) throws {
        maildir = folder.appendingPathComponent("maildir")
        for sub in ["run", "state", "home"] {
            try FileManager.default.createDirectory(at: folder.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        try FileManager.default.copyItem(at: messages, to: maildir)
        chmod(folder.path, 0o755)
        let root = getuid() == 0
        let uid = root ? 65534 : Int(getuid()), gid = root ? 65534 : Int(getgid())
        if root {
            _ = try tools.run(URL(fileURLWithPath: "/bin/chown"), ["-R", "65534:65534", maildir.path, folder.appendingPathComponent("home").path])
        }
        port = Self.freePort()
        let user = root ? "" : "default_internal_user = \(NSUserName())\ndefault_login_user = \(NSUserName())\n"
        let config = """
            protocols = imap
            listen = 127.0.0.1
            base_dir = \(folder.path)/run
            state_dir = \(folder.path)/state
            log_path = \(folder.path)/dovecot.log
            ssl = no
            disable_plaintext_auth = no
            auth_mechanisms = plain login
            mail_location = maildir:\(maildir.path):LAYOUT=fs
            \(user)passdb {
              driver = static
              args = password=pw
            }
            userdb {
              driver = static
              args = uid=\(uid) gid=\(gid) home=\(folder.path)/home
            }
            service imap-login {
              chroot =
              inet_listener imap {
                address = 127.0.0.1
                port = \(port)
              }
              inet_listener imaps {
                port = 0
              }
            }
            service anvil {
              chroot =
            }

            """
        let file = folder.appendingPathComponent("dovecot.conf")
        try config.write(to: file, atomically: true, encoding: .utf8)
        process = try tools.spawn(URL(fileURLWithPath: "/usr/sbin/dovecot"), ["-F", "-c", file.path], log: folder.appendingPathComponent("dovecot.out"))
        try tools.waitForMessages(port: port, user: "bench", password: "pw", atLeast: 1, timeout: 60)
    }

    /// Drops the messages of another Maildir into this one's `new/`, as a delivery agent would.
    func add(_ messages: URL) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: messages.appendingPathComponent("cur").path) {
            let target = maildir.appendingPathComponent("new").appendingPathComponent(name.components(separatedBy: ":2,")[0])
            try FileManager.default.copyItem(at: messages.appendingPathComponent("cur").appendingPathComponent(name), to: target)
            if getuid() == 0 { chown(target.path, 65534, 65534) }
        }
    }

    /// A port for Dovecot: a random high one (Dovecot's start fails clearly if it is taken).
    static func freePort() -> Int { Int.random(in: 20_000...60_000) }
}

/// mbsync runs into one Maildir per server (INBOX only, plain text on loopback), timed.
struct MbsyncRun {
    let tools: AgentHostPaths
    let work: URL

    /// One `mbsync` run against `port`; returns its wall time.
    func sync(name: String, port: Int, user: String, password: String) throws -> Double {
        let folder = work.appendingPathComponent("mbsync-\(name)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mail"), withIntermediateDirectories: true)
        let rc = folder.appendingPathComponent("rc")
        try """
            IMAPAccount server
            Host 127.0.0.1
            Port \(port)
            User \(user)
            Pass \(password)
            SSLType None
            AuthMechs LOGIN
            Timeout 120

            IMAPStore remote
            Account server

            MaildirStore local
            Path \(folder.path)/mail/
            Inbox \(folder.path)/mail/INBOX

            Channel inbox
            Far :remote:INBOX
            Near :local:INBOX
            Create Near
            Sync Pull
            SyncState *

            """.write(to: rc, atomically: true, encoding: .utf8)
        return try Clock.time {
            try tools.run(URL(fileURLWithPath: "/usr/bin/mbsync"), ["-q", "-c", rc.path, "-a"], environment: ["HOME": folder.path])
        }
    }

    /// How many messages each mirror holds.
    func countFiles() throws -> [String] {
        try ["bridge", "dovecot"].map { name in
            let inbox = work.appendingPathComponent("mbsync-\(name)/mail/INBOX")
            let count = try ["cur", "new"].reduce(0) { $0 + (try FileManager.default.contentsOfDirectory(atPath: inbox.appendingPathComponent($1).path).count) }
            return "\(name) mirror: \(count) messages"
        }
    }
}
