import Crypto
import Foundation
import RampartCore

/// Where a sealed value belongs: its table, column and primary key. Together with the schema
/// version, the user and the key version (held by the ``ColumnSealer``), this is the associated
/// data of the AEAD, so a ciphertext only opens in the exact place it was sealed for.
///
/// Trust-model row: **database — modified (critical: can mislead the user)**.
public struct SealedLocation: Sendable, Hashable {
    public let table: String
    public let column: String
    /// The primary key of the row, one element per key column (composite keys keep their parts
    /// apart, so `("a:b", "1")` and `("a", "b:1")` never collide).
    public let primaryKey: [String]

    public init(table: String, column: String, primaryKey: [String]) {
        self.table = table
        self.column = column
        self.primaryKey = primaryKey
    }

    public init(table: String, column: String, primaryKey: String) {
        self.init(table: table, column: column, primaryKey: [primaryKey])
    }

    var primaryKeyDescription: String { primaryKey.joined(separator: "/") }
}

/// A value encrypted with AES-256-GCM under the store's column sub-key, bound to its location.
///
/// Trust-model row: **database (critical to read, disclose and modify)** — the value is
/// unreadable without the MainKey, and a ciphertext that was changed, truncated, moved to
/// another row, column or user fails with ``SealedStoreError/tampered(table:column:primaryKey:reason:)``.
///
/// Envelope (version 1), stored as a BLOB:
/// ```
/// 0      1 byte   format version (0x01)
/// 1      1 byte   algorithm (0x01 = AES-256-GCM)
/// 2      8 bytes  key version (the MainKey fingerprint)
/// 10    12 bytes  nonce (random)
/// 22     n bytes  ciphertext
/// 22+n  16 bytes  GCM tag
/// ```
/// Associated data: `"rampart.sealed.v1"`, the two header bytes, the schema version (UInt32),
/// then length-prefixed table, column, each primary-key part, user id, and the 8-byte key version.
public struct Sealed<Value: SealableValue>: Sendable, Hashable {
    /// The whole envelope, as stored.
    public let envelope: Data

    /// Wraps an envelope read from storage (not yet authenticated).
    public init(envelope: Data) { self.envelope = envelope }

    /// Seals `value` for `location`.
    public static func seal(_ value: Value, at location: SealedLocation, with sealer: ColumnSealer) throws -> Sealed {
        Sealed(envelope: try sealer.seal(bytes: value.sealedBytes, at: location))
    }

    /// Authenticates and decrypts the value.
    /// - Throws: ``SealedStoreError/tampered(table:column:primaryKey:reason:)`` when the
    ///   envelope does not belong to `location` (or was changed).
    public func open(at location: SealedLocation, with sealer: ColumnSealer) throws -> Value {
        let bytes = try sealer.open(envelope: envelope, at: location)
        do {
            return try Value(sealedBytes: bytes)
        } catch {
            throw SealedStoreError.tampered(table: location.table, column: location.column,
                                            primaryKey: location.primaryKeyDescription, reason: .malformedContent)
        }
    }

    /// The key version named in the envelope header, if the header is readable.
    public var keyVersion: KeyVersion? { ColumnSealer.keyVersion(ofEnvelope: envelope) }
}

/// The version of the key a value is sealed under: the 8-byte fingerprint of the MainKey.
public struct KeyVersion: Sendable, Hashable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// From `MainKey.fingerprint` (16 hex digits).
    public init(fingerprint: String) {
        var result: [UInt8] = []
        var iterator = fingerprint.utf8.makeIterator()
        while let high = iterator.next(), let low = iterator.next() {
            guard let h = KeyVersion.nibble(high), let l = KeyVersion.nibble(low) else { break }
            result.append(h << 4 | l)
        }
        self.bytes = Array((result + [UInt8](repeating: 0, count: 8)).prefix(8))
    }

    init(bytes: [UInt8]) { self.bytes = bytes }

    public init(_ mainKey: MainKey) { self.init(fingerprint: mainKey.fingerprint) }

    public var description: String { bytes.map { String(format: "%02x", $0) }.joined() }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        case 0x41...0x46: c - 0x41 + 10
        default: nil
        }
    }
}

/// Seals and opens single values of one user under one key version, each bound to a
/// ``SealedLocation`` (format 1). The store's own rows use one whole-row envelope instead (format 2,
/// its associated data also covering the clear columns and the row version); this sealer remains
/// for callers that seal one value at a time.
///
/// Trust-model row: **device storage (low)** — "everything sensitive encrypted with the MainKey".
public struct ColumnSealer: @unchecked Sendable {
    static let formatVersion: UInt8 = 0x01
    static let algorithmAESGCM: UInt8 = 0x01
    static let headerCount = 2 + 8 + 12
    static let tagCount = 16

    private let key: SymmetricKey
    public let user: UserID
    public let keyVersion: KeyVersion
    public let schemaVersion: UInt32
    private let fixedPrefix: [UInt8]

    /// - Parameters:
    ///   - key: the 256-bit column sub-key (keep the sealer inside the closure that owns the key).
    ///   - user: the user the values are bound to (in the associated data).
    ///   - keyVersion: the MainKey's fingerprint, stored in each envelope.
    ///   - schemaVersion: the schema version bound into the associated data.
    public init(key: SymmetricKey, user: UserID, keyVersion: KeyVersion, schemaVersion: UInt32) {
        self.key = key
        self.user = user
        self.keyVersion = keyVersion
        self.schemaVersion = schemaVersion
        self.fixedPrefix = RowEncoding.associatedDataPrefix("rampart.sealed.v1", format: ColumnSealer.formatVersion,
                                                            algorithm: ColumnSealer.algorithmAESGCM, schemaVersion: schemaVersion)
    }

    func associatedData(for location: SealedLocation) -> [UInt8] {
        var data = fixedPrefix
        data.reserveCapacity(fixedPrefix.count + 64)
        func append(_ string: String) {
            let count = UInt32(string.utf8.count).bigEndian
            withUnsafeBytes(of: count) { data.append(contentsOf: $0) }
            data.append(contentsOf: string.utf8)
        }
        append(location.table)
        append(location.column)
        withUnsafeBytes(of: UInt32(location.primaryKey.count).bigEndian) { data.append(contentsOf: $0) }
        location.primaryKey.forEach(append)
        append(user.rawValue)
        data.append(contentsOf: keyVersion.bytes)
        return data
    }

    /// Encrypts `bytes` into an envelope bound to `location`.
    public func seal(bytes: [UInt8], at location: SealedLocation) throws -> Data {
        let nonce = AES.GCM.Nonce()
        let box = try AES.GCM.seal(bytes, using: key, nonce: nonce, authenticating: associatedData(for: location))
        var envelope = Data(capacity: ColumnSealer.headerCount + bytes.count + ColumnSealer.tagCount)
        envelope.append(ColumnSealer.formatVersion)
        envelope.append(ColumnSealer.algorithmAESGCM)
        envelope.append(contentsOf: keyVersion.bytes)
        // `combined` is nonce ‖ ciphertext ‖ tag (always present for a 12-byte nonce).
        guard let combined = box.combined else { throw SealedStoreError.invalidInput("AES-GCM nonce size") }
        envelope.append(combined)
        return envelope
    }

    /// Authenticates and decrypts an envelope sealed for `location`.
    public func open(envelope: Data, at location: SealedLocation) throws -> Data {
        func tampered(_ reason: TamperReason) -> SealedStoreError {
            .tampered(table: location.table, column: location.column,
                      primaryKey: location.primaryKeyDescription, reason: reason)
        }
        guard envelope.count >= ColumnSealer.headerCount + ColumnSealer.tagCount else { throw tampered(.truncated) }
        let start = envelope.startIndex
        guard envelope[start] == ColumnSealer.formatVersion, envelope[start + 1] == ColumnSealer.algorithmAESGCM else {
            throw tampered(.unknownFormat)
        }
        guard envelope[(start + 2)..<(start + 10)].elementsEqual(keyVersion.bytes) else {
            throw tampered(.foreignKeyVersion)
        }
        do {
            let box = try AES.GCM.SealedBox(combined: envelope[(start + 10)...])
            return try AES.GCM.open(box, using: key, authenticating: associatedData(for: location))
        } catch {
            throw tampered(.authenticationFailed)
        }
    }

    /// The key version in an envelope's header, or nil if the header is unreadable.
    public static func keyVersion(ofEnvelope envelope: Data) -> KeyVersion? {
        guard envelope.count >= headerCount + tagCount else { return nil }
        let start = envelope.startIndex
        return KeyVersion(bytes: [UInt8](envelope[(start + 2)..<(start + 10)]))
    }
}

/// A value that can be sealed: it turns itself into bytes and back.
public protocol SealableValue: Sendable, Hashable {
    /// The plaintext bytes to encrypt.
    var sealedBytes: [UInt8] { get }
    /// Rebuilds the value from decrypted bytes. Throws on malformed content.
    init(sealedBytes: Data) throws
}

/// Content that authenticated but does not decode (an encoder bug, never an attacker's doing).
struct MalformedSealedContent: Error {}

extension String: SealableValue {
    public var sealedBytes: [UInt8] { Array(utf8) }
    public init(sealedBytes: Data) throws {
        let decoded = sealedBytes.withUnsafeBytes { raw in
            String(validating: raw.bindMemory(to: UInt8.self), as: UTF8.self)
        }
        guard let decoded else { throw MalformedSealedContent() }
        self = decoded
    }
}

extension Data: SealableValue {
    public var sealedBytes: [UInt8] { [UInt8](self) }
    public init(sealedBytes: Data) throws { self = sealedBytes }
}

extension Array: SealableValue where Element == String {
    /// A UInt32 count, then each string as a UInt32 length and its UTF-8 bytes.
    public var sealedBytes: [UInt8] {
        var bytes: [UInt8] = []
        Swift.withUnsafeBytes(of: UInt32(count).bigEndian) { bytes.append(contentsOf: $0) }
        for element in self {
            Swift.withUnsafeBytes(of: UInt32(element.utf8.count).bigEndian) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: element.utf8)
        }
        return bytes
    }

    public init(sealedBytes data: Data) throws {
        let sealedBytes = [UInt8](data)
        var offset = 0
        func readLength() throws -> Int {
            guard offset + 4 <= sealedBytes.count else { throw MalformedSealedContent() }
            let value = sealedBytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            offset += 4
            return value
        }
        let count = try readLength()
        guard count <= sealedBytes.count else { throw MalformedSealedContent() }
        var result: [String] = []
        result.reserveCapacity(count)
        for _ in 0..<count {
            let length = try readLength()
            guard offset + length <= sealedBytes.count else { throw MalformedSealedContent() }
            let decoded = sealedBytes.withUnsafeBufferPointer { buffer in
                String(validating: UnsafeBufferPointer(rebasing: buffer[offset..<(offset + length)]), as: UTF8.self)
            }
            guard let string = decoded else { throw MalformedSealedContent() }
            result.append(string)
            offset += length
        }
        guard offset == sealedBytes.count else { throw MalformedSealedContent() }
        self = result
    }
}
