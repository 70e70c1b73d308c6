import Foundation
import RampartCore

/// A keychain that keeps items in process memory only, as `SecretBytes`.
///
/// For unit tests of other modules and for processes that must not persist anything. It obeys
/// the same contract as the persistent backends (it runs the same contract tests).
public final class InMemoryKeychain: Keychain, @unchecked Sendable {
    private struct Entry {
        var value: SecretBytes
        var accessibility: KeychainAccessibility
    }

    private let lock = NSLock()
    private var entries: [KeychainItemID: Entry] = [:]

    public init() {}

    public var backendName: String { "memory" }

    public func add(_ value: SecretBytes, for id: KeychainItemID, accessibility: KeychainAccessibility) throws {
        try checkSize(value, id)
        let copy = try value.withUnsafeBytes { SecretBytes(copying: $0) }
        try lock.withLock {
            guard entries[id] == nil else { throw KeychainError.duplicate(id) }
            entries[id] = Entry(value: copy, accessibility: accessibility)
        }
    }

    public func read(_ id: KeychainItemID) throws -> SecretBytes {
        let stored = try lock.withLock { () throws -> SecretBytes in
            guard let entry = entries[id] else { throw KeychainError.notFound(id) }
            return entry.value
        }
        return try stored.withUnsafeBytes { SecretBytes(copying: $0) }
    }

    public func update(_ value: SecretBytes, for id: KeychainItemID) throws {
        try checkSize(value, id)
        let copy = try value.withUnsafeBytes { SecretBytes(copying: $0) }
        try lock.withLock {
            guard let existing = entries[id] else { throw KeychainError.notFound(id) }
            existing.value.wipe()
            entries[id] = Entry(value: copy, accessibility: existing.accessibility)
        }
    }

    public func delete(_ id: KeychainItemID) throws {
        try lock.withLock {
            guard let removed = entries.removeValue(forKey: id) else { throw KeychainError.notFound(id) }
            removed.value.wipe()
        }
    }

    public func deleteAll(service: String, accessGroup: KeychainAccessGroup) throws {
        lock.withLock {
            for key in entries.keys where key.service == service && key.accessGroup == accessGroup {
                entries.removeValue(forKey: key)?.value.wipe()
            }
        }
    }

    public func deleteAll(accessGroup: KeychainAccessGroup) throws {
        lock.withLock {
            for key in entries.keys where key.accessGroup == accessGroup {
                entries.removeValue(forKey: key)?.value.wipe()
            }
        }
    }

    public func itemIDs(accessGroup: KeychainAccessGroup) throws -> [KeychainItemID] {
        lock.withLock {
            entries.keys.filter { $0.accessGroup == accessGroup }
                .sorted { ($0.service, $0.account) < ($1.service, $1.account) }
        }
    }

    private func checkSize(_ value: SecretBytes, _ id: KeychainItemID) throws {
        if value.count > KeychainLimits.maximumValueSize {
            throw KeychainError.itemTooLarge(id, size: value.count, limit: KeychainLimits.maximumValueSize)
        }
    }

    /// The accessibility an item was stored with (for tests of callers' choices).
    public func accessibility(of id: KeychainItemID) -> KeychainAccessibility? {
        lock.withLock { entries[id]?.accessibility }
    }
}
