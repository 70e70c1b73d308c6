import Foundation
import RampartCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the agent of one Rampart home listens: `<home>/agent/agent.sock`, in a folder that
/// only this user can enter.
///
/// Trust-model row: **device memory (moderate)** — the socket is the only door to the unlocked
/// MainKey; the first lock on it is the folder's permissions (0700, owned by this uid, not a
/// symlink), the second the peer-uid check of every connection (see ``AgentServer``).
public struct AgentLocation: Sendable {
    /// The longest path a Unix socket address can hold (`sun_path` minus its final NUL).
    public static let maxSocketPathLength: Int = {
        var address = sockaddr_un()
        return MemoryLayout.size(ofValue: address.sun_path) - 1
    }()

    /// The Rampart home folder this agent serves.
    public let homeDirectory: URL

    public init(homeDirectory: URL) {
        self.homeDirectory = homeDirectory.standardizedFileURL
    }

    /// The folder holding the socket (and the agent's log).
    public var directoryURL: URL { homeDirectory.appendingPathComponent("agent", isDirectory: true) }

    /// The socket.
    public var socketURL: URL { directoryURL.appendingPathComponent("agent.sock", isDirectory: false) }

    /// The lock file the serving agent holds for its whole life (one agent per home).
    public var agentLockURL: URL { directoryURL.appendingPathComponent("agent.lock", isDirectory: false) }

    /// The lock file clients hold while they check for an agent and start one, so that many
    /// clients starting at once start one agent and wait for it.
    public var startLockURL: URL { directoryURL.appendingPathComponent("start.lock", isDirectory: false) }

    /// Where a detached agent writes its diagnostics (never secrets).
    public var logURL: URL { directoryURL.appendingPathComponent("agent.log", isDirectory: false) }

    /// Checks the socket path fits in `sun_path`.
    /// - Throws: ``AgentError/socketPathTooLong(path:length:limit:)``.
    public func checkSocketPathLength() throws {
        let path = socketURL.path
        let length = path.utf8.count
        guard length <= Self.maxSocketPathLength else {
            throw AgentError.socketPathTooLong(path: path, length: length, limit: Self.maxSocketPathLength)
        }
    }

    /// Creates the socket folder 0700 if missing, then checks it is safe.
    /// - Throws: ``AgentError/socketFolderUnsafe(path:reason:)``, ``AgentError/socketPathTooLong(path:length:limit:)``.
    public func prepareDirectory() throws {
        try checkSocketPathLength()
        let path = directoryURL.path
        var info = stat()
        if lstat(path, &info) != 0 {
            guard errno == ENOENT else { throw AgentError.socketFolderUnsafe(path: path, reason: "cannot inspect it (errno \(errno))") }
            do {
                try PrivateFiles.ensurePrivateDirectory(homeDirectory, excludeFromBackup: false)
            } catch {
                throw AgentError.socketFolderUnsafe(path: homeDirectory.path, reason: String(describing: error))
            }
            if mkdir(path, 0o700) != 0 && errno != EEXIST {
                throw AgentError.socketFolderUnsafe(path: path, reason: "cannot create it (errno \(errno))")
            }
        }
        try checkDirectory()
    }

    /// Checks that the socket folder is a real folder (not a symlink), owned by this process's
    /// effective uid, with no permission bit for group or others.
    /// - Throws: ``AgentError/socketFolderUnsafe(path:reason:)``.
    public func checkDirectory() throws {
        let path = directoryURL.path
        var info = stat()
        guard lstat(path, &info) == 0 else {
            throw AgentError.socketFolderUnsafe(path: path, reason: "it does not exist or cannot be inspected (errno \(errno))")
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw AgentError.socketFolderUnsafe(path: path, reason: "it is not a folder (a symlink or a file)")
        }
        guard info.st_uid == geteuid() else {
            throw AgentError.socketFolderUnsafe(path: path, reason: "it belongs to uid \(info.st_uid), not to uid \(geteuid())")
        }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw AgentError.socketFolderUnsafe(path: path, reason: "its permissions are \(String(mode, radix: 8)); group and others must have none (700)")
        }
    }
}
