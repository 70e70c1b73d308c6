import Foundation
import Keychain
import RampartCore

extension DependencyKey where Value == [any MainKeyProtector] {
    /// The protector implementations available in this process. The `HardwareKeys` module (or
    /// the app's composition root) overrides it to add the hardware protectors.
    public static let mainKeyProtectors = DependencyKey("keymaker.protectors")
}

extension DependencyKey where Value == Keymaker {
    public static let keymaker = DependencyKey("keymaker")
}

extension GlobalContainer {
    /// The protectors a Keymaker may use here (default: none and PIN, the PIN's scrypt cost
    /// calibrated to ~250 ms; the setting `pin.kdf.logN` fixes N = 2^logN instead, never below
    /// the 2^15 floor — for scripts and tests on slow machines; `pin.kdf.seconds` calibrates to
    /// another target — for the unlock benchmark). The composition root adds the hardware ones.
    public var mainKeyProtectors: [any MainKeyProtector] {
        resolve(.mainKeyProtectors) {
            if let text = environment.settings["pin.kdf.logN"], let logN = UInt8(text) {
                return [NoneProtector(), PINProtector(strength: .fixed(logN: logN))]
            }
            if let text = environment.settings["pin.kdf.seconds"], let seconds = Double(text), seconds > 0 {
                return [NoneProtector(), PINProtector(strength: .calibrated(seconds: seconds))]
            }
            return [NoneProtector(), PINProtector()]
        }
    }
}

extension UserContainer: HasKeychain {
    public var keychain: any Keychain { global.keychain }
}

extension UserContainer: HasKeymaker, HasMainKeyProvider {
    /// The user's Keymaker, created on first use and kept for the container's lifetime. Its
    /// keychain wipe is registered with the global wipe registry. PIN attempts of every process
    /// on this home are serialized by the lock file ``pinAttemptLockFile``.
    public var keymaker: Keymaker {
        resolve(.keymaker) {
            Keymaker(userID: userID, dependencies: self,
                     configuration: .init(protectors: global.mainKeyProtectors, attemptLockFile: pinAttemptLockFile))
        }
    }

    /// `<home>/.pin-attempts.<user>.lock`: the lock every process holds while it counts, tries
    /// and records one PIN attempt of this user (see ``Keymaker/Configuration/attemptLockFile``).
    /// Its name tells who uses this device, so logout and the wipe remove it
    /// (``PINAttemptLockFileWipe``).
    public var pinAttemptLockFile: URL {
        PINAttemptLockFileWipe.lockFile(user: userID, home: global.environment.homeDirectory)
    }

    /// The user's Keymaker, unless the composition root installed another provider
    /// (`override(.mainKeyProvider, with:)`, e.g. the agent's) before first use.
    public var mainKeyProvider: any MainKeyProvider { resolve(.mainKeyProvider) { keymaker } }
}

/// Removes a user's PIN-attempt lock file on logout and on the wipe after too many wrong PINs.
///
/// Trust-model row **device storage (low)**: the username is rated critical ("connects account
/// to person"), and the lock file's name carries it; after a logout nothing in the home folder
/// may name the user. Removing the file while a wipe holds its lock is safe: any attempt that
/// then takes a new lock finds no MainKey and ends (``Keymaker/unlock(_:)`` checks for the key
/// under the lock before it counts).
public struct PINAttemptLockFileWipe: Wipeable {
    public let homeDirectory: URL

    public init(homeDirectory: URL) { self.homeDirectory = homeDirectory }

    /// The lock file of `user` under `home`.
    public static func lockFile(user: UserID, home: URL) -> URL {
        home.appendingPathComponent(".pin-attempts.\(user.rawValue).lock")
    }

    public var wipeName: String { "pin-attempt-lock" }

    public func wipe(user: UserID) throws {
        let file = Self.lockFile(user: user, home: homeDirectory)
        // Never created when no PIN was ever tried in this home.
        guard FileManager.default.fileExists(atPath: file.path) else { return }
        try FileManager.default.removeItem(at: file)
    }
}
