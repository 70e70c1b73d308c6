import Crypto
import Foundation
import NIOHTTP1
import PinnedTransport
import RampartCore
import Testing
import X509

/// The fixed cast of these tests: one trusted test CA, two certificates it issued for the same
/// names (A is pinned, B is what an intercepting proxy with a certificate from a trusted CA
/// would serve), and the host names resolved to 127.0.0.1 by the client's address overrides.
struct PinningWorld: Sendable {
    let ca: Issued
    let certificateA: Issued
    let certificateB: Issued
    let reportFile: URL

    static let names = ["rampart.test", "api.rampart.test", "mail.rampart.test"]

    init() throws {
        ca = try TestPKI.makeCA("Rampart Test CA")
        certificateA = try TestPKI.makeLeaf(names: PinningWorld.names, issuer: ca)
        certificateB = try TestPKI.makeLeaf(names: PinningWorld.names, issuer: ca)
        reportFile = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-pin-reports-\(UUID().uuidString).jsonl")
    }

    func client(
        _ policies: [DomainPinningPolicy],
        unpinnedHosts: UnpinnedHostHandling = .refuse,
        requestTimeout: Duration = .seconds(60),
        maxResponseBytes: Int = 1 << 20,
        trustRoots: PinnedTrustRoots? = nil
    ) throws -> (PinnedHTTPClient, JSONLinesReportFile) {
        let sink = JSONLinesReportFile(url: reportFile)
        let configuration = PinnedHTTPClientConfiguration(
            policy: try PinningPolicy(policies),
            trustRoots: trustRoots ?? .certificates([ca.certificate]),
            unpinnedHosts: unpinnedHosts,
            reportSink: sink,
            connectAddressOverrides: Dictionary(uniqueKeysWithValues: (PinningWorld.names + ["evil.test", "other.rampart.test"]).map { ($0, "127.0.0.1") }),
            connectTimeout: .seconds(30),
            requestTimeout: requestTimeout,
            maxResponseBytes: maxResponseBytes)
        return (try PinnedHTTPClient(configuration: configuration), sink)
    }

    func policy(_ domain: String = "rampart.test", pins: [SPKIPin], includeSubdomains: Bool = false,
                enforcement: PinEnforcement = .enforce, expiration: Date? = nil) throws -> DomainPinningPolicy {
        try DomainPinningPolicy(domain: domain, pins: Set(pins), includeSubdomains: includeSubdomains,
                                enforcement: enforcement, expiration: expiration)
    }
}

func url(_ host: String, _ port: Int, _ path: String = "/inbox") -> URL {
    URL(string: "https://\(host):\(port)\(path)")!
}

let secretBody = Data("{\"mailboxPassword\":\"correct horse battery staple\"}".utf8)

/// Ends the client's event streams and returns every event it emitted.
func shutDownAndCollect(_ client: PinnedHTTPClient, _ stream: AsyncStream<PinningEvent>) async throws -> [PinningEvent] {
    try await client.shutdown()
    var events: [PinningEvent] = []
    for await event in stream { events.append(event) }
    return events
}

@Suite("Pinned connections to real TLS servers on loopback")
struct PinnedConnectionTests {
    @Test func pinnedCertificateConnectsAndTheBodyArrives() async throws {
        let world = try PinningWorld()
        let server = try await TestTLSServer.start(serving: world.certificateA)
        defer { Task { await server.close() } }
        let (client, sink) = try world.client([world.policy(pins: [world.certificateA.pin, TestPKI.unusedPin()])])
        let events = client.events.stream()

        let response = try await client.send(PinnedRequest(method: .POST, url: url("rampart.test", server.port), body: secretBody))

        #expect(response.status == .ok)
        #expect(response.body == Data("pinned hello".utf8))
        #expect(response.pinVerdict == .pinned(domain: "rampart.test", matched: world.certificateA.pin))
        #expect(server.recorder.requests.map(\.body) == [secretBody])
        #expect(server.recorder.requests.first?.host == "rampart.test:\(server.port)")
        #expect(try await sink.reports().isEmpty)
        #expect(try await shutDownAndCollect(client, events).isEmpty)
    }

    @Test func sameCAOtherKeyIsCutAsInterceptionAndTheBodyIsNeverSent() async throws {
        let world = try PinningWorld()
        let server = try await TestTLSServer.start(serving: world.certificateB)
        defer { Task { await server.close() } }
        let (client, sink) = try world.client([world.policy(pins: [world.certificateA.pin, TestPKI.unusedPin()])])
        let events = client.events.stream()

        await #expect(throws: PinnedTransportError.pinMismatch(host: "rampart.test", port: server.port,
                                                               servedPins: [world.certificateB.pin])) {
            try await client.send(PinnedRequest(method: .POST, url: url("rampart.test", server.port), body: secretBody))
        }

        // The server never received a request, nor one byte of the body; the connection is closed.
        for _ in 0..<100 where server.recorder.closedConnections == 0 {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(server.recorder.bodyBytesReceived == 0)
        #expect(server.recorder.requests.isEmpty)
        #expect(server.recorder.connections == 1)
        #expect(server.recorder.closedConnections == 1)
        // The alert for the UI, and the report.
        let emitted = try await shutDownAndCollect(client, events)
        #expect(emitted.count == 1)
        #expect(emitted.first?.isAlert == true)
        let reports = try await sink.reports()
        #expect(reports.count == 1)
        let report = try #require(reports.first)
        #expect(report.host == "rampart.test")
        #expect(report.port == server.port)
        #expect(report.servedChainPins == [world.certificateB.pin])
        #expect(report.validatedChainPins == [world.certificateB.pin, world.ca.pin])
        #expect(report.enforced)
        #expect(report.policy.pins.contains(world.certificateA.pin))
        #expect(emitted.first == .pinMismatch(report))
        // The JSON carries the fields the issue names.
        let json = try #require(try JSONSerialization.jsonObject(with: report.jsonData()) as? [String: Any])
        #expect(Set(json.keys).isSuperset(of: ["host", "port", "servedChainPins", "policy", "time"]))
    }

    @Test func untrustedSelfSignedCertificateFailsChainValidationBeforePins() async throws {
        let world = try PinningWorld()
        let selfSigned = try TestPKI.makeLeaf(names: PinningWorld.names, issuer: nil)
        let server = try await TestTLSServer.start(serving: selfSigned)
        defer { Task { await server.close() } }
        // Even pinned, a certificate TLS does not trust is refused: pinning never replaces TLS.
        let (client, sink) = try world.client([world.policy(pins: [selfSigned.pin, TestPKI.unusedPin()])])
        let events = client.events.stream()

        await #expect {
            try await client.send(PinnedRequest(method: .POST, url: url("rampart.test", server.port), body: secretBody))
        } throws: { error in
            guard case PinnedTransportError.chainValidationFailed(let host, let reason) = error else { return false }
            return host == "rampart.test" && reason.contains("no chain")
        }
        #expect(server.recorder.bodyBytesReceived == 0)
        #expect(try await sink.reports().isEmpty)
        #expect(try await shutDownAndCollect(client, events).isEmpty)
    }

    @Test func reportOnlyMismatchConnectsAndReports() async throws {
        let world = try PinningWorld()
        let server = try await TestTLSServer.start(serving: world.certificateB)
        defer { Task { await server.close() } }
        let (client, sink) = try world.client([
            world.policy(pins: [world.certificateA.pin, TestPKI.unusedPin()], enforcement: .reportOnly),
        ])
        let events = client.events.stream()

        let response = try await client.send(PinnedRequest(method: .POST, url: url("rampart.test", server.port), body: secretBody))

        #expect(response.status == .ok)
        #expect(server.recorder.requests.map(\.body) == [secretBody])
        let reports = try await sink.reports()
        #expect(reports.count == 1)
        #expect(reports.first?.enforced == false)
        #expect(reports.first?.servedChainPins == [world.certificateB.pin])
        let emitted = try await shutDownAndCollect(client, events)
        #expect(emitted == reports.map { .pinMismatchReported($0) })
        #expect(emitted.allSatisfy { !$0.isAlert })
    }

    @Test func expiredPolicyConnectsWithAWarning() async throws {
        let world = try PinningWorld()
        let server = try await TestTLSServer.start(serving: world.certificateB)
        defer { Task { await server.close() } }
        let expiry = Date().addingTimeInterval(-86_400)
        let (client, sink) = try world.client([
            world.policy(pins: [world.certificateA.pin, TestPKI.unusedPin()], expiration: expiry),
        ])
        let events = client.events.stream()

        let response = try await client.send(PinnedRequest(url: url("rampart.test", server.port)))

        #expect(response.status == .ok)
        #expect(response.pinVerdict == .policyExpired(domain: "rampart.test", expiration: expiry))
        #expect(try await sink.reports().isEmpty)
        let emitted = try await shutDownAndCollect(client, events)
        #expect(emitted == [.policyExpired(domain: "rampart.test", host: "rampart.test", expiration: expiry)])
    }

    @Test func expiredPolicyStillRequiresAValidChain() async throws {
        let world = try PinningWorld()
        let selfSigned = try TestPKI.makeLeaf(names: PinningWorld.names, issuer: nil)
        let server = try await TestTLSServer.start(serving: selfSigned)
        defer { Task { await server.close() } }
        let (client, _) = try world.client([
            world.policy(pins: [world.certificateA.pin, TestPKI.unusedPin()], expiration: Date().addingTimeInterval(-60)),
        ])
        await #expect(throws: PinnedTransportError.self) {
            try await client.send(PinnedRequest(url: url("rampart.test", server.port)))
        }
        #expect(server.recorder.requests.isEmpty)
        try await client.shutdown()
    }

    @Test func backupPinAloneIsEnough() async throws {
        let world = try PinningWorld()
        let backupKey = P256.Signing.PrivateKey()
        let backupPin = try SPKIPin(publicKey: .init(backupKey.publicKey))
        // The live key was lost: the server now serves a certificate for the backup key.
        let rotated = try TestPKI.makeLeaf(names: PinningWorld.names, issuer: world.ca, key: backupKey)
        let server = try await TestTLSServer.start(serving: rotated)
        defer { Task { await server.close() } }
        let (client, _) = try world.client([world.policy(pins: [world.certificateA.pin, backupPin])])

        let response = try await client.send(PinnedRequest(url: url("rampart.test", server.port)))

        #expect(response.status == .ok)
        #expect(response.pinVerdict == .pinned(domain: "rampart.test", matched: backupPin))
        try await client.shutdown()
    }

    @Test func pinOnTheIssuingCAKeyMatchesAnyOfItsLeaves() async throws {
        let world = try PinningWorld()
        let server = try await TestTLSServer.start(serving: world.certificateB)
        defer { Task { await server.close() } }
        // Pins are checked against every certificate of the validated chain, root included.
        let (client, _) = try world.client([world.policy(pins: [world.ca.pin, TestPKI.unusedPin()])])

        let response = try await client.send(PinnedRequest(url: url("rampart.test", server.port)))

        #expect(response.pinVerdict == .pinned(domain: "rampart.test", matched: world.ca.pin))
        try await client.shutdown()
    }

    @Test func subdomainIsPinnedOnlyWhenIncludeSubdomainsIsSet() async throws {
        let world = try PinningWorld()
        let server = try await TestTLSServer.start(serving: world.certificateB)
        defer { Task { await server.close() } }
        let pins = [world.certificateA.pin, TestPKI.unusedPin()]

        // includeSubdomains: api.rampart.test is covered, B does not match: cut.
        let (covering, _) = try world.client([world.policy(pins: pins, includeSubdomains: true)], unpinnedHosts: .allowWithTLSValidationOnly)
        await #expect(throws: PinnedTransportError.pinMismatch(host: "api.rampart.test", port: server.port,
                                                               servedPins: [world.certificateB.pin])) {
            try await covering.send(PinnedRequest(url: url("api.rampart.test", server.port)))
        }
        try await covering.shutdown()

        // Without includeSubdomains the policy does not reach api.rampart.test: TLS validation only.
        let (exactOnly, _) = try world.client([world.policy(pins: pins, includeSubdomains: false)], unpinnedHosts: .allowWithTLSValidationOnly)
        let response = try await exactOnly.send(PinnedRequest(url: url("api.rampart.test", server.port)))
        #expect(response.status == .ok)
        #expect(response.pinVerdict == .unpinnedHost)
        // ... but the domain itself is still pinned.
        await #expect(throws: PinnedTransportError.self) {
            try await exactOnly.send(PinnedRequest(url: url("rampart.test", server.port)))
        }
        try await exactOnly.shutdown()

        // And a subdomain served by the pinned certificate passes with includeSubdomains.
        let serverA = try await TestTLSServer.start(serving: world.certificateA)
        defer { Task { await serverA.close() } }
        let (coveringA, _) = try world.client([world.policy(pins: pins, includeSubdomains: true)])
        let pinned = try await coveringA.send(PinnedRequest(url: url("api.rampart.test", serverA.port)))
        #expect(pinned.pinVerdict == .pinned(domain: "rampart.test", matched: world.certificateA.pin))
        try await coveringA.shutdown()
    }

    @Test func hostWithoutPolicyIsRefusedByDefault() async throws {
        let world = try PinningWorld()
        let server = try await TestTLSServer.start(serving: world.certificateA)
        defer { Task { await server.close() } }
        let (client, _) = try world.client([world.policy(pins: [world.certificateA.pin, TestPKI.unusedPin()])])

        await #expect(throws: PinnedTransportError.noPinningPolicy(host: "api.rampart.test")) {
            try await client.send(PinnedRequest(method: .POST, url: url("api.rampart.test", server.port), body: secretBody))
        }
        #expect(server.recorder.bodyBytesReceived == 0)
        try await client.shutdown()
    }

    @Test func wrongHostNameFailsChainValidation() async throws {
        let world = try PinningWorld()
        let server = try await TestTLSServer.start(serving: world.certificateA)
        defer { Task { await server.close() } }
        // The pins match, but the certificate is not for evil.test.
        let (client, sink) = try world.client([world.policy("evil.test", pins: [world.certificateA.pin, TestPKI.unusedPin()])])

        await #expect {
            try await client.send(PinnedRequest(method: .POST, url: url("evil.test", server.port), body: secretBody))
        } throws: { error in
            guard case PinnedTransportError.chainValidationFailed(let host, _) = error else { return false }
            return host == "evil.test"
        }
        #expect(server.recorder.bodyBytesReceived == 0)
        #expect(try await sink.reports().isEmpty)
        try await client.shutdown()
    }

    @Test func expiredLeafFailsChainValidation() async throws {
        let world = try PinningWorld()
        let key = P256.Signing.PrivateKey()
        let expired = try TestPKI.makeLeaf(
            names: PinningWorld.names, issuer: world.ca, key: key,
            notValidBefore: Date().addingTimeInterval(-10 * 86_400), notValidAfter: Date().addingTimeInterval(-86_400))
        let server = try await TestTLSServer.start(serving: expired)
        defer { Task { await server.close() } }
        let (client, _) = try world.client([world.policy(pins: [expired.pin, TestPKI.unusedPin()])])

        await #expect {
            try await client.send(PinnedRequest(url: url("rampart.test", server.port)))
        } throws: { error in
            guard case PinnedTransportError.chainValidationFailed(_, let reason) = error else { return false }
            return reason.contains("expired")
        }
        #expect(server.recorder.requests.isEmpty)
        try await client.shutdown()
    }

    @Test func selfSignedBackendCertificateAsTheOnlyRootWorksByNameAndByIP() async throws {
        // The embedded local backend's case: its own self-signed certificate is the
        // only trust root, and its pin plus a backup pin form the policy. RFC 5280 path
        // validation wants a self-signed root marked as a CA (see the next test).
        let backend = try TestPKI.makeLeaf(names: ["localhost"], ipAddresses: [[127, 0, 0, 1]], issuer: nil, markedAsCA: true)
        let server = try await TestTLSServer.start(serving: backend)
        defer { Task { await server.close() } }
        let client = try PinnedHTTPClient(configuration: .init(
            policy: try PinningPolicy([
                DomainPinningPolicy(domain: "localhost", pins: Set([backend.pin, TestPKI.unusedPin()])),
                DomainPinningPolicy(domain: "127.0.0.1", pins: Set([backend.pin, TestPKI.unusedPin()])),
            ]),
            trustRoots: .certificates([backend.certificate]),
            connectAddressOverrides: ["localhost": "127.0.0.1"]))

        let byName = try await client.send(PinnedRequest(method: .PUT, url: url("localhost", server.port), body: secretBody))
        let byIP = try await client.send(PinnedRequest(url: url("127.0.0.1", server.port)))

        #expect(byName.pinVerdict == .pinned(domain: "localhost", matched: backend.pin))
        #expect(byIP.pinVerdict == .pinned(domain: "127.0.0.1", matched: backend.pin))
        #expect(server.recorder.requests.map(\.method) == [.PUT, .GET])
        try await client.shutdown()
    }

    @Test func selfSignedCertificateNotMarkedAsCAIsRefusedEvenAsTheOnlyRoot() async throws {
        let backend = try TestPKI.makeLeaf(names: ["localhost"], issuer: nil, markedAsCA: false)
        let server = try await TestTLSServer.start(serving: backend)
        defer { Task { await server.close() } }
        let client = try PinnedHTTPClient(configuration: .init(
            policy: try PinningPolicy([DomainPinningPolicy(domain: "localhost", pins: Set([backend.pin, TestPKI.unusedPin()]))]),
            trustRoots: .certificates([backend.certificate]),
            connectAddressOverrides: ["localhost": "127.0.0.1"]))
        await #expect {
            try await client.send(PinnedRequest(url: url("localhost", server.port)))
        } throws: { error in
            guard case PinnedTransportError.chainValidationFailed(_, let reason) = error else { return false }
            return reason.contains("not marked as a CA")
        }
        try await client.shutdown()
    }

    @Test func systemRootsDoNotTrustThePrivateTestCA() async throws {
        let world = try PinningWorld()
        let server = try await TestTLSServer.start(serving: world.certificateA)
        defer { Task { await server.close() } }
        let (client, _) = try world.client([world.policy(pins: [world.certificateA.pin, TestPKI.unusedPin()])], trustRoots: .system)
        await #expect {
            try await client.send(PinnedRequest(url: url("rampart.test", server.port)))
        } throws: { error in
            if case PinnedTransportError.chainValidationFailed = error { return true }
            return false
        }
        try await client.shutdown()
    }
}
