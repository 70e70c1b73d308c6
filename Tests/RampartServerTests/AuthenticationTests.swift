import Foundation
import MailboxCrypto
import OpenPGP
import PinnedTransport
import RampartAPI
import RampartCore
import RampartServer
import Testing

@Suite("Embedded backend: login, tokens, sessions (over pinned TLS)")
struct AuthenticationTests {
    @Test func loginWithTheRightPasswordSucceedsAndWrongOrUnknownIsRefusedAlike() async throws {
        try await TestBackend.with { backend in

            // SRP: a wrong password and an unknown user get the same answer (SRPAuthTests has the details).
            let wrong = try await backend.srpAttempt(username: "demo", password: "not-the-password")
            #expect(wrong.status.code == 422)
            #expect(TestBackend.errorBody(wrong)?.error.code == "auth.wrongCredentials")
            let unknown = try await backend.srpAttempt(username: "mallory", password: "whatever")
            #expect(unknown.status.code == 422)
            #expect(TestBackend.errorBody(unknown) == TestBackend.errorBody(wrong))
            // The mailbox password is not the login password.
            let mailboxAsLogin = try await backend.srpAttempt(username: "demo", password: DemoAccounts.demo.mailboxPassword)
            #expect(mailboxAsLogin.status.code == 422)

            let login = try await backend.login(DemoAccounts.demo)
            #expect(login.user.username == "demo")
            #expect(login.user.addresses == [DemoAccounts.demo.address])
            #expect(login.expiresIn == 3600)
            #expect(!login.sessionId.isEmpty && login.accessToken != login.refreshToken)
            // Zero access: the server hands back a private key only the mailbox password opens.
            // The user key opens with it, and the address key through its token.
            let ring = try login.keyring(DemoAccounts.demo.mailboxPassword)
            let keys = ring.primary
            #expect(try PGPPublicKey(armored: login.keys.publicKey).fingerprint == ring.userKey.fingerprint)
            #expect(try PGPPublicKey(armored: #require(login.keys.addressKeys.first).publicKey).fingerprint == keys.fingerprint)
            #expect(keys.publicKey.addresses == [DemoAccounts.demo.address])
            #expect(login.keys.privateKey.hasPrefix("-----BEGIN PGP PRIVATE KEY BLOCK-----"))
            #expect(Data(base64Encoded: login.keys.keySalt)?.count == 16)
            #expect(throws: MailboxCryptoError.wrongMailboxPassword) { try login.mailboxKeys(DemoAccounts.demo.loginPassword) }

            let labels = try await backend.call(LabelListResponse.self, .GET, APIRoute.labels, token: login.accessToken)
            #expect(Set(labels.labels.map(\.name)).isSuperset(of: ["Inbox", "Sent", "Work", "Newsletters", "Travel", "Receipts"]))
        }
    }

    @Test func expiredAccessTokenIsRefusedUntilRefreshedAndRefreshTokensRotate() async throws {
        try await TestBackend.with { backend in
            let login = try await backend.login(DemoAccounts.demo)
            #expect(try await backend.send(.GET, APIRoute.labels, token: login.accessToken).status.code == 200)

            backend.clock.advance(by: 3601)
            let expired = try await backend.send(.GET, APIRoute.labels, token: login.accessToken)
            #expect(expired.status.code == 401)
            #expect(TestBackend.errorBody(expired)?.error.code == "auth.expired")
            #expect(expired.headers.first(name: "www-authenticate") == "Bearer")

            let tokens = try await backend.call(SessionTokens.self, .POST, APIRoute.refresh,
                                                body: try JSONEncoder().encode(RefreshRequest(refreshToken: login.refreshToken)))
            #expect(tokens.sessionId == login.sessionId)
            #expect(tokens.accessToken != login.accessToken && tokens.refreshToken != login.refreshToken)
            #expect(try await backend.send(.GET, APIRoute.labels, token: tokens.accessToken).status.code == 200)
            // The old refresh token was rotated out.
            let replay = try await backend.send(.POST, APIRoute.refresh, json: RefreshRequest(refreshToken: login.refreshToken))
            #expect(replay.status.code == 401)
            #expect(TestBackend.errorBody(replay)?.error.code == "auth.invalidToken")
            // A refresh token past its 30 days is refused too.
            backend.clock.advance(by: 31 * 86_400)
            let stale = try await backend.send(.POST, APIRoute.refresh, json: RefreshRequest(refreshToken: tokens.refreshToken))
            #expect(stale.status.code == 401)
        }
    }

    @Test func logoutEndsTheSessionAndItsTokens() async throws {
        try await TestBackend.with { backend in
            let first = try await backend.login(DemoAccounts.demo)
            let second = try await backend.login(DemoAccounts.demo)
            #expect(first.sessionId != second.sessionId)

            let logout = try await backend.call(OKResponse.self, .POST, APIRoute.logout, token: first.accessToken)
            #expect(logout.ok)
            let after = try await backend.send(.GET, APIRoute.labels, token: first.accessToken)
            #expect(after.status.code == 401)
            #expect(TestBackend.errorBody(after)?.error.code == "auth.invalidToken")
            #expect(try await backend.send(.POST, APIRoute.refresh, json: RefreshRequest(refreshToken: first.refreshToken)).status.code == 401)
            // Other sessions of the same user go on.
            #expect(try await backend.send(.GET, APIRoute.labels, token: second.accessToken).status.code == 200)
        }
    }

    @Test func aSessionListsTheAccountsSessionsAndEndsAnotherButNoOtherUsers() async throws {
        try await TestBackend.with { backend in
            let first = try await backend.login(DemoAccounts.demo)
            let second = try await backend.login(DemoAccounts.demo)
            let alice = try await backend.login(DemoAccounts.alice)
            let list = try await backend.call(SessionListResponse.self, .GET, APIRoute.sessions, token: first.accessToken)
            // (Both logged in at the same instant of the test clock: the order between them is the ids'.)
            #expect(Set(list.sessions.map(\.id)) == [first.sessionId, second.sessionId] && list.sessions.count == 2)
            #expect(list.sessions.filter(\.current).map(\.id) == [first.sessionId])
            // Another user's session is not there to end: 404, and it goes on.
            let foreign = try await backend.send(.DELETE, APIRoute.session(alice.sessionId), token: first.accessToken)
            #expect(foreign.status.code == 404)
            #expect(try await backend.send(.GET, APIRoute.labels, token: alice.accessToken).status.code == 200)
            // The second device's session ends at once, its refresh token too; the first goes on.
            #expect(try await backend.call(OKResponse.self, .DELETE, APIRoute.session(second.sessionId), token: first.accessToken).ok)
            #expect(try await backend.send(.GET, APIRoute.labels, token: second.accessToken).status.code == 401)
            #expect(try await backend.send(.POST, APIRoute.refresh, json: RefreshRequest(refreshToken: second.refreshToken)).status.code == 401)
            let after = try await backend.call(SessionListResponse.self, .GET, APIRoute.sessions, token: first.accessToken)
            #expect(after.sessions.map(\.id) == [first.sessionId])
        }
    }

    @Test func requestsWithoutAValidTokenAreRefused() async throws {
        try await TestBackend.with { backend in
            for token in [nil, "", "rat_forged", String(repeating: "x", count: 5000)] as [String?] {
                let response = try await backend.send(.GET, APIRoute.messages, token: token)
                #expect(response.status.code == 401)
                #expect(TestBackend.errorBody(response)?.error.code == "auth.invalidToken")
            }
        }
    }

    @Test func repeatedWrongPasswordsAreThrottled() async throws {
        try await TestBackend.with { backend in
            for _ in 0..<10 {
                _ = try await backend.srpAttempt(username: "alice", password: "guess")
            }
            let throttled = try await backend.srpAttempt(username: "alice", password: DemoAccounts.alice.loginPassword)
            #expect(throttled.status.code == 429)
            #expect(TestBackend.errorBody(throttled)?.error.code == "auth.tooManyAttempts")
            // Other accounts are not affected.
            _ = try await backend.login(DemoAccounts.demo)
        }
    }

    @Test func aClientPinningOtherKeysIsCutBeforeAnyRequest() async throws {
        try await TestBackend.with { backend in
            let other = try TestBackend.client(for: backend.server.info,
                                               pins: ["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE="])
            defer { Task { try? await other.shutdown() } }
            let url = URL(string: backend.server.baseURL.absoluteString + APIRoute.authInfo)!
            await #expect {
                _ = try await other.send(PinnedRequest(method: .POST, url: url, body: try JSONEncoder().encode(
                    SRPAuthInfoRequest(username: "demo"))))
            } throws: { error in
                if case .pinMismatch = error as? PinnedTransportError { return true }
                return false
            }
        }
    }
}
