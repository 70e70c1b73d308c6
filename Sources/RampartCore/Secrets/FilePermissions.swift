import CRampartShims
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Creating and checking private folders and files (0700 / 0600), with durable writes.
///
/// Trust-model row: **device storage (low)** and **device backups (low)**: files other local
/// users could read, or that a backup tool would pick up, are refused or marked.
public enum PrivateFiles {
    /// Errors about the file system.
    public enum Failure: Error, Equatable, CustomStringConvertible, RampartError {
        case permissionsTooOpen(path: String, mode: String)
        case notADirectory(path: String)
        case ioFailure(path: String, operation: String, errno: Int32)

        public var description: String {
            switch self {
            case .permissionsTooOpen(let path, let mode):
                "\(path) has permissions \(mode); other users could read it. Run `chmod go-rwx \(path)` or move it."
            case .notADirectory(let path):
                "\(path) exists but is not a folder."
            case .ioFailure(let path, let operation, let code):
                "\(operation) failed for \(path): \(String(cString: strerror(code))) (errno \(code))."
            }
        }

        public var code: String {
            switch self {
            case .permissionsTooOpen: "files.permissionsTooOpen"
            case .notADirectory: "files.notADirectory"
            case .ioFailure: "files.io"
            }
        }
    }

    /// Creates `url` (and missing parents) as a 0700 folder, or checks an existing one.
    /// - Throws: ``Failure/permissionsTooOpen(path:mode:)`` if the existing folder is readable
    ///   or writable by group or others.
    public static func ensurePrivateDirectory(_ url: URL, excludeFromBackup: Bool = true) throws {
        let path = url.path
        var info = stat()
        if stat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else { throw Failure.notADirectory(path: path) }
            if info.st_mode & 0o077 != 0 {
                throw Failure.permissionsTooOpen(path: path, mode: String(info.st_mode & 0o777, radix: 8))
            }
        } else {
            let parent = url.deletingLastPathComponent()
            if parent.path != path, !FileManager.default.fileExists(atPath: parent.path) {
                try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            }
            if mkdir(path, 0o700) != 0 && errno != EEXIST {
                throw Failure.ioFailure(path: path, operation: "mkdir", errno: errno)
            }
            _ = chmod(path, 0o700)
        }
        if excludeFromBackup { markExcludedFromBackup(url) }
    }

    /// Checks that a file is not readable or writable by group or others.
    public static func checkPrivateFile(_ url: URL) throws {
        var info = stat()
        guard stat(url.path, &info) == 0 else { throw Failure.ioFailure(path: url.path, operation: "stat", errno: errno) }
        if info.st_mode & 0o077 != 0 {
            throw Failure.permissionsTooOpen(path: url.path, mode: String(info.st_mode & 0o777, radix: 8))
        }
    }

    /// Writes `data` to `url` atomically and durably: a 0600 temporary file in the same folder,
    /// `fsync`, `rename` over the target, then `fsync` of the folder. A crash at any point
    /// leaves either the old or the new content, never a mix.
    public static func writeAtomically(_ data: some ContiguousBytes, to url: URL) throws {
        let directory = url.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure.ioFailure(path: temporary.path, operation: "open", errno: errno) }
        var success = false
        defer {
            if !success { unlink(temporary.path) }
        }
        do {
            try data.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw Failure.ioFailure(path: temporary.path, operation: "write", errno: errno)
                    }
                    offset += written
                }
            }
            guard fsync(fd) == 0 else { throw Failure.ioFailure(path: temporary.path, operation: "fsync", errno: errno) }
        } catch {
            close(fd)
            throw error
        }
        close(fd)
        guard rename(temporary.path, url.path) == 0 else {
            throw Failure.ioFailure(path: url.path, operation: "rename", errno: errno)
        }
        success = true
        syncDirectory(directory)
    }

    /// `fsync` on a folder, so a rename or unlink in it is durable.
    public static func syncDirectory(_ url: URL) {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        if fd >= 0 {
            _ = fsync(fd)
            close(fd)
        }
    }

    /// Marks a file or folder as excluded from device backups.
    ///
    /// Apple: `URLResourceValues.isExcludedFromBackup`. Linux has no system-wide backup flag;
    /// Rampart writes a `CACHEDIR.TAG` (honoured by tar `--exclude-caches`, borg, restic) in
    /// folders and sets the `user.xdg.robots.backup=false` extended attribute where the file
    /// system supports it. The docs say plainly that a backup tool may ignore both.
    public static func markExcludedFromBackup(_ url: URL) {
        #if canImport(Darwin)
        var target = url
        var values = URLResourceValues()
        values.isExcludedFromBackup = true
        try? target.setResourceValues(values)
        #else
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
            let tag = url.appendingPathComponent("CACHEDIR.TAG")
            if !FileManager.default.fileExists(atPath: tag.path) {
                let content = "Signature: 8a477f597d28d172789f06886806bc55\n# Rampart private data: not to be backed up.\n"
                _ = FileManager.default.createFile(atPath: tag.path, contents: Data(content.utf8), attributes: [.posixPermissions: 0o600])
            }
        }
        let value = "false"
        _ = value.withCString { pointer in
            rampart_set_xattr(url.path, "user.xdg.robots.backup", pointer, strlen(pointer))
        }
        #endif
    }
}
