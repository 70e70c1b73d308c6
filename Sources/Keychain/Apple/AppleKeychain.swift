#if canImport(Security)
import Foundation
import RampartCore
import Security

/// The Apple keychain (Security framework, data-protection keychain), generic-password items.
///
/// Trust-model rows: **keychain (low)** and **keychain defaults** — items are
/// `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly` by default (readable after the first
/// unlock, never restored onto another device), never synchronized (`kSecAttrSynchronizable`
/// false: no iCloud Keychain, per "cloud sync of app data — never used"), and shared with the
/// app's extensions through a real keychain access group.
///
/// ## Mapping
/// - `kSecClass` = `kSecClassGenericPassword`;
/// - `kSecAttrService` = `"<access group>:<service>"` — the group is also part of the service,
///   so groups stay apart even in a build without the access-group entitlement;
/// - `kSecAttrAccount` = account;
/// - `kSecAttrAccessGroup` = `accessGroupPrefix + group name` (e.g. `ABCDE12345.rampart.shared`)
///   when a prefix (the team id) is given: that is what lets the push extension read only
///   `rampart.shared`;
/// - `kSecAttrAccessible` from ``KeychainAccessibility`` (one-to-one with the `kSecAttrAccessible…`
///   constants);
/// - `kSecAttrSynchronizable` = false; `kSecUseDataProtectionKeychain` = true.
///
/// This backend cannot run on Linux; it is compiled and tested only on Apple platforms.
public final class AppleKeychain: Keychain {
    /// The team-id prefix of the app's keychain access groups (`"ABCDE12345."`), or nil to use
    /// the app's default group (groups then stay apart only through the service name).
    public let accessGroupPrefix: String?
    /// The largest value stored (the same limit as the other backends).
    public static let maximumValueSize = KeychainLimits.maximumValueSize

    public init(accessGroupPrefix: String? = nil) {
        self.accessGroupPrefix = accessGroupPrefix
    }

    public var backendName: String { "apple" }

    public func add(_ value: SecretBytes, for id: KeychainItemID, accessibility: KeychainAccessibility) throws {
        try checkSize(value, id)
        var query = itemQuery(id)
        query[kSecAttrAccessible as String] = Self.secAccessibility(accessibility)
        query[kSecValueData as String] = try value.withUnsafeBytes { Data($0) }
        let status = SecItemAdd(query as CFDictionary, nil)
        guard status == errSecSuccess else { throw Self.map(status, id: id, operation: "add") }
    }

    public func read(_ id: KeychainItemID) throws -> SecretBytes {
        var query = itemQuery(id)
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        guard status == errSecSuccess else { throw Self.map(status, id: id, operation: "read") }
        guard let data = result as? Data else {
            throw KeychainError.corruptItem(id, reason: "the keychain returned no data for the item")
        }
        // The CFData returned by the Security framework is immutable and cannot be zeroized;
        // it is released when `data` goes out of scope.
        return SecretBytes(copying: data)
    }

    public func update(_ value: SecretBytes, for id: KeychainItemID) throws {
        try checkSize(value, id)
        let changes: [String: Any] = [kSecValueData as String: try value.withUnsafeBytes { Data($0) }]
        let status = SecItemUpdate(itemQuery(id) as CFDictionary, changes as CFDictionary)
        guard status == errSecSuccess else { throw Self.map(status, id: id, operation: "update") }
    }

    public func delete(_ id: KeychainItemID) throws {
        let status = SecItemDelete(itemQuery(id) as CFDictionary)
        guard status == errSecSuccess else { throw Self.map(status, id: id, operation: "delete") }
    }

    public func deleteAll(service: String, accessGroup: KeychainAccessGroup) throws {
        var query = groupQuery(accessGroup)
        query[kSecAttrService as String] = Self.storedService(service, accessGroup)
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else {
            throw Self.map(status, id: nil, operation: "delete all of \(accessGroup.name)/\(service)")
        }
    }

    public func deleteAll(accessGroup: KeychainAccessGroup) throws {
        // There is no prefix match on kSecAttrService: list, then delete by service.
        for service in Set(try itemIDs(accessGroup: accessGroup).map(\.service)) {
            try deleteAll(service: service, accessGroup: accessGroup)
        }
    }

    public func itemIDs(accessGroup: KeychainAccessGroup) throws -> [KeychainItemID] {
        var query = groupQuery(accessGroup)
        query[kSecReturnAttributes as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitAll
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return [] }
        guard status == errSecSuccess else { throw Self.map(status, id: nil, operation: "list \(accessGroup.name)") }
        let prefix = accessGroup.name + ":"
        let items = (result as? [[String: Any]]) ?? []
        let ids = items.compactMap { attributes -> KeychainItemID? in
            guard let stored = attributes[kSecAttrService as String] as? String, stored.hasPrefix(prefix),
                  let account = attributes[kSecAttrAccount as String] as? String else { return nil }
            return KeychainItemID(service: String(stored.dropFirst(prefix.count)), account: account, accessGroup: accessGroup)
        }
        return Set(ids).sorted { ($0.service, $0.account) < ($1.service, $1.account) }
    }

    // MARK: - Queries

    private func groupQuery(_ group: KeychainAccessGroup) -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrSynchronizable as String: false,
            kSecUseDataProtectionKeychain as String: true,
        ]
        if let accessGroupPrefix {
            query[kSecAttrAccessGroup as String] = accessGroupPrefix + group.name
        }
        return query
    }

    private func itemQuery(_ id: KeychainItemID) -> [String: Any] {
        var query = groupQuery(id.accessGroup)
        query[kSecAttrService as String] = Self.storedService(id.service, id.accessGroup)
        query[kSecAttrAccount as String] = id.account
        return query
    }

    static func storedService(_ service: String, _ group: KeychainAccessGroup) -> String {
        "\(group.name):\(service)"
    }

    static func secAccessibility(_ accessibility: KeychainAccessibility) -> CFString {
        switch accessibility {
        case .whenUnlocked: kSecAttrAccessibleWhenUnlocked
        case .whenUnlockedThisDeviceOnly: kSecAttrAccessibleWhenUnlockedThisDeviceOnly
        case .afterFirstUnlock: kSecAttrAccessibleAfterFirstUnlock
        case .afterFirstUnlockThisDeviceOnly: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        case .whenPasscodeSetThisDeviceOnly: kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly
        }
    }

    private func checkSize(_ value: SecretBytes, _ id: KeychainItemID) throws {
        if value.count > Self.maximumValueSize {
            throw KeychainError.itemTooLarge(id, size: value.count, limit: Self.maximumValueSize)
        }
    }

    static func map(_ status: OSStatus, id: KeychainItemID?, operation: String) -> KeychainError {
        let message = (SecCopyErrorMessageString(status, nil) as String?) ?? "OSStatus \(status)"
        let what = id.map(\.description) ?? "keychain"
        switch status {
        case errSecItemNotFound:
            if let id { return .notFound(id) }
            return .backendUnavailable("\(operation): \(message)")
        case errSecDuplicateItem:
            if let id { return .duplicate(id) }
            return .backendUnavailable("\(operation): \(message)")
        case errSecInteractionNotAllowed:
            return .accessDenied("\(what): the device is locked (\(operation): \(message))")
        case errSecMissingEntitlement:
            return .accessDenied("\(what): the app lacks the keychain-access-groups entitlement for this group (\(operation): \(message))")
        case errSecAuthFailed, errSecUserCanceled:
            return .accessDenied("\(what): \(operation): \(message)")
        case errSecDecode:
            if let id { return .corruptItem(id, reason: message) }
            return .backendUnavailable("\(operation): \(message)")
        default:
            return .backendUnavailable("\(what): \(operation): \(message) (OSStatus \(status))")
        }
    }
}
#endif
