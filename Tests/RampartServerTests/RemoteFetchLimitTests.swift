import Foundation
import NIOHTTP1
import RampartAPI
import RampartTestSupport
import Testing
@testable import RampartServer

/// The remote-content proxy's per-user rate (`POST /v1/remote/fetch`): counted in the database
/// for all of a user's sessions on every server process, before anything is fetched.
@Suite("Remote fetch limit", .serialized)
struct RemoteFetchLimitTests {
    /// 3 fetches a minute per user: demo's two sessions on two processes are admitted 3 times in
    /// all (refused as local destinations by the fetcher, but counted), then answered 429
    /// `limit.remoteRate` on both; alice, another user, is still admitted.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aUsersFetchesAreCountedOverAllItsSessionsAndProcesses() async throws {
        try await SharedLoginStateTests.twoProcesses("remote", environment: ["RAMPART_SERVER_REMOTE_FETCHES_PER_MINUTE": "3"]) { a, b in
            func token(_ account: DemoAccount, _ process: ProcessAPI) async throws -> String {
                let login = try await SharedLoginStateTests.attempt(account.username, account.loginPassword, info: process, proof: process)
                return try JSONDecoder().decode(SRPAuthResponse.self, from: login.body).login.tokens.accessToken
            }
            let first = try await token(DemoAccounts.demo, a), second = try await token(DemoAccounts.demo, b)
            let asked = RemoteFetchRequest(url: "http://10.0.0.1/picture.png")
            var answers: [String] = []
            for (process, session) in [(a, first), (b, second), (a, second), (b, first), (a, second)] {
                let answer = try await process.send(.POST, APIRoute.remoteFetch, token: session, json: asked)
                answers.append("\(answer.status.code) \(SharedLoginStateTests.code(answer) ?? "")")
            }
            #expect(answers.prefix(3).allSatisfy { !$0.hasPrefix("429") } && answers.suffix(2) == ["429 limit.remoteRate", "429 limit.remoteRate"],
                    "\(answers)")
            let other = try await b.send(.POST, APIRoute.remoteFetch, token: try await token(DemoAccounts.alice, b), json: asked)
            #expect(other.status.code != 429, "\(other.status.code) \(SharedLoginStateTests.code(other) ?? "")")
        }
    }

    @Test func theLimitHasADefaultAndAnEnvironmentVariable() {
        #expect(ServerLimits().remoteFetchesPerMinutePerUser == 300)
        #expect(ServerLimits.fromEnvironment(["RAMPART_SERVER_REMOTE_FETCHES_PER_MINUTE": "7"]).remoteFetchesPerMinutePerUser == 7)
        #expect(ServerLimitViolation.tooManyRemoteFetches(retryAfterSeconds: 5).status == .tooManyRequests)
    }
}
