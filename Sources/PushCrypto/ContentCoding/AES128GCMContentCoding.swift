import Crypto
import Foundation
import RampartCore

/// The `aes128gcm` content coding of RFC 8188: a header, then records of `recordSize` bytes, each
/// AES-128-GCM encrypted under a key and nonce derived by HKDF-SHA-256 from the input keying
/// material and the salt, the nonce XORed with the record's sequence number.
///
/// This is the general coder: it reads and writes any number of records. The push path
/// (``WebPushMessage``) calls it with a limit of one record, as RFC 8291 §4 requires.
///
/// Trust-model row: **push payload key** — confidentiality and integrity of each record, and of
/// the record sequence (a dropped final record is detected through the delimiters).
public enum AES128GCMContentCoding {
    /// AES-GCM's tag length.
    public static let tagLength = 16
    static let keyInfo = Array("Content-Encoding: aes128gcm\u{0}".utf8)
    static let nonceInfo = Array("Content-Encoding: nonce\u{0}".utf8)
    static let lastRecordDelimiter: UInt8 = 0x02
    static let recordDelimiter: UInt8 = 0x01

    /// The content-encryption key and nonce base of one message.
    struct RecordKeys {
        let key: SymmetricKey
        let nonceBase: [UInt8]

        init(inputKeyMaterial: SymmetricKey, salt: [UInt8]) {
            key = HKDF<SHA256>.deriveKey(inputKeyMaterial: inputKeyMaterial, salt: salt, info: AES128GCMContentCoding.keyInfo, outputByteCount: 16)
            nonceBase = HKDF<SHA256>.deriveKey(inputKeyMaterial: inputKeyMaterial, salt: salt, info: AES128GCMContentCoding.nonceInfo, outputByteCount: 12)
                .withUnsafeBytes { Array($0) }
        }

        /// RFC 8188 §2.3: the nonce base XOR the sequence number (big-endian, right-aligned).
        func nonce(sequence: UInt64) throws -> AES.GCM.Nonce {
            var bytes = nonceBase
            for index in 0..<8 {
                bytes[11 - index] ^= UInt8(truncatingIfNeeded: sequence >> (8 * UInt64(index)))
            }
            return try AES.GCM.Nonce(data: bytes)
        }

        /// Encrypts one record's plaintext (data, delimiter and padding already laid out).
        func seal(_ record: [UInt8], sequence: UInt64) throws -> [UInt8] {
            let box = try AES.GCM.seal(record, using: key, nonce: nonce(sequence: sequence))
            return Array(box.ciphertext) + Array(box.tag)
        }
    }

    /// Encrypts `plaintext` into an `aes128gcm` body.
    ///
    /// The plaintext is cut into records of `recordSize - 17` bytes; `paddingLength` zero bytes
    /// go into the last record (which must still fit in `recordSize`).
    /// - Throws: ``PushCryptoError/invalidRecordSize(_:)``, ``PushCryptoError/plaintextTooLarge(size:limit:)``
    ///   when the padding does not fit the last record.
    public static func encrypt(
        _ plaintext: SecretBytes,
        inputKeyMaterial: SymmetricKey,
        salt: [UInt8],
        recordSize: UInt32 = 4096,
        keyID: [UInt8],
        paddingLength: Int = 0
    ) throws -> [UInt8] {
        let header = try ContentCodingHeader(salt: salt, recordSize: recordSize, keyID: keyID)
        let keys = RecordKeys(inputKeyMaterial: inputKeyMaterial, salt: salt)
        let chunk = Int(recordSize) - tagLength - 1
        guard paddingLength >= 0 else { throw PushCryptoError.badPadding("negative padding length") }
        return try plaintext.withUnsafeBytes { source -> [UInt8] in
            var body = header.bytes
            var offset = 0
            var sequence: UInt64 = 0
            // Records are full until the remainder (with its padding) fits one record.
            while source.count - offset > chunk {
                var record = [UInt8](source[offset..<offset + chunk])
                record.append(recordDelimiter)
                body += try keys.seal(record, sequence: sequence)
                record.withUnsafeMutableBytes { SecretBytes.zeroize($0) }
                offset += chunk
                sequence += 1
            }
            let remaining = source.count - offset
            guard remaining + paddingLength <= chunk else {
                throw PushCryptoError.plaintextTooLarge(size: remaining + paddingLength, limit: chunk)
            }
            var record = [UInt8](source[offset..<source.count])
            record.append(lastRecordDelimiter)
            record += [UInt8](repeating: 0, count: paddingLength)
            body += try keys.seal(record, sequence: sequence)
            record.withUnsafeMutableBytes { SecretBytes.zeroize($0) }
            return body
        }
    }

    /// Decrypts an `aes128gcm` body of up to `maximumRecords` records.
    ///
    /// Every record is authenticated and unpadded before anything is returned: on any failure
    /// the partial plaintext is zeroized and an error thrown.
    /// - Parameters:
    ///   - body: the whole body, header included.
    ///   - maximumRecords: records beyond this number are refused before any is decrypted.
    ///   - inputKeyMaterial: returns the IKM for the parsed header (for Web Push it depends on
    ///     the key id, the sender's public key).
    /// - Throws: ``PushCryptoError/truncated(_:)``, ``PushCryptoError/invalidRecordSize(_:)``,
    ///   ``PushCryptoError/tooManyRecords(limit:)``, ``PushCryptoError/authenticationFailed``,
    ///   ``PushCryptoError/badPadding(_:)``, and what `inputKeyMaterial` throws.
    public static func decrypt(
        _ body: [UInt8],
        maximumRecords: Int = 1024,
        inputKeyMaterial: (ContentCodingHeader) throws -> SymmetricKey
    ) throws -> SecretBytes {
        let header = try ContentCodingHeader(parsing: body[...])
        return try decrypt(body, header: header, maximumRecords: maximumRecords, inputKeyMaterial: try inputKeyMaterial(header))
    }

    static func decrypt(
        _ body: [UInt8],
        header: ContentCodingHeader,
        maximumRecords: Int,
        inputKeyMaterial: SymmetricKey
    ) throws -> SecretBytes {
        let content = body[header.encodedLength...]
        guard !content.isEmpty else { throw PushCryptoError.truncated("the body has a header but no record") }
        let size = Int(header.recordSize)
        let recordCount = (content.count + size - 1) / size
        guard recordCount <= maximumRecords else {
            throw maximumRecords == 1 ? PushCryptoError.multipleRecords : PushCryptoError.tooManyRecords(limit: maximumRecords)
        }
        let keys = RecordKeys(inputKeyMaterial: inputKeyMaterial, salt: header.salt)
        var plaintext: [UInt8] = []
        plaintext.reserveCapacity(content.count)
        do {
            var start = content.startIndex
            var sequence: UInt64 = 0
            while start < content.endIndex {
                let end = min(start + size, content.endIndex)
                let isLast = end == content.endIndex
                let record = content[start..<end]
                guard record.count > tagLength else {
                    throw PushCryptoError.truncated("a record of \(record.count) bytes has no room for its tag and delimiter")
                }
                let box = try AES.GCM.SealedBox(
                    nonce: keys.nonce(sequence: sequence),
                    ciphertext: record.dropLast(tagLength),
                    tag: record.suffix(tagLength)
                )
                var opened: Data
                do {
                    opened = try AES.GCM.open(box, using: keys.key)
                } catch {
                    throw PushCryptoError.authenticationFailed
                }
                defer { opened.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
                try opened.withUnsafeBytes { (decrypted: UnsafeRawBufferPointer) in
                    guard let delimiterIndex = decrypted.lastIndex(where: { $0 != 0 }) else {
                        throw PushCryptoError.badPadding("the record is all zeros, with no delimiter")
                    }
                    switch (decrypted[delimiterIndex], isLast) {
                    case (lastRecordDelimiter, true), (recordDelimiter, false):
                        plaintext.append(contentsOf: decrypted[0..<delimiterIndex])
                    case (recordDelimiter, true):
                        throw PushCryptoError.truncated("the final record announces more records")
                    case (lastRecordDelimiter, false):
                        throw PushCryptoError.badPadding("an end-of-content delimiter before the last record")
                    case (let other, _):
                        throw PushCryptoError.badPadding(String(format: "delimiter 0x%02x is neither 0x01 nor 0x02", other))
                    }
                }
                start = end
                sequence += 1
            }
        } catch {
            plaintext.withUnsafeMutableBytes { SecretBytes.zeroize($0) }
            throw error
        }
        return SecretBytes(consuming: &plaintext)
    }
}
