import Foundation
import RampartTestSupport
import OpenPGP
import PinnedTransport
import RampartAPI
import RampartCore
import RampartServer
import SRP
import Testing

/// SRP login through the embedded server's `/auth/info` and `/auth`, over pinned TLS: Rampart's
/// SRP client, proton-client's own `Session.authenticate` (scripts/srp/proton_login.py), bad
/// input, replay, the throttle and unknown usernames.
@Suite("Embedded backend: SRP login (/auth/info, /auth)")
struct SRPAuthTests {
    @Test func rampartClientLogsInAndChecksTheServerProof() async throws {
        try await TestBackend.with { backend in
            let login = try await backend.srpLogin(username: "demo", password: DemoAccounts.demo.loginPassword)
            #expect(login.user.username == "demo")
            #expect(try await backend.send(.GET, APIRoute.labels, token: login.accessToken).status.code == 200)
            // The modulus is signed by the key server.json pins, and by nothing else.
            let info = try await backend.authInfo("demo")
            let key = try PGPPublicKey(armored: try #require(backend.server.info.modulusPublicKey))
            #expect(key.fingerprint.hex == backend.server.info.modulusKeyFingerprint)
            let verified = try OpenPGP.verifyCleartext(info.modulus, against: [key])
            #expect(verified.signature == .verified(key.fingerprint))
            #expect(Data(base64Encoded: verified.text.trimmingCharacters(in: .whitespacesAndNewlines)).map([UInt8].init) == SRPGroup.rampart.modulus)
            #expect(info.version == 4 && Data(base64Encoded: info.salt)?.count == 10)
            // The mailbox password is not the login password.
            #expect(try await backend.srpAttempt(username: "demo", password: DemoAccounts.demo.mailboxPassword).status.code == 422)
        }
    }

    @Test func protonClientLogsInToADemoAndANewAccountTwoHundredTimes() async throws {
        guard let python = SRPPython.executable else {
            #expect(ProcessInfo.processInfo.environment["CI"] == nil, "no Python with proton-client under CI (scripts/deps/srp.pip)")
            return
        }
        try await TestBackend.with { backend in
            let newAccount = DemoAccount(username: "newcomer", displayName: "New Comer", address: "newcomer@rampart.test",
                                         loginPassword: "fresh login pässword \(UUID().uuidString)", mailboxPassword: "a separate mailbox secret")
            // Signed up as a device does (POST /v1/signup/accounts with an operator's invitation).
            let invitation = try EmbeddedServer.createInvitation(dataDirectory: backend.folder, storage: try TestEngine.current.opener(folder: backend.folder))
            _ = try await backend.call(SignupResponse.self, .POST, APIRoute.signup,
                                       body: try JSONEncoder().encode(try newAccount.signupRequest(group: .rampart, invitation: invitation)))
            // 2 × 100 logins; proton-client checks every server proof. Besides the random ones
            // (an A, B or S with a zero high byte comes about once in 128), every 25th login draws
            // its secret a so that A has one: proton-client then sends A 255 bytes long and hashes
            // it so, and must still get in.
            let count = Int(ProcessInfo.processInfo.environment["RAMPART_SRP_LIVE_LOGINS"] ?? "") ?? 100
            let demo = try SRPPython.protonLogin(python, backend: backend, username: "demo", password: DemoAccounts.demo.loginPassword,
                                                 count: count, shortAEvery: 25)
            #expect(demo.status == 0, "\(demo.output) \(demo.errors)")
            let fresh = try SRPPython.protonLogin(python, backend: backend, username: newAccount.username, password: newAccount.loginPassword,
                                                  count: count, shortAEvery: 25)
            #expect(fresh.status == 0, "\(fresh.output) \(fresh.errors)")
            let summary = [demo.json, fresh.json]
            #expect(summary.map { $0["logins"] as? Int ?? -1 } == [count, count])
            #expect(summary.allSatisfy { ($0["shortA"] as? Int ?? 0) >= (count + 24) / 25 }, "\(summary)")
            // A wrong password and an unknown user fail in proton-client alike.
            let wrong = try SRPPython.protonLogin(python, backend: backend, username: "demo", password: "wrong", count: 1, expectFailure: true)
            let unknown = try SRPPython.protonLogin(python, backend: backend, username: "nobody-here", password: "wrong", count: 1, expectFailure: true)
            #expect(wrong.status == 0 && unknown.status == 0)
            #expect((wrong.json["failures"] as? [[String: Any]])?.first?["code"] as? Int == SRPAPICode.wrongCredentials)
            #expect((unknown.json["failures"] as? [[String: Any]])?.first?["code"] as? Int == SRPAPICode.wrongCredentials)
        }
    }

    @Test func unknownUsernamesLookRealAndFailExactlyLikeAWrongPassword() async throws {
        try await TestBackend.with { backend in
            let first = try await backend.authInfo("mallory")
            let second = try await backend.authInfo("Mallory")
            let real = try await backend.authInfo("demo")
            // Stable salt per unknown name (like a real account's), a fresh ephemeral per ask (like a real one).
            #expect(first.salt == second.salt && Data(base64Encoded: first.salt)?.count == 10)
            #expect(first.salt != (try await backend.authInfo("trudy")).salt)
            #expect(first.serverEphemeral != second.serverEphemeral)
            #expect(Data(base64Encoded: first.serverEphemeral)?.count == Data(base64Encoded: real.serverEphemeral)?.count)
            #expect(first.modulus == real.modulus && first.version == real.version)

            let wrong = try await backend.srpAttempt(username: "demo", password: "not-the-password")
            let unknown = try await backend.srpAttempt(username: "mallory", password: "whatever")
            #expect(wrong.status.code == 422)
            #expect(unknown.status.code == wrong.status.code)
            #expect(unknown.body == wrong.body)
            let body = try JSONSerialization.jsonObject(with: wrong.body) as? [String: Any]
            #expect(body?["Code"] as? Int == SRPAPICode.wrongCredentials)
            #expect(body?["Error"] as? String == "Wrong username or password.")
        }
    }

    @Test func badInputIsA4xxAndNeverALogin() async throws {
        try await TestBackend.with { backend in
            let n = SRPGroup.rampart.modulus
            var twoN = [UInt8](repeating: 0, count: 257)
            var carry: UInt16 = 0
            for index in 0..<256 { let sum = UInt16(n[index]) * 2 + carry; twoN[index] = UInt8(sum & 0xFF); carry = sum >> 8 }
            twoN[256] = UInt8(carry)
            let proof = Data(repeating: 7, count: 256).base64EncodedString()
            var cases: [(String, [String: Any])] = [
                ("A = 0", ["ClientEphemeral": Data([0]).base64EncodedString(), "ClientProof": proof]),
                ("A = 0 (256 bytes)", ["ClientEphemeral": Data(count: 256).base64EncodedString(), "ClientProof": proof]),
                ("A = N", ["ClientEphemeral": Data(n).base64EncodedString(), "ClientProof": proof]),
                ("A = 2N", ["ClientEphemeral": Data(twoN).base64EncodedString(), "ClientProof": proof]),
                ("A not base64", ["ClientEphemeral": "%%%not base64%%%", "ClientProof": proof]),
                ("A empty", ["ClientEphemeral": "", "ClientProof": proof]),
                ("proof short", ["ClientEphemeral": Data([5]).base64EncodedString(), "ClientProof": Data(count: 32).base64EncodedString()]),
                ("proof long", ["ClientEphemeral": Data([5]).base64EncodedString(), "ClientProof": Data(count: 300).base64EncodedString()]),
                ("proof not base64", ["ClientEphemeral": Data([5]).base64EncodedString(), "ClientProof": "@@@@"]),
                ("proof a number", ["ClientEphemeral": Data([5]).base64EncodedString(), "ClientProof": 12]),
            ]
            cases.append(("no proof", ["ClientEphemeral": Data([5]).base64EncodedString()]))
            for (name, fields) in cases {
                let info = try await backend.authInfo("demo")
                var body: [String: Any] = ["Username": "demo", "SRPSession": info.srpSession]
                body.merge(fields) { $1 }
                let response = try await backend.send(.POST, APIRoute.auth, body: try JSONSerialization.data(withJSONObject: body))
                #expect((400..<500).contains(Int(response.status.code)), "\(name): \(response.status.code)")
                #expect(response.status.code != 429, "\(name) was throttled")
                let decoded = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any]
                #expect(decoded?["Code"] as? Int != nil && decoded?["Code"] as? Int != 1000, "\(name)")
                #expect((decoded?["Error"] as? String)?.isEmpty == false, "\(name)")
                #expect(decoded?["AccessToken"] == nil, "\(name)")
            }
            // Bodies: not JSON, empty, oversized, no username, /auth/info without a username.
            let oversized = Data(("{\"Username\": \"" + String(repeating: "a", count: 20_000) + "\"}").utf8)
            for (path, data) in [(APIRoute.auth, Data("{\"Username\": ".utf8)), (APIRoute.auth, Data()), (APIRoute.authInfo, oversized),
                                 (APIRoute.auth, oversized), (APIRoute.authInfo, Data("{}".utf8)),
                                 (APIRoute.authInfo, Data("{\"Username\": \"\"}".utf8))] {
                let response = try await backend.send(.POST, path, body: data)
                #expect((400..<500).contains(Int(response.status.code)), "\(path) \(data.count) bytes: \(response.status.code)")
                #expect((try? JSONSerialization.jsonObject(with: response.body) as? [String: Any])?["Code"] as? Int != nil)
            }
            // The server still works.
            _ = try await backend.srpLogin(username: "demo", password: DemoAccounts.demo.loginPassword)
        }
    }

    @Test func anSRPSessionIsSingleUseBoundToItsUsernameAndExpires() async throws {
        try await TestBackend.with { backend in
            let password = DemoAccounts.demo.loginPassword
            // Unknown and malformed sessions.
            for session in ["0123456789abcdef0123456789abcdef", "not-hex", ""] {
                let info = try await backend.authInfo("demo")
                let (request, _) = try backend.srpRequest(username: "demo", password: password, info: info)
                let forged = SRPAuthRequest(username: "demo", clientEphemeral: request.clientEphemeral, clientProof: request.clientProof, srpSession: session)
                let response = try await backend.send(.POST, APIRoute.auth, json: forged)
                #expect(response.status.code == 422, "session \(session)")
                #expect((try JSONSerialization.jsonObject(with: response.body) as? [String: Any])?["Code"] as? Int == SRPAPICode.invalidSession)
            }
            // A good login, then its exact request replayed.
            let info = try await backend.authInfo("demo")
            let (request, client) = try backend.srpRequest(username: "demo", password: password, info: info)
            let first = try await backend.send(.POST, APIRoute.auth, json: request)
            #expect(first.status.code == 200)
            let answer = try JSONDecoder().decode(SRPAuthResponse.self, from: first.body)
            try client.verifyServerProof([UInt8](try #require(Data(base64Encoded: answer.serverProof))))
            let replay = try await backend.send(.POST, APIRoute.auth, json: request)
            #expect(replay.status.code == 422)
            #expect((try JSONSerialization.jsonObject(with: replay.body) as? [String: Any])?["AccessToken"] == nil)
            // A session asked for one username does not log in another.
            let aliceInfo = try await backend.authInfo("alice")
            let (aliceRequest, _) = try backend.srpRequest(username: "alice", password: DemoAccounts.alice.loginPassword, info: aliceInfo)
            let swapped = SRPAuthRequest(username: "demo", clientEphemeral: aliceRequest.clientEphemeral, clientProof: aliceRequest.clientProof,
                                         srpSession: aliceRequest.srpSession)
            #expect(try await backend.send(.POST, APIRoute.auth, json: swapped).status.code == 422)
            // Expiry: a correct proof after the session's lifetime is refused.
            let late = try await backend.authInfo("demo")
            let (lateRequest, _) = try backend.srpRequest(username: "demo", password: password, info: late)
            backend.clock.advance(by: 181)
            #expect(try await backend.send(.POST, APIRoute.auth, json: lateRequest).status.code == 422)
        }
    }

    @Test func fiftyParallelWrongProofsNeverGetMoreTriesThanTheLimit() async throws {
        try await TestBackend.with { backend in
            // Fifty challenges first, then fifty wrong proofs at once.
            var requests: [SRPAuthRequest] = []
            for _ in 0..<50 {
                let info = try await backend.authInfo("demo")
                requests.append(try backend.srpRequest(username: "demo", password: "wrong guess", info: info).request)
            }
            let statuses = try await withThrowingTaskGroup(of: UInt.self) { group in
                for request in requests {
                    group.addTask { UInt(try await backend.send(.POST, APIRoute.auth, json: request).status.code) }
                }
                return try await group.reduce(into: [UInt]()) { $0.append($1) }
            }
            let tried = statuses.filter { $0 == 422 }.count
            let throttled = statuses.filter { $0 == 429 }.count
            #expect(tried == 10, "\(statuses)")
            #expect(tried + throttled == 50)
            // Now even the right password waits (the username is locked for the window)…
            let locked = try await backend.srpAttempt(username: "demo", password: DemoAccounts.demo.loginPassword)
            #expect(locked.status.code == 429)
            #expect((try JSONSerialization.jsonObject(with: locked.body) as? [String: Any])?["Code"] as? Int == SRPAPICode.tooManyAttempts)
            // …and after the window it gets in.
            backend.clock.advance(by: 301)
            _ = try await backend.srpLogin(username: "demo", password: DemoAccounts.demo.loginPassword)
        }
    }

    @Test func changingTheLoginPasswordNeedsTheOldOneAndEndsOtherSessions() async throws {
        try await TestBackend.with { backend in
            let old = DemoAccounts.demo.loginPassword
            let first = try await backend.srpLogin(username: "demo", password: old)
            let second = try await backend.srpLogin(username: "demo", password: old)
            // A wrong old password changes nothing.
            let wrong = try await backend.changePassword(token: second.accessToken, old: "not it", new: "new password 1")
            #expect(wrong.status.code == 422)
            let changed = try await backend.changePassword(token: second.accessToken, old: old, new: "new password 1")
            #expect(changed.status.code == 200, "\(String(decoding: changed.body, as: UTF8.self))")
            #expect((try JSONSerialization.jsonObject(with: changed.body) as? [String: Any])?["EndedSessions"] as? Int == 1)
            // The other session is over, this one continues; only the new password logs in.
            #expect(try await backend.send(.GET, APIRoute.labels, token: first.accessToken).status.code == 401)
            #expect(try await backend.send(.GET, APIRoute.labels, token: second.accessToken).status.code == 200)
            #expect(try await backend.srpAttempt(username: "demo", password: old).status.code == 422)
            _ = try await backend.srpLogin(username: "demo", password: "new password 1")
        }
    }
}

// MARK: - Helpers

extension TestBackend {
    func authInfo(_ username: String) async throws -> SRPAuthInfoResponse {
        try await call(SRPAuthInfoResponse.self, .POST, APIRoute.authInfo, body: try JSONEncoder().encode(SRPAuthInfoRequest(username: username)))
    }

    /// The `/auth` request Rampart's client makes for `info` (the modulus verified against server.json's key).
    func srpRequest(username: String, password: String, info: SRPAuthInfoResponse) throws -> (request: SRPAuthRequest, client: SRPClient) {
        try Self.srpRequest(username: username, password: password, info: info, server: server.info)
    }

    /// The `/auth` request for `info` from the server described by `server` (its pinned modulus key).
    static func srpRequest(username: String, password: String, info: SRPAuthInfoResponse,
                           server: ServerInfo) throws -> (request: SRPAuthRequest, client: SRPClient) {
        let key = try PGPPublicKey(armored: server.modulusPublicKey ?? "")
        let verified = try OpenPGP.verifyCleartext(info.modulus, against: [key])
        guard verified.signature == .verified(key.fingerprint),
              let modulus = Data(base64Encoded: verified.text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestFailure("the modulus is not signed by the pinned key")
        }
        let client = try SRPClient(group: try SRPGroup(modulus: [UInt8](modulus)), password: SecretBytes(copying: Array(password.utf8)),
                                   salt: [UInt8](Data(base64Encoded: info.salt)!), serverEphemeral: [UInt8](Data(base64Encoded: info.serverEphemeral)!))
        return (SRPAuthRequest(username: username, clientEphemeral: Data(client.clientEphemeral).base64EncodedString(),
                               clientProof: Data(client.clientProof).base64EncodedString(), srpSession: info.srpSession), client)
    }

    /// One full attempt; the raw `/auth` answer.
    func srpAttempt(username: String, password: String) async throws -> PinnedResponse {
        let info = try await authInfo(username)
        return try await send(.POST, APIRoute.auth, json: try srpRequest(username: username, password: password, info: info).request)
    }

    /// A login that must succeed, with the server's proof checked.
    func srpLogin(username: String, password: String) async throws -> LoginResponse {
        let info = try await authInfo(username)
        let (request, client) = try srpRequest(username: username, password: password, info: info)
        let response = try await send(.POST, APIRoute.auth, json: request)
        guard response.status == .ok else {
            throw TestFailure("/auth answered \(response.status.code): \(String(decoding: response.body, as: UTF8.self))")
        }
        let answer = try JSONDecoder().decode(SRPAuthResponse.self, from: response.body)
        try client.verifyServerProof([UInt8](Data(base64Encoded: answer.serverProof) ?? Data()))
        return answer.login
    }

    func changePassword(token: String, old: String, new: String) async throws -> PinnedResponse {
        let info = try await authInfo("demo")
        let (request, _) = try srpRequest(username: "demo", password: old, info: info)
        let salt = SRPPassword.newSalt()
        let verifier = try SRPPassword.verifier(password: SecretBytes(copying: Array(new.utf8)), salt: salt, group: .rampart)
        let change = SRPChangePasswordRequest(clientEphemeral: request.clientEphemeral, clientProof: request.clientProof,
                                              srpSession: info.srpSession, salt: Data(salt).base64EncodedString(),
                                              verifier: Data(verifier).base64EncodedString())
        return try await send(.POST, APIRoute.accountPassword, token: token, json: change)
    }
}

/// proton-client (scripts/srp/proton_login.py) with `$RAMPART_PYTHON` or the project's `.venv`.
enum SRPPython {
    static let packageRoot = BuiltExecutable.packageRoot

    static let executable: String? = ProjectPython.executable

    struct Run { let status: Int32; let output: String; let errors: String; let json: [String: Any] }

    static func protonLogin(_ python: String, backend: TestBackend, username: String, password: String, count: Int,
                            shortAEvery: Int = 0, expectFailure: Bool = false) throws -> Run {
        let folder = backend.folder.appendingPathComponent("proton-client", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let ca = folder.appendingPathComponent("ca.pem"), key = folder.appendingPathComponent("modulus.asc")
        try Data(backend.server.info.certificatePEM.utf8).write(to: ca)
        try Data((backend.server.info.modulusPublicKey ?? "").utf8).write(to: key)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [packageRoot.appendingPathComponent("scripts/srp/proton_login.py").path,
                             "--url", "https://127.0.0.1:\(backend.server.port)", "--ca", ca.path, "--modulus-key", key.path,
                             "--fingerprint", backend.server.info.modulusKeyFingerprint ?? "", "--username", username,
                             "--password", password, "--count", "\(count)", "--short-a-every", "\(shortAEvery)"]
            + (expectFailure ? ["--expect-failure"] : [])
        let stdout = Pipe(), stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let errors = Locked("")
        let done = DispatchSemaphore(value: 0)
        let reader = Thread {
            errors.set(String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
            done.signal()
        }
        reader.start()
        let out = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        done.wait()
        let json = (try? JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any]) ?? [:]
        return Run(status: process.terminationStatus, output: out, errors: errors.get(), json: json)
    }

    final class Locked: @unchecked Sendable {
        private let lock = NSLock()
        private var value: String
        init(_ value: String) { self.value = value }
        func set(_ new: String) { lock.withLock { value = new } }
        func get() -> String { lock.withLock { value } }
    }
}

/// An SRP login over any transport that can POST JSON (a test's own pinned client): the modulus
/// verified against server.json's key, the server proof checked.
enum SRPTestClient {
    static func login(info: ServerInfo, username: String, password: String,
                      post: (String, any Encodable) async throws -> Data) async throws -> LoginResponse {
        let challenge = try JSONDecoder().decode(SRPAuthInfoResponse.self, from: try await post(APIRoute.authInfo, SRPAuthInfoRequest(username: username)))
        let key = try PGPPublicKey(armored: info.modulusPublicKey ?? "")
        let verified = try OpenPGP.verifyCleartext(challenge.modulus, against: [key])
        guard verified.signature == .verified(key.fingerprint),
              let modulus = Data(base64Encoded: verified.text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestFailure("the modulus is not signed by the pinned key")
        }
        let client = try SRPClient(group: try SRPGroup(modulus: [UInt8](modulus)), password: SecretBytes(copying: Array(password.utf8)),
                                   salt: [UInt8](Data(base64Encoded: challenge.salt) ?? Data()),
                                   serverEphemeral: [UInt8](Data(base64Encoded: challenge.serverEphemeral) ?? Data()))
        let request = SRPAuthRequest(username: username, clientEphemeral: Data(client.clientEphemeral).base64EncodedString(),
                                     clientProof: Data(client.clientProof).base64EncodedString(), srpSession: challenge.srpSession)
        let answer = try JSONDecoder().decode(SRPAuthResponse.self, from: try await post(APIRoute.auth, request))
        try client.verifyServerProof([UInt8](Data(base64Encoded: answer.serverProof) ?? Data()))
        return answer.login
    }
}
