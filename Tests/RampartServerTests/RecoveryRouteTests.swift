import Foundation
import MailboxCrypto
import OpenPGP
import PinnedTransport
import RampartAPI
import RampartCore
import RampartServer
import RampartTestSupport
import SRP
import Testing

/// The recovery routes against a real embedded server: the copy is checked at sign-up (locked,
/// the account's key, cost floor), `/v1/recovery/info` answers the same way for every name,
/// `/v1/recovery/copy` needs the phrase's access token and refuses every other case with one
/// answer, `/v1/recovery/password` needs a signature by the account's key and a fresh nonce, and
/// the routes are throttled per name.
@Suite("Embedded backend: recovery routes")
struct RecoveryRouteTests {
    static let phrase = RecoveryPhrase.generate()

    static func request(_ name: String, phrase: RecoveryPhrase? = Self.phrase) throws -> SignupRequest {
        let password = SecretBytes(copying: Array("\(name) password".utf8))
        return try SignupPayload.make(username: name, displayName: name, address: "\(name)@rampart.test", loginPassword: password,
                                      keyPassword: password, group: .rampart, recoveryPhrase: phrase)
    }

    @Test func theCopyIsCheckedAtSignUp() async throws {
        try await SignupTests.with(seedDemo: false, open: true) { backend in
            let good = try Self.request("fay")
            func refused(_ change: (inout SignupRequest) throws -> Void, saying words: String) async throws {
                var request = good
                try change(&request)
                let response = try await backend.send(.POST, APIRoute.signup, json: request)
                #expect(response.status.code == 400 && TestBackend.errorBody(response)?.error.code == "signup.malformed", "\(words)")
                #expect(TestBackend.errorBody(response)?.error.message.contains(words) == true, "\(TestBackend.errorBody(response)?.error.message ?? "-")")
            }
            try await refused({ $0.recovery?.logN = 14 }, saying: "2^14")
            let other = try PGPPrivateKey.generate(name: "fay", address: "fay@rampart.test")
            let otherCopy = try RecoveryKeyCopy.upload(key: other, phrase: Self.phrase, logN: 15)
            try await refused({ $0.recovery = otherCopy }, saying: "not the account's key")
            let clear = String(decoding: try other.unprotectedExport().withUnsafeBytes { try OpenPGP.armor(Data($0), as: .secretKey) }, as: UTF8.self)
            try await refused({ $0.recovery?.lockedKey = clear }, saying: "not locked")
            try await refused({ $0.recovery?.access = "AAAA" }, saying: "access token")
            #expect(try SignupTests.rowCounts(backend)["users"] == 0)
            #expect(try await backend.send(.POST, APIRoute.signup, json: good).status.code == 200)
        }
    }

    @Test func onlyThePhraseFetchesTheCopyAndNoAnswerTellsWhetherANameExists() async throws {
        try await SignupTests.with(seedDemo: false, open: true) { backend in
            #expect(try await backend.send(.POST, APIRoute.signup, json: try Self.request("gus")).status.code == 200)
            #expect(try await backend.send(.POST, APIRoute.signup, json: try Self.request("hal", phrase: nil)).status.code == 200)
            func info(_ name: String) async throws -> RecoveryInfoResponse {
                try await backend.call(RecoveryInfoResponse.self, .POST, APIRoute.recoveryInfo, body: try JSONEncoder().encode(RecoveryInfoRequest(username: name)))
            }
            let gus = try await info("gus"), nobody = try await info("nobody"), nobodyAgain = try await info("nobody"), hal = try await info("hal")
            #expect(nobody.salt == nobodyAgain.salt && nobody.nonce != nobodyAgain.nonce)
            #expect(Set([gus.logN, nobody.logN, hal.logN]) == [Int(RecoveryKeyCopy.defaultLogN)])
            #expect(Set([gus.salt, nobody.salt, hal.salt].map { Data(base64Encoded: $0)?.count }) == [RecoveryKeyCopy.saltCount])
            let token = try RecoveryKeyCopy.accessToken(phrase: Self.phrase, salt: [UInt8](Data(base64Encoded: gus.salt)!), logN: UInt8(gus.logN))
            let access = try token.withUnsafeBytes { Data($0).base64EncodedString() }
            func copy(_ name: String, _ nonce: String, _ access: String) async throws -> PinnedResponse {
                try await backend.send(.POST, APIRoute.recoveryCopy, json: RecoveryCopyRequest(username: name, nonce: nonce, access: access))
            }
            // A wrong token, an unknown name, an account without a copy: one and the same answer.
            let wrong = try await copy("gus", gus.nonce, Data(repeating: 7, count: 32).base64EncodedString())
            let unknown = try await copy("nobody", nobody.nonce, access)
            let noCopy = try await copy("hal", hal.nonce, access)
            for response in [wrong, unknown, noCopy] {
                #expect(response.status.code == 422 && TestBackend.errorBody(response)?.error.code == "recovery.wrongPhrase")
                #expect(response.body == wrong.body)
            }
            // Another name's nonce.
            #expect(TestBackend.errorBody(try await copy("gus", nobody.nonce, access))?.error.code == "recovery.nonceInvalid")
            let fetched = try JSONDecoder().decode(RecoveryCopyResponse.self, from: try await copy("GUS", gus.nonce, access).body)
            let key = try RecoveryKeyCopy(lockedKey: fetched.lockedKey, salt: [UInt8](Data(base64Encoded: gus.salt)!), logN: UInt8(gus.logN))
                .unlock(with: Self.phrase)
            #expect(key.fingerprint == (try PGPPublicKey(armored: fetched.publicKey)).fingerprint)

            // The new password needs a signature by the account's key, over these very values.
            let password = SecretBytes(copying: Array("gus new password".utf8))
            let salt = SRPPassword.newSalt()
            let locked = try MailboxKey.lock(key, mailboxPassword: password)
            var request = RecoveryPasswordRequest(username: "gus", nonce: gus.nonce, access: access, version: SRPPassword.version,
                                                  salt: Data(salt).base64EncodedString(),
                                                  verifier: Data(try SRPPassword.verifier(password: password, salt: salt, group: .rampart)).base64EncodedString(),
                                                  keySalt: Data(locked.keySalt).base64EncodedString(), privateKey: locked.locked, signature: "")
            let other = try PGPPrivateKey.generate(name: "gus", address: "gus@rampart.test")
            request.signature = String(decoding: try OpenPGP.detachedSignature(for: request.signedText, with: other, armor: true), as: UTF8.self)
            let badSignature = try await backend.send(.POST, APIRoute.recoveryPassword, json: request)
            #expect(TestBackend.errorBody(badSignature)?.error.code == "recovery.signatureInvalid", "\(String(decoding: badSignature.body, as: UTF8.self))")
            // The nonce was used up by that attempt: a new one is needed.
            let fresh = try await info("gus")
            request.nonce = fresh.nonce
            var tampered = request
            tampered.signature = String(decoding: try OpenPGP.detachedSignature(for: request.signedText, with: key, armor: true), as: UTF8.self)
            tampered.verifier = Data(try SRPPassword.verifier(password: SecretBytes(copying: Array("other".utf8)), salt: salt, group: .rampart)).base64EncodedString()
            #expect(TestBackend.errorBody(try await backend.send(.POST, APIRoute.recoveryPassword, json: tampered))?.error.code == "recovery.signatureInvalid")
            request.nonce = try await info("gus").nonce
            request.signature = String(decoding: try OpenPGP.detachedSignature(for: request.signedText, with: key, armor: true), as: UTF8.self)
            let done = try await backend.send(.POST, APIRoute.recoveryPassword, json: request)
            #expect(done.status.code == 200, "\(String(decoding: done.body, as: UTF8.self))")
            #expect(TestBackend.errorBody(try await backend.send(.POST, APIRoute.recoveryPassword, json: request))?.error.code == "recovery.nonceInvalid")
            let login = try await backend.srpLogin(username: "gus", password: "gus new password")
            #expect(try login.keyring("gus new password").userKey.fingerprint == key.fingerprint)
        }
    }

    @Test func recoveryIsThrottledPerName() async throws {
        try await SignupTests.with(seedDemo: false, open: true) { backend in
            var statuses: [UInt] = []
            for _ in 0..<11 {
                statuses.append(try await backend.send(.POST, APIRoute.recoveryInfo, json: RecoveryInfoRequest(username: "target")).status.code)
            }
            #expect(statuses.prefix(10).allSatisfy { $0 == 200 } && statuses.last == 429, "\(statuses)")
            #expect(try await backend.send(.POST, APIRoute.recoveryInfo, json: RecoveryInfoRequest(username: "someone-else")).status.code == 200)
        }
    }
}
