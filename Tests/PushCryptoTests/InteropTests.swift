import Crypto
import Foundation
import Keychain
@_spi(TestVectors) @testable import PushCrypto
import RampartCore
import Testing

/// Real peers on the other side: `pywebpush` / `http-ece` encrypt, Rampart decrypts, and back.
@Suite("Interop with pywebpush and http-ece", .enabled(if: PythonPeer.interopEnabled))
struct InteropTests {
    @Test func pywebpushPayloadOpensAsANotification() async throws {
        let fixture = PushFixture()
        let registration = try fixture.keyring.subscribe(sessionID: session("s1"))
        let notification = fixture.notification("Quarterly report — draft ✉️")
        let json = try fixture.notification("Quarterly report — draft ✉️").encodedJSON().withUnsafeBytes { Array($0) }
        let body = try await PythonPeer.run(["pywebpush-encrypt", registration.publicKey, registration.authSecret], input: json)
        #expect(try fixture.receiver(session("s1")).decrypt(body) == notification)
    }

    @Test func manyPywebpushPayloadsOpen() async throws {
        let fixture = PushFixture()
        let registration = try fixture.keyring.subscribe(sessionID: session("s1"))
        let receiver = fixture.receiver(session("s1"))
        for length in [1, 100, 1000, 3993] {
            let subject = String(repeating: "x", count: length)
            let notification = PushNotification(sender: "B", subject: subject, messageId: "m", userId: fixture.user)
            var json = try notification.encodedJSON().withUnsafeBytes { Array($0) }
            if json.count > WebPushMessage.maximumPlaintextLength {
                // Largest subject that still fits one record.
                let fitting = PushNotification(sender: "B", subject: String(repeating: "x", count: length - (json.count - WebPushMessage.maximumPlaintextLength)), messageId: "m", userId: fixture.user)
                json = try fitting.encodedJSON().withUnsafeBytes { Array($0) }
                #expect(json.count == WebPushMessage.maximumPlaintextLength)
            }
            let body = try await PythonPeer.run(["pywebpush-encrypt", registration.publicKey, registration.authSecret], input: json)
            #expect(body.count <= WebPushMessage.maximumBodyLength)
            let opened = try receiver.decrypt(body)
            #expect(opened.sender == "B")
        }
    }

    @Test func rampartPayloadOpensWithHttpEce() async throws {
        let fixture = PushFixture()
        let pair = try PushKeyPair.generate(sessionID: session("s1"), now: fixture.clock.now)
        let registration = try pair.registration()
        let json = try fixture.notification().encodedJSON()
        for padding in [0, 1, 200] {
            let body = try WebPushSender.encrypt(json, to: registration, paddingLength: padding)
            let privateKey = Base64URL.encode(pair.privateKey.rawRepresentation)
            let plaintext = try await PythonPeer.run(["ece-decrypt", privateKey, registration.authSecret], input: body)
            #expect(plaintext == (try json.withUnsafeBytes { Array($0) }))
        }
    }

    @Test func httpEceMultiRecordBodyOpensWithGeneralDecoderButNotOnPushPath() async throws {
        let pair = try PushKeyPair.generate(sessionID: session("s1"), now: Date())
        let registration = try pair.registration()
        let message = Array("A message long enough to need several 40-byte records in aes128gcm.".utf8)
        let body = try await PythonPeer.run(["ece-encrypt", registration.publicKey, registration.authSecret, "40"], input: message)
        #expect(body.count < WebPushMessage.maximumBodyLength)
        expectPushError(.multipleRecords) { _ = try WebPushMessage.open(body, with: [pair]) }

        let header = try ContentCodingHeader(parsing: body[...])
        let senderKey = try P256.KeyAgreement.PublicKey(x963Representation: header.keyID)
        let plaintext = try AES128GCMContentCoding.decrypt(body) { header in
            try WebPushMessage.inputKeyMaterial(privateKey: pair.privateKey, peerPublicKey: senderKey, receiverPublicKey: pair.publicKeyBytes, senderPublicKey: header.keyID, authSecret: pair.authSecret)
        }
        #expect(try plaintext.withUnsafeBytes { Array($0) } == message)
        // Fewer records allowed than present: refused before decrypting.
        expectPushError(.tooManyRecords(limit: 2)) {
            _ = try AES128GCMContentCoding.decrypt(body, maximumRecords: 2) { _ in SymmetricKey(size: .bits256) }
        }
    }

    @Test func rampartMultiRecordBodyOpensWithHttpEce() async throws {
        let pair = try PushKeyPair.generate(sessionID: session("s1"), now: Date())
        let registration = try pair.registration()
        let message = Array("Rampart's general encoder writing records of 30 bytes, many of them.".utf8)
        // Sender side with a fresh key, as a Web Push sender would, but several records.
        let senderKey = P256.KeyAgreement.PrivateKey()
        let senderPublic = Array(senderKey.publicKey.x963Representation)
        let senderIKM = try WebPushMessage.inputKeyMaterial(
            privateKey: senderKey, peerPublicKey: pair.privateKey.publicKey,
            receiverPublicKey: pair.publicKeyBytes, senderPublicKey: senderPublic, authSecret: pair.authSecret)
        let body = try AES128GCMContentCoding.encrypt(SecretBytes(copying: message), inputKeyMaterial: senderIKM, salt: Array(repeating: 7, count: 16), recordSize: 30, keyID: senderPublic)
        let privateKey = Base64URL.encode(pair.privateKey.rawRepresentation)
        #expect(try await PythonPeer.run(["ece-decrypt", privateKey, registration.authSecret], input: body) == message)
    }
}
