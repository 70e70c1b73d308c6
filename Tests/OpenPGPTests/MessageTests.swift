import Foundation
import OpenPGP
import RampartCore
import Testing

/// Two users (keys are fast to generate: Ed25519/Curve25519).
struct Pair {
    let alice: PGPPrivateKey
    let bob: PGPPrivateKey
    init() throws {
        alice = try PGPPrivateKey.generate(name: "Alice", address: "alice@example.org")
        bob = try PGPPrivateKey.generate(name: "Bob", address: "bob@example.org")
    }
}

func isTampered(_ error: any Error) -> Bool {
    (error as? OpenPGPError)?.kind == .tampered
}

@Suite("OpenPGP messages")
struct MessageTests {
    let body = Data("Meet me at noon.\nBring the documents.\n".utf8)

    @Test("Encrypt + sign, then decrypt + verify with the sender's key")
    func encryptSignDecryptVerify() throws {
        let users = try Pair()
        for armor in [false, true] {
            let message = try OpenPGP.encrypt(body, to: [users.bob.publicKey], signedBy: users.alice, armor: armor,
                                              fileName: "note.txt")
            #expect(OpenPGP.isArmored(message) == armor)
            let result = try OpenPGP.decrypt(message, with: [users.bob], verifyingWith: [users.alice.publicKey])
            #expect(result.data == body)
            #expect(result.signature == .verified(users.alice.fingerprint))
            #expect(result.fileName == "note.txt")
        }
    }

    @Test("Several recipients each decrypt; a key not addressed gets noDecryptionKey")
    func recipients() throws {
        let users = try Pair()
        let carol = try PGPPrivateKey.generate(name: "Carol", address: "carol@example.org")
        let message = try OpenPGP.encrypt(body, to: [users.bob.publicKey, users.alice.publicKey], signedBy: users.alice)
        #expect(try OpenPGP.decrypt(message, with: [users.bob], verifyingWith: []).data == body)
        #expect(try OpenPGP.decrypt(message, with: [users.alice], verifyingWith: []).data == body)
        #expect(throws: OpenPGPError.noDecryptionKey) {
            try OpenPGP.decrypt(message, with: [carol], verifyingWith: [users.alice.publicKey])
        }
        #expect(throws: OpenPGPError.noDecryptionKey) {
            try OpenPGP.decrypt(message, with: [], verifyingWith: [])
        }
    }

    @Test("Signature status: no verifiers -> unknownKey; another key -> unknownKey; unsigned -> none")
    func signatureStatuses() throws {
        let users = try Pair()
        let mallory = try PGPPrivateKey.generate(name: "Mallory", address: "alice@example.org")
        let signed = try OpenPGP.encrypt(body, to: [users.bob.publicKey], signedBy: users.alice)
        #expect(try OpenPGP.decrypt(signed, with: [users.bob], verifyingWith: []).signature
                == .unknownKey(users.alice.fingerprint.keyID))
        // Signed by our own key, which we hold privately but did not list as a verifier.
        let own = try OpenPGP.encrypt(body, to: [users.bob.publicKey], signedBy: users.bob)
        #expect(try OpenPGP.decrypt(own, with: [users.bob], verifyingWith: [users.alice.publicKey]).signature
                == .unknownKey(users.bob.fingerprint.keyID))
        // A forger claiming Alice's address signs with their own key.
        let forged = try OpenPGP.encrypt(body, to: [users.bob.publicKey], signedBy: mallory)
        #expect(try OpenPGP.decrypt(forged, with: [users.bob], verifyingWith: [users.alice.publicKey]).signature
                == .unknownKey(mallory.fingerprint.keyID))
        let unsigned = try OpenPGP.encrypt(body, to: [users.bob.publicKey], signedBy: nil)
        let result = try OpenPGP.decrypt(unsigned, with: [users.bob], verifyingWith: [users.alice.publicKey])
        #expect(result.signature == .none)
        #expect(result.data == body)
    }

    @Test("Flipped bits anywhere in the message: refused as tampered, never any data")
    func flippedBits() throws {
        let users = try Pair()
        let message = try OpenPGP.encrypt(Data(repeating: 0x41, count: 2000), to: [users.bob.publicKey],
                                          signedBy: users.alice)
        // Every 7th byte through the whole message (headers, PKESK, SEIPD body, MDC at the end).
        var positions = Array(stride(from: 0, to: message.count, by: 7))
        positions += [message.count - 1, message.count - 2, message.count - 21, message.count - 22]
        var outcomes: [String: Int] = [:]
        for position in positions {
            var tampered = message
            tampered[position] ^= 0x01
            do {
                let result = try OpenPGP.decrypt(tampered, with: [users.bob], verifyingWith: [users.alice.publicKey])
                Issue.record("flipping a bit at \(position) of \(message.count) was accepted: \(result.data.count) bytes, \(result.signature)")
            } catch {
                #expect(isTampered(error), "position \(position): \(error)")
                outcomes[(error as? OpenPGPError)?.code ?? "\(error)", default: 0] += 1
            }
        }
        // Flips inside the encrypted body are caught by the integrity check (MDC), not by luck.
        #expect(outcomes["openpgp.integrityCheckFailed", default: 0] > positions.count / 2, "\(outcomes)")
    }

    @Test("Truncated messages are refused", arguments: [1, 10, 100, 200, 1000])
    func truncated(_ cut: Int) throws {
        let users = try Pair()
        let message = try OpenPGP.encrypt(Data(repeating: 0x42, count: 3000), to: [users.bob.publicKey],
                                          signedBy: users.alice)
        let shorter = message.prefix(message.count - cut)
        #expect { try OpenPGP.decrypt(Data(shorter), with: [users.bob], verifyingWith: []) } throws: { isTampered($0) }
    }

    @Test("Armour garbage is malformed", arguments: [
        "-----BEGIN PGP MESSAGE-----\n\n!!!! not base64 ????\n-----END PGP MESSAGE-----\n",
        "-----BEGIN PGP MESSAGE-----\n\nhQEMA\n-----END PGP MESSAGE-----\n",
        "-----BEGIN PGP MESSAGE-----\n",
        "garbage that is not OpenPGP at all",
        "\u{0}\u{1}\u{2}",
    ])
    func armourGarbage(_ text: String) throws {
        let bob = try PGPPrivateKey.generate(name: "Bob", address: "bob@example.org")
        #expect { try OpenPGP.decrypt(Data(text.utf8), with: [bob], verifyingWith: []) } throws: { isTampered($0) }
    }

    @Test("A signed-only message is not accepted as a decrypted one")
    func notEncrypted() throws {
        let users = try Pair()
        let signed = try OpenPGP.sign(body, with: users.alice)
        #expect { try OpenPGP.decrypt(signed, with: [users.bob], verifyingWith: [users.alice.publicKey]) }
            throws: { isTampered($0) }
    }

    @Test("Detached signatures: good, tampered data, tampered signature, other signer, text mode")
    func detached() throws {
        let users = try Pair()
        for armor in [false, true] {
            let signature = try OpenPGP.detachedSignature(for: body, with: users.alice, armor: armor)
            #expect(OpenPGP.isArmored(signature) == armor)
            if armor { #expect(String(decoding: signature, as: UTF8.self).hasPrefix("-----BEGIN PGP SIGNATURE-----")) }
            #expect(try OpenPGP.verifyDetached(body, signature: signature, against: [users.alice.publicKey])
                    == .verified(users.alice.fingerprint))
            var edited = body
            edited[3] ^= 0x20
            #expect(try OpenPGP.verifyDetached(edited, signature: signature, against: [users.alice.publicKey])
                    == .bad(users.alice.fingerprint))
            #expect(try OpenPGP.verifyDetached(body, signature: signature, against: [users.bob.publicKey])
                    == .unknownKey(users.alice.fingerprint.keyID))
        }
        let binary = try OpenPGP.detachedSignature(for: body, with: users.alice)
        var broken = binary
        broken[broken.count - 5] ^= 0x10
        let status = try? OpenPGP.verifyDetached(body, signature: broken, against: [users.alice.publicKey])
        #expect(status != .verified(users.alice.fingerprint))
        #expect(throws: OpenPGPError.self) {
            try OpenPGP.verifyDetached(body, signature: Data("not a signature".utf8), against: [users.alice.publicKey])
        }

        // Text mode: LF and CRLF forms of the same text verify alike; gpg agrees.
        let lf = Data("line one\nline two\n".utf8)
        let crlf = Data("line one\r\nline two\r\n".utf8)
        let textSignature = try OpenPGP.detachedSignature(for: lf, with: users.alice, textMode: true)
        #expect(try OpenPGP.verifyDetached(crlf, signature: textSignature, against: [users.alice.publicKey])
                == .verified(users.alice.fingerprint))
        let gpg = try GnuPG()
        let packets = try gpg.ok(["--list-packets"], input: textSignature).text
        #expect(packets.contains("sigclass 0x01"))
        try gpg.ok(["--import"], input: users.alice.publicKey.binary)
        let dataFile = FileManager.default.temporaryDirectory.appendingPathComponent("openpgp-text-\(UUID().uuidString)")
        try crlf.write(to: dataFile)
        defer { try? FileManager.default.removeItem(at: dataFile) }
        let gpgVerify = try gpg.run(["--status-fd", "2", "--verify", "-", dataFile.path], input: textSignature)
        #expect(gpgVerify.errors.contains("GOODSIG"), "\(gpgVerify.errors)")
        // Text with white space at line ends still signs (binary signature over the CRLF form).
        let spaced = Data("trailing  \nspace\t\n".utf8)
        let spacedSignature = try OpenPGP.detachedSignature(for: spaced, with: users.alice, armor: true, textMode: true)
        #expect(try OpenPGP.verifyDetached(Data("trailing  \r\nspace\t\r\n".utf8), signature: spacedSignature,
                                           against: [users.alice.publicKey]) == .verified(users.alice.fingerprint))
    }

    @Test("What gpg 2.2 writes by default (compressed, signed) decrypts and verifies; gpg reads what we write")
    func gpgInterop() throws {
        let users = try Pair()
        let gpg = try GnuPG()
        try gpg.ok(["--passphrase", "pw", "--import"], input: Data(try users.bob.locked(passphrase: passphrase("pw")).utf8))
        try gpg.ok(["--import"], input: users.alice.publicKey.binary)
        let gpgKey = try PGPPrivateKey(unprotectedBinary: gpg.ok([
            "--passphrase", "", "--export-secret-keys", try gpg.generateKey("Gina <gina@example.org>"),
        ]).output)

        // gpg -> Rampart: encrypted to Alice, signed by gpg's key, default compression.
        try gpg.ok(["--import"], input: users.alice.publicKey.binary)
        let fromGPG = try gpg.ok(["--trust-model", "always", "--passphrase", "", "--local-user", gpgKey.fingerprint.hex,
                                  "--recipient", users.alice.fingerprint.hex, "--sign", "--encrypt"], input: body).output
        let read = try OpenPGP.decrypt(fromGPG, with: [users.alice], verifyingWith: [gpgKey.publicKey])
        #expect(read.data == body)
        #expect(read.signature == .verified(gpgKey.fingerprint))

        // Rampart -> gpg: what we write is SEIPD v1 (tag 18) with AES-256, no compression, readable by gpg.
        let toGPG = try OpenPGP.encrypt(body, to: [users.bob.publicKey], signedBy: users.alice, armor: true)
        let decrypted = try gpg.ok(["--passphrase", "pw", "--status-fd", "2", "--decrypt"], input: toGPG)
        #expect(decrypted.output == body)
        #expect(decrypted.errors.contains("GOODSIG"))
        #expect(decrypted.errors.contains("DECRYPTION_OKAY"))
        #expect(decrypted.errors.contains("GOODMDC"))
        let packets = try gpg.ok(["--passphrase", "pw", "--list-packets"], input: toGPG)
        #expect(packets.text.contains(":encrypted data packet:"))
        #expect(packets.text.contains("mdc_method: 2"))
        #expect(!packets.text.contains(":compressed packet:"))
        #expect(packets.text.contains("tag=18"))
        let session = try gpg.ok(["--passphrase", "pw", "--show-session-key", "--status-fd", "2", "--decrypt"], input: toGPG)
        #expect(session.errors.contains("SESSION_KEY 9:"))   // cipher algorithm 9 = AES-256
    }

    @Test("A compressed bomb stops at the output limit")
    func compressionBomb() throws {
        let bob = try PGPPrivateKey.generate(name: "Bob", address: "bob@example.org")
        let gpg = try GnuPG()
        try gpg.ok(["--import"], input: bob.publicKey.binary)
        let zeros = Data(count: 4 << 20)
        let bomb = try gpg.ok(["--trust-model", "always", "-z", "9", "--compress-algo", "zlib",
                               "--recipient", bob.fingerprint.hex, "--encrypt"], input: zeros).output
        #expect(bomb.count < 64 << 10)
        #expect(throws: OpenPGPError.self) {
            do {
                _ = try OpenPGP.decrypt(bomb, with: [bob], verifyingWith: [], limits: PGPLimits(maxOutputBytes: 1 << 20))
            } catch let error as OpenPGPError {
                guard case .limitExceeded = error else { Issue.record("expected limitExceeded, got \(error)"); throw error }
                throw error
            }
        }
        // Under a large enough limit it is an ordinary message.
        #expect(try OpenPGP.decrypt(bomb, with: [bob], verifyingWith: [], limits: PGPLimits(maxOutputBytes: 8 << 20)).data
                == zeros)
    }
}
