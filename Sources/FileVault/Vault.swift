import Foundation
import RampartCore

/// One user's file vault: the attachment cache, the drive block store and the preview area,
/// laid out under one 0700 folder excluded from backups.
///
/// Trust-model rows: **device storage (low)**, **device backups (low)**, **encrypted file blocks
/// (low)**, **cleartext files (critical)**, and the *Attachments* and *Drive* mechanisms.
///
/// Opening a vault first sweeps cleartext left by a crashed process (before anything else
/// runs), then opens the caches. The vault observes the `MainKeyProvider`: a lock ends every
/// cleartext lease; a wipe event (logout or too many wrong PINs) purges everything. The
/// Keymaker's wipe reaches vaults that are not open through ``FileVaultWipe``, registered in the
/// `WipeRegistry`; ``purge()`` is the logout path of an open vault.
///
/// ```
/// <root>/<user>/            0700, CACHEDIR.TAG, backup-excluded
///   previews/session-*/     cleartext leases of live processes (flock-owned)
///   attachments/*.blob      sealed attachments (random names)
///   attachment-index.sqlite sealed index (GRDB, 0600)
///   drive/<file id>/        manifest, blocks/0…n-1, thumbnail
/// ```
public final class Vault: @unchecked Sendable {
    /// Tunables of the vault.
    public struct Configuration: Sendable {
        public var attachments: AttachmentCache.Configuration
        public var drive: DriveBlockStore.Configuration
        /// A cap on the bytes the vault writes (`nil`: only the disk's size). Exceeding it is
        /// reported as ``FileVaultError/diskFull(path:)``.
        public var writeLimit: Int64?

        public init(attachments: AttachmentCache.Configuration = .init(),
                    drive: DriveBlockStore.Configuration = .init(), writeLimit: Int64? = nil) {
            self.attachments = attachments
            self.drive = drive
            self.writeLimit = writeLimit
        }
    }

    public let userID: UserID
    /// The user's vault folder.
    public let folder: URL
    public let previews: PreviewArea
    public let attachments: AttachmentCache
    public let drive: DriveBlockStore
    private var observer: ObserverToken?

    /// The user's vault folder under `root`.
    public static func folder(root: URL, user: UserID) -> URL {
        root.appendingPathComponent(user.rawValue)
    }

    /// The user's preview area (cleartext leases) under `root`: `<root>/<user>/previews`.
    public static func previewsFolder(root: URL, user: UserID) -> URL {
        folder(root: root, user: user).appendingPathComponent("previews")
    }

    /// The conventional root under a Rampart home folder: `<home>/vault`.
    public static func defaultRoot(environment: RampartEnvironment) -> URL {
        environment.homeDirectory.appendingPathComponent("vault", isDirectory: true)
    }

    /// Opens the vault of `provider`'s user under `root`: sweep first, then the caches.
    /// - Throws: ``FileVaultError``.
    public init(root: URL, provider: any MainKeyProvider, clock: any RampartClock = SystemClock(),
                configuration: Configuration = Configuration()) throws {
        userID = provider.userID
        try VaultDisk.privateDirectory(root)
        folder = Self.folder(root: root, user: userID)
        try VaultDisk.privateDirectory(folder)
        previews = try PreviewArea(root: Self.previewsFolder(root: root, user: provider.userID), provider: provider)
        let budget = configuration.writeLimit.map { WriteBudget(limit: $0) }
        attachments = try AttachmentCache(folder: folder.appendingPathComponent("attachments"),
                                          indexPath: folder.appendingPathComponent("attachment-index.sqlite"),
                                          provider: provider, clock: clock, previews: previews,
                                          configuration: configuration.attachments, writeBudget: budget)
        drive = try DriveBlockStore(folder: folder.appendingPathComponent("drive"), provider: provider,
                                    previews: previews, configuration: configuration.drive, writeBudget: budget)
        let user = userID
        observer = provider.observeLifecycle { [weak self] event in
            if case .wiped(let who, _) = event, who == user {
                try? self?.purge()
            }
        }
        OpenVaults.shared.add(self, root: root)
    }

    /// Ends every lease and erases every cached attachment and drive file (logout). Needs no
    /// key.
    /// - Throws: ``FileVaultError/index(message:)`` if the index cannot be emptied (the blobs
    ///   are deleted anyway).
    public func purge() throws {
        previews.endAll()
        drive.purgeAll()
        try attachments.purgeAll()
    }
}
