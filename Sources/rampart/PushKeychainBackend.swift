import Foundation
import Keychain
import RampartCore

/// The persistent keychain the push commands open under `--home`: a ``FileKeychain`` in
/// `<home>/keychain`, one subfolder per access group.
enum PushKeychainBackend {
    static func open(home: URL) throws -> any Keychain {
        FileKeychain(directory: home.appendingPathComponent("keychain", isDirectory: true))
    }
}
