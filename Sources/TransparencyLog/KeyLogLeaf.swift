import Crypto
import Foundation

/// One entry of the key log: an address's key list at one time, in a canonical text encoding
/// whose bytes are the Merkle tree's leaf data.
///
/// ```
/// rampart-key-log/v1
/// index <64 hex: the address's keyed index>
/// time <seconds since 1970>
/// key <64 hex: SHA-256 of one binary OpenPGP public key>   (zero or more, sorted)
/// ```
///
/// No key line means the address has no key any more (the account or address was deleted). The
/// address itself is not in the leaf: only its keyed index (HMAC-SHA256 of the address under a
/// secret of the server's), so the log can be published without listing anyone's address.
///
/// Trust-model row **the user's private and public keys (critical when modified: impersonation)**:
/// a client recomputes this leaf from the keys the server handed it and checks that the leaf is
/// in the witnessed tree; a key the server hands out without logging it fails that check.
public struct KeyLogLeaf: Sendable, Equatable, Codable {
    /// The address's keyed index, 64 lower-case hex digits.
    public var index: String
    /// When the change was made, seconds since 1970 (the entry's epoch).
    public var time: Int64
    /// SHA-256 of each binary OpenPGP public key, 64 lower-case hex digits each, sorted.
    public var keyDigests: [String]

    static let header = "rampart-key-log/v1"

    /// An entry. - Throws: ``TransparencyLogError/outOfRange(_:)`` for an index or digest that is
    /// not 64 lower-case hex digits, or a negative time.
    public init(index: String, time: Int64, keyDigests: [String]) throws {
        guard Self.isDigest(index) else { throw TransparencyLogError.outOfRange("a key log index is 64 lower-case hex digits") }
        guard keyDigests.allSatisfy(Self.isDigest) else { throw TransparencyLogError.outOfRange("a key digest is 64 lower-case hex digits") }
        guard time >= 0 else { throw TransparencyLogError.outOfRange("a key log time is not negative") }
        self.index = index
        self.time = time
        self.keyDigests = keyDigests.sorted()
    }

    /// The entry for `keys` (binary OpenPGP public keys) at `time`.
    public init(index: String, time: Int64, keys: [Data]) throws {
        try self.init(index: index, time: time, keyDigests: keys.map(Self.digest))
    }

    /// The leaf's bytes.
    public var encoded: [UInt8] {
        Array(([Self.header, "index \(index)", "time \(time)"] + keyDigests.map { "key \($0)" }).map { $0 + "\n" }.joined().utf8)
    }

    /// The leaf's hash in the tree.
    public var leafHash: LogHash { LogHash.leaf(encoded) }

    /// Parses a leaf's bytes (exactly the canonical form).
    /// - Throws: ``TransparencyLogError/outOfRange(_:)``.
    public init(encoded: [UInt8]) throws {
        guard let text = String(validating: encoded, as: UTF8.self), text.hasSuffix("\n") else {
            throw TransparencyLogError.outOfRange("a key log leaf is UTF-8 text ending in a newline")
        }
        let lines = text.dropLast().split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count >= 3, lines[0] == Self.header, lines[1].hasPrefix("index "), lines[2].hasPrefix("time "),
              let time = Int64(lines[2].dropFirst(5)), lines[3...].allSatisfy({ $0.hasPrefix("key ") }) else {
            throw TransparencyLogError.outOfRange("not a \(Self.header) leaf")
        }
        try self.init(index: String(lines[1].dropFirst(6)), time: time, keyDigests: lines[3...].map { String($0.dropFirst(4)) })
        guard self.encoded == encoded else { throw TransparencyLogError.outOfRange("a key log leaf not in its canonical form") }
    }

    /// SHA-256 of a binary OpenPGP public key, 64 lower-case hex digits.
    public static func digest(_ key: Data) -> String { hex(Array(SHA256.hash(data: key))) }

    /// The keyed index of `address`: HMAC-SHA256 under `secret` of the lower-cased address.
    public static func index(of address: String, secret: SymmetricKey) -> String {
        hex(Array(HMAC<SHA256>.authenticationCode(for: Data(address.lowercased().utf8), using: secret)))
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    static func isDigest(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }
}
