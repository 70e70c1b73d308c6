/// A v4 OpenPGP key fingerprint: 40 upper-case hexadecimal digits (SHA-1 of the key packet).
public struct PGPFingerprint: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The 40 upper-case hexadecimal digits.
    public let hex: String

    /// Accepts 40 hexadecimal digits in either case (spaces, as gpg prints them, are ignored).
    public init?(hex: String) {
        guard let compact = normalizedHex(hex, digits: 40) else { return nil }
        self.hex = compact
    }

    /// The key id: the low 64 bits of a v4 fingerprint.
    public var keyID: PGPKeyID { PGPKeyID(hex: String(hex.suffix(16)))! }

    public var description: String { hex }

    public init(from decoder: any Decoder) throws {
        self = try decodeHexIdentifier(from: decoder, PGPFingerprint.init(hex:), expected: "Not a v4 OpenPGP fingerprint (40 hex digits)")
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
        guard let compact = normalizedHex(hex, digits: 16) else { return nil }
        self.hex = compact
    }

    public var description: String { hex }

    public init(from decoder: any Decoder) throws {
        self = try decodeHexIdentifier(from: decoder, PGPKeyID.init(hex:), expected: "Not an OpenPGP key id (16 hex digits)")
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }
}

/// `hex` without spaces (as gpg prints fingerprints), upper-cased, if it is exactly `digits`
/// hexadecimal digits.
private func normalizedHex(_ hex: String, digits: Int) -> String? {
    let compact = hex.filter { $0 != " " }.uppercased()
    return compact.count == digits && compact.allSatisfy(\.isHexDigit) ? compact : nil
}

/// Decodes an identifier written as one hexadecimal string, or throws `dataCorrupted` with `expected`.
private func decodeHexIdentifier<Identifier>(from decoder: any Decoder, _ make: (String) -> Identifier?,
                                             expected: String) throws -> Identifier {
    let text = try decoder.singleValueContainer().decode(String.self)
    guard let value = make(text) else {
        throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: expected))
    }
    return value
}
