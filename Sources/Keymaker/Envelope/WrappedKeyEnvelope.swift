import Crypto
import Foundation
import RampartCore

/// The kinds of MainKey protector.
public enum ProtectorKind: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// MainKey in clear in the keychain (weak against forensics; still never in backups).
    case none
    /// MainKey wrapped by a key derived from the user's PIN (scrypt).
    case pin
    /// MainKey wrapped by secure hardware (TPM 2.0 / Secure Enclave), no user secret.
    case hardware
    /// MainKey wrapped by secure hardware, with the PIN as the hardware object's authorization.
    case hardwarePIN

    /// The byte that identifies the kind in an envelope.
    public var wireValue: UInt8 {
        switch self {
        case .none: 0
        case .pin: 1
        case .hardware: 2
        case .hardwarePIN: 3
        }
    }

    public init?(wireValue: UInt8) {
        guard let kind = ProtectorKind.allCases.first(where: { $0.wireValue == wireValue }) else { return nil }
        self = kind
    }

    /// Whether unlocking with this protector needs the PIN.
    public var needsPIN: Bool { self == .pin || self == .hardwarePIN }

    public var description: String { rawValue }
}

/// The stored form of a wrapped MainKey, common to every protector.
///
/// Trust-model row: **keychain (low)** — "what the keychain holds is itself wrapped by the
/// MainKey's protector". Binary layout, version 1 (all integers big-endian):
///
/// | bytes | field |
/// |---|---|
/// | 4 | magic `RMKW` |
/// | 1 | format version (1) |
/// | 1 | protector kind (``ProtectorKind/wireValue``) |
/// | 2 + n | user id (length-prefixed UTF-8) |
/// | 1 + n | MainKey fingerprint (length-prefixed ASCII) |
/// | 2 + n | protector parameters (length-prefixed; e.g. scrypt N, r, p, salt) |
/// | 1 + n | nonce (length-prefixed; empty for *none*) |
/// | 2 + n | ciphertext and tag (length-prefixed; the clear key for *none*) |
/// | 8 | checksum: first 8 bytes of SHA-256 over everything before it |
///
/// Everything from the magic through the parameters is the *header*; protectors that encrypt
/// pass it as the AEAD's associated data, so changing the user, the parameters (e.g. weakening
/// the KDF) or the kind makes unwrapping fail. The checksum is not a security measure (anyone
/// can recompute it): it tells a damaged item (``KeymakerError/corruptEnvelope(_:)``, not
/// counted as a wrong PIN) from a wrong PIN.
public struct WrappedKeyEnvelope: Sendable, Equatable {
    public static let magic: [UInt8] = Array("RMKW".utf8)
    public static let currentVersion: UInt8 = 1

    public var version: UInt8
    public var kind: ProtectorKind
    public var userID: UserID
    public var keyFingerprint: String
    public var parameters: Data
    public var nonce: Data
    public var ciphertext: Data

    public init(kind: ProtectorKind, userID: UserID, keyFingerprint: String, parameters: Data = Data(),
                nonce: Data = Data(), ciphertext: Data = Data(), version: UInt8 = WrappedKeyEnvelope.currentVersion) {
        self.version = version
        self.kind = kind
        self.userID = userID
        self.keyFingerprint = keyFingerprint
        self.parameters = parameters
        self.nonce = nonce
        self.ciphertext = ciphertext
    }

    /// The header bytes (associated data for protectors that encrypt).
    public var header: Data {
        var data = Data(Self.magic)
        data.append(version)
        data.append(kind.wireValue)
        let user = Data(userID.rawValue.utf8)
        data.appendLengthPrefixed(user, width: 2)
        data.appendLengthPrefixed(Data(keyFingerprint.utf8), width: 1)
        data.appendLengthPrefixed(parameters, width: 2)
        return data
    }

    /// The full serialized envelope.
    public func serialized() -> Data {
        var data = header
        data.appendLengthPrefixed(nonce, width: 1)
        data.appendLengthPrefixed(ciphertext, width: 2)
        data.append(contentsOf: SHA256.hash(data: data).prefix(8))
        return data
    }

    /// Parses a stored envelope.
    /// - Throws: ``KeymakerError/corruptEnvelope(_:)`` for damaged bytes,
    ///   ``KeymakerError/unsupportedEnvelopeVersion(_:)`` for an unknown version,
    ///   ``KeymakerError/envelopeFromAnotherUser`` if `expectedUser` differs.
    public static func parse(_ bytes: Data, expectedUser: UserID? = nil) throws -> WrappedKeyEnvelope {
        var reader = ByteReader(Data(bytes))
        guard bytes.count >= 4 + 2 + 8, Array(try reader.read(4)) == magic else {
            throw KeymakerError.corruptEnvelope("not a Rampart wrapped key")
        }
        guard bytes.count > 8 else { throw KeymakerError.corruptEnvelope("truncated") }
        let body = bytes.prefix(bytes.count - 8)
        let checksum = bytes.suffix(8)
        guard Data(SHA256.hash(data: body).prefix(8)) == Data(checksum) else {
            throw KeymakerError.corruptEnvelope("checksum mismatch (damaged or truncated)")
        }
        reader = ByteReader(Data(body))
        _ = try reader.read(4)
        let version = try reader.readByte()
        guard version == currentVersion else { throw KeymakerError.unsupportedEnvelopeVersion(version) }
        let kindByte = try reader.readByte()
        guard let kind = ProtectorKind(wireValue: kindByte) else {
            throw KeymakerError.corruptEnvelope("unknown protector kind \(kindByte)")
        }
        guard let userString = String(data: try reader.readLengthPrefixed(width: 2), encoding: .utf8),
              let user = try? UserID(validating: userString) else {
            throw KeymakerError.corruptEnvelope("invalid user id")
        }
        guard let fingerprint = String(data: try reader.readLengthPrefixed(width: 1), encoding: .ascii) else {
            throw KeymakerError.corruptEnvelope("invalid key fingerprint")
        }
        let parameters = try reader.readLengthPrefixed(width: 2)
        let nonce = try reader.readLengthPrefixed(width: 1)
        let ciphertext = try reader.readLengthPrefixed(width: 2)
        guard reader.isAtEnd else { throw KeymakerError.corruptEnvelope("trailing bytes") }
        if let expectedUser, expectedUser != user { throw KeymakerError.envelopeFromAnotherUser }
        return WrappedKeyEnvelope(kind: kind, userID: user, keyFingerprint: fingerprint, parameters: parameters,
                                  nonce: nonce, ciphertext: ciphertext, version: version)
    }
}

extension WrappedKeyEnvelope {
    /// Takes the unwrapped MainKey out of `opened` (the opened ``ciphertext``, zeroed here) and
    /// checks it against ``keyFingerprint``: `nil`, with the key wiped, when it is another key.
    /// Shared by the protectors that open the ciphertext with their own key-encryption key.
    public func adoptUnwrappedKey(_ opened: inout Data) throws -> MainKey? {
        var bytes = [UInt8](opened)
        opened.resetBytes(in: opened.startIndex..<opened.endIndex)
        let key = try MainKey(adopting: SecretBytes(consuming: &bytes))
        guard key.fingerprint == keyFingerprint else {
            key.wipe()
            return nil
        }
        return key
    }
}

extension Data {
    mutating func appendLengthPrefixed(_ value: Data, width: Int) {
        precondition(value.count < (1 << (8 * width)), "field too long for its length prefix")
        for shift in stride(from: (width - 1) * 8, through: 0, by: -8) {
            append(UInt8((value.count >> shift) & 0xFF))
        }
        append(value)
    }
}

/// Reads big-endian fields from bytes, throwing ``KeymakerError/corruptEnvelope(_:)`` on overrun.
public struct ByteReader {
    private let data: Data
    private var offset: Int

    public init(_ data: Data) {
        self.data = data
        self.offset = data.startIndex
    }

    public var isAtEnd: Bool { offset == data.endIndex }

    public mutating func read(_ count: Int) throws -> Data {
        guard count >= 0, data.endIndex - offset >= count else { throw KeymakerError.corruptEnvelope("truncated") }
        defer { offset += count }
        return data.subdata(in: offset..<(offset + count))
    }

    public mutating func readByte() throws -> UInt8 {
        try read(1).first!
    }

    public mutating func readUInt(width: Int) throws -> Int {
        try read(width).reduce(0) { ($0 << 8) | Int($1) }
    }

    public mutating func readLengthPrefixed(width: Int) throws -> Data {
        try read(try readUInt(width: width))
    }
}
