/// A v4 OpenPGP key fingerprint: 40 upper-case hexadecimal digits (SHA-1 of the key packet).
public struct PGPFingerprint: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The 40 upper-case hexadecimal digits.
    public let hex: String

    /// Accepts 40 hexadecimal digits in either case (spaces, as gpg prints them, are ignored).
    public init?(hex: String) {
        let compact = hex.filter { $0 != " " }.uppercased()
        guard compact.count == 40, compact.allSatisfy(\.isHexDigit) else { return nil }
        self.hex = compact
    }

    /// The key id: the low 64 bits of a v4 fingerprint.
    public var keyID: PGPKeyID { PGPKeyID(hex: String(hex.suffix(16)))! }

    public var description: String { hex }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let value = PGPFingerprint(hex: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "Not a v4 OpenPGP fingerprint (40 hex digits)"))
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }
}

/// An OpenPGP key id: 16 upper-case hexadecimal digits (what a signature's issuer subpacket names).
public struct PGPKeyID: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The 16 upper-case hexadecimal digits.
    public let hex: String

    /// Accepts 16 hexadecimal digits in either case.
    public init?(hex: String) {
        let compact = hex.filter { $0 != " " }.uppercased()
        guard compact.count == 16, compact.allSatisfy(\.isHexDigit) else { return nil }
        self.hex = compact
    }

    public var description: String { hex }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let value = PGPKeyID(hex: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "Not an OpenPGP key id (16 hex digits)"))
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }
}
