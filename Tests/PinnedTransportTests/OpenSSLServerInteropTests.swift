import Foundation
import NIOCore
import NIOPosix
import PinnedTransport
import RampartTestSupport
import Testing

/// `openssl s_server` on loopback: a TLS stack other than the client's own.
final class OpenSSLServer: Sendable {
    let port: Int
    private let server: ChildProcess
    private let directory: TemporaryHome

    init(serving leaf: Issued) async throws {
        directory = try TemporaryHome("s_server")
        let cert = directory.child("cert.pem")
        let key = directory.child("key.pem")
        try leaf.pem.write(to: cert, atomically: true, encoding: .utf8)
        try leaf.keyPEM!.write(to: key, atomically: true, encoding: .utf8)
        // A free port: bind to 0, read it, release it.
        let probe = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        port = probe.localAddress!.port!
        try await probe.close().get()
        server = try CLITool(path: URL(fileURLWithPath: OpenSSL.path!))
            .spawn(["s_server", "-accept", "127.0.0.1:\(port)", "-cert", cert.path, "-key", key.path, "-www", "-quiet"])
        // Wait until it accepts connections.
        for _ in 0..<100 {
            if let channel = try? await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(host: "127.0.0.1", port: port).get() {
                try? await channel.close().get()
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    func stop() {
        // s_server may not stop on SIGTERM while serving: SIGKILL, then reap it.
        server.kill(SIGKILL)
        directory.remove()
    }
}

@Suite("Interoperability with OpenSSL's TLS server", .enabled(if: OpenSSL.path != nil, "needs the openssl command"))
struct OpenSSLServerInteropTests {
    @Test func pinnedClientTalksToOpenSSLAndCutsItsOtherCertificate() async throws {
        let world = try PinningWorld()
        let serverA = try await OpenSSLServer(serving: world.certificateA)
        defer { serverA.stop() }
        let serverB = try await OpenSSLServer(serving: world.certificateB)
        defer { serverB.stop() }
        let (client, sink) = try world.client([world.policy(pins: [world.certificateA.pin, TestPKI.unusedPin()])])

        let response = try await client.send(PinnedRequest(url: url("rampart.test", serverA.port, "/")))
        #expect(response.status == .ok)
        #expect(String(decoding: response.body, as: UTF8.self).contains("s_server"))

        await #expect(throws: PinnedTransportError.pinMismatch(host: "rampart.test", port: serverB.port,
                                                               servedPins: [world.certificateB.pin])) {
            try await client.send(PinnedRequest(url: url("rampart.test", serverB.port, "/")))
        }
        #expect(try await sink.reports().count == 1)
        try await client.shutdown()
    }
}
