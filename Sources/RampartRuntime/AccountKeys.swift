import Keychain
import Keymaker
import RampartCore

/// Where a PIN comes from when a command needs one: a line of standard input, the terminal, or
/// an app's own prompt. The runtime asks; the command-line layer (RampartCLIKit) answers.
///
/// Trust-model row **device memory (moderate)**: the secret arrives as `SecretBytes`
/// (zeroized when released), never as a `String`.
public protocol PINSource {
    /// Whether a PIN can be asked for at all (standard input was chosen, or a terminal exists).
    var canAsk: Bool { get }
    /// One secret; `what` names it in an error, `prompt` is shown on a terminal.
    func read(_ what: String, prompt: String) throws -> SecretBytes
}

/// The containers and the Keymaker of one account, from the composition root: what every command
/// that touches the MainKey starts from.
///
/// Trust-model rows **keychain (low)** and **device storage (low)**: the containers come from
/// ``CompositionRoot``, so every wipe of the user's data is registered before anything can
/// trigger one (logout, too many wrong PINs), whether or not the store is open in this process,
/// and every protector of this machine (the secure hardware's included) can open the key.
public struct AccountKeys {
    public let global: GlobalContainer
    public let user: UserContainer
    public let userID: UserID
    public let keymaker: Keymaker

    /// Opens the account the options name (home folder, user id, keychain backend).
    public init(_ options: RuntimeOptions, role: ProcessRole = .command) throws {
        self.init(global: try CompositionRoot.global(role: role, options: options), userID: try options.userID())
    }

    /// Opens `userID`'s account in a global container of the composition root.
    /// - Parameters:
    ///   - keys: the agent's MainKey provider, when the agent holds the key.
    ///   - global: a global container of the composition root.
    ///   - userID: the account to open.
    public init(global: GlobalContainer, userID: UserID, keys: (any MainKeyProvider)? = nil) {
        self.global = global
        self.userID = userID
        user = CompositionRoot.user(userID, in: global, keys: keys)
        keymaker = user.keymaker
    }

    /// The keychain backend in use.
    public var keychain: any Keychain { global.keychain }

    /// Unlocks this process's Keymaker so a protector can be changed: `currentPIN` is asked for
    /// the PIN only when `Keymaker/unlockNeedsPIN()` says so.
    public func unlockForChange(currentPIN: () throws -> SecretBytes) throws {
        guard try keymaker.hasMainKey() else { throw KeymakerError.noMainKey }
        if keymaker.isUnlocked { return }
        try keymaker.unlock(try keymaker.unlockNeedsPIN() ? .pin(try currentPIN()) : .none)
    }

    /// Changes the PIN: `current` then `new` give the PINs. The MainKey, and every item it
    /// protects, is unchanged. - Throws: `KeymakerError/wrongPIN(attemptsLeft:)` (counted).
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
