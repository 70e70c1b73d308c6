import Foundation
import NIOHTTP1
import PinnedTransport
import Testing

@Suite("Pinned HTTP client behaviour: redirects, limits, timeouts, pin tool")
struct PinnedHTTPClientTests {
    @Test func redirectToAnotherHostIsRefused() async throws {
        let world = try PinningWorld()
        let server = try await TestTLSServer.start(serving: world.certificateA) { _ in
            TestResponse(status: .found, headers: ["Location": "https://evil.test/steal"], body: Data())
        }
        defer { Task { await server.close() } }
        let (client, _) = try world.client([world.policy(pins: [world.certificateA.pin, TestPKI.unusedPin()])])

        await #expect(throws: PinnedTransportError.redirectRefused(
            from: "https://rampart.test:\(server.port)/inbox", to: "https://evil.test/steal")) {
            try await client.send(PinnedRequest(url: url("rampart.test", server.port)))
        }
        #expect(server.recorder.requests.count == 1)
        try await client.shutdown()
    }

    @Test func redirectOnTheSameHostIsFollowedOverAPinnedConnection() async throws {
        let world = try PinningWorld()
        let server = try await TestTLSServer.start(serving: world.certificateA) { request in
            request.uri == "/old" ? TestResponse(status: .movedPermanently, headers: ["Location": "/new"], body: Data())
                : TestResponse(body: Data(request.uri.utf8))
        }
        defer { Task { await server.close() } }
        let (client, _) = try world.client([world.policy(pins: [world.certificateA.pin, TestPKI.unusedPin()])])

        let response = try await client.send(PinnedRequest(url: url("rampart.test", server.port, "/old")))

        #expect(response.body == Data("/new".utf8))
        #expect(server.recorder.requests.map(\.uri) == ["/old", "/new"])
        #expect(server.recorder.connections == 2)
        try await client.shutdown()
    }

    @Test func oversizedResponseIsCut() async throws {
        let world = try PinningWorld()
        let server = try await TestTLSServer.start(serving: world.certificateA) { _ in
            TestResponse(body: Data(repeating: 0x41, count: 64 * 1024))
        }
        defer { Task { await server.close() } }
        let (client, _) = try world.client([world.policy(pins: [world.certificateA.pin, TestPKI.unusedPin()])],
                                           maxResponseBytes: 1024)
        await #expect(throws: PinnedTransportError.responseTooLarge(limit: 1024)) {
            try await client.send(PinnedRequest(url: url("rampart.test", server.port)))
        }
        try await client.shutdown()
    }

    @Test func silentServerTimesOut() async throws {
        let world = try PinningWorld()
        let server = try await TestTLSServer.startSilent()
        defer { Task { await server.close() } }
        let (client, _) = try world.client([world.policy(pins: [world.certificateA.pin, TestPKI.unusedPin()])],
                                           requestTimeout: .milliseconds(500))
        // The error names the limit that ended the wait: 0.5 s here, 60 s had the default fired.
        // No wall-clock bound: the timeout fires on the event loop at 0.5 s, but resuming this
        // task needs a thread of the cooperative pool, which other suites' blocking tests held
        // for 122 s in one CI run (2 cores, 2 pool threads), failing a 45 s bound.
        await #expect(throws: PinnedTransportError.timedOut(host: "rampart.test", seconds: 0.5)) {
            try await client.send(PinnedRequest(url: url("rampart.test", server.port)))
        }
        try await client.shutdown()
    }

    @Test func plainHTTPIsRefused() async throws {
        let world = try PinningWorld()
        let (client, _) = try world.client([world.policy(pins: [world.certificateA.pin, TestPKI.unusedPin()])])
        await #expect(throws: PinnedTransportError.invalidURL("http://rampart.test/", reason: "only https URLs are accepted")) {
            try await client.send(PinnedRequest(url: URL(string: "http://rampart.test/")!))
        }
        try await client.shutdown()
        await #expect(throws: PinnedTransportError.clientShutDown) {
            try await client.send(PinnedRequest(url: URL(string: "https://rampart.test/")!))
        }
    }

    @Test func closedPortFailsToConnect() async throws {
        let world = try PinningWorld()
        let server = try await TestTLSServer.startSilent()
        let port = server.port
        await server.close()
        let (client, _) = try world.client([world.policy(pins: [world.certificateA.pin, TestPKI.unusedPin()])])
        await #expect {
            try await client.send(PinnedRequest(url: url("rampart.test", port)))
        } throws: { error in
            if case PinnedTransportError.connectionFailed(let host, let failedPort, _) = error {
                return host == "rampart.test" && failedPort == port
            }
            return false
        }
        try await client.shutdown()
    }

    @Test func servedChainOfALiveServerGivesItsPinsAndSendsNothing() async throws {
        let world = try PinningWorld()
        let server = try await TestTLSServer.start(serving: world.certificateA, intermediates: [world.ca])
        defer { Task { await server.close() } }

        let chain = try await ServedChain.fetch(host: "127.0.0.1", port: server.port, serverName: "rampart.test")

        #expect(try chain.map { try SPKIPin(certificate: $0) } == [world.certificateA.pin, world.ca.pin])
        #expect(server.recorder.requests.isEmpty)
    }
}

@Suite("Pinned HTTP client under a busy concurrency pool")
struct PinnedHTTPClientStarvationTests {
    /// The certificate and pin check runs on the connection's own event loop: with every thread
    /// of Swift's cooperative pool blocked while the handshake happens, the exchange still
    /// completes inside its timeout (it used to wait for a pool thread and time out).
    @Test func aBlockedCooperativePoolDoesNotStallTheHandshake() async throws {
        let world = try PinningWorld()
        let release = DispatchSemaphore(value: 0)
        let blockers = 64  // more than any cooperative pool is wide
        let server = try await TestTLSServer.start(serving: world.certificateA, onConnect: {
            // On the server's event loop, when the client's TCP connection arrives: occupy
            // every cooperative thread for 3 s, longer than the client's 1.5 s timeout.
            for _ in 0..<blockers {
                Task.detached { release.wait() }
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + 3) {
                for _ in 0..<blockers { release.signal() }
            }
        })
        defer { Task { await server.close() } }
        let (client, _) = try world.client([world.policy(pins: [world.certificateA.pin, TestPKI.unusedPin()])],
                                           requestTimeout: .milliseconds(1500))
        let response = try await client.send(PinnedRequest(url: url("rampart.test", server.port)))
        #expect(response.body == Data("pinned hello".utf8))
        #expect(server.recorder.requests.count == 1)
        try await client.shutdown()
    }
}
