import Foundation
import MailboxCrypto
import OpenPGP
import RampartCore
import Testing

/// ``SignupPayload``: what a device uploads at sign-up holds a verifier, two salts, the public key
/// and the key locked with bcrypt(key password, key salt) — and neither password nor a usable key.
@Suite("Mailbox crypto: the sign-up payload made on the device")
struct SignupPayloadTests {
    static func secret(_ text: String) -> SecretBytes { SecretBytes(copying: Array(text.utf8)) }

    @Test(arguments: [false, true])
    func theKeyOpensWithTheKeyPasswordOnlyAndNothingSecretIsInTheRequest(twoPasswords: Bool) throws {
        let login = "login pässword", mailbox = twoPasswords ? "mailbox password" : "login pässword"
        let request = try SignupPayload.make(username: "Dana", displayName: "Dana D", address: "dana@rampart.test",
                                             loginPassword: Self.secret(login), keyPassword: Self.secret(mailbox), group: .rampart,
                                             invitation: "rmi-code")
        #expect(request.username == "Dana" && request.address == "dana@rampart.test" && request.invitation == "rmi-code")
        #expect(request.version == 4)
        #expect(Data(base64Encoded: request.salt)?.count == 10 && Data(base64Encoded: request.verifier)?.count == 256)
        let keySalt = try #require(Data(base64Encoded: request.keySalt))
        #expect(keySalt.count == MailboxKey.keySaltCount)
        let inspection = try PGPPrivateKey.inspectLocked(armored: request.privateKey)
        #expect(inspection.everySecretPartLocked && inspection.hasEverySecretPart)
        let published = try PGPPublicKey(armored: request.publicKey)
        #expect(inspection.publicKey.fingerprint == published.fingerprint && published.addresses == ["dana@rampart.test"])
        let key = try MailboxKey.unlock(locked: request.privateKey, keySalt: [UInt8](keySalt), mailboxPassword: Self.secret(mailbox))
        #expect(key.fingerprint == published.fingerprint)
        if twoPasswords {
            #expect(throws: MailboxCryptoError.wrongMailboxPassword) {
                try MailboxKey.unlock(locked: request.privateKey, keySalt: [UInt8](keySalt), mailboxPassword: Self.secret(login))
            }
        }
        let encoded = String(decoding: try JSONEncoder().encode(request), as: UTF8.self)
        for field in ["\"Username\"", "\"Verifier\"", "\"KeySalt\"", "\"PrivateKey\"", "\"Invitation\""] { #expect(encoded.contains(field)) }
        #expect(!encoded.contains(login) && !encoded.contains(mailbox))
        // Two payloads for the same password share no salt.
        let again = try SignupPayload.make(username: "Dana", displayName: "Dana D", address: "dana@rampart.test",
                                           loginPassword: Self.secret(login), keyPassword: Self.secret(mailbox), group: .rampart)
        #expect(again.salt != request.salt && again.keySalt != request.keySalt && again.verifier != request.verifier)
    }
}
