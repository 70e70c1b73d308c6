import HardwareKeys
import Keychain
import Keymaker
import RampartCore

/// The containers and the Keymaker of one account, with every wipe of the user's data
/// registered: what every command that touches the MainKey starts from.
///
/// Trust-model rows **keychain (low)** and **device storage (low)**: the wipes are registered
/// before anything can trigger one (logout, too many wrong PINs), whether or not the store is
/// open in this process; the secure hardware protectors are added when present.
public struct AccountKeys {
    public let global: GlobalContainer
    public let user: UserContainer
    public let userID: UserID
    public let keymaker: Keymaker
    /// The registered wipes (kept alive with the value).
    public let dataWipes: [ObserverToken]

    /// Opens the account the options name (home folder, user id, keychain backend).
    public init(_ options: RuntimeOptions) throws {
        self.init(environment: try options.environment(), userID: try options.userID())
    }

    /// Opens `userID`'s account in `environment`.
    public init(environment: RampartEnvironment, userID: UserID) {
        global = GlobalContainer(environment: environment)
        self.userID = userID
        user = UserContainer(userID: userID, global: global)
        dataWipes = UserDataWipes.register(in: global)
        global.addSecureHardwareProtectors()
        keymaker = user.keymaker
    }

    /// The keychain backend in use.
    public var keychain: any Keychain { global.keychain }

    /// Unlocks with the current protector so it can be changed: without a PIN protector the
    /// key opens as is; with one, `currentPIN` is asked for the PIN.
    public func unlockForChange(currentPIN: () throws -> SecretBytes) throws {
        let active = try keymaker.activeProtectors()
        guard !active.isEmpty else { throw KeymakerError.noMainKey }
        if active.contains(.none) || active.contains(.hardware) {
            try keymaker.unlock(.none)
        } else {
            try keymaker.unlock(.pin(try currentPIN()))
        }
    }

    /// Changes the PIN: `current` then `new` give the PINs. The MainKey, and every item it
    /// protects, is unchanged. - Throws: ``KeymakerError/wrongPIN(attemptsLeft:)`` (counted).
    public func changePIN(current: () throws -> SecretBytes, new: () throws -> SecretBytes) throws {
        let old = try current()
        try keymaker.changePIN(from: old, to: try new())
    }

    /// Removes one protector (at least one must stay), after unlocking with the current one
    /// (``unlockForChange(currentPIN:)``). The MainKey never changes: nothing is re-encrypted.
    /// - Returns: the protectors still active.
    public func removeProtector(_ kind: ProtectorKind, currentPIN: () throws -> SecretBytes) throws -> [ProtectorKind] {
        try unlockForChange(currentPIN: currentPIN)
        defer { keymaker.lock() }
        try keymaker.deactivate(kind)
        return try keymaker.activeProtectors()
    }
}
