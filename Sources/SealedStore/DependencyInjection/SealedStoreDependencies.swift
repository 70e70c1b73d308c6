import Foundation
import Keymaker
import RampartCore

/// Gives access to the user's sealed store.
///
/// Trust-model section "Dependency injection": a type that reads or writes local mail or drive
/// data declares `HasSealedStore` in its `Dependencies`.
public protocol HasSealedStore {
    /// The store of the container's user. Throws while it cannot be opened (locked, tampered).
    var sealedStore: SealedStore { get throws }
    /// Closes the store if it is open; the next ``sealedStore`` opens it again.
    func closeSealedStore()
}

/// Gives the place outside the database where the user's store epoch is remembered (a
/// ``StoreRollbackAnchor``), so that an older copy of the whole database put back is refused.
///
/// Trust-model row: **device storage (low)** — rollback of the database. `UserContainer`
/// conforms with an anchor in the user's keychain (``KeychainStoreRollbackAnchor``); an app may
/// `override(.storeRollbackAnchor, with:)` before the store is first opened.
public protocol HasStoreRollbackAnchor {
    /// The anchor of the container's user; nil keeps no record outside the database (an older
    /// copy of the whole database then goes unnoticed).
    var storeRollbackAnchor: (any StoreRollbackAnchor)? { get }
}

extension DependencyKey where Value == SealedStore {
    public static let sealedStore = DependencyKey("sealedStore")
}

extension DependencyKey where Value == ObserverToken {
    /// The registration of the store's wipe made by ``UserContainer/sealedStore`` (at most one).
    static let sealedStoreWipe = DependencyKey("sealedStore.wipe")
}

extension DependencyKey where Value == any StoreRollbackAnchor {
    /// The user's rollback anchor (see ``HasStoreRollbackAnchor``).
    public static let storeRollbackAnchor = DependencyKey("sealedStore.rollbackAnchor")
}

extension UserContainer: HasSealedStore {
    /// The user's store, opened on first use at `<home>/stores/<user>/store.sqlite` with the
    /// container's MainKey provider (the Keymaker, or the agent's provider the composition root
    /// installed) and its rollback anchor; its wipe is registered with the wipe registry once
    /// (unless one is registered already, as the composition root does for every user). After
    /// ``closeSealedStore()`` the next use opens it again. Every process opens an account's
    /// store this way: the dependencies are checked when the code is compiled, not at run time.
    /// - Throws: `locked`; `tampered` (`rolledBack`) when the anchor remembers a later epoch than
    ///   the database's.
    public var sealedStore: SealedStore {
        get throws {
            try instances.withLock {
                if let open = instances.current(.sealedStore), open.isOpen { return open }
                let files = StoreFiles(environment: environment)
                let store = try SealedStore(files: files, keys: mainKeyProvider, anchor: storeRollbackAnchor)
                // The store's wipe, once: the composition root registers it for every user of the
                // home already; a container made without it (a library user) registers it here.
                let wipe = SealedStoreWipe(files: files)
                if instances.current(.sealedStoreWipe) == nil, !wipeRegistry.registeredNames.contains(wipe.wipeName) {
                    override(.sealedStoreWipe, with: wipeRegistry.register(wipe))
                }
                override(.sealedStore, with: store)
                return store
            }
        }
    }

    /// Closes the user's store if it is open (before a wipe, or at the end of a command).
    public func closeSealedStore() {
        instances.withLock {
            instances.current(.sealedStore)?.close()
            instances.remove(.sealedStore)
        }
    }
}

extension UserContainer: HasStoreRollbackAnchor {
    /// The user's anchor in the container's keychain (``KeychainStoreRollbackAnchor``), created on
    /// first use; `override(.storeRollbackAnchor, with:)` before the store is opened replaces it.
    public var storeRollbackAnchor: (any StoreRollbackAnchor)? {
        resolve(.storeRollbackAnchor) { KeychainStoreRollbackAnchor(keychain: keychain, userID: userID) }
    }
}
