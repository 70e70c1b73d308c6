import Crypto
import Foundation
import MIME
import OpenPGP
@testable import PGPMIME
import RampartCore
import RampartTestSupport
import Testing

/// A Rampart user (Alice) and a correspondent using GnuPG (Peer), each with the other's public key.
final class Correspondents: @unchecked Sendable {
    let alice: PGPPrivateKey
    let gpg: GnuPG
    let peerFingerprint: String
    let peerKey: PGPPublicKey

    init() async throws {
        alice = try PGPPrivateKey.generate(name: "Alice", address: "alice@rampart.example")
        gpg = try GnuPG()
        peerFingerprint = try await gpg.generateKey("Peer <peer@example.org>")
        peerKey = try PGPPublicKey(armored: try await gpg.exportPublic(peerFingerprint))
        try await gpg.importKey(alice.publicKey.armored())
    }

    var peerPGPFingerprint: PGPFingerprint { PGPFingerprint(hex: peerFingerprint)! }

    func close() { gpg.close() }

    /// The peer's gpg encrypts the file `path` to Alice and signs it, armoured (gpg is expected to
    /// succeed): what a GnuPG user sends.
    func peerEncryptsAndSigns(_ path: String) async throws -> String {
        let run = try await gpg.run(["--armor", "--encrypt", "--sign", "--recipient", alice.fingerprint.hex,
                               "--local-user", peerFingerprint, "--output", "-", path])
        #expect(run.result.status == 0, "\(run.result.stderr)")
        return run.result.stdout
    }
}

/// The text of the sample message: a line with trailing blanks, a `From ` line start, a
/// non-ASCII line, a signature separator with its trailing blank.
let sampleText = "Hello Peer,  \nFrom here on, all is well.\nünïcödé ✓\n-- \nAlice\n"
/// The sample attachment: every byte value.
let sampleAttachment: [UInt8] = (0..<600).map { UInt8($0 % 256) }

func sampleMessage(html: Bool = false) throws -> [UInt8] {
    var builder = MessageBuilder()
    builder.from = [MailAddress(name: "Alice", address: "alice@rampart.example")]
    builder.to = [MailAddress(name: "Peer", address: "peer@example.org")]
    builder.subject = "Quarterly numbers ✓"
    builder.text = sampleText
    if html { builder.html = "<p>Hello <b>Peer</b></p>" }
    builder.attachments = [.init(filename: "numbers.bin", contentType: "application/octet-stream", data: sampleAttachment)]
    return try builder.build()
}

func sha256Hex(_ bytes: [UInt8]) -> String { SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() }

func kind(of error: any Error) -> RampartErrorKind? { (error as? any RampartError)?.kind }

@Suite struct ComposeTests {
    @Test func gpgDecryptsAndVerifiesTheEncryptedMessage() async throws {
        let c = try await Correspondents()
        defer { c.close() }
        let composed = try PGPMIME.encrypt(try sampleMessage(html: true), to: [c.peerKey], signedBy: c.alice)

        // Python's email package sees RFC 3156's structure.
        let view = try await PythonEmail.view(composed, in: c.gpg.home)
        #expect(view.type == "multipart/encrypted")
        #expect(view.protocol == "application/pgp-encrypted")
        #expect(view.parts == ["application/pgp-encrypted", "application/octet-stream"])
        #expect(view.defects.isEmpty)
        #expect(view.subject == "Quarterly numbers ✓")
        #expect(String(decoding: view.payload(0), as: UTF8.self).contains("Version: 1"))
        let armored = view.payload(1)
        #expect(String(decoding: armored, as: UTF8.self).hasPrefix("-----BEGIN PGP MESSAGE-----"))

        // gpg decrypts it and finds Alice's good signature inside.
        let input = try c.gpg.file("encrypted.asc", armored)
        let output = c.gpg.home.child("inner.eml").path
        let run = try await c.gpg.run(["--output", output, "--decrypt", input])
        #expect(run.result.status == 0, "\(run.result.stderr)")
        #expect(run.line("DECRYPTION_OKAY") != nil)
        #expect(run.line("GOODSIG") != nil)
        #expect(run.line("VALIDSIG")?[1] == c.alice.fingerprint.hex)

        // The decrypted inner entity is the whole content: text, HTML and the attachment.
        let inner = [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
        #expect(inner.indices.allSatisfy { inner[$0] != 0x0A || ($0 > 0 && inner[$0 - 1] == 0x0D) },
                "the inner entity is in canonical form (CRLF)")
        let innerView = try await PythonEmail.view(inner, in: c.gpg.home)
        #expect(innerView.type == "multipart/mixed")
        #expect(innerView.text == sampleText)
        #expect(innerView.attachments.map(\.filename) == ["numbers.bin"])
        #expect(innerView.attachments.map(\.sha256) == [sha256Hex(sampleAttachment)])
        #expect(innerView.subject == nil, "the message's own header fields stay outside")
    }

    @Test func gpgVerifiesTheSignedMessageOverTheFirstPartsWireBytes() async throws {
        let c = try await Correspondents()
        defer { c.close() }
        let composed = try PGPMIME.sign(try sampleMessage(), with: c.alice)

        let view = try await PythonEmail.view(composed, in: c.gpg.home)
        #expect(view.type == "multipart/signed")
        #expect(view.protocol == "application/pgp-signature")
        #expect(view.parts == ["multipart/mixed", "application/pgp-signature"])
        #expect(view.defects.isEmpty)
        // The text survives the 7-bit encoding (trailing blanks, "From ", UTF-8) unchanged.
        #expect(view.text == sampleText)
        #expect(view.attachments.map(\.filename) == ["numbers.bin", "signature.asc"])
        #expect(view.attachments.first?.sha256 == sha256Hex(sampleAttachment))

        // The signed part is 7-bit, without trailing blanks and without "From " line starts.
        let signed = view.signedBytes
        #expect(EntityWriter.isSevenBitSafe(signed))

        // gpg verifies the detached signature over exactly those bytes (what a mail client hashes).
        let data = try c.gpg.file("signed.eml", signed)
        let signature = try c.gpg.file("signature.asc", view.payload(1))
        let run = try await c.gpg.run(["--verify", signature, data])
        #expect(run.result.status == 0, "\(run.result.stderr)")
        #expect(run.line("GOODSIG") != nil)
        let valid = try #require(run.line("VALIDSIG"))
        #expect(valid[1] == c.alice.fingerprint.hex)
        // VALIDSIG: fpr date timestamp expire version reserved pk-algo hash-algo class …
        let micalg = ["2": "pgp-sha1", "8": "pgp-sha256", "9": "pgp-sha384", "10": "pgp-sha512", "11": "pgp-sha224"][valid[8]]
        #expect(view.micalg == micalg, "micalg names the signature's hash")
        #expect(valid[9] == "01", "a canonical-text signature")

        // One changed byte of the part: gpg says BAD.
        var tampered = signed
        let index = try #require(tampered.firstIndex(of: UInt8(ascii: "H")))
        tampered[index] = UInt8(ascii: "J")
        let bad = try await c.gpg.run(["--verify", signature, try c.gpg.file("tampered.eml", tampered)])
        #expect(bad.result.status != 0)
        #expect(bad.line("BADSIG") != nil)
    }

    @Test func ownMessagesOpenAgain() async throws {
        let alice = try PGPPrivateKey.generate(name: "Alice", address: "alice@rampart.example")
        let bob = try PGPPrivateKey.generate(name: "Bob", address: "bob@example.org")
        let message = try sampleMessage(html: true)

        let encrypted = try PGPMIME.encrypt(message, to: [bob.publicKey], signedBy: alice)
        let opened = try PGPMIME.open(encrypted, decryptingWith: [bob], verifyingWith: [alice.publicKey])
        #expect(opened.protection == .pgpMIMEEncrypted)
        #expect(opened.signature == .verified(alice.fingerprint))
        #expect(opened.message.subject == "Quarterly numbers ✓")
        #expect(opened.message.from.map(\.address) == ["alice@rampart.example"])
        #expect(opened.message.textBody?.replacingOccurrences(of: "\r\n", with: "\n") == sampleText)
        #expect(opened.message.htmlBody?.contains("<b>Peer</b>") == true)
        #expect(opened.message.attachments.map(\.data) == [sampleAttachment])
        #expect(PGPMIME.protection(of: MIMEMessage(bytes: encrypted)) == .pgpMIMEEncrypted)

        // Not given the signer's key: the signature is there but unknown.
        let unknown = try PGPMIME.open(encrypted, decryptingWith: [bob], verifyingWith: [])
        #expect(unknown.signature == .unknownKey(alice.fingerprint.keyID))

        let signed = try PGPMIME.sign(message, with: alice)
        let verified = try PGPMIME.open(signed, decryptingWith: [], verifyingWith: [alice.publicKey])
        #expect(verified.protection == .pgpMIMESigned)
        #expect(verified.signature == .verified(alice.fingerprint))
        #expect(verified.message.textBody?.replacingOccurrences(of: "\r\n", with: "\n") == sampleText)
        #expect(verified.message.attachments.map(\.data) == [sampleAttachment])
        // Stored with LF line ends (as many mail stores do): still verifies.
        let lf = EntityWriter.canonical(signed).split(separator: 0x0D, omittingEmptySubsequences: false).joined()
        #expect(try PGPMIME.open(Array(lf), decryptingWith: [], verifyingWith: [alice.publicKey]).signature == .verified(alice.fingerprint))
    }

    /// A body that ends in 0x1A keeps it through signing and opening: the DOS end-of-file mark is
    /// undone only where a file enters, never inside a message (found by the pgpmime fuzz target).
    @Test func aBodyEndingInControlZKeepsItSignedAndOpened() async throws {
        let alice = try PGPPrivateKey.generate(name: "Alice", address: "alice@rampart.example")
        let plain = Array("From: Alice <alice@rampart.example>\r\nTo: bob@rampart.example\r\nSubject: hello\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\nHi Bob \u{1A}\u{1A}\u{1A}".utf8)
        let signed = try PGPMIME.sign(plain, with: alice)
        let opened = try PGPMIME.open(signed, decryptingWith: [], verifyingWith: [alice.publicKey])
        #expect(opened.signature == .verified(alice.fingerprint))
        // (textBody drops control characters for display: the bytes are what was signed.)
        #expect(String(decoding: opened.bytes, as: UTF8.self).hasSuffix("Hi Bob \u{1A}\u{1A}\u{1A}"))
    }

    @Test func composingRefusesWhatCannotBeSent() async throws {
        let alice = try PGPPrivateKey.generate(name: "Alice", address: "alice@rampart.example")
        let message = try sampleMessage()
        #expect(throws: PGPMIMEError.self) { try PGPMIME.encrypt(message, to: [], signedBy: alice) }
        #expect(throws: PGPMIMEError.self) { try PGPMIME.sign([], with: alice) }
        let signed = try PGPMIME.sign(message, with: alice)
        do {
            _ = try PGPMIME.sign(signed, with: alice)
            Issue.record("signing a signed message again was accepted")
        } catch {
            #expect(kind(of: error) == .badInput)
        }
    }
}

@Suite struct ReadTests {
    /// An inner MIME entity as another mail program writes it: text and an attachment.
    static let innerEntity = Array("""
        Content-Type: multipart/mixed; boundary="inner-b"\r
        \r
        --inner-b\r
        Content-Type: text/plain; charset=utf-8\r
        Content-Transfer-Encoding: quoted-printable\r
        \r
        Hi from gpg =E2=9C=93\r
        --inner-b\r
        Content-Type: application/octet-stream; name="x.bin"\r
        Content-Disposition: attachment; filename="x.bin"\r
        Content-Transfer-Encoding: base64\r
        \r
        AAECAwQ=\r
        --inner-b--\r

        """.utf8)

    static func wrapEncrypted(_ armored: String) -> [UInt8] {
        Array("""
            From: Peer <peer@example.org>\r
            To: Alice <alice@rampart.example>\r
            Subject: From gpg\r
            MIME-Version: 1.0\r
            Content-Type: multipart/encrypted; protocol="application/pgp-encrypted";\r
             boundary="outer-b"\r
            \r
            This is an OpenPGP/MIME encrypted message.\r
            --outer-b\r
            Content-Type: application/pgp-encrypted\r
            \r
            Version: 1\r
            \r
            --outer-b\r
            Content-Type: application/octet-stream\r
            \r
            \(armored)\r
            --outer-b--\r

            """.utf8)
    }

    static func wrapText(_ text: String) -> [UInt8] {
        Array("""
            From: Peer <peer@example.org>\r
            To: Alice <alice@rampart.example>\r
            Subject: Inline\r
            Content-Type: text/plain; charset=utf-8\r
            Content-Transfer-Encoding: 8bit\r
            \r
            \(text)
            """.utf8)
    }

    @Test func decryptsAndVerifiesPGPMIMEFromGnuPG() async throws {
        let c = try await Correspondents()
        defer { c.close() }
        let input = try c.gpg.file("inner.eml", Self.innerEntity)
        let message = await Self.wrapEncrypted(try c.peerEncryptsAndSigns(input))
        #expect(PGPMIME.protection(of: MIMEMessage(bytes: message)) == .pgpMIMEEncrypted)

        let opened = try PGPMIME.open(message, decryptingWith: [c.alice], verifyingWith: [c.peerKey])
        #expect(opened.protection == .pgpMIMEEncrypted)
        #expect(opened.signature == .verified(c.peerPGPFingerprint))
        #expect(opened.message.subject == "From gpg")
        #expect(opened.message.textBody == "Hi from gpg ✓")
        #expect(opened.message.attachments.map(\.filename) == ["x.bin"])
        #expect(opened.message.attachments.map(\.data) == [[0, 1, 2, 3, 4]])

        // Python reads the opened message the same way.
        let view = try await PythonEmail.view(opened.bytes, in: c.gpg.home)
        #expect(view.text == "Hi from gpg ✓")
        #expect(view.subject == "From gpg")

        let unknown = try PGPMIME.open(message, decryptingWith: [c.alice], verifyingWith: [])
        #expect(unknown.signature == .unknownKey(c.peerPGPFingerprint.keyID))
    }

    @Test func verifiesMultipartSignedFromGnuPG() async throws {
        let c = try await Correspondents()
        defer { c.close() }
        // Stored with LF line ends, as mail stores on Unix keep it; gpg signs the canonical text.
        let firstPart = "Content-Type: text/plain; charset=us-ascii\nContent-Transfer-Encoding: 7bit\n\nSigned by gpg.\nSecond line."
        let data = try c.gpg.file("part.txt", Array(firstPart.utf8))
        let run = try await c.gpg.run(["--armor", "--detach-sign", "--textmode", "--local-user", c.peerFingerprint, "--output", "-", data])
        #expect(run.result.status == 0, "\(run.result.stderr)")
        func message(_ part: String) -> [UInt8] {
            Array("""
                From: Peer <peer@example.org>
                To: alice@rampart.example
                Subject: Signed
                MIME-Version: 1.0
                Content-Type: multipart/signed; micalg=pgp-sha256; protocol="application/pgp-signature"; boundary="sig-b"

                --sig-b
                \(part)
                --sig-b
                Content-Type: application/pgp-signature; name="signature.asc"

                \(run.result.stdout)
                --sig-b--

                """.utf8)
        }
        let opened = try PGPMIME.open(message(firstPart), decryptingWith: [], verifyingWith: [c.peerKey])
        #expect(opened.protection == .pgpMIMESigned)
        #expect(opened.signature == .verified(c.peerPGPFingerprint))
        #expect(opened.message.subject == "Signed")
        #expect(opened.message.textBody == "Signed by gpg.\nSecond line.")

        // A changed body byte or header field of the signed part: BAD, still readable.
        for tampered in [firstPart.replacingOccurrences(of: "Second line.", with: "Second linE."),
                         firstPart.replacingOccurrences(of: "7bit", with: "8bit"),
                         firstPart + "\nAppended."] {
            let result = try PGPMIME.open(message(tampered), decryptingWith: [], verifyingWith: [c.peerKey])
            guard case .bad = result.signature else {
                Issue.record("a modified signed part gave \(result.signature)")
                continue
            }
        }
        // Not given the key: unknown.
        #expect(try PGPMIME.open(message(firstPart), decryptingWith: [], verifyingWith: []).signature
                == .unknownKey(c.peerPGPFingerprint.keyID))
    }

    @Test func opensInlinePGPFromGnuPG() async throws {
        let c = try await Correspondents()
        defer { c.close() }
        let text = "Inline hello ✓\n- a line starting with a dash\nFrom the end.\n"
        let plain = try c.gpg.file("inline.txt", Array(text.utf8))

        let clearsigned = try await c.gpg.run(["--clearsign", "--local-user", c.peerFingerprint, "--output", "-", plain])
        #expect(clearsigned.result.status == 0, "\(clearsigned.result.stderr)")
        let signed = try PGPMIME.open(Self.wrapText(clearsigned.result.stdout), decryptingWith: [], verifyingWith: [c.peerKey])
        #expect(signed.protection == .inlineSigned)
        #expect(signed.signature == .verified(c.peerPGPFingerprint))
        #expect(signed.message.textBody?.replacingOccurrences(of: "\r\n", with: "\n").trimmingCharacters(in: .newlines)
                == text.trimmingCharacters(in: .newlines))
        #expect(signed.message.subject == "Inline")

        let inline = await Self.wrapText(try c.peerEncryptsAndSigns(plain))
        #expect(PGPMIME.protection(of: MIMEMessage(bytes: inline)) == .inlineEncrypted)
        let opened = try PGPMIME.open(inline, decryptingWith: [c.alice], verifyingWith: [c.peerKey])
        #expect(opened.protection == .inlineEncrypted)
        #expect(opened.signature == .verified(c.peerPGPFingerprint))
        #expect(opened.message.textBody?.replacingOccurrences(of: "\r\n", with: "\n") == text)

        // Signed only, armoured (gpg --sign --armor): a PGP MESSAGE that is not encrypted.
        let signedOnly = try await c.gpg.run(["--armor", "--sign", "--local-user", c.peerFingerprint, "--output", "-", plain])
        let message = Self.wrapText(signedOnly.result.stdout)
        #expect(PGPMIME.protection(of: MIMEMessage(bytes: message)) == .inlineSigned)
        let verified = try PGPMIME.open(message, decryptingWith: [], verifyingWith: [c.peerKey])
        #expect(verified.signature == .verified(c.peerPGPFingerprint))
        #expect(verified.message.textBody?.replacingOccurrences(of: "\r\n", with: "\n") == text)

        // A clear-signed text changed after signing: BAD.
        let changed = clearsigned.result.stdout.replacingOccurrences(of: "Inline hello", with: "Inline HELLO")
        let bad = try PGPMIME.open(Self.wrapText(changed), decryptingWith: [], verifyingWith: [c.peerKey])
        guard case .bad = bad.signature else { Issue.record("a changed clear-signed text gave \(bad.signature)"); return }
    }

    @Test func aModifiedCiphertextIsRefusedAsTampered() async throws {
        let alice = try PGPPrivateKey.generate(name: "Alice", address: "alice@rampart.example")
        let bob = try PGPPrivateKey.generate(name: "Bob", address: "bob@example.org")
        let encrypted = try PGPMIME.encrypt(try sampleMessage(), to: [bob.publicKey], signedBy: alice)
        let parsed = MIMEMessage(bytes: encrypted)
        let payload = parsed.root.children[1].content
        var (_, binary) = try Armor.dearmor(payload)
        // Flip bits near the end (inside the encrypted data and its MDC), then armour again.
        for offset in [binary.count - 5, binary.count / 2] {
            binary[offset] ^= 0x40
            let reArmored = String(decoding: Armor.armor(binary, kind: "MESSAGE"), as: UTF8.self)
            let message = ReadTests.wrapEncrypted(reArmored)
            do {
                _ = try PGPMIME.open(message, decryptingWith: [bob], verifyingWith: [alice.publicKey])
                Issue.record("a modified ciphertext was opened")
            } catch {
                #expect(kind(of: error) == .tampered, "\(error)")
            }
            binary[offset] ^= 0x40
        }
        // A changed armour character without fixing the checksum: refused too.
        var text = String(decoding: payload, as: UTF8.self)
        let lines = text.components(separatedBy: "\r\n")
        let line = try #require(lines.firstIndex { $0.count >= 60 && !$0.hasPrefix("-") })
        var changed = Array(lines[line])
        changed[10] = changed[10] == "A" ? "B" : "A"
        text = text.replacingOccurrences(of: lines[line], with: String(changed))
        do {
            _ = try PGPMIME.open(ReadTests.wrapEncrypted(text), decryptingWith: [bob], verifyingWith: [])
            Issue.record("a ciphertext with a changed armour character was opened")
        } catch {
            #expect(error as? PGPMIMEError != nil && kind(of: error) == .tampered, "\(error)")
        }
    }

    @Test func malformedStructuresAreTypedErrors() async throws {
        let bob = try PGPPrivateKey.generate(name: "Bob", address: "bob@example.org")
        let header = "From: a@example.org\r\nTo: b@example.org\r\nMIME-Version: 1.0\r\n"
        let cases: [(String, String)] = [
            ("one part", "Content-Type: multipart/encrypted; protocol=\"application/pgp-encrypted\"; boundary=b\r\n\r\n--b\r\nContent-Type: application/pgp-encrypted\r\n\r\nVersion: 1\r\n--b--\r\n"),
            ("no version", "Content-Type: multipart/encrypted; protocol=\"application/pgp-encrypted\"; boundary=b\r\n\r\n--b\r\nContent-Type: application/pgp-encrypted\r\n\r\nVersion: 2\r\n--b\r\nContent-Type: application/octet-stream\r\n\r\n-----BEGIN PGP MESSAGE-----\r\n--b--\r\n"),
            ("wrong second type", "Content-Type: multipart/encrypted; protocol=\"application/pgp-encrypted\"; boundary=b\r\n\r\n--b\r\nContent-Type: application/pgp-encrypted\r\n\r\nVersion: 1\r\n--b\r\nContent-Type: text/plain\r\n\r\nhello\r\n--b--\r\n"),
            ("empty payload", "Content-Type: multipart/encrypted; protocol=\"application/pgp-encrypted\"; boundary=b\r\n\r\n--b\r\nContent-Type: application/pgp-encrypted\r\n\r\nVersion: 1\r\n--b\r\nContent-Type: application/octet-stream\r\n\r\n\r\n--b--\r\n"),
            ("no boundary", "Content-Type: multipart/encrypted; protocol=\"application/pgp-encrypted\"\r\n\r\nVersion: 1\r\n"),
            ("signed, one part", "Content-Type: multipart/signed; protocol=\"application/pgp-signature\"; micalg=pgp-sha256; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nhi\r\n--b--\r\n"),
            ("signed, second part not a signature", "Content-Type: multipart/signed; protocol=\"application/pgp-signature\"; micalg=pgp-sha256; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nhi\r\n--b\r\nContent-Type: text/plain\r\n\r\nsig\r\n--b--\r\n"),
            ("inline armour with broken base64", "Content-Type: text/plain\r\n\r\n-----BEGIN PGP MESSAGE-----\r\n\r\nhQEMA\r\n-----END PGP MESSAGE-----\r\n"),
        ]
        for (name, body) in cases {
            let message = Array((header + body).utf8)
            do {
                let opened = try PGPMIME.open(message, decryptingWith: [bob], verifyingWith: [])
                Issue.record("\(name): opened as \(opened.protection)")
            } catch {
                #expect(kind(of: error) == .tampered, "\(name): \(error)")
            }
        }
        // S/MIME and plain mail are not PGP: returned as they are, no error.
        let smime = Array((header + "Content-Type: multipart/signed; protocol=\"application/pkcs7-signature\"; micalg=sha-256; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nhi\r\n--b\r\nContent-Type: application/pkcs7-signature\r\n\r\nMIIB\r\n--b--\r\n").utf8)
        let opened = try PGPMIME.open(smime, decryptingWith: [bob], verifyingWith: [])
        #expect(opened.protection == .none && opened.signature == .none && opened.bytes == smime)
        let plain = try sampleMessage()
        #expect(try PGPMIME.open(plain, decryptingWith: [bob], verifyingWith: []).bytes == plain)
    }

    @Test func armourMatchesRFC4880() throws {
        #expect(Armor.crc24([]) == 0xB704CE)
        let binary: [UInt8] = Array(0..<200)
        let armored = Armor.armor(binary, kind: "SIGNATURE")
        let (kind, back) = try Armor.dearmor(armored)
        #expect(kind == "SIGNATURE" && back == binary)
        #expect(Armor.micalg(ofSignature: [0xC2, 0x04, 0x04, 0x01, 0x16, 0x0A]) == "pgp-sha512")
        #expect(Armor.micalg(ofSignature: [0x88, 0x04, 0x04, 0x00, 0x16, 0x08]) == "pgp-sha256")
    }
}

@Suite struct OutgoingTests {
    @Test func encryptedOnlyWhenEveryOutsideRecipientHasAKey() async throws {
        let alice = try PGPPrivateKey.generate(name: "Alice", address: "alice@rampart.example")
        let bob = try PGPPrivateKey.generate(name: "Bob", address: "bob@example.org")
        let carol = try PGPPrivateKey.generate(name: "Carol", address: "carol@example.net")
        let message = try sampleMessage()

        let both = try PGPMIME.outgoing(message, recipients: ["Bob@Example.org", "carol@example.net"],
                                        keys: ["bob@example.org": bob.publicKey, "carol@example.net": carol.publicKey], signer: alice)
        #expect(both.protection == .encrypted && both.withoutKey.isEmpty)
        for reader in [bob, carol, alice] {
            let opened = try PGPMIME.open(both.bytes, decryptingWith: [reader], verifyingWith: [alice.publicKey])
            #expect(opened.protection == .pgpMIMEEncrypted)
            #expect(opened.signature == .verified(alice.fingerprint))
        }

        let mixed = try PGPMIME.outgoing(message, recipients: ["bob@example.org", "dave@example.com"],
                                         keys: ["bob@example.org": bob.publicKey], signer: alice)
        #expect(mixed.protection == .signed && mixed.withoutKey == ["dave@example.com"])
        let verified = try PGPMIME.open(mixed.bytes, decryptingWith: [], verifyingWith: [alice.publicKey])
        #expect(verified.protection == .pgpMIMESigned && verified.signature == .verified(alice.fingerprint))

        #expect(throws: PGPMIMEError.self) { try PGPMIME.outgoing(message, recipients: [], keys: [:], signer: alice) }

        // A recipient inside Rampart who keeps the copy as its original can open it too.
        let erin = try PGPPrivateKey.generate(name: "Erin", address: "erin@rampart.example")
        let withLocal = try PGPMIME.outgoing(message, recipients: ["bob@example.org"], keys: ["bob@example.org": bob.publicKey],
                                             signer: alice, alsoEncryptingTo: [erin.publicKey, bob.publicKey])
        #expect(try PGPMIME.open(withLocal.bytes, decryptingWith: [erin], verifyingWith: [alice.publicKey]).signature
                == .verified(alice.fingerprint))
        #expect(throws: OpenPGPError.self) { try PGPMIME.open(withLocal.bytes, decryptingWith: [carol], verifyingWith: []) }
        #expect(PGPMIME.outgoingProtection(recipients: ["a@x.org", "B@y.org"], keys: ["b@y.org": bob.publicKey]) == (.signed, ["a@x.org"]))
    }
}
