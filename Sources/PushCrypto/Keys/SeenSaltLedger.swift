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

    /// Whether `salt` was recorded. - Throws: keychain errors, ``PushCryptoError/corruptKeyItem(_:)``.
    public func contains(_ salt: [UInt8]) throws -> Bool {
        guard salt.count == 16, let value = try keychain.readIfPresent(itemID) else { return false }
        defer { value.wipe() }
        return try value.withUnsafeBytes { bytes in
            try Self.check(bytes)
            return salt.withUnsafeBytes { needle in
                stride(from: 0, to: bytes.count, by: 16).contains { offset in
                    memcmp(bytes.baseAddress! + offset, needle.baseAddress!, 16) == 0
                }
            }
        }
    }

    /// The recorded salts, oldest first.
    public func salts() throws -> [[UInt8]] {
        guard let value = try keychain.readIfPresent(itemID) else { return [] }
        defer { value.wipe() }
        return try value.withUnsafeBytes { bytes in
            try Self.check(bytes)
            return stride(from: 0, to: bytes.count, by: 16).map { [UInt8](bytes[$0..<$0 + 16]) }
        }
    }

    /// Records `salt`, dropping the oldest entries beyond ``capacity``.
    public func record(_ salt: [UInt8]) throws {
        guard salt.count == 16 else { throw PushCryptoError.truncated("a salt of \(salt.count) bytes") }
        let existing = try keychain.readIfPresent(itemID)
        defer { existing?.wipe() }
        let updated = try { () throws -> SecretBytes in
            guard let existing else { return SecretBytes(copying: salt) }
            return try existing.withUnsafeBytes { bytes in
                try Self.check(bytes)
                let keep = min(bytes.count, (capacity - 1) * 16)
                return SecretBytes(count: keep + 16) { buffer in
                    buffer.baseAddress!.copyMemory(from: bytes.baseAddress! + (bytes.count - keep), byteCount: keep)
                    salt.withUnsafeBytes { (buffer.baseAddress! + keep).copyMemory(from: $0.baseAddress!, byteCount: 16) }
                }
            }
        }()
        try keychain.set(updated, for: itemID, accessibility: .afterFirstUnlockThisDeviceOnly)
    }

    private static func check(_ bytes: UnsafeRawBufferPointer) throws {
        guard bytes.count % 16 == 0 else {
            throw PushCryptoError.corruptKeyItem("the replay ledger is \(bytes.count) bytes, not a multiple of 16")
        }
    }
}
