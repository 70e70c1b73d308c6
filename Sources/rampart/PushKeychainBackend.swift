import Foundation
import Keychain
import RampartCore

/// The persistent keychain the push commands open under `--home`.
///
/// `FileKeychain` (issue 2, branch wip/keychain) is the backend; until it is merged into this
/// branch the push commands that need persistence report that it is missing.
enum PushKeychainBackend {
    static func open(home: URL) throws -> any Keychain {
        throw KeychainError.backendUnavailable("this build has no file keychain backend yet (FileKeychain, issue 2)")
    }
}
