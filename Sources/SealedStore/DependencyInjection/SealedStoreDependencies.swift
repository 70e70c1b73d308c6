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

extension DependencyKey where Value == SealedStore {
    public static let sealedStore = DependencyKey("sealedStore")
}

extension UserContainer: HasSealedStore {
    /// The user's store, opened on first use at `<home>/stores/<user>/store.sqlite` with the
    /// container's MainKey provider (the container must conform to `HasMainKeyProvider`, which
    /// the Keymaker adds), and registered with the wipe registry.
    /// - Throws: ``SealedStoreError/notConfigured(_:)`` without a provider; `locked`.
    public var sealedStore: SealedStore {
        get throws {
            try resolve(.sealedStore) {
                guard let keys = (self as AnyObject) as? any HasMainKeyProvider else {
                    throw SealedStoreError.notConfigured("the user container has no MainKey provider (HasMainKeyProvider)")
                }
                let files = StoreFiles(environment: environment)
                let store = try SealedStore(files: files, keys: keys.mainKeyProvider)
                store.retainWipeRegistration(wipeRegistry.register(SealedStoreWipe(files: files)))
                return store
            }
        }
    }
}
