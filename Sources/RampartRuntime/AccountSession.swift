import Foundation
import Keymaker
import RampartAgent
import RampartClient
import RampartCore

/// One account opened for a command: its containers and Keymaker (``AccountKeys``), the client
/// account (sealed store, file vault, session), and the agent's MainKey when the agent holds it.
///
/// Trust-model row **device memory (moderate)**: the MainKey comes from the agent when it runs and
/// holds it unlocked; otherwise it is unwrapped in this process (a PIN from standard input or the
/// terminal) and dropped by ``finish()``.
public final class AccountSession {
    public let keys: AccountKeys
    public let environment: RampartEnvironment
    public let account: ClientAccount
    /// The agent's MainKey, when an agent runs and holds this user's key unlocked; `nil` means
    /// the key is unwrapped in this process.
    public let agentKeys: AgentMainKeyProvider?

    /// Opens the account the options name through the composition root; asks a running agent
    /// whether it holds the key, and if so, the account's store and session open with the agent's.
    public init(_ options: RuntimeOptions, role: ProcessRole = .command) throws {
        let global = try CompositionRoot.global(role: role, options: options)
        let userID = try options.userID()
        environment = global.environment
        // Cleartext previews a killed process left behind go before anything else runs.
        CleartextSweep.sweep(environment: environment, user: userID, includingLive: false)
        let agent = AgentClient(location: AgentLocation(homeDirectory: environment.homeDirectory))
        if agent.isRunning(), let status = try? agent.status(user: userID), status.unlocked {
            agentKeys = AgentMainKeyProvider(client: agent, userID: userID)
        } else {
            agentKeys = nil
        }
        keys = AccountKeys(global: global, userID: userID, keys: agentKeys)
        account = ClientAccount(dependencies: keys.user, environment: environment)
    }

    public var keymaker: Keymaker { keys.keymaker }
    public var userID: UserID { keys.userID }

    /// Makes the MainKey available: the agent's (when it holds it), already unlocked, or
    /// unwrapped here — with the PIN from `pin` when `Keymaker/unlockNeedsPIN()` says one is
    /// needed. `inProcess` unwraps the key in this process even when the agent holds it
    /// (changing a protector needs this process's Keymaker unlocked).
    public func unlock(_ pin: any PINSource, inProcess: Bool = false) throws {
        guard try account.isLoggedIn() || keymaker.hasMainKey() else { throw ClientError.notLoggedIn(userID) }
        if let agentKeys, !inProcess {
            // The agent holds the key: this command counts as activity for its autolock timer.
            // If the agent autolocked in between, the account is locked: `rampart unlock` again.
            if (try? agentKeys.client.touch(user: userID)) != nil, agentKeys.isUnlocked { return }
            throw LockedError(userID: userID)
        }
        if keymaker.isUnlocked { return }
        guard try keymaker.unlockNeedsPIN() else {
            try keymaker.unlock(.none)
            return
        }
        // No PIN on stdin and no terminal to ask on: the account stays locked (exit 3).
        guard pin.canAsk else { throw LockedError(userID: userID) }
        try keymaker.unlock(.pin(try pin.read("the PIN", prompt: "PIN for \(userID): ")))
    }

    /// An opened account whose key is available (``unlock(_:inProcess:)``); the caller
    /// ``finish()``es it. If unlocking fails, it is finished here.
    public static func unlocked(_ options: RuntimeOptions, pin: any PINSource,
                                role: ProcessRole = .command) throws -> AccountSession {
        let session = try AccountSession(options, role: role)
        do {
            try session.unlock(pin)
        } catch {
            session.finish()
            throw error
        }
        return session
    }

    /// Runs `body` with an API client for the stored session, then closes it.
    public func withAPI<R>(_ body: (APIClient) async throws -> R) async throws -> R {
        try await account.api().closing(body)
    }

    /// Closes the account, lets go of the agent's key and locks this process's Keymaker.
    public func finish() {
        account.close()
        agentKeys?.close()
        keymaker.lock()
    }

    /// After a logout: the agent (if one runs) must not keep the erased account's key.
    public func lockAgent() {
        let agent = agentKeys?.client ?? AgentClient(location: AgentLocation(homeDirectory: environment.homeDirectory))
        if agent.isRunning() { try? agent.lock(user: userID) }
    }
}
