import Keychain
import RampartCore

/// A view of a keychain that reaches only the access groups a process is entitled to, as the
/// OS enforces for an app extension: the push process gets `KeychainAccessGroup/shared` only.
///
/// Trust-model rows: **keychain (low)** and **push payload key** — the push process never sees
/// the app group, where the MainKey's wrapped forms live.
public struct AccessGroupLimitedKeychain: Keychain {
    public let base: any Keychain
    public let allowedGroups: Set<KeychainAccessGroup>

    public init(_ base: any Keychain, allowedGroups: Set<KeychainAccessGroup>) {
        self.base = base
        self.allowedGroups = allowedGroups
    }

    public var backendName: String { base.backendName }

    private func check(_ group: KeychainAccessGroup) throws {
        guard allowedGroups.contains(group) else {
            throw KeychainError.accessDenied("this process is not entitled to the access group \(group.name)")
        }
    }

    public func add(_ value: SecretBytes, for id: KeychainItemID, accessibility: KeychainAccessibility) throws {
        try check(id.accessGroup); try base.add(value, for: id, accessibility: accessibility)
    }

    public func read(_ id: KeychainItemID) throws -> SecretBytes {
        try check(id.accessGroup); return try base.read(id)
    }

    public func update(_ value: SecretBytes, for id: KeychainItemID) throws {
        try check(id.accessGroup); try base.update(value, for: id)
    }

    public func delete(_ id: KeychainItemID) throws {
        try check(id.accessGroup); try base.delete(id)
    }

    public func deleteAll(service: String, accessGroup: KeychainAccessGroup) throws {
        try check(accessGroup); try base.deleteAll(service: service, accessGroup: accessGroup)
    }

    public func deleteAll(accessGroup: KeychainAccessGroup) throws {
        try check(accessGroup); try base.deleteAll(accessGroup: accessGroup)
    }

    public func itemIDs(accessGroup: KeychainAccessGroup) throws -> [KeychainItemID] {
        try check(accessGroup); return try base.itemIDs(accessGroup: accessGroup)
    }
}
