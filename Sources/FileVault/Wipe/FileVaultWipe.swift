import Foundation
import RampartCore

/// Erases a user's file vault (sealed attachments, their index, drive blocks, manifests,
/// thumbnails and any cleartext lease) on logout or after too many wrong PINs: the Keymaker's
/// wipe hook (register it in the `WipeRegistry`).
///
/// Trust-model rows: **database (messages, attachments) — critical**, **encrypted file blocks
/// (low)**, **cleartext files (critical)**, **device storage (low)**. Vaults of the user open in
/// this process first end every lease and purge their caches; then the whole folder
/// `<root>/<user>` is deleted. Needs no MainKey (a wipe after the tenth wrong PIN has none);
/// idempotent. A ``Vault`` of the user that was open before the wipe is unusable afterwards:
/// open a new one after the next login.
public struct FileVaultWipe: Wipeable {
    /// The folder holding one vault folder per user.
    public let root: URL

    public init(root: URL) { self.root = root }

    /// The conventional location under a Rampart home folder: `<home>/vault`.
    public init(environment: RampartEnvironment) {
        self.init(root: Vault.defaultRoot(environment: environment))
    }

    public var wipeName: String { "file-vault" }

    public func wipe(user: UserID) throws {
        for vault in OpenVaults.shared.vaults(of: user, root: root) {
            try? vault.purge()
        }
        let folder = Vault.folder(root: root, user: user)
        VaultDisk.remove(folder)
        guard !VaultDisk.exists(folder) else {
            throw FileVaultError.io(path: folder.path, operation: "remove", errno: EACCES)
        }
        PrivateFiles.syncDirectory(root)
    }
}

/// The vaults open in this process, so a wipe can end their leases first.
final class OpenVaults: @unchecked Sendable {
    static let shared = OpenVaults()
    private let lock = NSLock()
    private var entries: [(user: UserID, root: String, vault: WeakVault)] = []

    private struct WeakVault { weak var vault: Vault? }

    func add(_ vault: Vault, root: URL) {
        lock.withLock {
            entries.removeAll { $0.vault.vault == nil }
            entries.append((vault.userID, root.standardizedFileURL.path, WeakVault(vault: vault)))
        }
    }

    func vaults(of user: UserID, root: URL) -> [Vault] {
        let path = root.standardizedFileURL.path
        return lock.withLock {
            entries.filter { $0.user == user && $0.root == path }.compactMap(\.vault.vault)
        }
    }
}
