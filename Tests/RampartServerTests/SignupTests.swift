import Foundation
import Bcrypt
import MailboxCrypto
import OpenPGP
import PinnedTransport
import RampartAPI
import RampartCore
import RampartServer
import RampartTestSupport
import SRP
import Testing

/// Sign-up made on the device (`GET /v1/signup`, `POST /v1/signup/accounts`) against a real
/// embedded server: accounts made that way log in and mail each other; every refusal has its
/// code and sentence and leaves no row behind; racing sign-ups for one name; invitations
/// (single use, expiry); open sign-up; the per-address throttle; the stored locked key read by
/// gpg and sq.
@Suite("Embedded backend: sign-up made on the device")
struct SignupTests {
    static let dana = DemoAccount(username: "Dana", displayName: "Dana Signup", address: "dana@rampart.test",
                                  loginPassword: "dana login pässword", mailboxPassword: "dana mailbox password")
    static let erik = DemoAccount(username: "erik", displayName: "Erik Signup", address: "erik@rampart.test",
                                  loginPassword: "erik login password", mailboxPassword: "erik login password")
    static let generous = ServerLimits(signupsPerHourPerAddress: 1000)

    @Test func accountsMadeOnTheDeviceLogInAndMailEachOther() async throws {
        try await Self.with(seedDemo: false, open: true) { backend in
            let info = try await backend.call(SignupInfoResponse.self, .GET, APIRoute.signupInfo)
            #expect(info.domains == ["rampart.test"] && !info.invitationRequired)
            let group = try Self.verifiedGroup(info.modulus, backend)
            // Dana: two passwords; Erik: one password (the key passphrase is bcrypt of the login password).
            let made = try await backend.call(SignupResponse.self, .POST, APIRoute.signup,
                                              body: try JSONEncoder().encode(try Self.dana.signupRequest(group: group)))
            #expect(made.username == "dana" && made.address == "dana@rampart.test")
            _ = try await backend.call(SignupResponse.self, .POST, APIRoute.signup,
                                       body: try JSONEncoder().encode(try Self.erik.signupRequest(group: group)))
            let dana = try await backend.login(Self.dana)
            let erik = try await backend.login(Self.erik)
            #expect(dana.user.username == "dana" && dana.user.addresses == ["dana@rampart.test"])
            #expect(try dana.mailboxKeys(Self.dana.mailboxPassword).publicKey.addresses == ["dana@rampart.test"])
            #expect(throws: MailboxCryptoError.wrongMailboxPassword) { try dana.mailboxKeys(Self.dana.loginPassword) }
            #expect(try erik.mailboxKeys(Self.erik.loginPassword).publicKey.addresses == ["erik@rampart.test"])
            let labels = try await backend.call(LabelListResponse.self, .GET, APIRoute.labels, token: erik.accessToken)
            #expect(Set(labels.labels.map(\.id)).isSuperset(of: [SystemLabel.inbox, SystemLabel.sent, SystemLabel.archive, SystemLabel.trash]))

            let sent = try await backend.call(SendResponse.self, .POST, APIRoute.send, token: dana.accessToken,
                                              body: try JSONEncoder().encode(try await backend.sendRequest(
                                                  dana, Self.dana, to: [Self.erik.address], subject: "Signed up", html: "<p>Hello Erik</p>")))
            #expect(sent.messageIds.count == 2)
            let inbox = try await backend.call(MessageListResponse.self, .GET, APIRoute.messages + "?label=\(SystemLabel.inbox)",
                                               token: erik.accessToken)
            let content = try #require(inbox.messages.first).open(with: try erik.mailboxKeys(Self.erik.loginPassword), userID: erik.userId)
            #expect(content.subject == "Signed up" && content.sender.address == Self.dana.address)

            // What the database holds: no password, no passphrase, no cleartext key.
            let bytes = TemporaryHome.allBytes(under: backend.folder)
            for secret in [Self.dana.loginPassword, Self.dana.mailboxPassword, Self.erik.loginPassword, "Hello Erik"] {
                #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) is stored")
            }
            let passphrase = try Bcrypt.mailboxKeyPassphrase(password: SecretBytes(copying: Array(Self.dana.mailboxPassword.utf8)),
                                                              keySalt: [UInt8](Data(base64Encoded: dana.keys.keySalt)!))
            #expect(try passphrase.withUnsafeBytes { bytes.range(of: Data($0)) } == nil)
            let unlocked = try dana.mailboxKeys(Self.dana.mailboxPassword).unprotectedExport()
            #expect(try unlocked.withUnsafeBytes { bytes.range(of: Data($0)) } == nil)
        }
    }

    @Test func everyRefusalSaysWhyAndCreatesNothing() async throws {
        try await Self.with(open: true) { backend in
            let group = SRPGroup.rampart
            let good = try Self.dana.signupRequest(group: group)
            let before = try Self.rowCounts(backend)
            func refused(_ name: String, _ request: SignupRequest, status: UInt, code: String, saying words: String) async throws {
                let response = try await backend.send(.POST, APIRoute.signup, json: request)
                let body = TestBackend.errorBody(response)
                #expect(response.status.code == status, "\(name): \(response.status.code) \(String(decoding: response.body, as: UTF8.self))")
                #expect(body?.error.code == code, "\(name)")
                #expect(body?.error.message.contains(words) == true, "\(name): \(body?.error.message ?? "-")")
            }
            func with(_ change: (inout SignupRequest) throws -> Void) rethrows -> SignupRequest {
                var request = good
                try change(&request)
                return request
            }
            // The key: not locked, another user id, another key's private half, unreadable.
            let unlocked = try PGPPrivateKey.generate(name: "Dana", address: "dana@rampart.test")
            let clear = String(decoding: try unlocked.unprotectedExport().withUnsafeBytes {
                try OpenPGP.armor(Data($0), as: .secretKey) }, as: UTF8.self)
            try await refused("unlocked key", with { $0.privateKey = clear; $0.publicKey = unlocked.publicKey.armored() },
                              status: 422, code: "signup.keyNotLocked", saying: "not locked with a passphrase")
            let mallory = try MailboxKey.create(name: "Dana", address: "mallory@rampart.test",
                                                mailboxPassword: SecretBytes(copying: Array("x".utf8)))
            try await refused("user id", with { $0.privateKey = mallory.locked; $0.publicKey = mallory.key.publicKey.armored() },
                              status: 422, code: "signup.keyMismatch", saying: "names mallory@rampart.test, not dana@rampart.test")
            try await refused("other key", with { $0.privateKey = mallory.locked },
                              status: 422, code: "signup.keyMismatch", saying: "is not the public key's")
            try await refused("garbage key", with { $0.privateKey = "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nAAAA\n-----END PGP PRIVATE KEY BLOCK-----\n" },
                              status: 400, code: "signup.malformed", saying: "\"PrivateKey\"")
            try await refused("public key", with { $0.publicKey = "not a key" }, status: 400, code: "signup.malformed", saying: "\"PublicKey\"")
            // SRP: verifier and salts.
            try await refused("verifier short", with { $0.verifier = Data(count: 32).base64EncodedString() },
                              status: 400, code: "signup.malformed", saying: "\"Verifier\"")
            try await refused("verifier zero", with { $0.verifier = Data(count: 256).base64EncodedString() },
                              status: 400, code: "signup.malformed", saying: "number in 2..<N")
            try await refused("verifier N", with { $0.verifier = Data(group.modulus).base64EncodedString() },
                              status: 400, code: "signup.malformed", saying: "number in 2..<N")
            try await refused("salt", with { $0.salt = "%%" }, status: 400, code: "signup.malformed", saying: "\"Salt\"")
            try await refused("key salt", with { $0.keySalt = Data(count: 8).base64EncodedString() },
                              status: 400, code: "signup.malformed", saying: "\"KeySalt\"")
            try await refused("version", with { $0.version = 3 }, status: 400, code: "signup.malformed", saying: "\"Version\"")
            try await refused("display name", with { $0.displayName = " " }, status: 400, code: "signup.malformed", saying: "\"DisplayName\"")
            // The address.
            try await refused("domain", with { $0.address = "dana@elsewhere.example" },
                              status: 422, code: "signup.addressDomain", saying: "not in this server's domain (rampart.test)")
            try await refused("address", with { $0.address = "dana" }, status: 422, code: "signup.addressInvalid", saying: "name@domain")
            // The username.
            for (name, words) in [("ab", "3 to 40 characters"), (String(repeating: "a", count: 41), "3 to 40 characters"),
                                  ("\u{0430}lice", "look-alike"), ("dana\u{200B}", "look-alike"), ("da na", "only ASCII letters"),
                                  ("ｄａｎａ", "look-alike"), (".dana", "start and end"), ("admin", "admin is reserved"),
                                  ("PostMaster", "postmaster is reserved"), ("noreply", "reserved")] {
                try await refused(name, with { $0.username = name }, status: 422, code: "signup.usernameInvalid", saying: words)
            }
            #expect(try Self.rowCounts(backend) == before, "a refused sign-up left rows behind")

            // Taken: the username in any case, the address.
            _ = try await backend.call(SignupResponse.self, .POST, APIRoute.signup, body: try JSONEncoder().encode(good))
            let after = try Self.rowCounts(backend)
            let again = try DemoAccount(username: "DANA", displayName: "Other", address: "dana2@rampart.test",
                                        loginPassword: "p", mailboxPassword: "q").signupRequest(group: group)
            try await refused("taken", again, status: 409, code: "signup.usernameTaken", saying: "dana is taken")
            let sameAddress = try DemoAccount(username: "dana2", displayName: "Other", address: "DANA@rampart.test",
                                              loginPassword: "p", mailboxPassword: "q").signupRequest(group: group)
            try await refused("address taken", sameAddress, status: 409, code: "signup.addressTaken", saying: "dana@rampart.test is taken")
            #expect(try Self.rowCounts(backend) == after)
        }
    }

    @Test func racingSignUpsForOneNameExactlyOneWins() async throws {
        try await Self.with(open: true) { backend in
            let names = ["racer", "Racer", "RACER", "rAcEr", "racer", "RaCeR"]
            let requests = try names.enumerated().map { index, name in
                try DemoAccount(username: name, displayName: "Racer \(index)", address: "racer\(index)@rampart.test",
                                loginPassword: "pw \(index)", mailboxPassword: "mb \(index)").signupRequest(group: .rampart)
            }
            let statuses = try await withThrowingTaskGroup(of: (UInt, String?).self) { group in
                for request in requests {
                    group.addTask {
                        let response = try await backend.send(.POST, APIRoute.signup, json: request)
                        return (response.status.code, TestBackend.errorBody(response)?.error.code)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0.0 == 200 }.count == 1, "\(statuses)")
            #expect(statuses.filter { $0.0 == 409 && $0.1 == "signup.usernameTaken" }.count == names.count - 1, "\(statuses)")
            #expect(try Self.rowCounts(backend)["users"] == 3)   // demo, alice, the one racer
        }
    }

    @Test func invitationsAreSingleUseAndExpire() async throws {
        try await Self.with(open: false) { backend in
            #expect(try await backend.call(SignupInfoResponse.self, .GET, APIRoute.signupInfo).invitationRequired)
            let request = try Self.dana.signupRequest(group: .rampart)
            func attempt(_ request: SignupRequest) async throws -> (UInt, String?) {
                let response = try await backend.send(.POST, APIRoute.signup, json: request)
                return (response.status.code, TestBackend.errorBody(response)?.error.code)
            }
            #expect(try await attempt(request) == (403, "signup.closed"))
            var invented = request
            invented.invitation = "rmi-00000000000000000000000000000000"
            #expect(try await attempt(invented) == (403, "signup.invitationInvalid"))

            let code = try EmbeddedServer.createInvitation(dataDirectory: backend.folder, now: backend.clock.now, storage: try TestEngine.current.opener(folder: backend.folder))
            #expect(code.hasPrefix("rmi-") && code.count == 36)
            // A sign-up refused for another reason does not use the code up (one transaction).
            var taken = try DemoAccount(username: "demo", displayName: "D", address: "demo2@rampart.test",
                                        loginPassword: "p", mailboxPassword: "q").signupRequest(group: .rampart)
            taken.invitation = code
            #expect(try await attempt(taken) == (409, "signup.usernameTaken"))
            var invited = request
            invited.invitation = code
            #expect(try await attempt(invited).0 == 200)
            var reused = try Self.erik.signupRequest(group: .rampart)
            reused.invitation = code
            #expect(try await attempt(reused) == (403, "signup.invitationInvalid"))

            // Expiry, on the server's clock.
            let short = try EmbeddedServer.createInvitation(dataDirectory: backend.folder, lifetime: 3600, now: backend.clock.now, storage: try TestEngine.current.opener(folder: backend.folder))
            backend.clock.advance(by: 3601)
            reused.invitation = short
            #expect(try await attempt(reused) == (403, "signup.invitationInvalid"))
            // Only the hash is stored.
            #expect(TemporaryHome.allBytes(under: backend.folder).range(of: Data(short.utf8)) == nil)
            #expect(try Invitations.lifetime("7d") == 604_800 && Invitations.lifetime("90m") == 5400)
            #expect(throws: ServerError.self) { try Invitations.lifetime("soon") }
            #expect(throws: ServerError.self) { try Invitations.lifetime("5s") }
        }
    }

    @Test func signUpsAreThrottledPerClientAddress() async throws {
        try await Self.with(open: true, limits: ServerLimits(signupsPerHourPerAddress: 3)) { backend in
            var bad = try Self.dana.signupRequest(group: .rampart)
            bad.verifier = "AA=="
            for _ in 0..<3 { #expect(try await backend.send(.POST, APIRoute.signup, json: bad).status.code == 400) }
            let good = try Self.dana.signupRequest(group: .rampart)
            let throttled = try await backend.send(.POST, APIRoute.signup, json: good)
            #expect(throttled.status.code == 429)
            #expect(TestBackend.errorBody(throttled)?.error.code == "signup.throttled")
            #expect(TestBackend.errorBody(throttled)?.error.message.contains("Too many sign-ups from this address") == true)
            #expect(try Self.rowCounts(backend)["users"] == 2)
            backend.clock.advance(by: 3601)
            #expect(try await backend.send(.POST, APIRoute.signup, json: good).status.code == 200)
        }
    }

    @Test func theStoredLockedKeyIsOpenPGPThatGpgAndSqReadAndUnlockOnlyWithThePassphrase() async throws {
        try await Self.with(seedDemo: false, open: true) { backend in
            _ = try await backend.call(SignupResponse.self, .POST, APIRoute.signup,
                                       body: try JSONEncoder().encode(try Self.erik.signupRequest(group: .rampart)))
            let login = try await backend.login(Self.erik)
            let folder = backend.folder.appendingPathComponent("openpgp-tools", isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try Data(login.keys.privateKey.utf8).write(to: folder.appendingPathComponent("locked.asc"))
            let message = try OpenPGP.encrypt(Data("for gpg and sq".utf8), to: [try PGPPublicKey(armored: login.keys.publicKey)],
                                              signedBy: nil, armor: false, fileName: "m")
            try message.write(to: folder.appendingPathComponent("m.pgp"))
            let passphrase = try Bcrypt.mailboxKeyPassphrase(password: SecretBytes(copying: Array(Self.erik.loginPassword.utf8)),
                                                              keySalt: [UInt8](Data(base64Encoded: login.keys.keySalt)!))
            let phrase = try passphrase.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
            let shell = CLITool(path: URL(fileURLWithPath: "/bin/sh"))
            let gpg = "cd '\(folder.path)' && mkdir -p -m 700 g && export GNUPGHOME=\"$PWD/g\" && gpg --batch --quiet --import locked.asc"
            let imported = try await shell.runOnThread(["-c", gpg + " && gpg --batch --with-colons --list-secret-keys"])
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(imported.stdout.contains("erik@rampart.test"))
            for wrong in ["", "not the passphrase"] {
                let refused = try await shell.runOnThread(["-c", gpg + " && gpg --batch --pinentry-mode loopback --passphrase-fd 0 --decrypt m.pgp"],
                                                          stdin: wrong + "\n")
                #expect(refused.status != 0 && !refused.stdout.contains("for gpg and sq"))
            }
            let opened = try await shell.runOnThread(["-c", gpg + " && gpg --batch --pinentry-mode loopback --passphrase-fd 0 --decrypt m.pgp"],
                                                     stdin: phrase + "\n")
            #expect(opened.status == 0 && opened.stdout == "for gpg and sq", "\(opened.stderr)")

            let inspected = try await shell.runOnThread(["-c", "cd '\(folder.path)' && sq inspect locked.asc"])
            #expect(inspected.status == 0 && inspected.stdout.contains("Transferable Secret Key"))
            #expect(inspected.stdout.components(separatedBy: "Secret key: Encrypted").count == 3, "\(inspected.stdout)")
            // sq asks for the password on a terminal: `script` gives it one.
            let sq = "cd '\(folder.path)' && exec script -qec 'sq decrypt --recipient-key locked.asc m.pgp' /dev/null"
            let sqWrong = try await shell.runOnThread(["-c", sq], stdin: "not the passphrase\n", timeout: .seconds(60))
            #expect(sqWrong.status != 0 && !sqWrong.stdout.contains("for gpg and sq"))
            let sqRight = try await shell.runOnThread(["-c", sq], stdin: phrase + "\n", timeout: .seconds(60))
            #expect(sqRight.status == 0 && sqRight.stdout.contains("for gpg and sq"), "\(sqRight.stdout) \(sqRight.stderr)")
        }
    }

    // MARK: Helpers

    static func with(seedDemo: Bool = true, open: Bool, limits: ServerLimits = generous, _ body: (TestBackend) async throws -> Void) async throws {
        let backend = try await TestBackend.start(seedDemo: seedDemo, signup: SignupPolicy(open: open), limits: limits)
        do { try await body(backend) } catch {
            await backend.close()
            throw error
        }
        await backend.close()
    }

    static func verifiedGroup(_ modulus: String, _ backend: TestBackend) throws -> SRPGroup {
        let key = try PGPPublicKey(armored: backend.server.info.modulusPublicKey ?? "")
        let verified = try OpenPGP.verifyCleartext(modulus, against: [key])
        try #require(verified.signature == .verified(key.fingerprint))
        return try SRPGroup(modulus: [UInt8](try #require(Data(base64Encoded: verified.text.trimmingCharacters(in: .whitespacesAndNewlines)))))
    }

    /// Rows of every table an account touches, read with the sqlite3 tool, or psql on PostgreSQL
    /// (the test does not link GRDB).
    static func rowCounts(_ backend: TestBackend) throws -> [String: Int] {
        let tables = ["users", "addresses", "srpVerifiers", "labels", "events", "sessions"]
        let sql = tables.map { "SELECT '\($0)', COUNT(*) FROM \($0);" }.joined() + "SELECT 'invitationsUsed', COUNT(*) FROM invitations WHERE used IS NOT NULL;"
        let result = TestEngine.current == .postgresql
            ? try CLITool(path: URL(fileURLWithPath: "/usr/bin/psql"))
                .run(["-X", "-At", "-F", " ", "-c", sql, try TestEngine.databaseURL(folder: backend.folder)])
            : try CLITool(path: URL(fileURLWithPath: "/usr/bin/sqlite3"))
                .run(["-readonly", "-separator", " ", backend.folder.appendingPathComponent("backend.sqlite").path, sql])
        guard result.status == 0 else { throw TestFailure("rows: \(result.stderr)") }
        return Dictionary(uniqueKeysWithValues: result.lines.map { line in
            let parts = line.split(separator: " ")
            return (String(parts[0]), Int(parts[1]) ?? -1)
        })
    }
}
