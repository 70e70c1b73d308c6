import Foundation
import RampartCore

/// The client's own files of one user: the encrypted attachment cache and the folder of
/// cleartext leases. Everything sits in `<home>/client/<user>/`, 0700, excluded from backups.
///
/// Trust-model rows **device storage (low)** (the cache holds only parts still sealed to the
/// user's key, whose private half is sealed under the MainKey), **device backups (low)** and
/// **cleartext files (critical)** (a lease's cleartext exists only while it is open).
public struct ClientFiles: Sendable, Hashable {
    public let root: URL

    public init(root: URL) { self.root = root }
    /// `<home>/client`.
    public init(environment: RampartEnvironment) {
        self.init(root: environment.homeDirectory.appendingPathComponent("client", isDirectory: true))
    }

    public func directory(for user: UserID) -> URL { root.appendingPathComponent(user.rawValue, isDirectory: true) }
    func leases(for user: UserID) -> URL { directory(for: user).appendingPathComponent("leases", isDirectory: true) }

    func prepare(for user: UserID) throws {
        do {
            try PrivateFiles.ensurePrivateDirectory(root)
            try PrivateFiles.ensurePrivateDirectory(directory(for: user))
            try PrivateFiles.ensurePrivateDirectory(leases(for: user))
        } catch {
            throw ClientError.file("Cannot prepare the client folder: \(error)")
        }
    }

    /// Removes every file of `user` (cache and leases).
    public func remove(user: UserID) throws {
        let folder = directory(for: user)
        guard FileManager.default.fileExists(atPath: folder.path) else { return }
        // Overwrite cleartext leases before unlinking (best effort on journaling file systems).
        if let walker = FileManager.default.enumerator(at: leases(for: user), includingPropertiesForKeys: [.isRegularFileKey]) {
            for case let file as URL in walker { Self.overwrite(file) }
        }
        do { try FileManager.default.removeItem(at: folder) } catch {
            throw ClientError.file("Cannot remove \(folder.path): \(error)")
        }
    }

    static func overwrite(_ file: URL) {
        guard let handle = try? FileHandle(forWritingTo: file) else { return }
        defer { try? handle.close() }
        let size = (try? handle.seekToEnd()) ?? 0
        guard size > 0 else { return }
        try? handle.seek(toOffset: 0)
        var remaining = Int(size)
        let zeros = Data(count: min(remaining, 1 << 20))
        while remaining > 0 {
            let chunk = min(remaining, zeros.count)
            handle.write(zeros.prefix(chunk))
            remaining -= chunk
        }
        try? handle.synchronize()
    }
}

/// Registers the client's files with the wipe registry, so logout and the Keymaker's wipe after
/// too many wrong PINs remove them.
///
/// Trust-model row **device storage (low)**: nothing of a logged-out user is left.
public struct ClientFilesWipe: Wipeable {
    public let files: ClientFiles
    public init(files: ClientFiles) { self.files = files }
    public var wipeName: String { "client-files" }
    public func wipe(user: UserID) throws { try files.remove(user: user) }
}
