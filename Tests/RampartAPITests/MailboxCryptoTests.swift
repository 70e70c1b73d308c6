import Crypto
import Foundation
import RampartAPI
import RampartCore
import Testing

@Suite("Mailbox crypto: zero-access private key and HPKE-sealed parts")
struct MailboxCryptoTests {
    static func password(_ text: String) -> SecretBytes { SecretBytes(copying: Array(text.utf8)) }

    @Test func sealedPrivateKeyOpensOnlyWithTheMailboxPasswordAndUser() throws {
        let pair = MailboxKeyPair.generate()
        let sealed = try pair.sealedPrivateKey(password: Self.password("correct horse"), userID: "u1")
        let opened = try MailboxKeyPair.open(sealed: sealed, password: Self.password("correct horse"), userID: "u1")
        #expect(opened.publicKey.rawRepresentation == pair.publicKey.rawRepresentation)
        #expect(throws: MailboxCryptoError.wrongMailboxPassword) {
            try MailboxKeyPair.open(sealed: sealed, password: Self.password("correct horsf"), userID: "u1")
        }
        #expect(throws: MailboxCryptoError.wrongMailboxPassword) {
            try MailboxKeyPair.open(sealed: sealed, password: Self.password("correct horse"), userID: "u2")
        }
        // The raw private key never appears in the blob the server stores.
        #expect(sealed.range(of: pair.privateKey.rawRepresentation) == nil)
    }

    @Test func everyByteOfTheSealedKeyIsAuthenticated() throws {
        let sealed = try MailboxKeyPair.generate().sealedPrivateKey(password: Self.password("pw-123456"), userID: "u1")
        for index in stride(from: 0, to: sealed.count, by: 3) {
            var bytes = sealed
            bytes[index] ^= 0x01
            #expect(throws: MailboxCryptoError.self) {
                try MailboxKeyPair.open(sealed: bytes, password: Self.password("pw-123456"), userID: "u1")
            }
        }
        #expect(throws: MailboxCryptoError.malformed("sealed private key")) {
            try MailboxKeyPair.open(sealed: sealed.dropLast(), password: Self.password("pw-123456"), userID: "u1")
        }
    }

    @Test func weakenedKDFParametersAreRefused() throws {
        var sealed = try MailboxKeyPair.generate().sealedPrivateKey(password: Self.password("pw"), userID: "u1")
        sealed[5] = 10
        #expect(throws: MailboxCryptoError.self) { try MailboxKeyPair.open(sealed: sealed, password: Self.password("pw"), userID: "u1") }
        var future = try MailboxKeyPair.generate().sealedPrivateKey(password: Self.password("pw"), userID: "u1")
        future[4] = 9
        #expect(throws: MailboxCryptoError.unsupportedVersion(9)) { try MailboxKeyPair.open(sealed: future, password: Self.password("pw"), userID: "u1") }
    }

    @Test func aPartOpensOnlyForItsUserMessagePartAndKey() throws {
        let pair = MailboxKeyPair.generate()
        let body = Data("<p>hello</p>".utf8)
        let sealed = try SealedPart.seal(body, to: pair.publicKey, userID: "u1", messageID: "m1", part: "body")
        #expect(try SealedPart.open(sealed, with: pair, userID: "u1", messageID: "m1", part: "body") == body)
        #expect(sealed.range(of: body) == nil)
        #expect(throws: MailboxCryptoError.tampered("body of message m2")) {
            try SealedPart.open(sealed, with: pair, userID: "u1", messageID: "m2", part: "body")
        }
        #expect(throws: MailboxCryptoError.self) { try SealedPart.open(sealed, with: pair, userID: "u1", messageID: "m1", part: "attachment:a1") }
        #expect(throws: MailboxCryptoError.self) { try SealedPart.open(sealed, with: pair, userID: "u2", messageID: "m1", part: "body") }
        #expect(throws: MailboxCryptoError.self) { try SealedPart.open(sealed, with: .generate(), userID: "u1", messageID: "m1", part: "body") }
        var flipped = sealed
        flipped[flipped.count - 1] ^= 0x80
        #expect(throws: MailboxCryptoError.self) { try SealedPart.open(flipped, with: pair, userID: "u1", messageID: "m1", part: "body") }
        #expect(throws: MailboxCryptoError.self) { try SealedPart.open(Data("RMHP".utf8), with: pair, userID: "u1", messageID: "m1", part: "body") }
    }
}
