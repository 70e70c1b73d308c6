import Foundation
import RampartCore

/// Gives access to the user's sealed store.
///
/// Trust-model section "Dependency injection": a type that reads or writes local mail or drive
/// data declares `HasSealedStore` in its `Dependencies`.
public protocol HasSealedStore {
    /// The store of the container's user. Throws while it cannot be opened (locked, no provider).
    var sealedStore: SealedStore { get throws }
}

/// Gives the place outside the database where the user's store epoch is remembered (a
/// ``StoreRollbackAnchor``), so that an older copy of the whole database put back is refused.
///
/// Trust-model row: **device storage (low)** — rollback of the database. The sealed store cannot
/// see a keychain, so the module that composes the keychain and the store provides the anchor:
/// `RampartClient` makes `UserContainer` conform with an anchor in the user's keychain
/// (`KeychainStoreRollbackAnchor`), and an app may `override(.storeRollbackAnchor, with:)`
/// before the store is first opened. ``UserContainer/sealedStore`` and the client's account
/// pass it to ``SealedStore/init(files:keys:anchor:)``.
public protocol HasStoreRollbackAnchor {
    /// The anchor of the container's user; nil keeps no record outside the database (an older
    /// copy of the whole database then goes unnoticed).
    var storeRollbackAnchor: (any StoreRollbackAnchor)? { get }
}

extension DependencyKey where Value == SealedStore {
    public static let sealedStore = DependencyKey("sealedStore")
}

extension DependencyKey where Value == any StoreRollbackAnchor {
    /// The user's rollback anchor (see ``HasStoreRollbackAnchor``).
    public static let storeRollbackAnchor = DependencyKey("sealedStore.rollbackAnchor")
}

extension UserContainer: HasSealedStore {
    /// The user's store, opened on first use at `<home>/stores/<user>/store.sqlite` with the
    /// container's MainKey provider (the container must conform to `HasMainKeyProvider`, which
    /// the Keymaker adds) and, when the container conforms to ``HasStoreRollbackAnchor`` (which
    /// `RampartClient` adds), its rollback anchor; registered with the wipe registry.
    /// - Throws: ``SealedStoreError/notConfigured(_:)`` without a provider; `locked`;
    ///   `tampered` (`rolledBack`) when the anchor remembers a later epoch than the database's.
    public var sealedStore: SealedStore {
        get throws {
            try resolve(.sealedStore) {
                guard let keys = (self as AnyObject) as? any HasMainKeyProvider else {
                    throw SealedStoreError.notConfigured("the user container has no MainKey provider (HasMainKeyProvider)")
                }
                let anchor = ((self as AnyObject) as? any HasStoreRollbackAnchor)?.storeRollbackAnchor
                let files = StoreFiles(environment: environment)
                let store = try SealedStore(files: files, keys: keys.mainKeyProvider, anchor: anchor)
                store.retainWipeRegistration(wipeRegistry.register(SealedStoreWipe(files: files)))
                return store
            }
        }
    }
}
