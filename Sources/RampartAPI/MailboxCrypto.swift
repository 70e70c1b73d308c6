import Crypto
import _CryptoExtras
import Foundation
import RampartCore

/// Errors of the mailbox crypto. Trust-model rows **mailbox password** and **the user's private
/// and public keys** (critical when read): a wrong password or a modified blob is refused, never
/// turned into a wrong key.
public enum MailboxCryptoError: RampartError, Equatable {
    /// The mailbox password does not open the sealed private key (or the key is another user's).
    case wrongMailboxPassword
    /// The named envelope is too short, has the wrong magic or KDF parameters out of range.
    case malformed(String)
    /// The envelope's version is newer than this build knows.
    case unsupportedVersion(UInt8)
    /// The named part failed authentication: modified, moved to another message, part or user,
    /// or sealed to another key.
    case tampered(String)

    /// The category the CLI's exit status uses.
    public var kind: RampartErrorKind {
        switch self {
        case .tampered: .tampered
        case .wrongMailboxPassword, .malformed, .unsupportedVersion: .failure
        }
    }

    /// A stable, machine-readable code (`mailbox.*`).
    public var code: String {
        switch self {
        case .wrongMailboxPassword: "mailbox.wrongPassword"
        case .malformed: "mailbox.malformed"
        case .unsupportedVersion: "mailbox.unsupportedVersion"
        case .tampered: "mailbox.tampered"
        }
    }

    /// What went wrong and what to do, for a person.
    public var description: String {
        switch self {
        case .wrongMailboxPassword: "The mailbox password is wrong (or the key blob belongs to another user). Try again."
        case .malformed(let what): "The \(what) is malformed and cannot be read."
        case .unsupportedVersion(let version): "Envelope version \(version) is not supported by this version of Rampart; update the app."
        case .tampered(let what): "The \(what) was modified or belongs elsewhere; it was not opened."
        }
    }
}

/// The user's mail key pair (X25519) and the private key sealed under the mailbox password.
///
/// Zero access: the server keeps only the public key and ``sealedPrivateKey(password:userID:)``'s
/// output; it never sees the mailbox password (the client derives the key locally). OpenPGP is not
/// used yet: messages are sealed with HPKE (RFC 9180) to the X25519 public key.
///
/// Sealed private key, version 1: `"RMPK" ‖ 0x01 ‖ logN ‖ r (u32 BE) ‖ p (u32 BE) ‖ salt (16) ‖
/// nonce (12) ‖ ciphertext (32) ‖ tag (16)`; the AEAD is AES-256-GCM under
/// scrypt(password, salt), associated data = header ‖ user id.
///
/// Trust-model rows **mailbox password (critical)** and **the user's private and public keys
/// (critical)**.
public struct MailboxKeyPair: Sendable {
    /// The X25519 private key. Its `rawRepresentation` shares the key's own storage in
    /// swift-crypto: copy it (for example into `SecretBytes`) rather than wiping it in place.
    public let privateKey: Curve25519.KeyAgreement.PrivateKey
    /// The public key, which senders seal ``SealedPart``s to.
    public var publicKey: Curve25519.KeyAgreement.PublicKey { privateKey.publicKey }

    /// A key pair from an existing private key.
    public init(privateKey: Curve25519.KeyAgreement.PrivateKey) { self.privateKey = privateKey }
    /// A fresh random key pair (made at sign-up, by the client or the demo seed).
    public static func generate() -> MailboxKeyPair { MailboxKeyPair(privateKey: .init()) }

    static let magic = Array("RMPK".utf8)
    /// The floor: scrypt N = 2^15, r = 8, p = 1.
    public static let minimumLogN: UInt8 = 15

    /// Seals the private key under `password` for `userID` (scrypt with N = 2^`logN`, r = 8, p = 1,
    /// a random salt; AES-256-GCM with the header and the user id as associated data).
    /// - Precondition: `logN >= minimumLogN`.
    public func sealedPrivateKey(password: SecretBytes, userID: String, logN: UInt8 = 15) throws -> Data {
        precondition(logN >= Self.minimumLogN)
        let salt = Data(SymmetricKey(size: .bits128).withUnsafeBytes { Array($0) })
        var header = Data(Self.magic)
        header.append(1)
        header.append(logN)
        header.append(contentsOf: [0, 0, 0, 8, 0, 0, 0, 1])
        header.append(salt)
        let key = try Self.deriveKey(password: password, salt: salt, logN: logN, r: 8, p: 1)
        let box = try AES.GCM.seal(privateKey.rawRepresentation, using: key, authenticating: header + Data(userID.utf8))
        return header + box.nonce.withUnsafeBytes { Data($0) } + box.ciphertext + box.tag
    }

    /// Opens a sealed private key with the mailbox password.
    /// - Throws: ``MailboxCryptoError/wrongMailboxPassword``, `malformed`, `unsupportedVersion`.
    public static func open(sealed: Data, password: SecretBytes, userID: String) throws -> MailboxKeyPair {
        let bytes = [UInt8](sealed)
        let headerCount = 4 + 1 + 1 + 8 + 16
        guard bytes.count == headerCount + 12 + 32 + 16, Array(bytes[0..<4]) == magic else {
            throw MailboxCryptoError.malformed("sealed private key")
        }
        guard bytes[4] == 1 else { throw MailboxCryptoError.unsupportedVersion(bytes[4]) }
        let logN = bytes[5]
        let r = bytes[6..<10].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let p = bytes[10..<14].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard logN >= minimumLogN, logN <= 22, r >= 8, r <= 32, p >= 1, p <= 4 else {
            throw MailboxCryptoError.malformed("sealed private key (KDF parameters outside the accepted range)")
        }
        let header = Data(bytes[0..<headerCount])
        let salt = Data(bytes[14..<30])
        let key = try deriveKey(password: password, salt: salt, logN: logN, r: Int(r), p: Int(p))
        let nonceStart = headerCount
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: bytes[nonceStart..<nonceStart + 12]),
                ciphertext: bytes[nonceStart + 12..<nonceStart + 44],
                tag: bytes[nonceStart + 44..<nonceStart + 60])
            var raw = try AES.GCM.open(box, using: key, authenticating: header + Data(userID.utf8))
            defer { raw.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
            return MailboxKeyPair(privateKey: try .init(rawRepresentation: raw))
        } catch {
            throw MailboxCryptoError.wrongMailboxPassword
        }
    }

    static func deriveKey(password: SecretBytes, salt: Data, logN: UInt8, r: Int, p: Int) throws -> SymmetricKey {
        try password.withUnsafeBytes { bytes in
            try KDF.Scrypt.deriveKey(from: bytes, salt: salt, outputByteCount: 32, rounds: 1 << Int(logN), blockSize: r, parallelism: p)
        }
    }
}

/// One part of a message (the body, an attachment) sealed to the recipient's public key with
/// HPKE (RFC 9180: DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, ChaCha20-Poly1305).
///
/// Trust-model row **database (critical)** on the server side too: the server stores only these.
/// Format, version 1: `"RMHP" ‖ 0x01 ‖ encapsulated key (32) ‖ ciphertext ‖ tag`. The HPKE `info`
/// is `"rampart.mail.v1" ‖ 0 ‖ user id ‖ 0 ‖ message id ‖ 0 ‖ part`, so a part moved to another
/// message, part or user does not open.
public enum SealedPart {
    static let magic = Array("RMHP".utf8)
    static let suite = HPKE.Ciphersuite.Curve25519_SHA256_ChachaPoly

    static func info(userID: String, messageID: String, part: String) -> Data {
        Data("rampart.mail.v1\u{0}\(userID)\u{0}\(messageID)\u{0}\(part)".utf8)
    }

    /// Seals `plaintext` to `recipient`, bound to the user, the message and the part.
    ///
    /// HPKE base mode does not authenticate the sender: anyone with the public key can seal. What
    /// must come from the user (the drive's node metadata) carries its own MAC inside.
    public static func seal(_ plaintext: Data, to recipient: Curve25519.KeyAgreement.PublicKey,
                            userID: String, messageID: String, part: String) throws -> Data {
        var sender = try HPKE.Sender(recipientKey: recipient, ciphersuite: suite, info: info(userID: userID, messageID: messageID, part: part))
        let ciphertext = try sender.seal(plaintext)
        return Data(magic) + Data([1]) + sender.encapsulatedKey + ciphertext
    }

    /// Opens a part sealed by ``seal(_:to:userID:messageID:part:)`` with the same user, message
    /// and part names.
    /// - Throws: ``MailboxCryptoError/tampered(_:)`` when the part was modified, moved, or sealed to another key;
    ///   ``MailboxCryptoError/malformed(_:)``, ``MailboxCryptoError/unsupportedVersion(_:)``.
    public static func open(_ sealed: Data, with keys: MailboxKeyPair,
                            userID: String, messageID: String, part: String) throws -> Data {
        let bytes = [UInt8](sealed)
        guard bytes.count >= 5 + 32 + 16, Array(bytes[0..<4]) == magic else { throw MailboxCryptoError.malformed("sealed \(part)") }
        guard bytes[4] == 1 else { throw MailboxCryptoError.unsupportedVersion(bytes[4]) }
        do {
            var recipient = try HPKE.Recipient(privateKey: keys.privateKey, ciphersuite: suite,
                                               info: info(userID: userID, messageID: messageID, part: part),
                                               encapsulatedKey: Data(bytes[5..<37]))
            return try recipient.open(Data(bytes[37...]))
        } catch {
            throw MailboxCryptoError.tampered("\(part) of message \(messageID)")
        }
    }
}
