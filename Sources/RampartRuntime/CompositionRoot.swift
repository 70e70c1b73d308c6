import Foundation
import HardwareKeys
import Keychain
import Keymaker
import RampartCore
import SealedStore

/// What a process is, as it tells the composition root.
///
/// Every role gets the same configuration of what keeps the user's data safe — the keychain
/// backend the options name, every MainKey protector of this machine (none, PIN, and the secure
/// hardware's two), every wipe of the user's data, the store's rollback anchor — so that a
/// protector the user chose works in every process that opens the account, and a wipe started
/// anywhere erases everything. The one exception is ``notifications``.
public enum ProcessRole: String, Sendable, CaseIterable, CustomStringConvertible {
    /// One `rampart` command run by the user (in-process unlock when no agent holds the key).
    case command
    /// The agent, which holds unlocked MainKeys for the other processes.
    case agent
    /// `rampart demo`: a whole session in a throw-away home.
    case demo
    /// `rampart-dev` lab commands and benchmarks.
    case bench
    /// A local web app serving the account to a browser on this machine.
    case web
    /// A local IMAP/SMTP bridge serving the account to mail programs on this machine.
    case bridge
    /// The push notification process: it reads the session's push key from the shared keychain
    /// group and never sees the MainKey, so its container has no MainKey protector at all
    /// (trust-model row **device memory (moderate)**: a compromised extension cannot unwrap it).
    case notifications

    public var description: String { rawValue }

    /// Whether this role may unwrap a MainKey in its own process.
    public var unwrapsMainKey: Bool { self != .notifications }
}

extension DependencyKey where Value == ProcessRole {
    /// The role the process gave the composition root.
    public static let processRole = DependencyKey("runtime.processRole")
}

extension DependencyKey where Value == [ObserverToken] {
    /// The registrations of ``UserDataWipes`` (kept alive with the container).
    static let userDataWipes = DependencyKey("runtime.userDataWipes")
}

/// The composition root: the one place where a process's containers are assembled.
///
/// Trust-model rows **keychain (low)**, **secure hardware (high)** and **device storage (low)**:
/// a process states its ``ProcessRole`` and gets a global container with the keychain backend,
/// the hardware protectors, the wipes of every store and the rollback anchor configured; a
/// user's container comes from ``user(_:in:keys:)``. Nothing else in the tools builds a
/// `GlobalContainer`, so no process can forget a protector (the agent once did: the hardware
/// key could not be used through it) or a wipe.
///
/// ```swift
/// let global = try CompositionRoot.global(role: .command, options: options)
/// let alice = CompositionRoot.user("alice", in: global)
/// try alice.keymaker.unlock(.pin(pin))
/// let inbox = try alice.sealedStore.mail.messages(label: SystemLabel.inbox, limit: 20)
/// ```
public enum CompositionRoot {
    /// The global container of a process of `role` over `environment`.
    ///
    /// - Keychain: the backend of the setting `keychain.backend` (`file`, `secret-service`,
    ///   `memory`; default `file`).
    /// - Protectors: none and PIN (the PIN's KDF cost from the settings `pin.kdf.logN` or
    ///   `pin.kdf.seconds`, else calibrated), and the secure hardware's *hardware* and
    ///   *hardware + PIN* (`tpm`: the TPM the environment names); none for ``ProcessRole/notifications``.
    /// - Wipes: every component that keeps the user's data on disk (``UserDataWipes``).
    public static func global(role: ProcessRole, environment: RampartEnvironment,
                              tpm: TPMConfiguration = .fromEnvironment()) -> GlobalContainer {
        let global = GlobalContainer(environment: environment)
        global.override(.processRole, with: role)
        if role.unwrapsMainKey {
            global.addSecureHardwareProtectors(tpm: tpm)
        } else {
            global.override(.mainKeyProtectors, with: [])
        }
        global.override(.userDataWipes, with: UserDataWipes.register(in: global))
        return global
    }

    /// The global container of a process of `role` for the home folder and keychain `options`
    /// name (the home folder is created private first).
    public static func global(role: ProcessRole, options: RuntimeOptions) throws -> GlobalContainer {
        global(role: role, environment: try options.environment())
    }

    /// The container of `userID` in `global`: its Keymaker (with every protector of the
    /// process), its sealed store (opened with the user's MainKey provider and rollback anchor).
    /// - Parameters:
    ///   - keys: another MainKey provider than the user's Keymaker — the agent's, when
    ///     it holds the unlocked key; the store and the session are then opened with it.
    ///   - userID: the account.
    ///   - global: the process's global container (from ``global(role:options:)``).
    public static func user(_ userID: UserID, in global: GlobalContainer,
                            keys: (any MainKeyProvider)? = nil) -> UserContainer {
        let user = UserContainer(userID: userID, global: global)
        if let keys { user.override(.mainKeyProvider, with: keys) }
        return user
    }
}

extension GlobalContainer {
    /// The role the process gave the composition root (``ProcessRole/command`` for a container
    /// built elsewhere, e.g. by a library user).
    public var processRole: ProcessRole { resolve(.processRole) { .command } }
}
