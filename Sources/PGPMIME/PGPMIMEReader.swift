import Foundation
import MIME
import OpenPGP

/// How an incoming message is protected.
public enum PGPMIMEProtection: String, Sendable, Codable, Equatable {
    /// No OpenPGP protection this library reads (plain mail, S/MIME, …).
    case none
    /// `multipart/encrypted; protocol="application/pgp-encrypted"` (RFC 3156 §4).
    case pgpMIMEEncrypted
    /// `multipart/signed; protocol="application/pgp-signature"` (RFC 3156 §5).
    case pgpMIMESigned
    /// A text/plain body that is one armoured `-----BEGIN PGP MESSAGE-----` block.
    case inlineEncrypted
    /// A text/plain body that is one `-----BEGIN PGP SIGNED MESSAGE-----` block (cleartext
    /// signature framework) or an armoured signed-only `PGP MESSAGE`.
    case inlineSigned

    /// Whether the content was encrypted.
    public var isEncrypted: Bool { self == .pgpMIMEEncrypted || self == .inlineEncrypted }
}

/// An incoming message with its OpenPGP protection removed.
public struct PGPMIMEOpened: Sendable {
    /// How the message was protected.
    public var protection: PGPMIMEProtection
    /// The signature over the content (`.none` for unsigned and unprotected mail).
    public var signature: PGPSignatureStatus
    /// The readable message: the original's own header fields (From, To, Subject, Date, …) with
    /// the decrypted or verified content as its body, as RFC 5322 bytes.
    public var bytes: [UInt8]
    /// ``bytes`` parsed.
    public var message: MIMEMessage { MIMEMessage(bytes: bytes) }
}

extension PGPMIME {
    /// How `message` is protected, without any key (what a server or an index can tell).
    public static func protection(of message: MIMEMessage) -> PGPMIMEProtection {
        let root = message.root
        switch root.mimeType {
        case "multipart/encrypted":
            return isPGPProtocol(root, "application/pgp-encrypted") ? .pgpMIMEEncrypted : .none
        case "multipart/signed":
            return isPGPProtocol(root, "application/pgp-signature") ? .pgpMIMESigned : .none
        default:
            guard let inline = inlineBlock(message) else { return .none }
            return inline.kind
        }
    }

    /// Opens an incoming message: decrypts PGP/MIME (`multipart/encrypted`) and inline PGP
    /// messages with `keys`, and checks their signatures and those of `multipart/signed` and
    /// inline cleartext-signed messages against `verifiers` (the sender's pinned keys).
    ///
    /// Trust-model row **inbox (low)**: the message is hostile input. Nothing is returned from an
    /// encrypted message whose integrity check failed (`OpenPGP/OpenPGPError/integrityCheckFailed`
    /// and the library's other errors are thrown as they are: tampered, exit 7). A signed part
    /// that was modified gives `OpenPGP/PGPSignatureStatus/bad(_:)`, never an error, so the
    /// message can still be shown as unverified. The signature of a `multipart/signed` message is
    /// checked over the first part's bytes exactly as they are in the message (line ends made
    /// CRLF), so a modified byte anywhere in the content — a header field of the part, an
    /// attachment — breaks it. Inside an encrypted message, a `multipart/signed` entity (RFC 3156
    /// §6.1, sign then encrypt) is verified too; the signature inside the OpenPGP message wins
    /// when both are there.
    /// - Throws: ``PGPMIMEError/malformed(_:)`` when the message says it is PGP/MIME but is not
    ///   built as RFC 3156 requires; `OpenPGP/OpenPGPError` from decryption and verification.
    public static func open(_ raw: [UInt8], decryptingWith keys: [PGPPrivateKey], verifyingWith verifiers: [PGPPublicKey],
                            limits: PGPLimits = .default) throws -> PGPMIMEOpened {
        let message = MIMEMessage(bytes: raw)
        let root = message.root
        let outer = try outerHeaders(message)
        switch protection(of: message) {
        case .none:
            return PGPMIMEOpened(protection: .none, signature: .none, bytes: raw)
        case .pgpMIMEEncrypted:
            var ciphertext = try encryptedPayload(root)
            // Armour is removed here (its checksum checked) so that a damaged one is reported as such.
            if ciphertext.firstRange(of: Array("-----BEGIN PGP".utf8)) != nil { ciphertext = try Armor.dearmor(ciphertext).binary }
            let decrypted = try OpenPGP.decrypt(Data(ciphertext), with: keys, verifyingWith: verifiers, limits: limits)
            var inner = [UInt8](decrypted.data)
            var signature = decrypted.signature
            let innerMessage = MIMEMessage(bytes: inner, asFile: false)
            if innerMessage.root.mimeType == "multipart/signed", isPGPProtocol(innerMessage.root, "application/pgp-signature") {
                let verified = try verifySigned(inner, innerMessage.root, verifiers: verifiers)
                if signature == .none { signature = verified.status }
                inner = verified.content
            }
            return PGPMIMEOpened(protection: .pgpMIMEEncrypted, signature: signature, bytes: outer + inner)
        case .pgpMIMESigned:
            let verified = try verifySigned(raw, root, verifiers: verifiers)
            return PGPMIMEOpened(protection: .pgpMIMESigned, signature: verified.status, bytes: outer + verified.content)
        case .inlineEncrypted, .inlineSigned:
            guard let inline = inlineBlock(message) else { return PGPMIMEOpened(protection: .none, signature: .none, bytes: raw) }
            let (text, status, kind) = try openInline(inline, keys: keys, verifiers: verifiers, limits: limits)
            // The text part (or the alternative holding it, whose HTML copy would still show
            // the armour) is replaced by the opened text, as quoted-printable UTF-8.
            let entity = Array("Content-Type: text/plain; charset=\"utf-8\"\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n".utf8)
                + TransferEncoding.encodeQuotedPrintable(Array(text.utf8), lineBreak: EntityWriter.crlf)
            var writer = EntityWriter(sevenBit: false)
            writer.replacements[inline.replacing] = entity
            let (_, content) = EntityWriter.split(message.headers)
            let body = try writer.entity(root, fields: content)
            return PGPMIMEOpened(protection: kind, signature: status, bytes: outer + body)
        }
    }

    /// The message's own header fields, CRLF-terminated, and `MIME-Version: 1.0`.
    static func outerHeaders(_ message: MIMEMessage) throws -> [UInt8] {
        let (outer, _) = EntityWriter.split(message.headers)
        return try EntityWriter(sevenBit: false).headerBlock(outer) + Array("MIME-Version: 1.0\r\n".utf8)
    }

    /// Whether a multipart's `protocol` parameter is `expected` (case-insensitive). A missing
    /// parameter counts as PGP when the parts say so (the second part of `multipart/signed` is
    /// `application/pgp-signature`, the first of `multipart/encrypted` `application/pgp-encrypted`).
    static func isPGPProtocol(_ part: MIMEPart, _ expected: String) -> Bool {
        if let proto = part.contentType.parameter("protocol") {
            return proto.trimmingCharacters(in: .whitespaces).lowercased() == expected
        }
        return part.children.contains { $0.mimeType == expected }
    }

    /// The two parts RFC 3156 requires of a `multipart/encrypted` or `multipart/signed` (`type`).
    static func twoParts(of part: MIMEPart, _ type: String) throws -> [MIMEPart] {
        guard case let .multipart(_, parts, _) = part.body else {
            throw PGPMIMEError.malformed("\(type) without parts (no boundary, or the boundary never appears)")
        }
        guard parts.count == 2 else {
            throw PGPMIMEError.malformed("\(type) has \(parts.count) parts; RFC 3156 requires two")
        }
        return parts
    }

    /// The OpenPGP message of a `multipart/encrypted` (RFC 3156 §4), the structure checked.
    static func encryptedPayload(_ root: MIMEPart) throws -> [UInt8] {
        let parts = try twoParts(of: root, "multipart/encrypted")
        guard parts[0].mimeType == "application/pgp-encrypted" else {
            throw PGPMIMEError.malformed("the first part of multipart/encrypted is \(parts[0].mimeType), not application/pgp-encrypted")
        }
        let control = Armor.splitLines(parts[0].content)
        guard control.contains(where: { $0.replacingOccurrences(of: " ", with: "").lowercased() == "version:1" }) else {
            throw PGPMIMEError.malformed("the application/pgp-encrypted part does not say \"Version: 1\"")
        }
        guard parts[1].mimeType == "application/octet-stream" else {
            throw PGPMIMEError.malformed("the second part of multipart/encrypted is \(parts[1].mimeType), not application/octet-stream")
        }
        let payload = parts[1].content
        guard payload.contains(where: { $0 > 0x20 }) else { throw PGPMIMEError.malformed("the encrypted part is empty") }
        return payload
    }

    /// Verifies a `multipart/signed` (RFC 3156 §5) whose raw bytes are `raw`: the signature
    /// over the first part exactly as it is on the wire, CRLF-canonicalized. Returns the status
    /// and the first part's bytes (the content).
    static func verifySigned(_ raw: [UInt8], _ part: MIMEPart, verifiers: [PGPPublicKey]) throws -> (status: PGPSignatureStatus, content: [UInt8]) {
        let parts = try twoParts(of: part, "multipart/signed")
        guard parts[1].mimeType == "application/pgp-signature" else {
            throw PGPMIMEError.malformed("the second part of multipart/signed is \(parts[1].mimeType), not application/pgp-signature")
        }
        let signature = parts[1].content
        guard signature.contains(where: { $0 > 0x20 }) else { throw PGPMIMEError.malformed("the signature part is empty") }
        var boundary = part.contentType.parameter("boundary") ?? ""
        while let last = boundary.unicodeScalars.last, last == " " || last == "\t" { boundary.unicodeScalars.removeLast() }
        let range = try signedRange(raw, start: parts[0].offset, marker: Array("--\(boundary)".utf8))
        let signed = EntityWriter.canonical(raw[range])
        let status = try OpenPGP.verifyDetached(Data(signed), signature: Data(signature), against: verifiers)
        return (status, Array(raw[range]))
    }

    /// The bytes of a `multipart/signed`'s first part: from its first header byte (`start`) to
    /// the line end before the next line that is a boundary line of `marker` (that line end
    /// belongs to the boundary, RFC 2046 §5.1.1).
    static func signedRange(_ raw: [UInt8], start: Int, marker: [UInt8]) throws -> Range<Int> {
        var lineStart = start
        while lineStart < raw.count {
            var lineEnd = lineStart
            while lineEnd < raw.count && raw[lineEnd] != 0x0A && raw[lineEnd] != 0x0D { lineEnd += 1 }
            if raw[lineStart..<lineEnd].starts(with: marker) {
                var rest = raw[(lineStart + marker.count)..<lineEnd]
                if rest.starts(with: [0x2D, 0x2D]) { rest = rest.dropFirst(2) }
                if rest.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) {
                    // Drop the line end before the boundary line.
                    var end = lineStart
                    if end > start && raw[end - 1] == 0x0A { end -= 1 }
                    if end > start && raw[end - 1] == 0x0D { end -= 1 }
                    return start..<max(start, end)
                }
            }
            var next = lineEnd + 1
            if lineEnd < raw.count && raw[lineEnd] == 0x0D && next < raw.count && raw[next] == 0x0A { next += 1 }
            lineStart = next
        }
        throw PGPMIMEError.malformed("the first part of multipart/signed is not followed by a boundary")
    }

    /// An inline PGP block: the text/plain body (its trimmed text is one armour block), and the
    /// part to replace with the opened text.
    struct InlineBlock {
        var kind: PGPMIMEProtection
        var armored: String
        var replacing: [Int]
    }

    static let messageBegin = "-----BEGIN PGP MESSAGE-----"
    static let messageEnd = "-----END PGP MESSAGE-----"
    static let signedBegin = "-----BEGIN PGP SIGNED MESSAGE-----"
    static let signatureEnd = "-----END PGP SIGNATURE-----"

    /// The inline PGP block of `message`, if its text/plain body is one.
    static func inlineBlock(_ message: MIMEMessage) -> InlineBlock? {
        guard let part = message.body(preferring: ["plain"]), part.mimeType == "text/plain" else { return nil }
        let text = part.text().text.trimmingCharacters(in: .whitespacesAndNewlines)
        let kind: PGPMIMEProtection
        if text.hasPrefix(messageBegin) && text.hasSuffix(messageEnd) {
            // Encrypted, or signed only (gpg --sign --armor): the first packet tells.
            let tag = (try? Armor.dearmor(Array(text.utf8))).flatMap { Armor.firstPacket($0.binary)?.tag }
            kind = (tag == 1 || tag == 3) ? .inlineEncrypted : .inlineSigned
        } else if text.hasPrefix(signedBegin) && text.hasSuffix(signatureEnd) {
            kind = .inlineSigned
        } else {
            return nil
        }
        var replacing = part.path
        if replacing.count >= 1 {
            let parentPath = Array(replacing.dropLast())
            if let parent = message.root.walk().first(where: { $0.path == parentPath }), parent.mimeType == "multipart/alternative" {
                replacing = parentPath
            }
        }
        return InlineBlock(kind: kind, armored: text, replacing: replacing)
    }

    /// Decrypts or verifies an inline block: (text, signature status, protection).
    static func openInline(_ block: InlineBlock, keys: [PGPPrivateKey], verifiers: [PGPPublicKey],
                           limits: PGPLimits) throws -> (String, PGPSignatureStatus, PGPMIMEProtection) {
        if block.armored.hasPrefix(signedBegin) {
            let result = try OpenPGP.verifyCleartext(block.armored, against: verifiers)
            return (result.text, result.signature, .inlineSigned)
        }
        // Check the armour here so that a broken block is reported as such.
        _ = try Armor.dearmor(Array(block.armored.utf8))
        let data = Data(block.armored.utf8)
        let opened = block.kind == .inlineEncrypted
            ? try OpenPGP.decrypt(data, with: keys, verifyingWith: verifiers, limits: limits)
            : try OpenPGP.verifySigned(data, against: verifiers, limits: limits)
        return (String(decoding: opened.data, as: UTF8.self), opened.signature, block.kind)
    }
}
