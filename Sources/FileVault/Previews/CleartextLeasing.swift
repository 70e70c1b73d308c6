import Foundation

/// A store that opens its items as ``CleartextLease``s: the attachment cache (by attachment id)
/// and the drive (by ``DriveFileID``).
///
/// Trust-model row: **cleartext files (during preview or upload) — critical**: `withCleartext`
/// removes the cleartext when its body returns, throws or is cancelled.
public protocol CleartextLeasing {
    /// How the store names an item.
    associatedtype ItemID

    /// Decrypts the item into a private ``PreviewArea`` and returns its lease.
    func lease(_ id: ItemID) throws -> CleartextLease
}

extension CleartextLeasing {
    /// Runs `body` with the URL of the item's cleartext and deletes the cleartext when `body`
    /// returns or throws.
    public func withCleartext<R>(_ id: ItemID, _ body: (URL) throws -> R) throws -> R {
        try lease(id).use(body)
    }

    /// Runs `body` with the URL of the item's cleartext; the cleartext is deleted when `body`
    /// returns, throws, or the task is cancelled (at once, even while `body` still runs). A task
    /// cancelled while `body` runs gets `CancellationError`, even if `body` returns normally.
    public func withCleartext<R>(_ id: ItemID, isolation: isolated (any Actor)? = #isolation,
                                 _ body: (URL) async throws -> R) async throws -> R {
        try Task.checkCancellation()
        return try await lease(id).use(body)
    }
}
