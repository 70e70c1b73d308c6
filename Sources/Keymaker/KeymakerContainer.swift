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
    /// the 2^15 floor — for scripts and tests on slow machines).
    public var mainKeyProtectors: [any MainKeyProtector] {
        resolve(.mainKeyProtectors) {
            if let text = environment.settings["pin.kdf.logN"], let logN = UInt8(text) {
                return [NoneProtector(), PINProtector(strength: .fixed(logN: logN))]
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
    public var pinAttemptLockFile: URL {
        global.environment.homeDirectory.appendingPathComponent(".pin-attempts.\(userID.rawValue).lock")
    }

    public var mainKeyProvider: any MainKeyProvider { keymaker }
}
