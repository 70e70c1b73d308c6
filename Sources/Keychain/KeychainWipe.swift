import RampartCore

/// Erases every keychain item of a user, in every access group, on logout or wipe.
///
/// Trust-model rows: **keychain (low)**, **push payload key** ("the private key is deleted at
/// logout").
public struct KeychainUserWipe: Wipeable {
    public let keychain: any Keychain
    public let accessGroups: [KeychainAccessGroup]

    public init(keychain: any Keychain, accessGroups: [KeychainAccessGroup] = [.app, .shared]) {
        self.keychain = keychain
        self.accessGroups = accessGroups
    }

    public var wipeName: String { "keychain(\(keychain.backendName))" }

    public func wipe(user: UserID) throws {
        try keychain.deleteAll(user: user, accessGroups: accessGroups)
    }
}
