import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive lock shared by every process (and every thread) that names the same file:
/// `flock(LOCK_EX)` on a 0600 lock file.
///
/// Trust-model row: **database / everything local** — a check-then-act step on stored state
/// (count a PIN attempt, try the PIN, record the result) is atomic only if no other process can
/// run the same step in between. Each ``withLock(_:)`` opens its own descriptor, so two holders
/// in one process exclude each other too; the lock is released when the body returns or
/// throws, and by the kernel when the process dies (a `kill -9` never leaves it held).
public struct ExclusiveFileLock: Sendable {
    /// The lock file (created 0600 on first use, its folder 0700 if missing; never deleted).
    public let url: URL

    public init(url: URL) {
        self.url = url
    }

    /// Runs `body` while holding the lock, waiting for other holders first.
    /// - Throws: ``PrivateFiles/Failure`` when the lock file cannot be opened or locked.
    public func withLock<R>(_ body: () throws -> R) throws -> R {
        let fd = try openLockFile()
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            if errno != EINTR { throw PrivateFiles.Failure.ioFailure(path: url.path, operation: "flock", errno: errno) }
        }
        return try body()
    }

    private func openLockFile() throws -> Int32 {
        let path = url.path
        var fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if fd < 0, errno == ENOENT {
            try PrivateFiles.ensurePrivateDirectory(url.deletingLastPathComponent(), excludeFromBackup: false)
            fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        }
        guard fd >= 0 else { throw PrivateFiles.Failure.ioFailure(path: path, operation: "open", errno: errno) }
        return fd
    }
}
