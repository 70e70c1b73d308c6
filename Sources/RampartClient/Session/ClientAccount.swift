import FileVault
import Foundation
import Keychain
import MailboxCrypto
import OpenPGP
import RampartAPI
import RampartCore
import SealedStore

/// One logged-in account on this device: its sealed session, its sealed store, its files.
///
/// Trust-model rows **device storage (low)** and **device memory (moderate)**: nothing here is
/// readable without the MainKey, which comes from a `MainKeyProvider` (the in-process
/// Keymaker, or the agent holding the unlocked key). Everything is opened per operation; the
/// private key and tokens are read from the ``SessionVault`` when needed and not cached.
///
/// Dependencies are the user container's (`HasKeychain & HasMainKeyProvider & HasClock &
/// HasSealedStore`), plus the environment for the file locations. The container decides where the
/// MainKey comes from (the composition root installs the agent's provider when the agent holds
/// the key) and opens the store: there is one way to open an account's sealed store.
public final class ClientAccount: @unchecked Sendable {
    public typealias Dependencies = HasKeychain & HasMainKeyProvider & HasClock & HasSealedStore

    public let userID: UserID
    public let keys: any MainKeyProvider
    public let keychain: any Keychain
    public let clock: any RampartClock
    public let vault: SessionVault
    public let files: ClientFiles
    /// Where the account's FileVault lives (`<home>/vault`): its attachment cache and previews.
    public let fileVaultRoot: URL
    private let dependencies: any Dependencies

    public init(dependencies: any Dependencies, environment: RampartEnvironment) {
        self.dependencies = dependencies
        keys = dependencies.mainKeyProvider
        userID = keys.userID
        keychain = dependencies.keychain
        clock = dependencies.clock
        vault = SessionVault(keychain: keychain, userID: userID)
        files = ClientFiles(environment: environment)
        fileVaultRoot = Vault.defaultRoot(environment: environment)
    }

    /// Whether this device holds a session for the account (no key needed to know).
    public func isLoggedIn() throws -> Bool { try vault.hasSession() }

    /// The stored session. - Throws: `LockedError`, ``ClientError/notLoggedIn(_:)``.
    public func session() throws -> SessionRecord {
        try keys.withMainKey { try vault.session(with: $0) }
    }

    /// The primary address's private key (it signs mail from that address, and drive and imports
    /// are sealed to it). - Throws: `LockedError`, ``ClientError/notLoggedIn(_:)``.
    public func mailboxKey() throws -> PGPPrivateKey {
        try keys.withMainKey { try vault.mailboxKey(with: $0) }
    }

    /// The user key and every address key (MailboxCrypto's `AccountKeyring`); the caller wipes it.
    /// - Throws: `LockedError`, ``ClientError/notLoggedIn(_:)`` (also for an account set up
    ///   without a key ring).
    public func keyring() throws -> AccountKeyring {
        guard let ring = try keys.withMainKey({ try vault.keyring(with: $0) }) else { throw ClientError.notLoggedIn(userID) }
        return ring
    }

    /// Every key mail to this account may be encrypted to: each address's key (removed addresses'
    /// too, for the mail they received), the primary first.
    public func mailboxKeys() throws -> [PGPPrivateKey] {
        guard let ring = try keys.withMainKey({ try vault.keyring(with: $0) }) else { return [try mailboxKey()] }
        ring.userKey.wipe()
        return ring.decryptionKeys
    }

    /// The user's sealed store (the container's, opened on first use), checked against the
    /// rollback anchor. - Throws: `tampered` (`rolledBack`) when an older copy of the database
    /// was put back; `LockedError`.
    public func store() throws -> SealedStore { try dependencies.sealedStore }

    /// Closes the store (before a wipe or at the end of a command).
    public func close() { dependencies.closeSealedStore() }

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
