import Foundation
import Keychain
import RampartCore

/// A bounded, persistent record of the salts of the pushes a session has opened, kept in the
/// keychain's shared group next to the push keys, so a replayed payload is refused even by a
/// new push process.
///
/// Trust-model row: **push payload key** — "pushes are short-lived": a captured push cannot be
/// shown twice. The ledger keeps the newest ``capacity`` salts (oldest dropped first); a replay
/// older than that is only caught if its key was rotated away meanwhile. It is deleted at logout
/// with the keys.
///
/// Value layout: the salts, 16 bytes each, oldest first.
public struct SeenSaltLedger: Sendable {
    public let keychain: any Keychain
    public let itemID: KeychainItemID
    public let capacity: Int

    public init(keychain: any Keychain, itemID: KeychainItemID, capacity: Int = 512) {
        self.keychain = keychain
        self.itemID = itemID
        self.capacity = max(1, capacity)
    }

    /// Whether `salt` was recorded. - Throws: keychain errors.
    public func contains(_ salt: [UInt8]) throws -> Bool {
        try salts().contains(salt)
    }

    /// The recorded salts, oldest first.
    public func salts() throws -> [[UInt8]] {
        guard let value = try keychain.readIfPresent(itemID) else { return [] }
        defer { value.wipe() }
        return try value.withUnsafeBytes { bytes in
            guard bytes.count % 16 == 0 else {
                throw PushCryptoError.corruptKeyItem("the replay ledger is \(bytes.count) bytes, not a multiple of 16")
            }
            return stride(from: 0, to: bytes.count, by: 16).map { [UInt8](bytes[$0..<$0 + 16]) }
        }
    }

    /// Records `salt`, dropping the oldest entries beyond ``capacity``.
    public func record(_ salt: [UInt8]) throws {
        var all = try salts()
        all.append(salt)
        if all.count > capacity { all.removeFirst(all.count - capacity) }
        var flat = all.flatMap { $0 }
        try keychain.set(SecretBytes(consuming: &flat), for: itemID, accessibility: .afterFirstUnlockThisDeviceOnly)
    }
}
