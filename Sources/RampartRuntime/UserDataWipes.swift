import FileVault
import Keychain
import Keymaker
import RampartClient
import RampartCore
import SealedStore

/// The list of every component that keeps data of a user on disk: what logout and the wipe
/// after too many wrong PINs erase.
///
/// Trust-model rows **device storage (low)** and the Keymaker's wipe after too many wrong PINs:
/// when the Keymaker wipes a user (logout, the tenth wrong PIN), the wipe registry runs each of
/// these, so nothing of the user is left even if the component was never opened in this
/// process. Keep the tokens alive as long as the container.
public enum UserDataWipes {
    /// Registers every wipe in `global`'s registry; keep the returned tokens alive.
    public static func register(in global: GlobalContainer) -> [ObserverToken] {
        [
            // The store's rollback anchor goes before the store (see KeychainStoreRollbackAnchorWipe).
            global.wipeRegistry.register(KeychainStoreRollbackAnchorWipe(keychain: global.keychain)),
            global.wipeRegistry.register(SealedStoreWipe(files: StoreFiles(environment: global.environment))),
            global.wipeRegistry.register(ClientFilesWipe(files: ClientFiles(environment: global.environment))),
            global.wipeRegistry.register(PushKeysWipe(keychain: global.keychain)),
            global.wipeRegistry.register(FileVaultWipe(environment: global.environment)),
            // Last: its name is the username (and a wipe after wrong PINs runs holding it).
            global.wipeRegistry.register(PINAttemptLockFileWipe(homeDirectory: global.environment.homeDirectory)),
        ]
    }
}
