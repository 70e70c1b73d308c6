import Foundation
import RampartCore

/// Erases a user's sealed database on logout or after too many wrong PINs: the Keymaker's wipe
/// hook (register it in the `WipeRegistry`).
///
/// Trust-model rows: **database — critical**; **device storage (low)**. Open stores of the user
/// in this process are closed first, then the user's folder is deleted with the database, WAL,
/// SHM and journal files. Sub-keys are never stored (each is derived per operation and wiped at
/// its end), so nothing else remains. Does not need the MainKey; idempotent.
public struct SealedStoreWipe: Wipeable {
    public let files: StoreFiles

    public init(files: StoreFiles) { self.files = files }

    public var wipeName: String { "sealed-store" }

    public func wipe(user: UserID) throws {
        for store in OpenStores.shared.stores(of: user, in: files) { store.close() }
        try files.remove(user: user)
    }
}
