import Crypto
import Foundation
@_spi(TestVectors) @testable import PushCrypto
import RampartCore
import Testing

@Suite("RFC 8291 Appendix A")
struct RFC8291VectorTests {
    typealias V = RFC8291Vector

    var registration: PushRegistration {
        PushRegistration(sessionId: "rfc", publicKey: V.receiverPublicKey, authSecret: V.authSecret)
    }

    @Test func senderReproducesAppendixABodyByteForByte() throws {
        let senderKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: V.bytes(V.senderPrivateKey))
        #expect(Base64URL.encode(senderKey.publicKey.x963Representation) == V.senderPublicKey)
        let body = try WebPushSender.encrypt(secret(V.plaintext), to: registration, salt: V.bytes(V.salt), senderPrivateKey: senderKey, recordSize: 4096)
        #expect(Base64URL.encode(body) == V.body)
        #expect(body == V.bytes(V.body))
    }

    @Test func receiverDecryptsAppendixABody() throws {
        let receiverKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: V.bytes(V.receiverPrivateKey))
        #expect(Base64URL.encode(receiverKey.publicKey.x963Representation) == V.receiverPublicKey)
        let pair = try PushKeyPair(sessionID: session("rfc"), createdAt: Date(), privateKey: receiverKey, authSecret: SecretBytes(copying: V.bytes(V.authSecret)))
        let opened = try WebPushMessage.open(V.bytes(V.body), with: [pair])
        #expect(try string(opened.plaintext) == V.plaintext)
        #expect(opened.salt == V.bytes(V.salt))
    }

    @Test(.enabled(if: PythonPeer.interopEnabled))
    func httpEceReproducesAppendixABodyByteForByte() async throws {
        let body = try await PythonPeer.run(
            ["ece-encrypt-fixed", V.receiverPublicKey, V.authSecret, V.senderPrivateKey, V.salt, "4096"],
            input: Array(V.plaintext.utf8)
        )
        #expect(Base64URL.encode(body) == V.body)
    }

    @Test func appendixABodyDoesNotOpenWithAnotherAuthSecret() throws {
        let receiverKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: V.bytes(V.receiverPrivateKey))
        let pair = try PushKeyPair(sessionID: session("rfc"), createdAt: Date(), privateKey: receiverKey, authSecret: SecretBytes(randomCount: 16))
        expectPushError(.authenticationFailed) { _ = try WebPushMessage.open(V.bytes(V.body), with: [pair]) }
    }
}
