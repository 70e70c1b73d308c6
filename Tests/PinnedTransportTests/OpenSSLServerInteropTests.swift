import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOPosix
import PinnedTransport
import Testing

/// `openssl s_server` on loopback: a TLS stack other than the client's own.
final class OpenSSLServer: Sendable {
    let port: Int
    private let process: Process
    private let directory: URL

    init(serving leaf: Issued) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-s_server-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let cert = directory.appendingPathComponent("cert.pem")
        let key = directory.appendingPathComponent("key.pem")
        try leaf.pem.write(to: cert, atomically: true, encoding: .utf8)
        try leaf.keyPEM!.write(to: key, atomically: true, encoding: .utf8)
        // A free port: bind to 0, read it, release it.
        let probe = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        port = probe.localAddress!.port!
        try await probe.close().get()
        process = Process()
        process.executableURL = URL(fileURLWithPath: OpenSSL.path!)
        process.arguments = ["s_server", "-accept", "127.0.0.1:\(port)", "-cert", cert.path, "-key", key.path, "-www", "-quiet"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
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
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
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
