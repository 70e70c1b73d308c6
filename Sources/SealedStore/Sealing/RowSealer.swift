import Crypto
import Foundation
import GRDB
import RampartCore

/// Seals and opens whole rows: one AES-256-GCM envelope per row holds every sealed field, and
/// its associated data covers everything else in the row — the clear columns (time, flags,
/// labels, sizes, …), the table, the primary key, the row version, the user, the schema version
/// and the key version. Changing any column of a row, moving a row, or putting back an older copy
/// of it under a newer version makes the one AEAD check fail.
///
/// Trust-model rows: **database — modified (critical: can mislead the user)**; **device storage
/// (low)**. One AEAD pass per row read or written (the column sub-key's AES key schedule is the
/// only per-call set-up).
///
/// Envelope (format 2), stored in the `sealed` column:
/// ```
/// 0      1 byte   format version (0x02)
/// 1      1 byte   algorithm (0x01 = AES-256-GCM)
/// 2      8 bytes  key version (the MainKey fingerprint)
/// 10    12 bytes  nonce (random)
/// 22     n bytes  ciphertext of the sealed fields, each a UInt32 BE length then its bytes
/// 22+n  16 bytes  GCM tag
/// ```
/// Associated data: `"rampart.row.v2"`, the two header bytes, the schema version (UInt32 BE),
/// length-prefixed user id, the 8-byte key version, length-prefixed table name, the row version
/// (Int64 BE), the number of key values then each typed value, the number of clear values then
/// each typed value (``RowEncoding``).
struct RowSealer: @unchecked Sendable {
    static let formatVersion: UInt8 = 0x02
    static let algorithmAESGCM: UInt8 = 0x01
    static let headerCount = 2 + 8 + 12
    static let tagCount = 16

    private let key: SymmetricKey
    let keyVersion: KeyVersion
    private let prefix: [UInt8]

    init(key: SymmetricKey, user: UserID, keyVersion: KeyVersion, schemaVersion: UInt32) {
        self.key = key
        self.keyVersion = keyVersion
        var prefix = RowEncoding.associatedDataPrefix("rampart.row.v2", format: Self.formatVersion,
                                                      algorithm: Self.algorithmAESGCM, schemaVersion: schemaVersion)
        RowEncoding.appendString(user.rawValue, to: &prefix)
        prefix.append(contentsOf: keyVersion.bytes)
        self.prefix = prefix
    }

    /// The associated data of one row.
    func associatedData(table: String, version: Int64, key: some Collection<DatabaseValue>,
                        clear: some Collection<DatabaseValue>) -> [UInt8] {
        var data = prefix
        data.reserveCapacity(prefix.count + 96)
        RowEncoding.appendString(table, to: &data)
        RowEncoding.appendInt(version, to: &data)
        RowEncoding.appendCount(key.count, to: &data)
        for value in key { RowEncoding.append(value, to: &data) }
        RowEncoding.appendCount(clear.count, to: &data)
        for value in clear { RowEncoding.append(value, to: &data) }
        return data
    }

    /// The sealed fields, each length-prefixed, as one plaintext.
    static func plaintext(_ fields: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(fields.reduce(0) { $0 + $1.count + 4 })
        for field in fields {
            RowEncoding.appendCount(field.count, to: &bytes)
            bytes.append(contentsOf: field)
        }
        return bytes
    }

    func seal(fields: [[UInt8]], associatedData: [UInt8]) throws -> Data {
        let box = try AES.GCM.seal(Self.plaintext(fields), using: key, nonce: AES.GCM.Nonce(),
                                   authenticating: associatedData)
        guard let combined = box.combined else { throw SealedStoreError.invalidInput("AES-GCM nonce size") }
        var envelope = Data(capacity: Self.headerCount + combined.count)
        envelope.append(Self.formatVersion)
        envelope.append(Self.algorithmAESGCM)
        envelope.append(contentsOf: keyVersion.bytes)
        envelope.append(combined)
        return envelope
    }

    /// Authenticates and decrypts a row envelope, then splits it into `fieldCount` fields.
    /// - Throws: the ``TamperReason`` of the failure (the caller names the row).
    func open(envelope: Data, associatedData: [UInt8], fieldCount: Int) throws(TamperReason) -> [Data] {
        guard envelope.count >= Self.headerCount + Self.tagCount else { throw .truncated }
        let start = envelope.startIndex
        guard envelope[start] == Self.formatVersion, envelope[start + 1] == Self.algorithmAESGCM else {
            throw .unknownFormat
        }
        guard envelope[(start + 2)..<(start + 10)].elementsEqual(keyVersion.bytes) else { throw .foreignKeyVersion }
        let plaintext: Data
        do {
            let box = try AES.GCM.SealedBox(combined: envelope[(start + 10)...])
            plaintext = try AES.GCM.open(box, using: key, authenticating: associatedData)
        } catch {
            throw .authenticationFailed
        }
        return try Self.split(plaintext, count: fieldCount)
    }

    static func split(_ plaintext: Data, count: Int) throws(TamperReason) -> [Data] {
        var fields: [Data] = []
        fields.reserveCapacity(count)
        var offset = plaintext.startIndex
        for _ in 0..<count {
            guard plaintext.endIndex - offset >= 4 else { throw .malformedContent }
            let length = plaintext[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            offset += 4
            guard plaintext.endIndex - offset >= length else { throw .malformedContent }
            fields.append(plaintext[offset..<(offset + length)])
            offset += length
        }
        guard offset == plaintext.endIndex else { throw .malformedContent }
        return fields
    }

    /// The key version in a row envelope's header, or nil if unreadable.
    static func keyVersion(ofEnvelope envelope: Data) -> KeyVersion? {
        guard envelope.count >= headerCount + tagCount else { return nil }
        let start = envelope.startIndex
        return KeyVersion(bytes: [UInt8](envelope[(start + 2)..<(start + 10)]))
    }
}

/// The unambiguous byte encoding of column values used in row associated data and in the
/// row-set digest: a type tag, then a fixed-size integer or a length-prefixed byte string, so no
/// two different rows (or an integer and its text) encode alike.
enum RowEncoding {
    /// The start of a sealer's associated data: its label, format and algorithm bytes and the
    /// schema version (big-endian), shared by the row and the column sealer.
    static func associatedDataPrefix(_ label: String, format: UInt8, algorithm: UInt8, schemaVersion: UInt32) -> [UInt8] {
        var prefix = Array(label.utf8)
        prefix.append(format)
        prefix.append(algorithm)
        withUnsafeBytes(of: schemaVersion.bigEndian) { prefix.append(contentsOf: $0) }
        return prefix
    }

    static func appendCount(_ count: Int, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: count).bigEndian) { bytes.append(contentsOf: $0) }
    }

    static func appendInt(_ value: Int64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    static func appendString(_ string: String, to bytes: inout [UInt8]) {
        var string = string
        string.withUTF8 { utf8 in
            appendCount(utf8.count, to: &bytes)
            bytes.append(contentsOf: utf8)
        }
    }

    static func append(_ value: DatabaseValue, to bytes: inout [UInt8]) {
        switch value.storage {
        case .null:
            bytes.append(0)
        case .int64(let int):
            bytes.append(1)
            appendInt(int, to: &bytes)
        case .double(let double):
            bytes.append(2)
            withUnsafeBytes(of: double.bitPattern.bigEndian) { bytes.append(contentsOf: $0) }
        case .string(let string):
            bytes.append(3)
            appendString(string, to: &bytes)
        case .blob(let data):
            bytes.append(4)
            appendCount(data.count, to: &bytes)
            bytes.append(contentsOf: data)
        }
    }
}
