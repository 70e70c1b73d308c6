import Crypto
import Foundation
import RampartCore

/// Message Encryption for Web Push (RFC 8291): an `aes128gcm` body (RFC 8188) of one record,
/// whose input keying material comes from an ECDH between the sender's one-time P-256 key (the
/// header's key id) and the receiver's subscription key, mixed with the 16-byte auth secret:
///
/// ```
/// ecdh = ECDH(as_private, ua_public)
/// IKM  = HKDF-SHA-256(salt: auth_secret, ikm: ecdh, info: "WebPush: info\0" ‖ ua_public ‖ as_public, 32)
/// CEK  = HKDF-SHA-256(salt: salt, ikm: IKM, info: "Content-Encoding: aes128gcm\0", 16)
/// NONCE= HKDF-SHA-256(salt: salt, ikm: IKM, info: "Content-Encoding: nonce\0", 12)
/// ```
///
/// Trust-model row: **push payload key** — the push server relays only ciphertext; the payload
/// opens only with the private key kept in the keychain's shared group.
public enum WebPushMessage {
    /// The largest body a push carries (RFC 8291 §4).
    public static let maximumBodyLength = 4096
    /// The largest plaintext a 4096-byte body can carry: 4096 − 86 (header) − 16 (tag) − 1 (delimiter).
    public static let maximumPlaintextLength = 3993
    /// The record size Rampart's sender writes.
    public static let recordSize: UInt32 = 4096
    static let infoPrefix = Array("WebPush: info\u{0}".utf8)

    /// RFC 8291 §3.4's input keying material.
    static func inputKeyMaterial(
        privateKey: P256.KeyAgreement.PrivateKey,
        peerPublicKey: P256.KeyAgreement.PublicKey,
        receiverPublicKey: [UInt8],
        senderPublicKey: [UInt8],
        authSecret: SecretBytes
    ) throws -> SymmetricKey {
        let shared = try privateKey.sharedSecretFromKeyAgreement(with: peerPublicKey)
        let info = infoPrefix + receiverPublicKey + senderPublicKey
        return try authSecret.withUnsafeBytes { auth in
            shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: auth, sharedInfo: info, outputByteCount: 32)
        }
    }

    /// The result of opening a push body: the plaintext and the salt (for replay detection).
    public struct Opened: Sendable {
        public let plaintext: SecretBytes
        public let salt: [UInt8]
        /// The key pair that opened it.
        public let keyPair: PushKeyPair
    }

    /// The header of a push body, checked against the push path's rules before any decryption.
    /// - Throws: ``PushCryptoError/oversized(size:limit:)``, ``PushCryptoError/truncated(_:)``,
    ///   ``PushCryptoError/invalidRecordSize(_:)``, ``PushCryptoError/invalidSenderKey``,
    ///   ``PushCryptoError/multipleRecords``.
    public static func checkedHeader(of body: [UInt8]) throws -> (ContentCodingHeader, P256.KeyAgreement.PublicKey) {
        guard body.count <= maximumBodyLength else { throw PushCryptoError.oversized(size: body.count, limit: maximumBodyLength) }
        let header = try ContentCodingHeader(parsing: body[...])
        guard header.keyID.count == 65, header.keyID.first == 0x04,
              let senderKey = try? P256.KeyAgreement.PublicKey(x963Representation: header.keyID)
        else { throw PushCryptoError.invalidSenderKey }
        let contentLength = body.count - header.encodedLength
        guard contentLength > 0 else { throw PushCryptoError.truncated("the body has a header but no record") }
        guard contentLength <= Int(header.recordSize) else { throw PushCryptoError.multipleRecords }
        return (header, senderKey)
    }

    /// Opens a push body with the first of `keyPairs` that decrypts it (newest first).
    ///
    /// Refuses, before decrypting anything: bodies over 4096 bytes, more than one record,
    /// a key id that is not a P-256 point. After authentication: bad padding.
    /// - Throws: ``PushCryptoError`` (see ``checkedHeader(of:)``), ``PushCryptoError/authenticationFailed``
    ///   when no key opens it, ``PushCryptoError/badPadding(_:)``, ``PushCryptoError/truncated(_:)``.
    public static func open(_ body: [UInt8], with keyPairs: [PushKeyPair]) throws -> Opened {
        let (header, senderKey) = try checkedHeader(of: body)
        for pair in keyPairs {
            let ikm = try inputKeyMaterial(
                privateKey: pair.privateKey, peerPublicKey: senderKey,
                receiverPublicKey: pair.publicKeyBytes, senderPublicKey: header.keyID, authSecret: pair.authSecret
            )
            do {
                let plaintext = try AES128GCMContentCoding.decrypt(body, header: header, maximumRecords: 1, inputKeyMaterial: ikm)
                return Opened(plaintext: plaintext, salt: header.salt, keyPair: pair)
            } catch PushCryptoError.authenticationFailed {
                continue
            }
        }
        throw PushCryptoError.authenticationFailed
    }
}

/// Encrypts notifications to a registration record, as the push server (the embedded backend)
/// does. Any RFC 8291 receiver can decrypt the result.
///
/// Trust-model row: **push payload key** — a fresh sender key pair and salt for every message.
public enum WebPushSender {
    /// Encrypts `plaintext` to `registration` in one `aes128gcm` record of size 4096.
    /// - Parameters:
    ///   - paddingLength: zero bytes added after the delimiter to hide the length.
    ///   - plaintext: the notification's bytes (at most 3993).
    ///   - registration: the receiver's registration record: its public key and auth secret.
    /// - Throws: ``PushCryptoError/invalidRegistration(_:)``, ``PushCryptoError/plaintextTooLarge(size:limit:)``.
    public static func encrypt(_ plaintext: SecretBytes, to registration: PushRegistration, paddingLength: Int = 0) throws -> [UInt8] {
        var salt = [UInt8](repeating: 0, count: 16)
        var generator = SystemRandomNumberGenerator()
        for index in salt.indices { salt[index] = UInt8.random(in: 0...255, using: &generator) }
        return try encrypt(plaintext, to: registration, salt: salt, senderPrivateKey: P256.KeyAgreement.PrivateKey(), paddingLength: paddingLength)
    }

    /// Encrypts a notification's JSON to `registration`.
    public static func encrypt(_ notification: PushNotification, to registration: PushRegistration, paddingLength: Int = 0) throws -> [UInt8] {
        try encrypt(notification.encodedJSON(), to: registration, paddingLength: paddingLength)
    }

    /// Encrypts with a chosen salt and sender key, for published test vectors only.
    ///
    /// Reusing a salt or sender key with the same receiver breaks confidentiality: production
    /// code calls ``encrypt(_:to:paddingLength:)-(SecretBytes,_,_)``, which draws both afresh.
    @_spi(TestVectors)
    public static func encrypt(
        _ plaintext: SecretBytes,
        to registration: PushRegistration,
        salt: [UInt8],
        senderPrivateKey: P256.KeyAgreement.PrivateKey,
        recordSize: UInt32 = WebPushMessage.recordSize,
        paddingLength: Int = 0
    ) throws -> [UInt8] {
        // One record (rs - 16 tag - 1 delimiter) inside a 4096-byte body (3993).
        let limit = min(Int(recordSize) - AES128GCMContentCoding.tagLength - 1, WebPushMessage.maximumPlaintextLength)
        guard paddingLength >= 0, plaintext.count + paddingLength <= limit else {
            throw PushCryptoError.plaintextTooLarge(size: plaintext.count + paddingLength, limit: limit)
        }
        let receiverKeyBytes = try registration.publicKeyBytes()
        let receiverKey = try registration.receiverPublicKey()
        let authSecret = try registration.authSecretBytes()
        let senderPublic = Array(senderPrivateKey.publicKey.x963Representation)
        let ikm = try WebPushMessage.inputKeyMaterial(
            privateKey: senderPrivateKey, peerPublicKey: receiverKey,
            receiverPublicKey: receiverKeyBytes, senderPublicKey: senderPublic, authSecret: authSecret
        )
        return try AES128GCMContentCoding.encrypt(
            plaintext, inputKeyMaterial: ikm, salt: salt, recordSize: recordSize, keyID: senderPublic, paddingLength: paddingLength
        )
    }
}
