import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A private folder (mode 0700) for one test: a `--home` / `RAMPART_HOME`, a server's data
/// folder, a scratch area, a GNUPGHOME. Removed when the value is released or ``remove()`` is
/// called; an agent started for it (``startAgent(idleExit:using:)``, or ``stopsAgentAtEnd(using:)``
/// for one a command starts on demand, ``stopsGnuPGAgentAtEnd(gnupgHome:)`` for GnuPG's) is
/// stopped first, so a failing test leaves no process behind.
///
/// Keep the value (not only its path) for as long as the folder is needed: use `home.path` at
/// each use, so the folder lives until the last one.
public final class TemporaryHome: @unchecked Sendable {
    public let url: URL
    private let lock = NSLock()
    /// The commands that stop this home's agents, run before the folder is deleted.
    private var stopCommands: [(tool: CLITool, arguments: [String])] = []
    private var removed = false

    /// - Parameters:
    ///   - label: part of the folder's name, to tell test leftovers apart.
    ///   - shortPath: a folder directly under `/tmp` with a short name, for homes that hold a Unix
    ///     socket (its path must fit in 107 bytes).
    public init(_ label: String = "home", shortPath: Bool = false) throws {
        let name = UUID().uuidString.prefix(shortPath ? 8 : 36).lowercased()
        url = shortPath
            ? URL(fileURLWithPath: "/tmp/r\(label.prefix(3))-\(name)", isDirectory: true)
            : FileManager.default.temporaryDirectory.appendingPathComponent("rampart-\(label)-\(name)", isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw TestSupportError.cannotCreate(path: url.path, reason: "\(error)")
        }
    }

    public var path: String { url.path }

    /// `name` inside the folder.
    public func child(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// A private subfolder `name`, created.
    public func folder(_ name: String) throws -> URL {
        let folder = child(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return folder
    }

    /// `rampart agent start --home … --idle-exit …`; the agent is stopped when the home goes.
    @discardableResult
    public func startAgent(idleExit seconds: Int = 120, using tool: CLITool = .rampart) throws -> CLIResult {
        stopsAgentAtEnd(using: tool)
        return try tool.run(["agent", "start", "--idle-exit", String(seconds), "--home", path])
    }

    /// Makes the removal stop the agent serving this home (`agent stop --home …` through `tool`):
    /// for agents that commands such as `unlock` start on demand.
    public func stopsAgentAtEnd(using tool: CLITool = .rampart) {
        runsAtEnd(tool, ["agent", "stop", "--home", path])
    }

    /// Makes the removal stop the gpg-agent that GnuPG starts for a GNUPGHOME in this folder
    /// (`gpgconf --homedir … --kill all`): `gnupgHome`, or the folder itself. The agent's socket
    /// lives in that home, and the agent would outlive the test otherwise.
    public func stopsGnuPGAgentAtEnd(gnupgHome: URL? = nil) {
        runsAtEnd(CLITool(path: URL(fileURLWithPath: "/usr/bin/gpgconf")), ["--homedir", (gnupgHome ?? url).path, "--kill", "all"])
    }

    /// Makes the removal first run `tool` with `arguments` (once, however often it is asked): a
    /// command that stops something a test started for a home inside this folder, such as
    /// `agent stop --home SUBFOLDER --user NAME`.
    public func runsAtEnd(_ tool: CLITool, _ arguments: [String]) {
        lock.withLock {
            stopCommands.removeAll { $0.arguments == arguments }
            stopCommands.append((tool, arguments))
        }
    }

    /// Stops the agents registered for the home and deletes the folder. Without one the folder
    /// is gone when this returns; with one, the stop commands (each waits for its agent) and the
    /// deletion run as a ``BackgroundCleanup``, so a `defer` or `deinit` on the cooperative pool
    /// does not wait for a child process. The test process finishes them before it exits.
    public func remove() {
        let (commands, already) = lock.withLock { () -> ([(tool: CLITool, arguments: [String])], Bool) in
            defer { removed = true }
            return (stopCommands, removed)
        }
        guard !already else { return }
        let url = self.url
        guard !commands.isEmpty else {
            try? FileManager.default.removeItem(at: url)
            return
        }
        BackgroundCleanup.start(named: "home-remove") {
            for command in commands { _ = try? command.tool.run(command.arguments, timeout: .seconds(60)) }
            try? FileManager.default.removeItem(at: url)
        }
    }

    /// The permission bits of the file at `url` (`0o600`), nil when it cannot be read.
    public static func mode(of url: URL) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue
    }

    /// Whether neither the file at `url` nor its folder exists any more (a cleartext lease ended).
    public static func isGoneWithItsFolder(_ url: URL) -> Bool {
        !FileManager.default.fileExists(atPath: url.path) && !FileManager.default.fileExists(atPath: url.deletingLastPathComponent().path)
    }

    /// Every regular file under the folder, as paths relative to it (starting with `/`).
    public func regularFiles() -> [String] { Self.regularFiles(under: url) }

    /// Every regular file's bytes under the folder, concatenated (for scans for cleartext).
    public func allBytes() -> Data { Self.allBytes(under: url) }

    /// Every regular file's bytes under `folder`, concatenated.
    public static func allBytes(under folder: URL) -> Data {
        var data = Data()
        for file in regularFiles(under: folder) {
            if let bytes = FileManager.default.contents(atPath: folder.path + file) { data.append(bytes) }
        }
        return data
    }

    /// Every regular file under `folder`, as paths relative to it (starting with `/`); links are
    /// not followed.
    public static func regularFiles(under folder: URL) -> [String] {
        let subpaths = (try? FileManager.default.subpathsOfDirectory(atPath: folder.path)) ?? []
        return subpaths.sorted().filter { subpath in
            var info = stat()
            return lstat(folder.path + "/" + subpath, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
        }.map { "/" + $0 }
    }

    deinit { remove() }
}
