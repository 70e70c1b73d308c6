import Crypto
import Foundation

/// A SHA-256 hash of a log: a leaf's, an inner node's or a whole tree's.
public struct LogHash: Sendable, Hashable, CustomStringConvertible, Codable {
    /// The 32 bytes.
    public let bytes: [UInt8]

    /// Wraps 32 bytes. - Throws: ``TransparencyLogError/outOfRange(_:)`` for another length.
    public init(bytes: [UInt8]) throws {
        guard bytes.count == 32 else { throw TransparencyLogError.outOfRange("a hash is 32 bytes, not \(bytes.count)") }
        self.bytes = bytes
    }

    init(digest: SHA256.Digest) { bytes = Array(digest) }

    /// The hash of an empty tree, SHA-256 of nothing (RFC 9162 §2.1.1).
    public static let emptyTree = LogHash(digest: SHA256.hash(data: [UInt8]()))

    /// A leaf's hash: SHA-256(0x00 ‖ data) (RFC 9162 §2.1.1).
    public static func leaf(_ data: some DataProtocol) -> LogHash {
        var hasher = SHA256()
        hasher.update(data: [0x00])
        hasher.update(data: data)
        return LogHash(digest: hasher.finalize())
    }

    /// An inner node's hash: SHA-256(0x01 ‖ left ‖ right) (RFC 9162 §2.1.1). The two prefixes keep
    /// a leaf from being passed off as a node, and the reverse (second-preimage attacks).
    public static func node(_ left: LogHash, _ right: LogHash) -> LogHash {
        var hasher = SHA256()
        hasher.update(data: [0x01])
        hasher.update(data: left.bytes)
        hasher.update(data: right.bytes)
        return LogHash(digest: hasher.finalize())
    }

    /// Reads standard base64. - Throws: ``TransparencyLogError/outOfRange(_:)`` for anything but
    /// 32 bytes in base64.
    public init(base64: String) throws {
        guard let data = Data(base64Encoded: base64) else { throw TransparencyLogError.outOfRange("a hash is base64") }
        try self.init(bytes: Array(data))
    }

    /// Standard base64, as checkpoints write it.
    public var base64: String { Data(bytes).base64EncodedString() }

    public var description: String { base64 }
}
