import Foundation
import RampartCore

/// When a keychain item may be read, and whether it may leave this device.
///
/// Trust-model rows: **keychain (low)** and **device backups (low)** — "items are readable after
/// the first unlock of the device and only on this device … not restored from a backup onto
/// another device". The default for Rampart's items is ``afterFirstUnlockThisDeviceOnly``.
public enum KeychainAccessibility: String, Sendable, Codable, CaseIterable {
    case whenUnlocked
    case whenUnlockedThisDeviceOnly
    case afterFirstUnlock
    case afterFirstUnlockThisDeviceOnly
    case whenPasscodeSetThisDeviceOnly

    /// Items of this class must not be readable on another device (a copied keychain folder,
    /// a restored backup).
    public var isThisDeviceOnly: Bool {
        switch self {
        case .whenUnlockedThisDeviceOnly, .afterFirstUnlockThisDeviceOnly, .whenPasscodeSetThisDeviceOnly: true
        case .whenUnlocked, .afterFirstUnlock: false
        }
    }

    /// Rampart's default: survives device lock for background work, never leaves the device.
    public static let `default`: KeychainAccessibility = .afterFirstUnlockThisDeviceOnly
}

/// The address of a keychain item: service, account and access group.
///
/// The access group is how the app and its extension processes share items: the push process
/// is given the ``KeychainAccessGroup/shared`` group only, never the app's private group.
public struct KeychainItemID: Hashable, Sendable, Codable, CustomStringConvertible {
    public var service: String
    public var account: String
    public var accessGroup: KeychainAccessGroup

    public init(service: String, account: String, accessGroup: KeychainAccessGroup = .app) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
    }

    /// Rampart's convention for per-user items: service `rampart.user.<id>`, so that wiping a
    /// user is `deleteAll(service:accessGroup:)` in each group.
    public static func user(_ userID: UserID, _ name: String, accessGroup: KeychainAccessGroup = .app) -> KeychainItemID {
        KeychainItemID(service: userService(userID), account: name, accessGroup: accessGroup)
    }

    /// The service name that holds every item of `userID`.
    public static func userService(_ userID: UserID) -> String { "rampart.user.\(userID.rawValue)" }

    public var description: String { "\(accessGroup.name)/\(service)/\(account)" }
}

/// A keychain access group: a set of items shared by the processes entitled to it.
public struct KeychainAccessGroup: Hashable, Sendable, Codable, CustomStringConvertible {
    public let name: String
    /// - Precondition: 1...64 characters of `[A-Za-z0-9._-]`.
    public init(_ name: String) {
        precondition(UserID.isValid(name) && name.utf8.count <= 64, "invalid access group name")
        self.name = name
    }
    /// Items only the main app reads (the MainKey's wrapped forms, the PIN attempt counter).
    public static let app = KeychainAccessGroup("rampart.app")
    /// Items the app shares with its extensions (push keys).
    public static let shared = KeychainAccessGroup("rampart.shared")
    public var description: String { name }
}

/// A store of small secrets (keys, wrapped keys, tokens), addressed by ``KeychainItemID``.
///
/// Trust-model row: **keychain (low)** — "a code-signing compromise, a rogue app dumping it":
/// a keychain is not a safe on its own, so what Rampart puts in it is itself wrapped by the
/// MainKey's protector (except with the *none* protector, which says so).
///
/// Every backend passes the same contract tests (`KeychainContract` in the tests):
/// - ``add(_:for:accessibility:)`` throws ``KeychainError/duplicate(_:)`` if the item exists;
/// - ``read(_:)``, ``update(_:for:)`` and ``delete(_:)`` throw ``KeychainError/notFound(_:)``
///   for a missing item;
/// - ``deleteAll(accessGroup:)`` and ``deleteAll(service:accessGroup:)`` succeed when nothing
///   matches;
/// - items of one access group are invisible to another;
/// - values of up to ``KeychainLimits/maximumValueSize`` bytes (the empty value included) are
///   stored exactly; larger ones throw ``KeychainError/itemTooLarge(_:size:limit:)``.
public protocol Keychain: Sendable {
    /// A short name of the backend (`file`, `secret-service`, `apple`, `memory`).
    var backendName: String { get }

    /// Adds a new item. - Throws: ``KeychainError/duplicate(_:)`` if it already exists.
    func add(_ value: SecretBytes, for id: KeychainItemID, accessibility: KeychainAccessibility) throws
    /// Reads an item. - Throws: ``KeychainError/notFound(_:)``, ``KeychainError/corruptItem(_:reason:)``.
    func read(_ id: KeychainItemID) throws -> SecretBytes
    /// Replaces the value of an existing item (keeping its accessibility).
    /// - Throws: ``KeychainError/notFound(_:)``.
    func update(_ value: SecretBytes, for id: KeychainItemID) throws
    /// Deletes an item. - Throws: ``KeychainError/notFound(_:)``.
    func delete(_ id: KeychainItemID) throws
    /// Deletes every item of `service` in `accessGroup`.
    func deleteAll(service: String, accessGroup: KeychainAccessGroup) throws
    /// Deletes every item of `accessGroup`.
    func deleteAll(accessGroup: KeychainAccessGroup) throws
    /// The items of `accessGroup` (addresses only, no values), sorted by service then account.
    func itemIDs(accessGroup: KeychainAccessGroup) throws -> [KeychainItemID]
}

extension Keychain {
    /// Adds the item, or updates it if it exists.
    public func set(_ value: SecretBytes, for id: KeychainItemID, accessibility: KeychainAccessibility = .default) throws {
        do {
            try add(value, for: id, accessibility: accessibility)
        } catch KeychainError.duplicate {
            try update(value, for: id)
        }
    }

    /// Reads the item, or returns nil when it does not exist.
    public func readIfPresent(_ id: KeychainItemID) throws -> SecretBytes? {
        do { return try read(id) } catch KeychainError.notFound { return nil }
    }

    /// Deletes the item if it exists; returns whether it did.
    @discardableResult
    public func deleteIfPresent(_ id: KeychainItemID) throws -> Bool {
        do { try delete(id); return true } catch KeychainError.notFound { return false }
    }

    /// Deletes every item of `user` in the given groups.
    public func deleteAll(user: UserID, accessGroups: [KeychainAccessGroup] = [.app, .shared]) throws {
        for group in accessGroups {
            try deleteAll(service: KeychainItemID.userService(user), accessGroup: group)
        }
    }
}

/// Limits every backend enforces alike.
public enum KeychainLimits {
    /// The largest item value (64 KiB): keychains hold keys, wrapped keys and tokens.
    public static let maximumValueSize = 64 * 1024
}

/// Why a keychain operation failed.
public enum KeychainError: Error, Equatable, DescribedRampartError {
    /// No item at this address.
    case notFound(KeychainItemID)
    /// An item already exists at this address (use `update` or `set`).
    case duplicate(KeychainItemID)
    /// The backend refused access (permissions, locked collection, missing entitlement).
    case accessDenied(String)
    /// The backend cannot be reached (no D-Bus session, no keyring daemon, …).
    case backendUnavailable(String)
    /// The item exists but cannot be decoded (truncated, tampered, or from another device).
    case corruptItem(KeychainItemID, reason: String)
    /// A this-device-only item was found on a device it was not created on (a copied folder).
    case boundToAnotherDevice(KeychainItemID)
    /// An item value is larger than the backend accepts.
    case itemTooLarge(KeychainItemID, size: Int, limit: Int)
    /// A keychain folder or item file is readable or writable by other users; it is refused
    /// rather than trusted (file backend).
    case permissionsTooOpen(path: String, mode: String)
    /// The backend's storage failed (disk full, I/O error, …).
    case storageFailure(path: String, reason: String)

    /// The code, category (the CLI's exit status) and message of each case.
    public var info: RampartErrorInfo {
        switch self {
        case .notFound(let id): RampartErrorInfo(code: "keychain.notFound", kind: .notFound, message: "No keychain item \(id).")
        case .duplicate(let id): RampartErrorInfo(code: "keychain.duplicate", kind: .failure, message: "Keychain item \(id) already exists; update it instead.")
        case .accessDenied(let why): RampartErrorInfo(code: "keychain.accessDenied", kind: .failure, message: "The keychain refused access: \(why)")
        case .backendUnavailable(let why): RampartErrorInfo(code: "keychain.backendUnavailable", kind: .failure, message: "The keychain backend is not available: \(why)")
        case .corruptItem(let id, let reason): RampartErrorInfo(code: "keychain.corruptItem", kind: .tampered, message: "Keychain item \(id) is corrupt: \(reason)")
        case .boundToAnotherDevice(let id): RampartErrorInfo(code: "keychain.boundToAnotherDevice", kind: .tampered, message: "Keychain item \(id) belongs to another device (this-device-only items are not portable); log in again on this device.")
        case .itemTooLarge(let id, let size, let limit): RampartErrorInfo(code: "keychain.itemTooLarge", kind: .failure, message: "Keychain item \(id) is \(size) bytes; the limit is \(limit).")
        case .permissionsTooOpen(let path, let mode): RampartErrorInfo(code: "keychain.permissionsTooOpen", kind: .failure, message: "\(path) has permissions \(mode); other users could read or replace keychain items. Run `chmod go-rwx \(path)` after checking nobody else changed it.")
        case .storageFailure(let path, let reason): RampartErrorInfo(code: "keychain.storageFailure", kind: .failure, message: "The keychain could not use \(path): \(reason)")
        }
    }

}

/// Gives access to the keychain.
public protocol HasKeychain {
    var keychain: any Keychain { get }
}
