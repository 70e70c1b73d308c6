import Foundation
import RampartCore

/// What each store of the vault (``AttachmentCache``, ``DriveBlockStore``) holds for its user:
/// the user, the store's private folder, the MainKey provider its sub-keys come from, the
/// ``PreviewArea`` its cleartext leases go to and the ``WriteBudget`` its writes count against.
///
/// Trust-model rows: **encrypted file blocks / cleartext files** and **database (attachments,
/// blocks) — critical** — every sub-key is bound to ``userID``, which is the provider's (a store
/// cannot be opened for one user with another user's keys), and the folder is made 0700 (or
/// checked) before anything is written into it.
struct VaultSpace: Sendable {
    let userID: UserID
    /// The store's folder (0700, excluded from backups).
    let folder: URL
    let provider: any MainKeyProvider
    let previews: PreviewArea
    let budget: WriteBudget?

    /// Creates (or checks) the private folder. - Throws: ``FileVaultError``.
    init(folder: URL, provider: any MainKeyProvider, previews: PreviewArea, budget: WriteBudget?) throws {
        self.userID = provider.userID
        self.folder = folder
        self.provider = provider
        self.previews = previews
        self.budget = budget
        try VaultDisk.privateDirectory(folder)
    }
}
