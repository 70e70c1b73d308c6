import Foundation
import Bcrypt
import MailboxCrypto
import OpenPGP
import PinnedTransport
import RampartAPI
import RampartCore
import RampartServer
import RampartTestSupport
import Testing

/// Proton's key model on a real embedded server: a user key locked with bcrypt(password, key
/// salt), and per-address keys whose passphrase is a random token encrypted to and signed by the
/// user key. gpg and sq open the chain from outside (user key → token → address key); the server
/// refuses a malformed token, signature or address key at sign-up; addresses are added with a key
/// of their own, reached by mail and the key directory, and removed.
@Suite("Embedded backend: address keys and addresses")
struct AddressKeyTests {
    static let erik = SignupTests.erik
    static let dana = SignupTests.dana

    @Test func theTokenDecryptsWithTheUserKeyItsSignatureVerifiesAndItOpensTheAddressKeyInGpgAndSq() async throws {
        try await SignupTests.with(seedDemo: false, open: true) { backend in
            _ = try await backend.call(SignupResponse.self, .POST, APIRoute.signup,
                                       body: try JSONEncoder().encode(try Self.erik.signupRequest(group: .rampart)))
            let login = try await backend.login(Self.erik)
            let record = try #require(login.keys.addressKeys.first)
            #expect(login.keys.addressKeys.count == 1 && record.address == Self.erik.address && record.active == true)
            let addressKey = try PGPPublicKey(armored: record.publicKey)
            #expect(addressKey.fingerprint != (try PGPPublicKey(armored: login.keys.publicKey)).fingerprint)
            let folder = backend.folder.appendingPathComponent("address-key-tools", isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            func write(_ text: String, _ name: String) throws { try Data(text.utf8).write(to: folder.appendingPathComponent(name)) }
            try write(login.keys.privateKey, "user.asc")
            try write(login.keys.publicKey, "user.pub")
            try write(record.privateKey, "address.asc")
            try write(record.token, "token.asc")
            try write(record.signature, "token.sig")
            try OpenPGP.encrypt(Data("to the address key".utf8), to: [addressKey], signedBy: nil, armor: false, fileName: "m")
                .write(to: folder.appendingPathComponent("m.pgp"))
            let passphrase = try Bcrypt.mailboxKeyPassphrase(password: SecretBytes(copying: Array(Self.erik.loginPassword.utf8)),
                                                              keySalt: [UInt8](Data(base64Encoded: login.keys.keySalt)!))
            let phrase = try passphrase.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
            let shell = CLITool(path: URL(fileURLWithPath: "/bin/sh"))
            let gpg = "cd '\(folder.path)' && mkdir -p -m 700 g && export GNUPGHOME=\"$PWD/g\" && gpg --batch --quiet --import user.asc"
                + " && gpg --batch --pinentry-mode loopback"

            // gpg: the user key's passphrase decrypts the token (a wrong one does not: tried first,
            // before gpg-agent caches the right one); the signature over it is the user key's.
            let wrongToken = try await shell.runOnThread(["-c", gpg + " --passphrase-fd 0 --decrypt token.asc"], stdin: "not it\n")
            #expect(wrongToken.status != 0 && wrongToken.stdout.isEmpty)
            let token = try await shell.runOnThread(["-c", gpg + " --passphrase-fd 0 --decrypt token.asc > token.txt && cat token.txt"],
                                                    stdin: phrase + "\n")
            #expect(token.status == 0 && token.stdout.count == 64 && token.stdout.allSatisfy(\.isHexDigit), "\(token.stderr)")
            let verified = try await shell.runOnThread(["-c", gpg + " --verify token.sig token.txt"])
            #expect(verified.status == 0 && verified.stderr.contains("Good signature"), "\(verified.stderr)")
            // The token is the address key's passphrase; nothing else opens it.
            let addressGPG = "cd '\(folder.path)' && mkdir -p -m 700 a && export GNUPGHOME=\"$PWD/a\" && gpg --batch --quiet --import address.asc"
                + " && gpg --batch --pinentry-mode loopback --passphrase-fd 0 --decrypt m.pgp"
            let refused = try await shell.runOnThread(["-c", addressGPG], stdin: phrase + "\n")
            #expect(refused.status != 0 && !refused.stdout.contains("to the address key"))
            let opened = try await shell.runOnThread(["-c", addressGPG], stdin: token.stdout + "\n")
            #expect(opened.status == 0 && opened.stdout == "to the address key", "\(opened.stderr)")

            // sq: the same chain (it asks for passwords on a terminal: `script` gives it one).
            let sqToken = try await shell.runOnThread(["-c", "cd '\(folder.path)' && exec script -qec 'sq decrypt --recipient-key user.asc token.asc' /dev/null"],
                                                      stdin: phrase + "\n", timeout: .seconds(60))
            #expect(sqToken.status == 0 && sqToken.stdout.contains(token.stdout), "\(sqToken.stdout) \(sqToken.stderr)")
            let sqVerify = try await shell.runOnThread(["-c", "cd '\(folder.path)' && sq verify --signer-cert user.pub --detached token.sig token.txt"])
            #expect(sqVerify.status == 0, "\(sqVerify.stdout) \(sqVerify.stderr)")
            try Data("0".utf8).write(to: folder.appendingPathComponent("other.txt"))
            let sqOther = try await shell.runOnThread(["-c", "cd '\(folder.path)' && sq verify --signer-cert user.pub --detached token.sig other.txt"])
            #expect(sqOther.status != 0)
            let sqAddress = try await shell.runOnThread(["-c", "cd '\(folder.path)' && exec script -qec 'sq decrypt --recipient-key address.asc m.pgp' /dev/null"],
                                                        stdin: token.stdout + "\n", timeout: .seconds(60))
            #expect(sqAddress.status == 0 && sqAddress.stdout.contains("to the address key"), "\(sqAddress.stdout) \(sqAddress.stderr)")

            // The client's own path agrees, and a token swapped for another account's is refused.
            let ring = try login.keyring(Self.erik.loginPassword)
            #expect(ring.primary.fingerprint == addressKey.fingerprint)
            _ = try await backend.call(SignupResponse.self, .POST, APIRoute.signup,
                                       body: try JSONEncoder().encode(try Self.dana.signupRequest(group: .rampart)))
            let dana = try await backend.login(Self.dana)
            var swapped = login.keys
            swapped.addressKeys[0].token = try #require(dana.keys.addressKeys.first).token
            #expect(throws: MailboxCryptoError.self) { try AccountKeyring.unlock(swapped, keyPassword: SecretBytes(copying: Array(Self.erik.loginPassword.utf8))) }
            var resigned = login.keys
            resigned.addressKeys[0].signature = String(decoding: try OpenPGP.detachedSignature(
                for: Data(token.stdout.utf8), with: try dana.keyring(Self.dana.mailboxPassword).userKey, armor: true), as: UTF8.self)
            #expect(throws: MailboxCryptoError.self) { try AccountKeyring.unlock(resigned, keyPassword: SecretBytes(copying: Array(Self.erik.loginPassword.utf8))) }
        }
    }

    @Test func aSignUpWithABadAddressKeyIsRefusedAndCreatesNothing() async throws {
        try await SignupTests.with(seedDemo: false, open: true) { backend in
            let good = try Self.dana.signupRequest(group: .rampart)
            let other = try Self.erik.signupRequest(group: .rampart)
            func refused(_ name: String, _ change: (inout SignupRequest) throws -> Void, status: UInt, code: String, saying words: String) async throws {
                var request = good
                try change(&request)
                let response = try await backend.send(.POST, APIRoute.signup, json: request)
                let body = TestBackend.errorBody(response)
                #expect(response.status.code == status && body?.error.code == code, "\(name): \(String(decoding: response.body, as: UTF8.self))")
                #expect(body?.error.message.contains(words) == true, "\(name): \(body?.error.message ?? "-")")
            }
            try await refused("missing", { $0.addressKey = nil }, status: 400, code: "signup.malformed", saying: "\"AddressKey\"")
            try await refused("token", { $0.addressKey?.token = "-----BEGIN PGP MESSAGE-----\n\nAAAA\n-----END PGP MESSAGE-----\n" },
                              status: 400, code: "signup.malformed", saying: "\"AddressKey.Token\"")
            try await refused("token is a signature", { $0.addressKey?.token = good.addressKey!.signature },
                              status: 400, code: "signup.malformed", saying: "\"AddressKey.Token\"")
            try await refused("signature", { $0.addressKey?.signature = good.addressKey!.token },
                              status: 400, code: "signup.malformed", saying: "\"AddressKey.Signature\"")
            try await refused("the user key again", { $0.addressKey?.publicKey = good.publicKey; $0.addressKey?.privateKey = good.privateKey },
                              status: 422, code: "signup.keyMismatch", saying: "a key of its own")
            try await refused("another address's key", { $0.addressKey = other.addressKey },
                              status: 422, code: "signup.keyMismatch", saying: "erik@rampart.test")
            try await refused("halves of two keys", { $0.addressKey?.privateKey = other.addressKey!.privateKey },
                              status: 422, code: "signup.keyMismatch", saying: "is not the public key's")
            let unlocked = try PGPPrivateKey.generate(name: "Dana", address: "dana@rampart.test")
            let clear = String(decoding: try unlocked.unprotectedExport().withUnsafeBytes { try OpenPGP.armor(Data($0), as: .secretKey) }, as: UTF8.self)
            try await refused("unlocked", { $0.addressKey?.privateKey = clear; $0.addressKey?.publicKey = unlocked.publicKey.armored() },
                              status: 422, code: "signup.keyNotLocked", saying: "not locked")
            #expect(try SignupTests.rowCounts(backend)["users"] == 0)
            #expect(try await backend.send(.POST, APIRoute.signup, json: good).status.code == 200)
        }
    }

    @Test func addedAddressesGetTheirOwnKeyMailAndTheKeyDirectoryAndStopWhenRemoved() async throws {
        try await SignupTests.with(seedDemo: false, open: true) { backend in
            for account in [Self.erik, Self.dana] {
                _ = try await backend.call(SignupResponse.self, .POST, APIRoute.signup,
                                           body: try JSONEncoder().encode(try account.signupRequest(group: .rampart)))
            }
            let erik = try await backend.login(Self.erik)
            let dana = try await backend.login(Self.dana)
            let ring = try erik.keyring(Self.erik.loginPassword)
            let second = "erik.work@rampart.test"
            let made = try AddressKeys.make(name: Self.erik.displayName, address: second, userKey: ring.userKey)

            // Another domain, a reserved name, another account's address: refused, nothing added.
            let elsewhere = try AddressKeys.make(name: Self.erik.displayName, address: "erik@example.org", userKey: ring.userKey)
            let refused = try await backend.send(.POST, APIRoute.addresses, token: erik.accessToken, json: elsewhere.upload)
            #expect(refused.status.code == 422 && TestBackend.errorBody(refused)?.error.code == "signup.addressDomain")
            #expect(TestBackend.errorBody(refused)?.error.message.contains("not in this server's domain (rampart.test)") == true)
            let taken = try AddressKeys.make(name: Self.erik.displayName, address: Self.dana.address, userKey: ring.userKey)
            let takenAnswer = try await backend.send(.POST, APIRoute.addresses, token: erik.accessToken, json: taken.upload)
            #expect(takenAnswer.status.code == 409 && TestBackend.errorBody(takenAnswer)?.error.code == "signup.addressTaken")
            var foreign = made.upload
            foreign.token = try #require(dana.keys.addressKeys.first).token
            foreign.signature = "garbage"
            #expect(try await backend.send(.POST, APIRoute.addresses, token: erik.accessToken, json: foreign).status.code == 400)

            let added = try await backend.call(AddressListResponse.self, .POST, APIRoute.addresses, token: erik.accessToken,
                                               body: try JSONEncoder().encode(made.upload))
            #expect(added.addresses == [Self.erik.address, second] && added.keys.count == 2)
            let directory = try await backend.call(PublicKeyResponse.self, .GET, APIRoute.publicKey + "?address=\(second)", token: dana.accessToken)
            #expect(try PGPPublicKey(armored: directory.publicKey).fingerprint == made.key.fingerprint)
            let primary = try await backend.call(PublicKeyResponse.self, .GET, APIRoute.publicKey + "?address=\(Self.erik.address)", token: dana.accessToken)
            #expect(try PGPPublicKey(armored: primary.publicKey).fingerprint == ring.primary.fingerprint)

            // Mail to the new address reaches Erik, encrypted to that address's key.
            _ = try await backend.call(SendResponse.self, .POST, APIRoute.send, token: dana.accessToken,
                                       body: try JSONEncoder().encode(try await backend.sendRequest(
                                           dana, Self.dana, to: [second], subject: "To your work address", html: "<p>Hi</p>")))
            let inbox = try await backend.call(MessageListResponse.self, .GET, APIRoute.messages + "?label=\(SystemLabel.inbox)", token: erik.accessToken)
            let message = try #require(inbox.messages.first)
            #expect(throws: MailboxCryptoError.self) { try message.open(with: ring.primary, userID: erik.userId) }
            #expect(try message.open(with: made.key, userID: erik.userId).subject == "To your work address")

            // A new login hands out both keys, each opened through its token.
            let again = try await backend.login(Self.erik)
            #expect(try again.keyring(Self.erik.loginPassword).key(for: second)?.fingerprint == made.key.fingerprint)

            // The primary address stays; the second goes: no directory answer, no mail, the key kept.
            let primaryRemoval = try await backend.send(.DELETE, APIRoute.addresses + "?address=\(Self.erik.address)", token: erik.accessToken)
            #expect(primaryRemoval.status.code == 400 && TestBackend.errorBody(primaryRemoval)?.error.message.contains("primary address") == true)
            let removed = try await backend.call(AddressListResponse.self, .DELETE, APIRoute.addresses + "?address=\(second)", token: erik.accessToken)
            #expect(removed.addresses == [Self.erik.address] && removed.keys.filter { $0.active == false }.map(\.address) == [second])
            #expect(try await backend.send(.GET, APIRoute.publicKey + "?address=\(second)", token: dana.accessToken).status.code == 404)
            let bounced = try await backend.send(.POST, APIRoute.send, token: dana.accessToken, json: try SendRequest.encrypted(
                signer: try dana.mailboxKeys(Self.dana.mailboxPassword), account: Self.dana, keys: [made.key.publicKey],
                to: [second], subject: "Still there?", html: "<p>?</p>"))
            #expect(bounced.status.code != 200)
            let later = try await backend.login(Self.erik)
            let laterRing = try later.keyring(Self.erik.loginPassword)
            #expect(laterRing.key(for: second) == nil && laterRing.decryptionKeys.contains { $0.fingerprint == made.key.fingerprint })
            #expect(try message.open(with: laterRing.decryptionKeys.first { $0.fingerprint == made.key.fingerprint }!, userID: erik.userId).subject
                    == "To your work address")
        }
    }
}
