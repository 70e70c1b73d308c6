import Foundation
import MIME
import OpenPGP

/// PGP/MIME (RFC 3156): mail to correspondents outside Rampart, encrypted and signed so that any
/// OpenPGP mail program (Thunderbird, Mutt with gpg, Proton Mail, K-9/FairEmail) reads it, and
/// reading what those programs send.
///
/// Trust-model row **outbox (moderate)**: a message to an outside address whose key is pinned
/// leaves encrypted to that key and signed by the sender (``encrypt(_:to:signedBy:)``); to an
/// address without a key it leaves in clear but signed (``sign(_:with:)``), so the recipient can
/// tell it is unmodified and from the sender. Row **inbox (low)**: ``open(_:decryptingWith:verifyingWith:limits:)``.
public enum PGPMIME {
    /// The preamble of a `multipart/encrypted` message (shown by mail programs without PGP/MIME).
    static let encryptedPreamble = "This is an OpenPGP/MIME encrypted message (RFC 4880 and 3156)"
    /// The preamble of a `multipart/signed` message.
    static let signedPreamble = "This is an OpenPGP/MIME signed message (RFC 4880 and 3156)"

    /// Encrypts a whole RFC 5322 message (as `MIME/MessageBuilder` writes it) as
    /// `multipart/encrypted; protocol="application/pgp-encrypted"` (RFC 3156 §4).
    ///
    /// The message's own header fields (From, To, Subject, Date, Message-ID, …) stay outside;
    /// its content — the `Content-*` fields and the body with every part and attachment — is the
    /// inner MIME entity, in canonical form (CRLF), encrypted to every recipient and signed inside
    /// the encryption by `signer` (RFC 3156 §6.2: one OpenPGP message, signed then encrypted).
    /// The outer message has a version part (`Version: 1`) and the armoured OpenPGP message as
    /// `application/octet-stream`.
    /// - Throws: ``PGPMIMEError/invalidInput(_:)`` for no recipients, no header fields or a message
    ///   that already is PGP/MIME; `OpenPGP/OpenPGPError` from the encryption (a key that cannot
    ///   encrypt: `.unsupported`).
    public static func encrypt(_ message: [UInt8], to recipients: [PGPPublicKey], signedBy signer: PGPPrivateKey?) throws -> [UInt8] {
        guard !recipients.isEmpty else { throw PGPMIMEError.invalidInput("there is no recipient key to encrypt to") }
        let parsed = try parseOutgoing(message)
        let (outer, content) = EntityWriter.split(parsed.headers)
        let inner = try EntityWriter(sevenBit: false).entity(parsed.root, fields: content)
        let armored = try OpenPGP.encrypt(Data(inner), to: recipients, signedBy: signer, armor: true)
        let ciphertext = EntityWriter.canonical([UInt8](armored))
        let boundary = try makeBoundary(avoiding: ciphertext)
        let crlf = EntityWriter.crlf
        var out = try EntityWriter(sevenBit: false).headerBlock(outer)
        out += Array("""
            MIME-Version: 1.0\r
            Content-Type: multipart/encrypted;\r
             protocol="application/pgp-encrypted";\r
             boundary="\(boundary)"\r
            \r
            \(encryptedPreamble)\r
            --\(boundary)\r
            Content-Type: application/pgp-encrypted\r
            Content-Description: PGP/MIME version identification\r
            \r
            Version: 1\r
            \r
            --\(boundary)\r
            Content-Type: application/octet-stream; name="encrypted.asc"\r
            Content-Description: OpenPGP encrypted message\r
            Content-Disposition: inline; filename="encrypted.asc"\r
            \r

            """.utf8)
        out += ciphertext
        if ciphertext.last != 0x0A { out += crlf }
        out += Array("\r\n--\(boundary)--\r\n".utf8)
        return out
    }

    /// Signs a whole RFC 5322 message (as `MIME/MessageBuilder` writes it) as
    /// `multipart/signed; micalg=…; protocol="application/pgp-signature"` (RFC 3156 §5).
    ///
    /// The first part is the message's content (its `Content-*` fields and body) made 7-bit safe
    /// (see `EntityWriter`: quoted-printable or base64 wherever a transport could change a
    /// byte, no trailing blanks) in canonical form; the second is a detached, armoured,
    /// canonical-text signature (type 0x01) over exactly the bytes of the first part as they are
    /// on the wire, from its first header byte to the CRLF before the next boundary (that CRLF
    /// excluded). `micalg` names the hash the signature uses.
    /// - Throws: ``PGPMIMEError/invalidInput(_:)`` for no header fields, 8-bit content header
    ///   fields, or a message that already is PGP/MIME; `OpenPGP/OpenPGPError` from signing.
    public static func sign(_ message: [UInt8], with signer: PGPPrivateKey) throws -> [UInt8] {
        let parsed = try parseOutgoing(message)
        let (outer, content) = EntityWriter.split(parsed.headers)
        let signed = try EntityWriter(sevenBit: true).entity(parsed.root, fields: content)
        let binary = [UInt8](try OpenPGP.detachedSignature(for: Data(signed), with: signer, armor: false, textMode: true))
        guard let micalg = Armor.micalg(ofSignature: binary) else {
            throw PGPMIMEError.invalidInput("the OpenPGP library made a signature whose hash algorithm has no micalg name")
        }
        let signature = Armor.armor(binary, kind: "SIGNATURE")
        let boundary = try makeBoundary(avoiding: signed)
        var out = try EntityWriter(sevenBit: false).headerBlock(outer)
        out += Array("""
            MIME-Version: 1.0\r
            Content-Type: multipart/signed; micalg=\(micalg);\r
             protocol="application/pgp-signature";\r
             boundary="\(boundary)"\r
            \r
            \(signedPreamble)\r
            --\(boundary)\r

            """.utf8)
        out += signed
        out += Array("""
            \r
            --\(boundary)\r
            Content-Type: application/pgp-signature; name="signature.asc"\r
            Content-Description: OpenPGP digital signature\r
            Content-Disposition: attachment; filename="signature.asc"\r
            \r

            """.utf8)
        out += signature
        out += Array("\r\n--\(boundary)--\r\n".utf8)
        return out
    }

    /// Parses a message to be sent; refuses one without header fields or already protected.
    static func parseOutgoing(_ message: [UInt8]) throws -> MIMEMessage {
        let parsed = MIMEMessage(bytes: message, asFile: false)
        guard !message.isEmpty, !parsed.headers.fields.isEmpty else {
            throw PGPMIMEError.invalidInput("the message has no header fields")
        }
        guard !["multipart/encrypted", "multipart/signed"].contains(parsed.root.mimeType) else {
            throw PGPMIMEError.invalidInput("the message already is \(parsed.root.mimeType)")
        }
        return parsed
    }

    /// A random boundary that does not occur in `content` (RFC 2046 §5.1.1: at most 70
    /// characters, none that need quoting beyond `=`).
    static func makeBoundary(avoiding content: [UInt8]) throws -> String {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<16 {
            let hex = (0..<12).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
            let boundary = "=_rampart_pgp_" + hex
            if content.firstRange(of: Array(boundary.utf8)) == nil { return boundary }
        }
        throw PGPMIMEError.invalidInput("no boundary could be found that does not occur in the message")
    }
}
