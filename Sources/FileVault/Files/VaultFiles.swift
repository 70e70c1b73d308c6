import Foundation
import RampartCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A cap on the bytes the vault may write, mapped to the same typed error as a full disk.
///
/// Trust-model row: **encrypted file blocks / cleartext files (unavailable: moderate)** — a
/// device that runs out of space must fail cleanly. Tests use a real full `tmpfs` where they can;
/// this budget gives the same ``FileVaultError/diskFull(path:)`` without one, and lets an app keep
/// the cache from filling the device.
public final class WriteBudget: @unchecked Sendable {
    private let lock = NSLock()
    private var remaining: Int64

    /// A budget of `limit` bytes in total across every write that uses it.
    public init(limit: Int64) { remaining = limit }

    /// Bytes still allowed.
    public var remainingBytes: Int64 { lock.withLock { remaining } }

    func consume(_ count: Int, path: String) throws {
        try lock.withLock {
            guard Int64(count) <= remaining else { throw FileVaultError.diskFull(path: path) }
            remaining -= Int64(count)
        }
    }
}

/// A new file opened for writing: created 0600 with `O_EXCL`, written with full-write loops,
/// errors typed (`ENOSPC` → ``FileVaultError/diskFull(path:)``).
final class VaultOutputFile {
    private(set) var path: String
    private var fd: Int32
    private let budget: WriteBudget?

    init(creating url: URL, budget: WriteBudget?) throws {
        path = url.path
        self.budget = budget
        fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FileVaultError.fromWrite(errno: errno, path: url.path, operation: "open") }
    }

    deinit { if fd >= 0 { close(fd) } }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        try budget?.consume(bytes.count, path: path)
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let written = Glibc_write(fd, base + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw FileVaultError.fromWrite(errno: errno, path: path, operation: "write")
            }
            offset += written
        }
    }

    func write(_ data: Data) throws {
        try data.withUnsafeBytes { try write($0) }
    }

    /// `fsync` (unless `sync` is false: the caller syncs later with ``VaultDisk/sync(_:)``) then
    /// close. Errors of either are typed (a delayed `ENOSPC` shows up here).
    func finish(sync: Bool = true) throws {
        defer { fd = -1 }
        if sync, fsync(fd) != 0 {
            let code = errno
            close(fd)
            throw FileVaultError.fromWrite(errno: code, path: path, operation: "fsync")
        }
        if close(fd) != 0 { throw FileVaultError.fromWrite(errno: errno, path: path, operation: "close") }
    }

    /// Whether this file has no name yet (Linux `O_TMPFILE`): if the process dies before
    /// ``publish(as:)``, the kernel frees it and nothing is left on disk.
    private(set) var isUnnamed = false

    /// Writes a file that appears at `destination` only once `fill` returned: `fill` writes into
    /// an unnamed file beside it (a named `partialName` where `O_TMPFILE` is missing), which is
    /// then linked into place. On any error the file is abandoned, the partial removed, and the
    /// error rethrown as a ``FileVaultError``.
    static func publish(to destination: URL, partialName: String, budget: WriteBudget?,
                        _ fill: (VaultOutputFile) throws -> Void) throws {
        let folder = destination.deletingLastPathComponent()
        do {
            let output = try VaultOutputFile(unnamedIn: folder, fallbackName: partialName, budget: budget)
            do {
                try fill(output)
                try output.publish(as: destination)
            } catch {
                output.abandon()
                throw error
            }
        } catch {
            VaultDisk.remove(folder.appendingPathComponent(partialName))
            throw FileVaultError.wrap(error)
        }
    }

    /// A new cleartext file in `directory` that gets a name only once it is complete.
    ///
    /// Linux: an unnamed `O_TMPFILE` (0600) linked into place by ``publish(as:)``; a crash
    /// before that leaves nothing. Elsewhere (or on file systems without `O_TMPFILE`): a named
    /// `.partial` file beside the destination, renamed by ``publish(as:)``.
    init(unnamedIn directory: URL, fallbackName: String, budget: WriteBudget?) throws {
        self.budget = budget
        #if os(Linux)
        // O_TMPFILE is (__O_TMPFILE | O_DIRECTORY); the Glibc module does not import the macro.
        let unnamed = open(directory.path, O_WRONLY | O_CLOEXEC | O_DIRECTORY | 0o20000000, 0o600)
        if unnamed >= 0 {
            fd = unnamed
            path = directory.appendingPathComponent(fallbackName).path
            isUnnamed = true
            return
        }
        if errno == ENOSPC || errno == EDQUOT { throw FileVaultError.diskFull(path: directory.path) }
        #endif
        let url = directory.appendingPathComponent(fallbackName)
        path = url.path
        fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FileVaultError.fromWrite(errno: errno, path: url.path, operation: "open") }
    }

    /// `fsync`, then gives the file its final name (atomically replacing `destination`), then
    /// closes it. On failure the caller removes ``path`` (a no-op for an unnamed file).
    func publish(as destination: URL) throws {
        if fsync(fd) != 0 { throw FileVaultError.fromWrite(errno: errno, path: path, operation: "fsync") }
        if isUnnamed {
            // linkat through /proc/self/fd needs no privilege (AT_EMPTY_PATH would).
            guard linkat(AT_FDCWD, "/proc/self/fd/\(fd)", AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0 else {
                throw FileVaultError.fromWrite(errno: errno, path: path, operation: "linkat")
            }
        }
        close(fd)
        fd = -1
        try VaultDisk.rename(URL(fileURLWithPath: path), to: destination)
    }

    /// Closes without syncing (used before deleting the file).
    func abandon() {
        if fd >= 0 { close(fd); fd = -1 }
    }
}

/// A file opened for sequential reading in chunks.
final class VaultInputFile {
    let path: String
    private var fd: Int32
    let size: Int64

    init(reading url: URL) throws {
        path = url.path
        fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileVaultError.io(path: url.path, operation: "open", errno: errno) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw FileVaultError.io(path: url.path, operation: "stat", errno: code)
        }
        size = Int64(info.st_size)
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Reads up to `count` bytes (fewer only at the end of the file).
    func read(upTo count: Int) throws -> Data {
        var data = Data(count: count)
        let got = try data.withUnsafeMutableBytes { buffer -> Int in
            var offset = 0
            while offset < count {
                let n = Glibc_read(fd, buffer.baseAddress! + offset, count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw FileVaultError.io(path: path, operation: "read", errno: errno)
                }
                if n == 0 { break }
                offset += n
            }
            return offset
        }
        if got < count { data.removeSubrange(got..<count) }
        return data
    }
}

// The C library's write(2) and read(2), reachable from `VaultOutputFile` and `VaultInputFile`,
// whose own `write`/`read` methods hide the global names.
#if canImport(Glibc)
@inline(__always) private func Glibc_write(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { Glibc.write(fd, buffer, count) }
@inline(__always) private func Glibc_read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int { Glibc.read(fd, buffer, count) }
#else
@inline(__always) private func Glibc_write(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { Darwin.write(fd, buffer, count) }
@inline(__always) private func Glibc_read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int { Darwin.read(fd, buffer, count) }
#endif

/// Small file-system operations of the vault.
enum VaultDisk {
    /// Creates a 0700 folder excluded from backups (or checks an existing one).
    static func privateDirectory(_ url: URL) throws {
        do {
            try PrivateFiles.ensurePrivateDirectory(url)
        } catch let failure as PrivateFiles.Failure {
            if case .ioFailure(let path, let operation, let code) = failure {
                throw FileVaultError.fromWrite(errno: code, path: path, operation: operation)
            }
            throw FileVaultError.io(path: url.path, operation: "mkdir", errno: EACCES)
        }
    }

    /// Removes a file or a whole folder; missing is fine.
    static func remove(_ url: URL) {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { return }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            if let names = try? FileManager.default.contentsOfDirectory(atPath: url.path) {
                for name in names { remove(url.appendingPathComponent(name)) }
            }
            rmdir(url.path)
        } else {
            unlink(url.path)
        }
    }

    /// Overwrites a regular file with zeros in place (best effort; no error if it is gone).
    static func overwrite(_ url: URL) {
        let fd = open(url.path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size > 0 else { return }
        let zeros = [UInt8](repeating: 0, count: Int(min(info.st_size, 1 << 20)))
        var remaining = Int(info.st_size)
        while remaining > 0 {
            let written = zeros.withUnsafeBytes { Glibc_write(fd, $0.baseAddress!, min(remaining, zeros.count)) }
            guard written > 0 else { return }
            remaining -= written
        }
        _ = fsync(fd)
    }

    static func rename(_ from: URL, to: URL) throws {
        guard Foundation.rename(from.path, to.path) == 0 else {
            throw FileVaultError.fromWrite(errno: errno, path: to.path, operation: "rename")
        }
        PrivateFiles.syncDirectory(to.deletingLastPathComponent())
    }

    /// `fsync` of a file already written and closed (so writeback of many files can overlap
    /// with the work that produced them). A delayed `ENOSPC` becomes ``FileVaultError/diskFull(path:)``.
    static func sync(_ url: URL) throws {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileVaultError.io(path: url.path, operation: "open", errno: errno) }
        defer { close(fd) }
        if fsync(fd) != 0 { throw FileVaultError.fromWrite(errno: errno, path: url.path, operation: "fsync") }
    }

    static func exists(_ url: URL) -> Bool {
        var info = stat()
        return lstat(url.path, &info) == 0
    }

    static func fileSize(_ url: URL) -> Int64? {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }

    /// Writes a small file atomically (0600 temporary, fsync, rename), with typed errors.
    static func writeSmallFile(_ data: Data, to url: URL, budget: WriteBudget?) throws {
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).partial")
        do {
            let file = try VaultOutputFile(creating: temporary, budget: budget)
            do {
                try file.write(data)
                try file.finish()
            } catch {
                file.abandon()
                throw error
            }
            try rename(temporary, to: url)
        } catch {
            unlink(temporary.path)
            throw error
        }
    }

    static func readSmallFile(_ url: URL) throws -> Data? {
        guard exists(url) else { return nil }
        let input = try VaultInputFile(reading: url)
        return try input.read(upTo: Int(input.size))
    }
}
