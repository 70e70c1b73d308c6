import Foundation
import RampartCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the sealed databases live: one folder per user, `<root>/<user id>/store.sqlite` (plus
/// SQLite's `-wal` and `-shm` files, and a `-journal` in rollback mode).
///
/// Trust-model rows: **device storage (low)** — folders 0700, files 0600; **device backups
/// (low)** — every folder is marked with `PrivateFiles/markExcludedFromBackup(_:)`
/// (Apple: `isExcludedFromBackup`; Linux: `CACHEDIR.TAG` and `user.xdg.robots.backup=false`).
public struct StoreFiles: Sendable, Hashable {
    /// The folder holding one sub-folder per user.
    public let root: URL

    public init(root: URL) { self.root = root }

    /// The conventional location under a Rampart home folder: `<home>/stores`.
    public init(environment: RampartEnvironment) {
        self.init(root: environment.homeDirectory.appendingPathComponent("stores", isDirectory: true))
    }

    public func directory(for user: UserID) -> URL {
        root.appendingPathComponent(user.rawValue, isDirectory: true)
    }

    public func databaseURL(for user: UserID) -> URL {
        directory(for: user).appendingPathComponent("store.sqlite")
    }

    /// The database and every companion file SQLite may create.
    public func databaseFiles(for user: UserID) -> [URL] {
        let database = databaseURL(for: user)
        return [database] + ["-wal", "-shm", "-journal"].map { URL(fileURLWithPath: database.path + $0) }
    }

    /// Creates the folders (0700, excluded from backups) and the database file (0600) if missing.
    /// SQLite creates `-wal`, `-shm` and `-journal` with the database file's permissions.
    func prepare(for user: UserID) throws {
        do {
            try PrivateFiles.ensurePrivateDirectory(root)
            try PrivateFiles.ensurePrivateDirectory(directory(for: user))
        } catch {
            throw SealedStoreError.files(String(describing: error))
        }
        let path = databaseURL(for: user).path
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SealedStoreError.files("cannot create \(path): errno \(errno)") }
        close(fd)
        try tightenPermissions(for: user)
        PrivateFiles.markExcludedFromBackup(databaseURL(for: user))
    }

    /// Sets 0600 on every database file that exists (in case it was created with a laxer umask).
    func tightenPermissions(for user: UserID) throws {
        for url in databaseFiles(for: user) where FileManager.default.fileExists(atPath: url.path) {
            guard chmod(url.path, 0o600) == 0 else {
                throw SealedStoreError.files("cannot set 0600 on \(url.path): errno \(errno)")
            }
        }
    }

    /// Removes the user's folder with the database, WAL, SHM and journal files. Idempotent.
    public func remove(user: UserID) throws {
        let folder = directory(for: user)
        guard FileManager.default.fileExists(atPath: folder.path) else { return }
        do {
            try FileManager.default.removeItem(at: folder)
        } catch {
            throw SealedStoreError.files("cannot remove \(folder.path): \(error)")
        }
        PrivateFiles.syncDirectory(root)
    }
}
