import Foundation
import RampartAgent
import RampartCore

/// Where Rampart keeps its files, which account, and which keychain backend: the choices a
/// command line, a test or an app makes before anything is opened.
///
/// Trust-model row **device storage (low)**: the home folder is created private (0700) before any
/// file of an account is written into it.
public struct RuntimeOptions: Sendable, Equatable {
    /// The home folder as given (`~` expanded); `nil` means `$RAMPART_HOME`, else `~/.rampart`.
    public var home: String?
    /// The account's user id as given; `nil` means `$RAMPART_USER`, else `local`.
    public var user: String?
    /// The keychain backend (`file`, `secret-service` or `memory`); `nil` means `file`.
    public var keychain: String?

    public init(home: String? = nil, user: String? = nil, keychain: String? = nil) {
        self.home = home
        self.user = user
        self.keychain = keychain
    }

    /// The home folder: `home`, else `$RAMPART_HOME`, else `~/.rampart`.
    public var homeDirectory: URL {
        if let home { return URL(fileURLWithPath: (home as NSString).expandingTildeInPath, isDirectory: true) }
        if let env = ProcessInfo.processInfo.environment["RAMPART_HOME"], !env.isEmpty {
            return URL(fileURLWithPath: env, isDirectory: true)
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".rampart", isDirectory: true)
    }

    /// Whether an account was named (`user` or `$RAMPART_USER`), rather than the default one.
    public var namesUser: Bool {
        user != nil || ProcessInfo.processInfo.environment["RAMPART_USER"].map { !$0.isEmpty } == true
    }

    /// The account: `user`, else `$RAMPART_USER`, else `local`. - Throws: ``RuntimeError/badInput(_:)``.
    public func userID() throws -> UserID {
        let raw = user ?? ProcessInfo.processInfo.environment["RAMPART_USER"] ?? "local"
        do { return try UserID(validating: raw) } catch { throw RuntimeError.badInput(String(describing: error)) }
    }

    /// The environment the containers are built from; creates the home folder (0700).
    /// `$RAMPART_PIN_KDF_LOGN` lowers the PIN KDF's cost (tests and demos only).
    public func environment() throws -> RampartEnvironment {
        var settings: [String: String] = [:]
        if let keychain { settings["keychain.backend"] = keychain }
        if let logN = ProcessInfo.processInfo.environment["RAMPART_PIN_KDF_LOGN"], !logN.isEmpty {
            settings["pin.kdf.logN"] = logN
        }
        let home = homeDirectory
        try PrivateFiles.ensurePrivateDirectory(home)
        return RampartEnvironment(homeDirectory: home, settings: settings)
    }

    /// Where the agent of this home folder listens.
    public func agentLocation() throws -> AgentLocation {
        AgentLocation(homeDirectory: try environment().homeDirectory)
    }
}
