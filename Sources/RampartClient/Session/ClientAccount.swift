import FileVault
import Foundation
import Keychain
import OpenPGP
import RampartAPI
import RampartCore
import SealedStore

/// One logged-in account on this device: its sealed session, its sealed store, its files.
///
/// Trust-model rows **device storage (low)** and **device memory (moderate)**: nothing here is
/// readable without the MainKey, which comes from a ``MainKeyProvider`` (the in-process
/// Keymaker, or the agent holding the unlocked key). Everything is opened per operation; the
/// private key and tokens are read from the ``SessionVault`` when needed and not cached.
///
/// Dependencies are the user container's (`HasKeychain & HasMainKeyProvider & HasClock &
/// HasStoreRollbackAnchor`), plus the environment for the file locations.
public final class ClientAccount: @unchecked Sendable {
    public typealias Dependencies = HasKeychain & HasMainKeyProvider & HasClock & HasStoreRollbackAnchor

    public let userID: UserID
    public let keys: any MainKeyProvider
    public let keychain: any Keychain
    public let clock: any RampartClock
    public let vault: SessionVault
    public let files: ClientFiles
    public let storeFiles: StoreFiles
    /// Where the store's epoch is remembered outside the database (the container's: a keychain
    /// item, ``KeychainStoreRollbackAnchor``). Trust-model row **device storage (low)** — rollback.
    public let storeAnchor: (any StoreRollbackAnchor)?
    /// Where the account's FileVault lives (`<home>/vault`): its attachment cache and previews.
    public let fileVaultRoot: URL
    private let lock = NSLock()
    private var openedStore: SealedStore?

    public convenience init(dependencies: any Dependencies, environment: RampartEnvironment) {
        self.init(keys: dependencies.mainKeyProvider, dependencies: dependencies, environment: environment)
    }

    /// With another MainKey provider than the container's Keymaker — e.g. the agent's, which
    /// holds the unlocked key in another process.
    public init(keys: any MainKeyProvider, dependencies: any Dependencies, environment: RampartEnvironment) {
        self.keys = keys
        userID = keys.userID
        keychain = dependencies.keychain
        clock = dependencies.clock
        vault = SessionVault(keychain: keychain, userID: userID)
        files = ClientFiles(environment: environment)
        storeFiles = StoreFiles(environment: environment)
        storeAnchor = dependencies.storeRollbackAnchor
        fileVaultRoot = Vault.defaultRoot(environment: environment)
    }

    /// Whether this device holds a session for the account (no key needed to know).
    public func isLoggedIn() throws -> Bool { try vault.hasSession() }

    /// The stored session. - Throws: `LockedError`, ``ClientError/notLoggedIn(_:)``.
    public func session() throws -> SessionRecord {
        try keys.withMainKey { try vault.session(with: $0) }
    }

    /// The user's private key. - Throws: `LockedError`, ``ClientError/notLoggedIn(_:)``.
    public func mailboxKey() throws -> PGPPrivateKey {
        try keys.withMainKey { try vault.mailboxKey(with: $0) }
    }

    /// The user's sealed store (opened on first use), checked against the rollback anchor.
    /// - Throws: `tampered` (`rolledBack`) when an older copy of the database was put back.
    public func store() throws -> SealedStore {
        try lock.withLock {
            if let openedStore, openedStore.isOpen { return openedStore }
            let store = try SealedStore(files: storeFiles, keys: keys, anchor: storeAnchor)
            openedStore = store
            return store
        }
    }

    /// Closes the store (before a wipe or at the end of a command).
    public func close() {
        lock.withLock { openedStore?.close(); openedStore = nil }
    }

    /// An API client for the stored session; refreshed tokens are sealed back into the vault.
    public func api() throws -> APIClient {
        let record = try session()
        let vault = self.vault
        let keys = self.keys
        return try APIClient(endpoint: record.endpoint, tokens: record.tokens) { fresh in
            // Best effort: if the key was locked meanwhile, the next command refreshes again.
            try? keys.withMainKey { key in
                var updated = try vault.session(with: key)
                try updated.update(fresh)
                try vault.saveSession(updated, with: key)
            }
        }
    }
}
