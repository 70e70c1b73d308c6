// Fuzz target: incoming PGP/MIME and inline PGP mail as `PGPMIME.open` reads it, and PGP/MIME's
// own armour reader.
//
// The first byte picks the entry point (modulo 8: 5, 6, 7 are 0, 1, 3 again); the rest is the input:
//   0  `PGPMIME.open` on the input as a whole message (the fixed key below decrypts and is the
//      only verifier), and `PGPMIME.protection(of:)`
//   1  integrity: one of the messages composed at start-up (multipart/signed, multipart/encrypted
//      signed and unsigned, inline clear-signed, inline encrypted and signed) edited as the input
//      says (FuzzSupport.Mutations: flip, truncate, insert, delete, duplicate), then opened
//   2  `Armor.dearmor` on the input; a block read is armoured again and reads back the same
//   3  `Armor.armor` of the input's bytes reads back (kind chosen by the input);
//      `Armor.firstPacket` and `Armor.micalg` on the input
//   4  composing: a message with the input's subject and body signed or encrypted here
//      (`PGPMIME.sign` / `PGPMIME.encrypt`), opened unchanged and edited
//
// Oracles beyond "no crash, no hang, bounded memory": every failure is a typed error
// (PGPMIMEError or OpenPGPError); the opened bytes are bounded (the decryption limit, quoted-
// printable growth); `open` reports the protection `protection(of:)` tells; a signature is
// `verified` only as the fixed key, and (modes 1 and 4) only when the opened content is exactly
// what was signed (line ends aside for a detached signature; trailing blanks and line ends aside
// for a cleartext signature); decrypted content is only ever the original plaintext; a message
// composed here opens unchanged, verified, to its own content.
//
// The key is fuzz-openpgp's throwaway key (ed25519 + cv25519, passphrase "fuzz"): unlocked once,
// and Fuzz/make-seeds.py makes gpg seed messages to it.
import Foundation
import FuzzSupport
import MIME
import OpenPGP
@_spi(Fuzzing) import PGPMIME
import RampartCore

let target = "pgpmime"


let limits = PGPLimits(maxOutputBytes: 1 << 20)

/// Runs `body`; a thrown error must be a PGPMIMEError or an OpenPGPError.
@inline(__always)
func typed<T>(_ what: String, _ body: () throws -> T) -> T? {
    Fuzz.typed(target, what, expected: "a PGPMIMEError or OpenPGPError", isTyped: { $0 is PGPMIMEError || $0 is OpenPGPError }, body)
}

/// CRLF line ends (as RFC 3156 signs them): CR LF, a lone LF and a lone CR each become CR LF.
func canonical(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count + 16)
    var previousCR = false
    for c in bytes {
        if c == 0x0A {
            if !previousCR { out += [0x0D, 0x0A] }
            previousCR = false
        } else if c == 0x0D {
            out += [0x0D, 0x0A]
            previousCR = true
        } else {
            out.append(c)
            previousCR = false
        }
    }
    return out
}

/// The content of opened PGP/MIME bytes: what follows the outer header block, which `open` ends
/// with `MIME-Version: 1.0` (the last one before the first blank line).
func content(_ bytes: [UInt8]) -> ArraySlice<UInt8> {
    let marker = Array("MIME-Version: 1.0\r\n".utf8)
    let blank = bytes.firstRange(of: [0x0D, 0x0A, 0x0D, 0x0A]).map { $0.lowerBound + 2 } ?? bytes.count
    var start = 0, from = 0
    while let range = bytes[from..<blank].firstRange(of: marker) {
        start = range.upperBound
        from = range.upperBound
    }
    return bytes[start...]
}

/// The text of the first text/plain part (inline PGP is opened into one), line ends and trailing
/// blanks normalized (a cleartext signature covers the text with those removed, RFC 4880 §7.1).
func plainText(_ bytes: [UInt8]) -> String? {
    guard let part = MIMEMessage(bytes: bytes).body(preferring: ["plain"]), part.mimeType == "text/plain" else { return nil }
    return normalizedText(part.text().text)
}

func normalizedText(_ text: String) -> String {
    // On Unicode scalars: Foundation's replacingOccurrences matches grapheme clusters and misses a
    // CRLF before a combining mark (see MIMEFuzzing.normLines), and a CRLF is one Character.
    var lines: [[Unicode.Scalar]] = [[]]
    var previousCR = false
    for scalar in text.unicodeScalars {
        if scalar == "\n", previousCR { previousCR = false; continue }
        previousCR = scalar == "\r"
        if scalar == "\r" || scalar == "\n" { lines.append([]) } else { lines[lines.count - 1].append(scalar) }
    }
    var out = lines.map { line -> String in
        var s = line[...]
        while let last = s.last, last == " " || last == "\t" { s = s.dropLast() }
        return String(String.UnicodeScalarView(s))
    }
    while let last = out.last, last.isEmpty { out.removeLast() }
    return out.joined(separator: "\n")
}

/// One message composed at start-up and what opening it gave.
struct Composed {
    let name: String
    let bytes: [UInt8]
    let protection: PGPMIMEProtection
    let signed: Bool
    /// The content after the outer header block (PGP/MIME), canonical for a detached signature.
    let content: [UInt8]
    /// The opened text (inline).
    let text: String?
}

struct Fixture {
    let key: PGPPrivateKey
    let messages: [Composed]

    init() {
        do {
            key = try PGPPrivateKey.unlock(armored: fuzzKeyArmored, passphrase: SecretBytes(copying: Array("fuzz".utf8)))
            let pub = key.publicKey
            let mixed = Array("""
                From: Alice <alice@fuzz.invalid>\r
                To: Bob <bob@fuzz.invalid>\r
                Subject: =?utf-8?q?Caf=C3=A9?= plans\r
                Date: Wed, 25 Nov 2026 14:00:00 +0000\r
                Message-ID: <m1@fuzz.invalid>\r
                MIME-Version: 1.0\r
                Content-Type: multipart/mixed; boundary="b1"\r
                \r
                --b1\r
                Content-Type: text/plain; charset=utf-8\r
                Content-Transfer-Encoding: quoted-printable\r
                \r
                Hello Bob,=0D\r
                From here on: caf=C3=A9 at 10.\r
                -- \r
                Alice\r
                --b1\r
                Content-Type: application/octet-stream; name="a.bin"\r
                Content-Disposition: attachment; filename="a.bin"\r
                Content-Transfer-Encoding: base64\r
                \r
                AAECAwQFBgcICQoLDA0ODw==\r
                --b1--\r

                """.utf8)
            let text = "Meet at 10.\n- a dashed line\nFrom here on, trailing blanks   \n\nAlice"
            func inline(_ body: String) -> [UInt8] {
                Array("From: Alice <alice@fuzz.invalid>\r\nTo: bob@fuzz.invalid\r\nSubject: inline\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n".utf8)
                    + Array(body.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n", with: "\r\n").utf8)
            }
            let armored = String(decoding: try OpenPGP.encrypt(Data(text.utf8), to: [pub], signedBy: key, armor: true), as: UTF8.self)
            let made: [(String, [UInt8], PGPMIMEProtection, Bool)] = [
                ("multipart/signed", try PGPMIME.sign(mixed, with: key), .pgpMIMESigned, true),
                ("multipart/encrypted", try PGPMIME.encrypt(mixed, to: [pub], signedBy: key), .pgpMIMEEncrypted, true),
                ("multipart/encrypted unsigned", try PGPMIME.encrypt(mixed, to: [pub], signedBy: nil), .pgpMIMEEncrypted, false),
                ("inline clear-signed", inline(try OpenPGP.cleartextSign(text, with: key)), .inlineSigned, true),
                ("inline encrypted", inline(armored), .inlineEncrypted, true),
            ]
            let key = key
            let composed = try made.map { name, bytes, protection, signed in
                let opened = try PGPMIME.open(bytes, decryptingWith: [key], verifyingWith: [pub], limits: limits)
                guard opened.protection == protection, opened.signature == (signed ? .verified(key.fingerprint) : .none) else {
                    Fuzz.violation(target, "\(name) composed here opens as \(opened.protection), \(opened.signature)")
                }
                let isInline = protection == .inlineSigned || protection == .inlineEncrypted
                let opened_content = content(opened.bytes)
                return Composed(name: name, bytes: bytes, protection: protection, signed: signed,
                                content: protection == .pgpMIMESigned ? canonical(opened_content) : Array(opened_content),
                                text: isInline ? plainText(opened.bytes) : nil)
            }
            messages = composed
            if normalizedText(text) != composed[3].text || normalizedText(text) != composed[4].text {
                Fuzz.violation(target, "inline messages composed here open to other text")
            }
        } catch {
            Fuzz.violation(target, "the fixture cannot be made: \(error)")
        }
    }
}

nonisolated(unsafe) let fixture = Fixture()

/// Opens `raw` and checks the oracles every opening shares; returns the result if it opened.
func open(_ raw: [UInt8], what: String) -> PGPMIMEOpened? {
    let key = fixture.key
    guard let opened = typed(what, { try PGPMIME.open(raw, decryptingWith: [key], verifyingWith: [key.publicKey], limits: limits) }) else {
        return nil
    }
    Fuzz.check(opened.bytes.count <= 4 * (raw.count + limits.maxOutputBytes) + 4096, target,
               "\(what): \(opened.bytes.count) opened bytes from \(raw.count)")
    if case .verified(let fingerprint) = opened.signature {
        Fuzz.check(fingerprint == key.fingerprint, target, "\(what): verified as \(fingerprint), which is not a verifier")
    }
    let told = PGPMIME.protection(of: MIMEMessage(bytes: raw))
    Fuzz.check(opened.protection == told, target, "\(what): opened as \(opened.protection), protection(of:) tells \(told)")
    if opened.protection == .none {
        Fuzz.check(opened.bytes == raw && opened.signature == .none, target, "\(what): an unprotected message changed when opened")
    }
    return opened
}

/// The integrity oracles for a message derived from the composed ones: whatever is verified or
/// decrypted is exactly what was signed or encrypted.
func checkAgainstComposed(_ opened: PGPMIMEOpened, what: String) {
    let verified = opened.signature != .none && opened.signature == .verified(fixture.key.fingerprint)
    switch opened.protection {
    case .pgpMIMESigned:
        guard verified else { return }
        let got = canonical(content(opened.bytes))
        Fuzz.check(fixture.messages.contains { $0.protection == .pgpMIMESigned && $0.content == got }, target,
                   "\(what): multipart/signed verified, but its content is not what was signed\n got=\(String(decoding: got, as: UTF8.self).debugDescription)")
    case .pgpMIMEEncrypted:
        let got = Array(content(opened.bytes))
        Fuzz.check(fixture.messages.contains { $0.protection == .pgpMIMEEncrypted && $0.content == got && (!verified || $0.signed) }, target,
                   "\(what): multipart/encrypted opened (\(opened.signature)) to content that was not encrypted\(verified ? " and signed" : "")")
    case .inlineSigned, .inlineEncrypted:
        guard verified || opened.protection == .inlineEncrypted else { return }
        let text = plainText(opened.bytes)
        let known = fixture.messages.compactMap(\.text) + fixture.messages.filter { $0.protection == .pgpMIMEEncrypted }.map {
            normalizedText(String(decoding: $0.content, as: UTF8.self))
        }
        Fuzz.check(text.map(known.contains) ?? false, target,
                   "\(what): inline \(opened.protection) (\(opened.signature)) opened to text that was not signed or encrypted\n got=\(text.debugDescription)")
    case .none:
        break
    }
}

/// A small message with the input's subject and body, as a mail program writes it.
func message(subject: [UInt8], body: [UInt8], multipart: Bool) -> [UInt8] {
    let subjectText = String(decoding: subject.filter { $0 >= 0x20 && $0 < 0x7F }, as: UTF8.self)
    var out = Array("From: Alice <alice@fuzz.invalid>\r\nTo: bob@fuzz.invalid\r\nSubject: \(subjectText)\r\nMIME-Version: 1.0\r\n".utf8)
    if multipart {
        out += Array("Content-Type: multipart/mixed; boundary=\"fz\"\r\n\r\n--fz\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n".utf8)
        out += body
        out += Array("\r\n--fz\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\r\n".utf8)
        out += Array(Data(body).base64EncodedString(options: .lineLength76Characters).utf8)
        out += Array("\r\n--fz--\r\n".utf8)
    } else {
        out += Array("Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n".utf8) + body
    }
    return out
}

/// The decoded leaves of a message (type and bytes, line ends canonical for text). Parsed as
/// the composer and the opener parse them, as a message and not as a file (`asFile: false`): a
/// file's DOS end-of-file bytes are trimmed, a message's body keeps them, so trimming only the
/// plain side made a body ending in 0x1A look changed once the composer had quoted it.
func leaves(_ bytes: [UInt8]) -> [String] {
    MIMEMessage(bytes: bytes, asFile: false).root.walk().filter { !$0.hasChildren }.map { part in
        let data = part.mimeType.hasPrefix("text/") ? canonical(part.content[...]) : part.content
        return part.mimeType + ":" + Data(data).base64EncodedString()
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPGPMIME(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var reader = FuzzReader(Fuzz.bytes(data, size))
    // Composing (4, a few milliseconds: two OpenPGP operations more) gets one mode byte in eight.
    let mode = [0, 1, 2, 3, 4, 0, 1, 3][Int(reader.byte() % 8)]
    switch mode {
    case 0:
        _ = open(reader.rest(), what: "open")
    case 1:
        let composed = fixture.messages[Int(reader.byte()) % fixture.messages.count]
        let edited = Mutations.apply(composed.bytes, &reader)
        let what = "open(edited \(composed.name))"
        guard let opened = open(edited, what: what) else {
            Fuzz.check(edited != composed.bytes, target, "the unchanged \(composed.name) did not open")
            return 0
        }
        checkAgainstComposed(opened, what: what)
    case 2:
        let text = reader.rest()
        guard let block = typed("dearmor", { try ArmorFuzzing.dearmor(text) }) else { return 0 }
        Fuzz.check(!block.binary.isEmpty, target, "dearmor returned no bytes")
        let again = ArmorFuzzing.armor(block.binary, kind: block.kind)
        guard let back = typed("dearmor(armor)", { try ArmorFuzzing.dearmor(again) }) else {
            Fuzz.violation(target, "a block armoured again (kind \(block.kind.debugDescription)) does not read back")
        }
        Fuzz.check(back.kind == block.kind && back.binary == block.binary, target, "armour round trip changed the block")
    case 3:
        let kinds = ["MESSAGE", "SIGNATURE", "SIGNED MESSAGE", "PUBLIC KEY BLOCK", "X"]
        let kind = kinds[Int(reader.byte()) % kinds.count]
        let binary = reader.rest()
        _ = ArmorFuzzing.firstPacket(binary)
        _ = ArmorFuzzing.micalg(ofSignature: binary)
        let armored = ArmorFuzzing.armor(binary, kind: kind)
        let back = typed("dearmor(armor)") { try ArmorFuzzing.dearmor(armored) }
        if binary.isEmpty {
            Fuzz.check(back == nil, target, "an empty armour block was read")
        } else {
            Fuzz.check(back?.kind == kind && back?.binary == binary, target, "armor then dearmor is not the identity (\(binary.count) bytes)")
        }
        Fuzz.check(ArmorFuzzing.splitLines(armored).allSatisfy { $0.utf8.count <= 64 || $0.hasPrefix("-----") }, target, "an armour line over 64 characters")
    default:
        let choice = reader.byte()
        let subject = reader.take(Int(reader.byte() % 64))
        let body = reader.take(Int(reader.uint16() % 2048))
        let plain = message(subject: subject, body: body, multipart: choice & 2 != 0)
        let key = fixture.key
        let encrypt = choice & 1 == 1
        guard let composed = typed("compose", {
            encrypt ? try PGPMIME.encrypt(plain, to: [key.publicKey], signedBy: key) : try PGPMIME.sign(plain, with: key)
        }) else { return 0 }
        guard let opened = open(composed, what: "open(composed)") else {
            Fuzz.violation(target, "a message composed here (\(encrypt ? "encrypted" : "signed")) does not open")
        }
        Fuzz.check(opened.protection == (encrypt ? .pgpMIMEEncrypted : .pgpMIMESigned) && opened.signature == .verified(key.fingerprint),
                   target, "a message composed here opens as \(opened.protection), \(opened.signature)")
        Fuzz.check(leaves(opened.bytes) == leaves(plain), target,
                   "a message composed here (\(encrypt ? "encrypted" : "signed")) opens to other content\n plain=\(String(decoding: plain, as: UTF8.self).debugDescription)\n opened=\(String(decoding: opened.bytes, as: UTF8.self).debugDescription)")
        // Edited: verified only with the same content.
        let signedContent = canonical(content(opened.bytes))
        let edited = Mutations.apply(composed, &reader)
        guard edited != composed, let again = open(edited, what: "open(edited composed)") else { return 0 }
        guard again.protection == opened.protection else { return 0 }
        if again.signature == .verified(key.fingerprint) {
            let got = canonical(content(again.bytes))
            Fuzz.check(got == signedContent, target, "an edited message composed here verified with other content\n got=\(String(decoding: got, as: UTF8.self).debugDescription)")
        }
        if again.protection == .pgpMIMEEncrypted {
            Fuzz.check(canonical(content(again.bytes)) == signedContent, target, "an edited encrypted message decrypted to other content")
        }
    }
    return 0
}

/// The process entry point (see `Fuzz.main`).
@_cdecl("fuzz_pgpmime_main")
public func fuzzPGPMIMEMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    _ = fixture
    return Fuzz.main(argc, argv, fuzzPGPMIME)
}
