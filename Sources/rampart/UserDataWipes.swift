import FileVault
import Keychain
import RampartCore
import RampartClient
import SealedStore

/// The composition root's list of every component that keeps data of a user on disk.
///
/// Trust-model rows **device storage (low)** and the Keymaker's wipe after too many wrong PINs:
/// when the Keymaker wipes a user (logout, the tenth wrong PIN), the wipe registry runs each of
/// these, so nothing of the user is left even if the component was never opened in this
/// process. Keep the tokens alive as long as the container.
enum UserDataWipes {
    static func register(in global: GlobalContainer) -> [ObserverToken] {
        [
            global.wipeRegistry.register(SealedStoreWipe(files: StoreFiles(environment: global.environment))),
            global.wipeRegistry.register(ClientFilesWipe(files: ClientFiles(environment: global.environment))),
            global.wipeRegistry.register(PushKeysWipe(keychain: global.keychain)),
            global.wipeRegistry.register(FileVaultWipe(environment: global.environment)),
        ]
    }
}
