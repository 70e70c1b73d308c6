import Foundation
import RampartCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The private folder where cleartext files exist, and only while a preview or an upload
/// holds a ``CleartextLease``.
///
/// Trust-model row: **cleartext files (during preview or upload) — critical; "can be an attack
/// vector"**. Mechanisms:
/// - every lease is a 0700 folder holding one 0600 file, excluded from backups; it is deleted
///   when the lease ends — explicitly, when released, on a thrown error or task cancellation
///   (see ``CleartextLeasing/withCleartext(_:_:)-swift.method``), and on every lock or wipe of the
///   MainKey (the area observes the `MainKeyProvider`'s lifecycle);
/// - each process owns one session folder under the area, marked by a `flock`ed lock file that
///   the kernel releases when the process dies, even by `SIGKILL`; creating an area first
///   **sweeps** every session folder whose lock is free (a crashed process's leftovers) before
///   anything else runs, while the live sessions of other processes (say, the file-provider
///   extension sharing the container) are left alone.
///
/// Memory-only files (Linux `memfd_create`) are **not** used: a preview is handed to a viewer
/// that may run in another process and expects a path; a memfd is reachable from outside only as
/// `/proc/<pid>/fd/<n>`, which every process of the same user can open too, so it hides nothing
/// that a 0700 folder does not, ties the file's lifetime to one descriptor the viewer must keep,
/// and does not exist on Apple platforms. It would help only against a later disk forensic
/// read of deleted blocks; the lease folder's lifetime is already bounded (see the module docs).
public final class PreviewArea: @unchecked Sendable {
    /// The folder that holds every session folder.
    public let root: URL
    /// This process's session folder.
    public let sessionFolder: URL
    private let lockFD: Int32
    private let lock = NSLock()
    private var leases: [UUID: Weak] = [:]
    private var observer: ObserverToken?
    private let provider: (any MainKeyProvider)?
    /// Session folders removed by the start-up sweep (for reports and tests).
    public let sweptSessions: Int

    private struct Weak { weak var lease: CleartextLease? }

    /// Sweeps crash leftovers under `root`, then opens this process's session folder.
    ///
    /// - Parameters:
    ///   - root: the preview folder (created 0700 if missing).
    ///   - provider: when given, every lease ends on a `KeyLifecycleEvent/locked(_:reason:)`
    ///     or `KeyLifecycleEvent/wiped(_:reason:)` event of its user.
    /// - Throws: ``FileVaultError/io(path:operation:errno:)`` or ``FileVaultError/diskFull(path:)``.
    public init(root: URL, provider: (any MainKeyProvider)? = nil) throws {
        self.root = root
        self.provider = provider
        try VaultDisk.privateDirectory(root)
        sweptSessions = Self.sweep(root)
        let session = root.appendingPathComponent("session-\(UUID().uuidString)")
        try VaultDisk.privateDirectory(session)
        let lockPath = session.appendingPathComponent(".owner.lock").path
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FileVaultError.fromWrite(errno: errno, path: lockPath, operation: "open") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            close(fd)
            throw FileVaultError.io(path: lockPath, operation: "flock", errno: code)
        }
        lockFD = fd
        sessionFolder = session
        if let provider {
            let user = provider.userID
            observer = provider.observeLifecycle { [weak self] event in
                switch event {
                case .locked(let who, _) where who == user, .wiped(let who, _) where who == user:
                    self?.endAll()
                default:
                    break
                }
            }
        }
    }

    deinit {
        observer?.cancel()
        endAll()
        VaultDisk.remove(sessionFolder)
        close(lockFD)
    }

    /// Removes every session folder under `root` whose owner process is gone (its lock is
    /// free), and anything else that is not a session folder. Returns how many were removed.
    ///
    /// With `includingLive` (a lock, autolock or logout of the user: no cleartext may outlive
    /// it), the leases of live processes go too: every file in their session folders is
    /// overwritten and deleted, only their lock file stays (their ``CleartextLease``s then
    /// find their file gone; the viewer loses it).
    @discardableResult
    public static func sweep(_ root: URL, includingLive: Bool = false) -> Int {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: root.path) else { return 0 }
        var removed = 0
        for name in names where name != "CACHEDIR.TAG" {
            let folder = root.appendingPathComponent(name)
            let lockPath = folder.appendingPathComponent(".owner.lock").path
            let fd = open(lockPath, O_RDWR | O_CLOEXEC)
            if fd >= 0 {
                let free = flock(fd, LOCK_EX | LOCK_NB) == 0
                if free {
                    VaultDisk.remove(folder)
                    removed += 1
                } else if includingLive, let leases = try? FileManager.default.contentsOfDirectory(atPath: folder.path) {
                    for lease in leases where lease != ".owner.lock" && lease != "CACHEDIR.TAG" {
                        let leaseFolder = folder.appendingPathComponent(lease)
                        for file in (try? FileManager.default.contentsOfDirectory(atPath: leaseFolder.path)) ?? [] {
                            VaultDisk.overwrite(leaseFolder.appendingPathComponent(file))
                        }
                        VaultDisk.remove(leaseFolder)
                        removed += 1
                    }
                }
                close(fd)
            } else {
                VaultDisk.remove(folder)
                removed += 1
            }
        }
        if removed > 0 { PrivateFiles.syncDirectory(root) }
        return removed
    }

    /// Opens a lease: creates its private folder, lets `fill` write the cleartext to the given
    /// URL (it must write atomically: temporary file, verify, rename), and returns the lease.
    /// On any error the lease folder is removed before the error is rethrown.
    public func lease(fileName: String, fill: (URL) throws -> Void) throws -> CleartextLease {
        let id = UUID()
        let folder = sessionFolder.appendingPathComponent(id.uuidString)
        try VaultDisk.privateDirectory(folder)
        let url = folder.appendingPathComponent(Self.safeName(fileName))
        do {
            try fill(url)
            guard VaultDisk.exists(url) else {
                throw FileVaultError.io(path: url.path, operation: "fill", errno: ENOENT)
            }
        } catch {
            VaultDisk.remove(folder)
            throw error
        }
        let lease = CleartextLease(url: url, folder: folder) { [weak self] in
            _ = self?.lock.withLock { self?.leases.removeValue(forKey: id) }
        }
        lock.withLock { leases[id] = Weak(lease: lease) }
        // A lock that arrived while `fill` ran (after its key was derived) must not leave this
        // lease behind: the session is marked locked before the event is published.
        if let provider, !provider.isUnlocked {
            lease.end()
            throw FileVaultError.locked
        }
        return lease
    }

    /// Opens a lease holding `contents` (for example a rendered message document), written
    /// 0600 and atomically.
    public func lease(fileName: String, contents: Data) throws -> CleartextLease {
        try lease(fileName: fileName) { url in
            let output = try VaultOutputFile(creating: url, budget: nil)
            do {
                try output.write(contents)
                try output.finish(sync: true)
            } catch {
                output.abandon()
                throw error
            }
        }
    }

    /// Opens a lease in a preview area of its own under `root` (sweeping what crashed processes
    /// left there first). The lease keeps its area alive: the area ends with the lease. For
    /// callers that need one cleartext file without an open ``Vault``.
    /// With `provider`, the lease also ends on a lock or wipe of its user in this process.
    public static func lease(root: URL, provider: (any MainKeyProvider)? = nil, fileName: String, contents: Data) throws -> CleartextLease {
        let area = try PreviewArea(root: root, provider: provider)
        let lease = try area.lease(fileName: fileName, contents: contents)
        lease.retain(area)
        return lease
    }

    /// Number of leases currently open in this process.
    public var activeLeaseCount: Int {
        lock.withLock { leases.values.filter { $0.lease?.isActive == true }.count }
    }

    /// Ends every lease of this process (deletes the cleartext).
    public func endAll() {
        let open = lock.withLock { () -> [CleartextLease] in
            defer { leases.removeAll() }
            return leases.values.compactMap(\.lease)
        }
        open.forEach { $0.end() }
        // Anything else in the session folder (a fill interrupted by a lock) goes too.
        if let names = try? FileManager.default.contentsOfDirectory(atPath: sessionFolder.path) {
            for name in names where name != ".owner.lock" && name != "CACHEDIR.TAG" {
                VaultDisk.remove(sessionFolder.appendingPathComponent(name))
            }
        }
    }

    /// A file name safe to use in the lease folder: the last path component, without control
    /// characters, at most 120 bytes, never empty, `.` or `..`.
    static func safeName(_ name: String) -> String {
        var cleaned = String(name.split(separator: "/").last ?? "")
            .unicodeScalars.filter { $0.value >= 0x20 && $0 != "\u{7F}" && $0 != "\\" }
            .map(String.init).joined()
        while cleaned.utf8.count > 120 { cleaned.removeFirst() }
        if cleaned.isEmpty || cleaned == "." || cleaned == ".." || cleaned.hasPrefix(".") { cleaned = "file" + cleaned }
        return cleaned
    }
}

/// A cleartext file that exists only while this lease is active.
///
/// Trust-model row: **cleartext files (critical)** — the file is deleted by ``end()``, when the
/// lease is released, when its ``PreviewArea`` sees a lock or wipe, and (after a crash) by the
/// next start's sweep. A UI that controls a preview's lifetime keeps the lease object and calls
/// ``end()`` when the preview closes.
///
/// This is Rampart's one lease type: attachment and drive previews (``AttachmentCache``,
/// ``DriveBlockStore``) and the client's rendered message documents
/// (`PreviewArea/lease(root:fileName:contents:)`) all use it.
public final class CleartextLease: @unchecked Sendable {
    private let lock = NSLock()
    /// The area of a standalone lease, kept alive as long as the lease.
    private var owner: PreviewArea?
    private let fileURL: URL
    private let folder: URL
    private var active = true
    private let onEnd: () -> Void

    init(url: URL, folder: URL, onEnd: @escaping () -> Void) {
        self.fileURL = url
        self.folder = folder
        self.onEnd = onEnd
    }

    deinit { end() }

    /// Whether the cleartext still exists.
    public var isActive: Bool { lock.withLock { active } }

    /// Where the cleartext is.
    /// - Throws: ``FileVaultError/leaseEnded`` after the lease ended.
    public func url() throws -> URL {
        try lock.withLock {
            guard active else { throw FileVaultError.leaseEnded }
            return fileURL
        }
    }

    /// The path whether or not the lease is active (for checks that it is gone).
    public var path: String { fileURL.path }

    func retain(_ area: PreviewArea) { lock.withLock { owner = area } }

    /// Runs `body` with the cleartext's URL, then ends the lease — also when `body` throws.
    public func use<R>(_ body: (URL) throws -> R) throws -> R {
        defer { end() }
        return try body(try url())
    }

    /// Runs `body` with the cleartext's URL; the lease ends when `body` returns, throws, or the
    /// task is cancelled (at once, even while `body` still runs). A task cancelled while `body`
    /// runs gets `CancellationError` even if `body` then returns normally: its result may have been
    /// computed from a file deleted under it.
    public func use<R>(isolation: isolated (any Actor)? = #isolation, _ body: (URL) async throws -> R) async throws -> R {
        defer { end() }
        return try await withTaskCancellationHandler {
            try Task.checkCancellation()
            let result = try await body(try url())
            try Task.checkCancellation()
            return result
        } onCancel: {
            end()
        }
    }

    /// Overwrites the cleartext with zeros and deletes it. Idempotent.
    public func end() {
        let wasActive = lock.withLock { () -> Bool in
            defer { active = false }
            return active
        }
        guard wasActive else { return }
        // Best effort against a later forensic read of the freed blocks (journaling and
        // copy-on-write file systems may keep older copies).
        VaultDisk.overwrite(fileURL)
        VaultDisk.remove(folder)
        PrivateFiles.syncDirectory(folder.deletingLastPathComponent())
        onEnd()
        lock.withLock { owner = nil }
    }
}
