/// The header of an `aes128gcm` body (RFC 8188 §2.1):
/// `salt (16) ‖ rs (4, big-endian) ‖ idlen (1) ‖ keyid (idlen)`.
///
/// Trust-model row: **push payload key** — the header is the associated context of every record:
/// the salt and key id feed the key derivation, so changing either makes decryption fail.
public struct ContentCodingHeader: Sendable, Equatable {
    /// The length of the salt.
    public static let saltLength = 16
    /// The length of the header without its key id.
    public static let fixedLength = 21
    /// The smallest record size RFC 8188 allows (a 16-byte tag, a delimiter and one more byte).
    public static let minimumRecordSize: UInt32 = 18

    /// The per-message random salt (never reused with the same key material).
    public let salt: [UInt8]
    /// The size of every record but the last, ciphertext and tag included.
    public let recordSize: UInt32
    /// The key identifier; for Web Push, the sender's uncompressed P-256 public key.
    public let keyID: [UInt8]

    /// The number of bytes the header takes in the body.
    public var encodedLength: Int { Self.fixedLength + keyID.count }

    /// - Throws: ``PushCryptoError/invalidRecordSize(_:)`` below 18 bytes,
    ///   ``PushCryptoError/truncated(_:)`` for a salt that is not 16 bytes or a key id over 255 bytes.
    public init(salt: [UInt8], recordSize: UInt32, keyID: [UInt8]) throws(PushCryptoError) {
        guard salt.count == Self.saltLength else { throw .truncated("the salt is \(salt.count) bytes, not 16") }
        guard recordSize >= Self.minimumRecordSize else { throw .invalidRecordSize(recordSize) }
        guard keyID.count <= 255 else { throw .truncated("the key id is longer than 255 bytes") }
        self.salt = salt
        self.recordSize = recordSize
        self.keyID = keyID
    }

    /// Reads the header at the start of `body`.
    /// - Throws: ``PushCryptoError/truncated(_:)`` when the body ends inside the header,
    ///   ``PushCryptoError/invalidRecordSize(_:)``.
    public init(parsing body: ArraySlice<UInt8>) throws(PushCryptoError) {
        guard body.count >= Self.fixedLength else {
            throw .truncated("\(body.count) bytes, shorter than the 21-byte header")
        }
        let start = body.startIndex
        let salt = Array(body[start..<start + 16])
        var size: UInt32 = 0
        for byte in body[start + 16..<start + 20] { size = size << 8 | UInt32(byte) }
        let idLength = Int(body[start + 20])
        guard body.count >= Self.fixedLength + idLength else {
            throw .truncated("the body ends inside the \(idLength)-byte key id")
        }
        let keyID = Array(body[start + 21..<start + 21 + idLength])
        try self.init(salt: salt, recordSize: size, keyID: keyID)
    }

    /// The header's bytes.
    public var bytes: [UInt8] {
        var out = salt
        out += [UInt8(recordSize >> 24 & 0xFF), UInt8(recordSize >> 16 & 0xFF), UInt8(recordSize >> 8 & 0xFF), UInt8(recordSize & 0xFF)]
        out.append(UInt8(keyID.count))
        out += keyID
        return out
    }
}
