import Bcrypt
import Crypto
import Foundation
import OpenPGP
import RampartCore

/// Errors of the mailbox crypto. Trust-model rows **mailbox password** and **the user's private
/// and public keys** (critical when read): a wrong password or a modified part is refused, never
/// turned into a wrong key or into cleartext.
public enum MailboxCryptoError: DescribedRampartError, Equatable {
    /// The mailbox password does not unlock the account's private key.
    case wrongMailboxPassword
    /// The named key or part is not OpenPGP data of the expected shape.
    case malformed(String)
    /// The named part failed authentication: modified, moved to another message, part or user,
    /// or encrypted to another key.
    case tampered(String)
    /// An envelope (a message's original) has a version newer than this build knows.
    case unsupportedVersion(UInt8)

    /// The code, category (the CLI's exit status) and message of each case.
    public var info: RampartErrorInfo {
        switch self {
        case .wrongMailboxPassword:
            RampartErrorInfo(code: "mailbox.wrongPassword", kind: .failure,
                             message: "The mailbox password is wrong (it does not unlock the account's key). Try again.")
        case .malformed(let what):
            RampartErrorInfo(code: "mailbox.malformed", kind: .failure, message: "The \(what) is malformed and cannot be read.")
        case .tampered(let what):
            RampartErrorInfo(code: "mailbox.tampered", kind: .tampered,
                             message: "The \(what) was modified or belongs elsewhere; it was not opened.")
        case .unsupportedVersion(let version):
            RampartErrorInfo(code: "mailbox.unsupportedVersion", kind: .failure,
                             message: "Envelope version \(version) is not supported by this version of Rampart; update the app.")
        }
    }
}

/// The account's OpenPGP key: one key pair per address (v4 Ed25519 signing + Curve25519
/// encryption subkey), its private half locked with a passphrase derived from the mailbox
/// password by bcrypt (Proton's `computeKeyPassword`: `$2y$`, cost 10, a random 16-byte key salt
/// the server keeps and hands out with the key).
///
/// Zero access: the server keeps the armored *locked* private key, the key salt and the public
/// key; it never sees the mailbox password nor the passphrase (the client derives them locally).
///
/// Trust-model rows **mailbox password (critical)** and **the user's private and public keys
/// (critical)**.
public enum MailboxKey {
    /// The length of the key salt.
    public static let keySaltCount = 16

    /// A new key for `address`, locked under `mailboxPassword` with a fresh key salt (account
    /// creation: the demo seed, tests, a sign-up).
    /// - Returns: the unlocked key, the armored locked key and the key salt.
    public static func create(name: String, address: String, mailboxPassword: SecretBytes) throws
        -> (key: PGPPrivateKey, locked: String, keySalt: [UInt8]) {
        let key = try PGPPrivateKey.generate(name: name, address: address)
        let salt = try SecretBytes(randomCount: keySaltCount).withUnsafeBytes { Array($0) }
        let passphrase = try Bcrypt.mailboxKeyPassphrase(password: mailboxPassword, keySalt: salt)
        defer { passphrase.wipe() }
        return (key, try key.locked(passphrase: passphrase), salt)
    }

    /// Unlocks the armored locked key with the mailbox password and the key salt.
    /// - Throws: ``MailboxCryptoError/wrongMailboxPassword``, ``MailboxCryptoError/malformed(_:)``.
    public static func unlock(locked: String, keySalt: [UInt8], mailboxPassword: SecretBytes) throws -> PGPPrivateKey {
        guard keySalt.count == keySaltCount else { throw MailboxCryptoError.malformed("key salt") }
        return try unlockKey(locked, passphrase: try Bcrypt.mailboxKeyPassphrase(password: mailboxPassword, keySalt: keySalt),
                             wrong: MailboxCryptoError.wrongMailboxPassword) { MailboxCryptoError.malformed("locked private key (\($0))") }
    }

    /// Unlocks the armored locked key with `passphrase` (wiped afterwards), for the mailbox
    /// password and the recovery phrase alike: a wrong passphrase throws `wrong`, any other
    /// OpenPGP failure `malformed` of its description.
    static func unlockKey(_ locked: String, passphrase: SecretBytes, wrong: any Error,
                          malformed: (OpenPGPError) -> any Error) throws -> PGPPrivateKey {
        defer { passphrase.wipe() }
        do {
            return try PGPPrivateKey.unlock(armored: locked, passphrase: passphrase)
        } catch OpenPGPError.wrongPassphrase {
            throw wrong
        } catch let error as OpenPGPError {
            throw malformed(error)
        }
    }
}

/// One part of a message (its body, an attachment, its original) as an OpenPGP message:
/// SEIPD (MDC, AES-256) to the recipients' keys, signed inside by the sender when a person sent
/// it (``seal(_:to:signedBy:messageID:part:)``); unsigned when the server or the importing device
/// encrypted mail that arrived in clear.
///
/// Binding: the literal data packet's file name is `rampart/<message>/<part>`, so a part moved
/// to another message, to another part of the same message, or into another user's mailbox
/// under another message id does not open (``open(_:with:verifyingWith:messageID:part:)``). The
/// file name is inside the encryption (MDC-protected): the server, which cannot decrypt, cannot
/// change it. A message sent from a client is encrypted once for all its recipients, so the
/// binding names the submission: the server stores its copies as `<submission>.<n>`
/// (``bindingID(ofMessage:)``).
///
/// Trust-model row **database (critical)**: the server stores only these.
public enum MailPart {
    static let prefix = "rampart/"

    /// The literal file name a part is bound to.
    public static func bindingName(messageID: String, part: String) -> String { "\(prefix)\(messageID)/\(part)" }

    /// The id a message's parts are bound to: the message id itself, or for a copy of a client
    /// submission (`<submission>.<n>`), the submission id.
    public static func bindingID(ofMessage messageID: String) -> String {
        if let dot = messageID.lastIndex(of: "."), dot != messageID.startIndex,
           case let copy = messageID[messageID.index(after: dot)...], !copy.isEmpty, copy.allSatisfy(\.isASCII), copy.allSatisfy(\.isNumber) {
            return String(messageID[..<dot])
        }
        return messageID
    }

    /// Encrypts `plaintext` to every key of `recipients`, signed by `signer` when given, bound to
    /// `messageID` and `part`. Binary OpenPGP.
    public static func seal(_ plaintext: Data, to recipients: [PGPPublicKey], signedBy signer: PGPPrivateKey?,
                            messageID: String, part: String) throws -> Data {
        try OpenPGP.encrypt(plaintext, to: recipients, signedBy: signer, armor: false,
                            fileName: bindingName(messageID: messageID, part: part))
    }

    /// Decrypts a part with `keys`, verifies its signature against `verifiers`, and checks its
    /// binding to `messageID` (or its submission, ``bindingID(ofMessage:)``) and `part`.
    /// - Throws: ``MailboxCryptoError/tampered(_:)`` when the part was modified, moved, or is not
    ///   encrypted to these keys (nothing of it is released).
    public static func open(_ sealed: Data, with keys: [PGPPrivateKey], verifyingWith verifiers: [PGPPublicKey] = [],
                            messageID: String, part: String) throws -> PGPDecrypted {
        let what = "\(part) of message \(messageID)"
        var opened: PGPDecrypted
        do {
            opened = try OpenPGP.decrypt(sealed, with: keys, verifyingWith: verifiers)
        } catch let error as OpenPGPError {
            switch error {
            case .wrongPassphrase, .library, .unsupported: throw MailboxCryptoError.malformed("\(what) (\(error))")
            default: throw MailboxCryptoError.tampered(what)
            }
        }
        let accepted = Set([bindingName(messageID: messageID, part: part),
                            bindingName(messageID: bindingID(ofMessage: messageID), part: part)])
        guard let name = opened.fileName, accepted.contains(name) else {
            opened.data.withUnsafeMutableBytes { SecretBytes.zeroize($0) }
            throw MailboxCryptoError.tampered(what)
        }
        return opened
    }

    /// Whether `data` has the outer shape of an encrypted OpenPGP message in binary form: it
    /// starts with a public-key encrypted session key packet (tag 1, old or new packet format).
    /// Says nothing of whether it opens: only the key holder can tell.
    public static func hasSealedShape(_ data: Data) -> Bool {
        guard data.count >= 16, let first = data.first, first & 0x80 != 0 else { return false }
        if first & 0x40 != 0 { return first & 0x3F == 1 }
        return (first >> 2) & 0x0F == 1
    }
}

extension PGPPrivateKey {
    /// The key of ``ImportIdentity``: HKDF-SHA256 of a signature-free function of the private
    /// key (its unprotected export), so every device of the user derives the same ids and the
    /// server cannot.
    public var importKey: SymmetricKey {
        get throws {
            let exported = try unprotectedExport()
            defer { exported.wipe() }
            return try exported.withUnsafeBytes { bytes in
                HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: bytes),
                                       info: Data("rampart.mail.import-id.v2".utf8), outputByteCount: 32)
            }
        }
    }
}
