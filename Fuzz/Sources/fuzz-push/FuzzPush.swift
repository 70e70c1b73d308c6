// Fuzz target: push message bodies (RFC 8188 aes128gcm content coding, RFC 8291 Web Push).
//
// Modes (first byte):
// - raw: the bytes as a body, through ContentCodingHeader, AES128GCMContentCoding.decrypt (a
//   fixed key) and WebPushMessage.checkedHeader/open (a fixed key pair): no crash, typed errors;
// - forged records: the bytes lay out record plaintexts (delimiters and padding as the input
//   says), sealed here with RFC 8188's key and nonce derivation, written independently of the
//   module. Oracle: decrypt succeeds exactly when the spec's padding rules hold, and returns
//   the spec's plaintext;
// - round trip: encrypt(plaintext, record size, padding) then decrypt gives the plaintext.
import Crypto
import Foundation
import FuzzSupport
import PushCrypto
import RampartCore

let target = "push"
let ikm = SymmetricKey(data: [UInt8](repeating: 0x42, count: 32))
let keyPair: PushKeyPair = {
    let key = try! P256.KeyAgreement.PrivateKey(rawRepresentation: [UInt8](repeating: 0x17, count: 32))
    return try! PushKeyPair(sessionID: PushSessionID("fuzz"), createdAt: Date(timeIntervalSince1970: 0),
                            privateKey: key, authSecret: SecretBytes(copying: [UInt8](repeating: 0x33, count: 16)))
}()

/// RFC 8188 §2.2–2.3, written from the RFC.
func recordKeys(salt: [UInt8]) -> (SymmetricKey, [UInt8]) {
    let cek = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: Array("Content-Encoding: aes128gcm\u{0}".utf8), outputByteCount: 16)
    let nonce = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: Array("Content-Encoding: nonce\u{0}".utf8), outputByteCount: 12)
        .withUnsafeBytes { Array($0) }
    return (cek, nonce)
}

func nonce(_ base: [UInt8], _ sequence: Int) -> [UInt8] {
    var n = base
    var s = UInt64(sequence)
    for i in 0..<8 { n[11 - i] ^= UInt8(s & 0xFF); s >>= 8 }
    return n
}

func plaintextBytes(_ secret: SecretBytes) -> [UInt8] {
    (try? secret.withUnsafeBytes { Array($0) }) ?? []
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPush(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var reader = FuzzReader(Fuzz.bytes(data, size))
    switch reader.byte() % 3 {
    case 0:
        let body = reader.rest()
        _ = try? ContentCodingHeader(parsing: body[...])
        _ = try? AES128GCMContentCoding.decrypt(body, maximumRecords: 16) { _ in ikm }
        _ = try? WebPushMessage.checkedHeader(of: body)
        _ = try? WebPushMessage.open(body, with: [keyPair])
    case 1:
        let salt = reader.take(16) + [UInt8](repeating: 0, count: max(0, 16 - reader.bytes.count))
        let recordSize = 18 + reader.byte() % 64
        let (cek, base) = recordKeys(salt: Array(salt.prefix(16)))
        guard let header = try? ContentCodingHeader(salt: Array(salt.prefix(16)), recordSize: UInt32(recordSize), keyID: reader.take(Int(reader.byte() % 4))) else { return 0 }
        var body = header.bytes
        let payload = reader.rest()
        // Each record's plaintext is at most recordSize - 16 bytes.
        let chunk = Int(recordSize) - 16
        var records: [[UInt8]] = []
        var index = 0
        while index < payload.count {
            records.append(Array(payload[index..<min(index + chunk, payload.count)]))
            index += chunk
        }
        guard !records.isEmpty else { return 0 }
        for (sequence, record) in records.enumerated() {
            guard let box = try? AES.GCM.seal(record, using: cek, nonce: AES.GCM.Nonce(data: nonce(base, sequence))) else { return 0 }
            body += Array(box.ciphertext) + Array(box.tag)
        }
        // The spec's reading: strip zero padding; the delimiter is 2 in the last record, 1 before.
        var expected: [UInt8]? = []
        for (i, record) in records.enumerated() {
            guard let d = record.lastIndex(where: { $0 != 0 }), record[d] == (i == records.count - 1 ? 2 : 1) else {
                expected = nil; break
            }
            expected! += record[..<d]
        }
        // A short last record (no room for a tag) is refused before decryption.
        let result = try? AES128GCMContentCoding.decrypt(body, maximumRecords: 1024) { _ in ikm }
        if let result {
            Fuzz.check(expected != nil, target, "a body that breaks the padding rules decrypted")
            Fuzz.check(plaintextBytes(result) == expected!, target, "decrypted plaintext differs from the spec's")
        } else {
            Fuzz.check(expected == nil, target, "a well-formed body was refused (\(records.count) records of size \(recordSize))")
        }
    default:
        let recordSize = UInt32(18 + reader.uint16() % 4096)
        let padding = Int(reader.byte())
        let plaintext = reader.rest()
        let salt = [UInt8](repeating: 0x5A, count: 16)
        guard let body = try? AES128GCMContentCoding.encrypt(SecretBytes(copying: plaintext), inputKeyMaterial: ikm, salt: salt,
                                                             recordSize: recordSize, keyID: [], paddingLength: padding)
        else { return 0 }
        do {
            let back = try AES128GCMContentCoding.decrypt(body, maximumRecords: Int.max) { _ in ikm }
            Fuzz.check(plaintextBytes(back) == plaintext, target, "round trip changed the plaintext")
        } catch {
            Fuzz.violation(target, "a body from encrypt does not decrypt: \(error) (record size \(recordSize), padding \(padding), \(plaintext.count) bytes)")
        }
    }
    return 0
}

/// The process entry point (see `Fuzz.main`).
@_cdecl("fuzz_push_main")
public func fuzzPushMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Fuzz.main(argc, argv, fuzzPush)
}
