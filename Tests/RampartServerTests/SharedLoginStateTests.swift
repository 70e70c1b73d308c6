import Crypto
import Foundation
import NIOHTTP1
import PinnedTransport
import RampartAPI
import RampartCore
@testable import RampartServer
import RampartServerPostgres
import RampartServerTestSupport
import RampartTestSupport
import SRP
import Testing

/// The login state and the limits' counters in the database, so several server processes on one
/// database behave as one: pending SRP logins (single-use across processes, their server secret
/// sealed), the SRP, sign-up and recovery throttles and the session rate limiter.
///
/// Trust-model row **several server processes**.
@Suite("Login state and throttles in the database", .serialized)
struct SharedLoginStateTests {
    // MARK: One storage, many threads (both engines)

    /// 8 threads hit one key 25 times each (as 8 processes' requests would): exactly `limit` hits
    /// are admitted, and the refused ones name the seconds left in the window; a given-back hit
    /// frees one slot; after the window the key counts from 1 again.
    @Test(arguments: TestEngine.allUnderTest)
    func aCounterAdmitsExactlyItsLimitUnderConcurrentHits(engine: TestEngine) async throws {
        try await engine.withStorageOffThePool { storage in
            let store = try BackendStore(storage: storage, name: "test")
            let counter = WindowCounter(store: store, scope: "test", limit: 37, window: 60, nameKey: SymmetricKey(size: .bits256))
            let now = Date()
            let admitted = Counted(), waits = Counted(), failures = Counted()
            let threads = (0..<8).map { _ in
                Thread {
                    for _ in 0..<25 {
                        do {
                            if let wait = try counter.hit("key", now: now) {
                                if wait == 60 { waits.add() }
                            } else {
                                admitted.add()
                            }
                        } catch { failures.add() }
                    }
                    admitted.finish()
                }
            }
            threads.forEach { $0.start() }
            while admitted.finished < 8 { usleep(10_000) }
            #expect(failures.value == 0)
            #expect(admitted.value == 37)
            #expect(waits.value == 8 * 25 - 37)
            #expect(try counter.hit("other key", now: now) == nil)
            // What one hit costs (the rate limiter makes one per request): printed, not bounded.
            let timing = WindowCounter(store: store, scope: "timing", limit: 1_000_000, window: 60, nameKey: counter.nameKey)
            let start = ContinuousClock.now
            for index in 0..<500 { _ = try timing.hit("session \(index % 16)", now: now) }
            let micros = (ContinuousClock.now - start).components.attoseconds / 1_000_000_000_000 / 500
                + (ContinuousClock.now - start).components.seconds * 1_000_000 / 500
            print("\(engine): one counter hit \(micros) µs (500 hits, 16 keys)")
            try counter.giveBack("key")
            #expect(try counter.hit("key", now: now) == nil)
            #expect(try counter.hit("key", now: now) == 60)
            #expect(try counter.hit("key", now: now.addingTimeInterval(59)) == 1)
            #expect(try counter.hit("key", now: now.addingTimeInterval(60)) == nil)
            try counter.clear("key")
            // Names are stored as keyed hashes: the other key's row is left, and no row names a key in clear.
            let names = try store.read { db in try String.fetchAll(db, sql: "SELECT name FROM throttleWindows WHERE scope = 'test'") }
            #expect(names == [counter.stored("other key")] && names[0].count == 32)
        }
    }

    /// A pending login is taken once; its row holds the server secret sealed (not the 32 bytes in
    /// clear), bound to its id and username (a row renamed does not open), and expires.
    @Test(arguments: TestEngine.allUnderTest)
    func aPendingLoginIsTakenOnceAndOpensOnlyUnderItsOwnIdAndName(engine: TestEngine) async throws {
        try await engine.withStorageOffThePool { storage in
            let store = try BackendStore(storage: storage, name: "test")
            let clock = ManualClock(now: Date())
            let key = SRPSessionStore.sealingKey(from: .init(size: .bits256))
            let sessions = SRPSessionStore(store: store, group: .rampart, key: key, clock: clock)
            let salt = SRPPassword.newSalt()
            let verifier = try SRPPassword.verifier(password: SecretBytes(copying: Array("pw".utf8)), salt: salt, group: .rampart)
            let (id, serverEphemeral) = try sessions.add(username: "ann", userID: "u1", verifier: verifier)
            let sealed = try store.read { db in try Data.fetchOne(db, sql: "SELECT sealed FROM srpPending WHERE id = ?", arguments: [id]) }
            #expect(sealed?.count == 2 + verifier.count + 32 + 12 + 16)
            let taken = try #require(try sessions.take(id))
            #expect(taken.username == "ann" && taken.userID == "u1")
            #expect(taken.server.serverEphemeral == serverEphemeral)
            #expect(try sessions.take(id) == nil)

            // A row moved to another name finds nothing (and is gone).
            let (renamed, _) = try sessions.add(username: "ann", userID: "u1", verifier: verifier)
            _ = try store.write { db in try db.execute(sql: "UPDATE srpPending SET username = 'bob' WHERE id = ?", arguments: [renamed]) }
            #expect(try sessions.take(renamed) == nil)
            // An expired one is refused.
            let (old, _) = try sessions.add(username: "ann", userID: nil, verifier: verifier)
            clock.advance(by: SRPSessionStore.lifetime + 1)
            #expect(try sessions.take(old) == nil)
            let rows = try store.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM srpPending") }
            #expect(rows == 0)
        }
    }

    // MARK: Two `rampart server start` processes on one database

    /// Demo's login: `/auth/info` on A, `/auth` on B succeeds (and B's proof checks out); the same
    /// proof sent to A afterwards, or to B again, is refused as an unknown session. Then 10 wrong
    /// passwords, alternating the processes (each attempt's two steps on different ones), are each
    /// refused as wrong; the 11th attempt, with the right password, is throttled on either
    /// process, exactly as on one process (`repeatedWrongPasswordsAreThrottled`).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aLoginCrossesProcessesOnceAndWrongPasswordsAreCountedAcrossThem() async throws {
        try await Self.twoProcesses("srp") { a, b in
            let demo = DemoAccounts.demo, alice = DemoAccounts.alice
            let info = try await a.authInfo(demo.username)
            let (request, client) = try TestBackend.srpRequest(username: demo.username, password: demo.loginPassword,
                                                               info: info, server: a.info)
            let accepted = try await b.send(.POST, APIRoute.auth, json: request)
            #expect(accepted.status.code == 200, "\(String(decoding: accepted.body, as: UTF8.self))")
            let answer = try JSONDecoder().decode(SRPAuthResponse.self, from: accepted.body)
            try client.verifyServerProof([UInt8](Data(base64Encoded: answer.serverProof) ?? Data()))
            for replay in [a, b] {
                let refused = try await replay.send(.POST, APIRoute.auth, json: request)
                #expect(refused.status.code == 422)
                #expect(Self.code(refused) == "auth.invalidSRPSession")
            }

            for attempt in 0..<10 {
                let (first, second) = attempt % 2 == 0 ? (a, b) : (b, a)
                let wrong = try await Self.attempt(alice.username, "guess \(attempt)", info: first, proof: second)
                #expect(wrong.status.code == 422 && Self.code(wrong) == "auth.wrongCredentials", "attempt \(attempt + 1)")
            }
            for (first, second) in [(a, b), (b, a)] {
                let throttled = try await Self.attempt(alice.username, alice.loginPassword, info: first, proof: second)
                #expect(throttled.status.code == 429 && Self.code(throttled) == "auth.tooManyAttempts")
            }
            // Another account is not affected, on either process.
            #expect(try await Self.attempt(demo.username, demo.loginPassword, info: b, proof: a).status.code == 200)
        }
    }

    /// With 3 sign-ups an hour per address and 40 requests a minute per session: refused sign-ups
    /// spread over A and B count together (the 4th is throttled on either), and one session's
    /// requests spread over both are admitted 40 times, then limited on both.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func signUpsAndASessionsRequestsAreCountedAcrossProcesses() async throws {
        let environment = ["RAMPART_SERVER_SIGNUPS_PER_HOUR": "3", "RAMPART_SERVER_REQUESTS_PER_MINUTE": "40"]
        try await Self.twoProcesses("limits", arguments: ["--open-signup"], environment: environment) { a, b in
            var bad = try SignupTests.dana.signupRequest(group: .rampart)
            bad.verifier = "AA=="
            for process in [a, b, a] {
                #expect(try await process.send(.POST, APIRoute.signup, json: bad).status.code == 400)
            }
            let good = try SignupTests.dana.signupRequest(group: .rampart)
            for process in [b, a] {
                let throttled = try await process.send(.POST, APIRoute.signup, json: good)
                #expect(throttled.status.code == 429 && Self.code(throttled) == "signup.throttled")
            }

            let demo = DemoAccounts.demo
            let login = try await Self.attempt(demo.username, demo.loginPassword, info: a, proof: b)
            let token = try JSONDecoder().decode(SRPAuthResponse.self, from: login.body).login.tokens.accessToken
            var statuses: [UInt] = []
            for index in 0..<42 {
                statuses.append(try await (index % 2 == 0 ? a : b).send(.GET, APIRoute.labels, token: token).status.code)
            }
            #expect(statuses.prefix(40).allSatisfy { $0 == 200 } && statuses.suffix(2) == [429, 429], "\(statuses)")
        }
    }

    // MARK: Helpers

    /// One SRP attempt: `/auth/info` on `info`, `/auth` on `proof`; the raw `/auth` answer.
    static func attempt(_ username: String, _ password: String, info: ProcessAPI, proof: ProcessAPI) async throws -> PinnedResponse {
        let challenge = try await info.authInfo(username)
        let (request, _) = try TestBackend.srpRequest(username: username, password: password, info: challenge, server: info.info)
        return try await proof.send(.POST, APIRoute.auth, json: request)
    }

    static func code(_ response: PinnedResponse) -> String? {
        TestBackend.errorBody(response)?.error.code
    }

    /// Two `rampart server start` processes on one data folder and, on PostgreSQL
    /// (`RAMPART_SERVER_ENGINE=postgresql`), one database of their own; stopped and removed after `body`.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func twoProcesses(_ label: String, arguments: [String] = [], environment: [String: String] = [:],
                             _ body: @escaping @Sendable (ProcessAPI, ProcessAPI) async throws -> Void) async throws {
        let home = try TemporaryHome("shared-\(label)")
        defer { home.remove() }
        let data = home.child("server")
        let engine = TestEngine.current
        var arguments = arguments
        // The database is named after this folder (which exists only as a name).
        let databaseKey = home.child("db\(UUID().uuidString)")
        if engine == .postgresql {
            let database = try await onThreadOfItsOwn { () -> String in
                _ = try PostgresAdmin.createDatabase(TestEngine.databaseName(for: databaseKey.lastPathComponent),
                                                     on: try TestEngine.requiredPostgresURL())
                return try TestEngine.databaseURL(folder: databaseKey)
            }
            arguments += ["--database", database]
        }
        defer { engine.dropDatabase(folder: databaseKey) }
        let a = try await ServerProcess.start(data: data, arguments: arguments, environment: environment, infoFile: home.child("a.json"))
        defer { a.stop() }
        let b = try await ServerProcess.start(data: data, arguments: arguments, environment: environment, infoFile: home.child("b.json"))
        defer { b.stop() }
        let apiA = try ProcessAPI(a.info), apiB = try ProcessAPI(b.info)
        do {
            try await onThreadsOfItsOwn { try await body(apiA, apiB) }
        } catch {
            await apiA.close(); await apiB.close()
            throw error
        }
        await apiA.close(); await apiB.close()
    }
}

/// A pinned HTTPS client of one server process.
final class ProcessAPI: Sendable {
    let info: ServerInfo
    let client: PinnedHTTPClient

    init(_ info: ServerInfo) throws {
        self.info = info
        client = try TestBackend.client(for: info)
    }

    func send(_ method: HTTPMethod, _ path: String, token: String? = nil, json: some Encodable) async throws -> PinnedResponse {
        try await send(method, path, token: token, body: try JSONEncoder().encode(json))
    }

    func send(_ method: HTTPMethod, _ path: String, token: String? = nil, body: Data? = nil) async throws -> PinnedResponse {
        var headers = HTTPHeaders()
        if let token { headers.add(name: "Authorization", value: "Bearer \(token)") }
        if body != nil { headers.add(name: "Content-Type", value: "application/json") }
        return try await client.send(PinnedRequest(method: method, url: URL(string: info.baseURL.absoluteString + path)!,
                                                   headers: headers, body: body))
    }

    func authInfo(_ username: String) async throws -> SRPAuthInfoResponse {
        let response = try await send(.POST, APIRoute.authInfo, json: SRPAuthInfoRequest(username: username))
        guard response.status == .ok else { throw TestFailure("/auth/info answered \(response.status.code)") }
        return try JSONDecoder().decode(SRPAuthInfoResponse.self, from: response.body)
    }

    func close() async { try? await client.shutdown() }
}

/// A count several threads add to.
final class Counted: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0, done = 0
    func add() { lock.withLock { count += 1 } }
    func finish() { lock.withLock { done += 1 } }
    var value: Int { lock.withLock { count } }
    var finished: Int { lock.withLock { done } }
}
