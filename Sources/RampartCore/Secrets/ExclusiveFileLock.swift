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

    /// Takes the lock without waiting and keeps it until ``HeldFileLock/release()`` (or the
    /// process ends): for a role only one process may hold at a time, such as the agent of a
    /// home. Returns `nil` when another holder has it.
    /// - Throws: ``PrivateFiles/Failure`` when the lock file cannot be opened or locked.
    public func tryHolding() throws -> HeldFileLock? {
        let fd = try openLockFile()
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            let code = errno
            close(fd)
            if code == EWOULDBLOCK { return nil }
            throw PrivateFiles.Failure.ioFailure(path: url.path, operation: "flock", errno: code)
        }
        return HeldFileLock(descriptor: fd)
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

/// An ``ExclusiveFileLock`` held beyond one call (see ``ExclusiveFileLock/tryHolding()``):
/// released by ``release()``, on `deinit`, or by the kernel when the process dies.
public final class HeldFileLock: @unchecked Sendable {
    private let lock = NSLock()
    private var descriptor: Int32

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        release()
    }

    /// Releases the lock. Idempotent.
    public func release() {
        let fd = lock.withLock { () -> Int32 in
            defer { descriptor = -1 }
            return descriptor
        }
        if fd >= 0 { close(fd) }
    }
}
