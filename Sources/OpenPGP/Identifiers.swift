/// A v4 OpenPGP key fingerprint: 40 upper-case hexadecimal digits (SHA-1 of the key packet).
public struct PGPFingerprint: PGPHexIdentifier {
    /// The 40 upper-case hexadecimal digits.
    public let hex: String

    /// Accepts 40 hexadecimal digits in either case (spaces, as gpg prints them, are ignored).
    public init?(hex: String) {
        guard let compact = normalizedHex(hex, digits: 40) else { return nil }
        self.hex = compact
    }

    /// The key id: the low 64 bits of a v4 fingerprint.
    public var keyID: PGPKeyID { PGPKeyID(hex: String(hex.suffix(16)))! }

    public static let expectedForm = "Not a v4 OpenPGP fingerprint (40 hex digits)"
}

/// An OpenPGP key id: 16 upper-case hexadecimal digits (what a signature's issuer subpacket names).
public struct PGPKeyID: PGPHexIdentifier {
    /// The 16 upper-case hexadecimal digits.
    public let hex: String

    /// Accepts 16 hexadecimal digits in either case.
    public init?(hex: String) {
        guard let compact = normalizedHex(hex, digits: 16) else { return nil }
        self.hex = compact
    }

    public static let expectedForm = "Not an OpenPGP key id (16 hex digits)"
}

/// An identifier written as a fixed number of upper-case hexadecimal digits (``PGPFingerprint``,
/// ``PGPKeyID``): described and coded as that one string.
public protocol PGPHexIdentifier: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The upper-case hexadecimal digits.
    var hex: String { get }
    /// Accepts the digits in either case; nil for anything else.
    init?(hex: String)
    /// What decoding says when a string is not such an identifier.
    static var expectedForm: String { get }
}

extension PGPHexIdentifier {
    public var description: String { hex }

    /// Decodes the identifier from one hexadecimal string, or throws `dataCorrupted` with
    /// ``expectedForm``.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let value = Self(hex: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: Self.expectedForm))
        }
        self = value
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
