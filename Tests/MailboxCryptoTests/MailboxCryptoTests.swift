import Foundation
import OpenPGP
import MailboxCrypto
import RampartCore
import Testing

@Suite("Mailbox crypto: OpenPGP account key locked with bcrypt, parts bound to their message")
struct MailboxCryptoTests {
    static func password(_ text: String) -> SecretBytes { SecretBytes(copying: Array(text.utf8)) }

    @Test func theLockedKeyUnlocksOnlyWithTheMailboxPasswordAndItsSalt() throws {
        let created = try MailboxKey.create(name: "Dana", address: "dana@rampart.test", mailboxPassword: Self.password("correct horse"))
        #expect(created.locked.hasPrefix("-----BEGIN PGP PRIVATE KEY BLOCK-----"))
        #expect(created.keySalt.count == 16)
        #expect(created.key.publicKey.addresses == ["dana@rampart.test"])
        let unlocked = try MailboxKey.unlock(locked: created.locked, keySalt: created.keySalt, mailboxPassword: Self.password("correct horse"))
        #expect(unlocked.fingerprint == created.key.fingerprint)
        #expect(throws: MailboxCryptoError.wrongMailboxPassword) {
            try MailboxKey.unlock(locked: created.locked, keySalt: created.keySalt, mailboxPassword: Self.password("correct horsf"))
        }
        var otherSalt = created.keySalt
        otherSalt[0] ^= 1
        #expect(throws: MailboxCryptoError.wrongMailboxPassword) {
            try MailboxKey.unlock(locked: created.locked, keySalt: otherSalt, mailboxPassword: Self.password("correct horse"))
        }
        #expect(throws: MailboxCryptoError.self) {
            try MailboxKey.unlock(locked: "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\ngarbage\n", keySalt: created.keySalt,
                                  mailboxPassword: Self.password("correct horse"))
        }
        #expect(throws: MailboxCryptoError.malformed("key salt")) {
            try MailboxKey.unlock(locked: created.locked, keySalt: [1, 2, 3], mailboxPassword: Self.password("correct horse"))
        }
        // Zero access: the locked key holds no secret in clear and the passphrase is not the password.
        #expect(!created.locked.contains("correct horse"))
    }

    @Test func aPartOpensOnlyForItsMessageAndPartAndReportsItsSigner() throws {
        let alice = try PGPPrivateKey.generate(name: "Alice", address: "alice@rampart.test")
        let bob = try PGPPrivateKey.generate(name: "Bob", address: "bob@rampart.test")
        let body = Data("{\"subject\":\"hi\"}".utf8)
        let sealed = try MailPart.seal(body, to: [bob.publicKey, alice.publicKey], signedBy: alice, messageID: "ms_1", part: "body")
        #expect(MailPart.hasSealedShape(sealed))
        #expect(sealed.range(of: body) == nil)
        let opened = try MailPart.open(sealed, with: [bob], verifyingWith: [alice.publicKey], messageID: "ms_1", part: "body")
        #expect(opened.data == body)
        #expect(opened.signature == .verified(alice.fingerprint))
        // The submission's copies (`<id>.<n>`) open it; other messages and parts do not.
        #expect(try MailPart.open(sealed, with: [alice], messageID: "ms_1.0", part: "body").data == body)
        #expect(try MailPart.open(sealed, with: [bob], messageID: "ms_1.3", part: "body").data == body)
        for (message, part) in [("ms_2", "body"), ("ms_1", "attachment:0"), ("ms_10", "body"), ("ms_1x.1", "body")] {
            #expect(throws: MailboxCryptoError.tampered("\(part) of message \(message)")) {
                try MailPart.open(sealed, with: [bob], messageID: message, part: part)
            }
        }
        // Without the signer's key: unknown key; with another key as verifier: not verified.
        let unknown = try MailPart.open(sealed, with: [bob], messageID: "ms_1", part: "body")
        #expect(unknown.signature == .unknownKey(alice.fingerprint.keyID))
        let other = try MailPart.open(sealed, with: [bob], verifyingWith: [bob.publicKey], messageID: "ms_1", part: "body")
        #expect(other.signature != .verified(alice.fingerprint) && other.signature != .verified(bob.fingerprint))
        // Unsigned parts (the server's or the importer's) say so.
        let unsigned = try MailPart.seal(body, to: [bob.publicKey], signedBy: nil, messageID: "m1", part: "original")
        #expect(try MailPart.open(unsigned, with: [bob], verifyingWith: [alice.publicKey], messageID: "m1", part: "original").signature == .none)
        // Another key opens nothing; every flipped byte of the ciphertext is tampering, never cleartext.
        #expect(throws: MailboxCryptoError.self) { try MailPart.open(sealed, with: [try PGPPrivateKey.generate(name: "E", address: "e@x.example")], messageID: "ms_1", part: "body") }
        // (One recipient: with two, a flip in the other recipient's key packet leaves this one intact.)
        let single = try MailPart.seal(body, to: [bob.publicKey], signedBy: alice, messageID: "ms_1", part: "body")
        for index in stride(from: 0, to: single.count, by: max(1, single.count / 23)) {
            var flipped = single
            flipped[index] ^= 0x10
            #expect(throws: MailboxCryptoError.self) { try MailPart.open(flipped, with: [bob], messageID: "ms_1", part: "body") }
        }
        #expect(throws: MailboxCryptoError.self) { try MailPart.open(sealed.prefix(sealed.count - 5), with: [bob], messageID: "ms_1", part: "body") }
        #expect(!MailPart.hasSealedShape(Data("plain text body that is long enough".utf8)))
    }

    @Test func bindingIDsOfSubmissionCopies() {
        #expect(MailPart.bindingID(ofMessage: "ms_ab.0") == "ms_ab")
        #expect(MailPart.bindingID(ofMessage: "ms_ab.12") == "ms_ab")
        #expect(MailPart.bindingID(ofMessage: "m0123") == "m0123")
        #expect(MailPart.bindingID(ofMessage: "ms_ab.x") == "ms_ab.x")
        #expect(MailPart.bindingID(ofMessage: ".1") == ".1")
    }
}
