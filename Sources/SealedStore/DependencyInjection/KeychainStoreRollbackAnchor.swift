import Foundation
import Keychain
import RampartCore

/// The sealed store's rollback anchor, kept as an item of the user's keychain: the highest store
/// epoch, authenticated by the store (8-byte epoch ‖ HMAC under the MainKey sub-key
/// `store.state-mac[user]`; this type stores the record as given and never interprets it).
///
/// Trust-model row: **device storage (low)** — rollback of the database. With the anchor, an
/// older copy of the whole database put back (alone) is refused at the next open:
/// ``SealedStoreError/tampered(table:column:primaryKey:reason:)`` with reason `rolledBack`,
/// exit 7, nothing shown; `rampart logout`, then `rampart login` and `rampart sync`, download a
/// clean copy. What it does not catch is exactly what its place allows: with the file keychain
/// (the Linux default, on the same disk) an older copy of the database put back *together with*
/// the anchor item — the keychain folder from the same copy — or with the item deleted or made
/// unreadable (a record that cannot be read or does not authenticate is replaced, never trusted,
/// so that a new login or another key is not refused forever). A counter outside the disk (a TPM
/// NV index) would close that; not done.
///
/// - Item: `rampart.user.<id>` / `store.rollback-anchor` in the app's access group
///   (`KeychainAccessGroup/app`), the same place as the Keymaker's failed-PIN counter and
///   autolock policy, created `KeychainAccessibility/afterFirstUnlockThisDeviceOnly` (never
///   restored onto another device, excluded from backups with the keychain folder). Logout and
///   the wipe after too many wrong PINs delete it (``KeychainStoreRollbackAnchorWipe``, and the
///   Keymaker's deletion of every item of the user), so a fresh login starts clean.
/// - When it is written: the store writes it after each commit and at each open, never before a
///   commit, so a crash between the two leaves it behind the database (that one write is then
///   not protected until the next), never ahead of it.
public struct KeychainStoreRollbackAnchor: StoreRollbackAnchor {
    /// The item's account name under the user's service.
    public static let itemName = "store.rollback-anchor"
    /// The class new items are created with: readable after the first unlock, this device only.
    public static let accessibility: KeychainAccessibility = .afterFirstUnlockThisDeviceOnly

    /// The keychain item of `user`'s anchor.
    public static func item(_ user: UserID) -> KeychainItemID { .user(user, itemName, accessGroup: .app) }

    public let keychain: any Keychain
    public let userID: UserID

    public init(keychain: any Keychain, userID: UserID) {
        self.keychain = keychain
        self.userID = userID
    }

    /// This anchor's keychain item.
    public var item: KeychainItemID { Self.item(userID) }

    /// The stored record, nil when there is none.
    /// - Throws: the keychain's typed error when the item exists but cannot be read
    ///   (`KeychainError/corruptItem(_:reason:)`, `KeychainError/boundToAnotherDevice(_:)`:
    ///   the store then replaces it), or the keychain cannot be used at all.
    public func load() throws -> Data? {
        guard let value = try keychain.readIfPresent(item) else { return nil }
        return try value.withUnsafeBytes { Data($0) }
    }

    /// Replaces the stored record, creating the item (this device only) when missing and
    /// replacing an item that cannot be parsed any more.
    /// - Throws: the keychain's typed error (unavailable backend, storage failure).
    public func save(_ record: Data) throws {
        let value = SecretBytes(copying: record)
        do {
            try keychain.update(value, for: item)
        } catch KeychainError.notFound {
            try keychain.add(value, for: item, accessibility: Self.accessibility)
        } catch KeychainError.corruptItem {
            try keychain.deleteIfPresent(item)
            try keychain.add(value, for: item, accessibility: Self.accessibility)
        }
    }

    /// Deletes the item; returns whether it existed.
    @discardableResult
    public func delete() throws -> Bool { try keychain.deleteIfPresent(item) }
}

/// Deletes a user's rollback anchor on logout or wipe, so that the next login's fresh store is not
/// compared with the old account's epoch.
///
/// Trust-model row: **device storage (low)**. Register it before the sealed store's wipe
/// (`UserDataWipes` does): a wipe cut short in between then leaves a store without an anchor (a
/// new record is written at the next open), never an anchor without its store (which would refuse
/// the next, empty store as rolled back until the wipe is run again).
public struct KeychainStoreRollbackAnchorWipe: Wipeable {
    public let keychain: any Keychain

    public init(keychain: any Keychain) { self.keychain = keychain }

    public var wipeName: String { "store-rollback-anchor" }

    public func wipe(user: UserID) throws {
        try KeychainStoreRollbackAnchor(keychain: keychain, userID: user).delete()
    }
}
