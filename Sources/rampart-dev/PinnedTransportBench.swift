import ArgumentParser
import RampartCLIKit
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOTLS
import PinnedTransport
import X509

/// `rampart bench pinning`: what the pinned connection costs against BoringSSL's own
/// verification of the same server, in the same run.
///
/// Trust-model row: **transport (network), low trust**: the pinned client validates the chain
/// in Swift (swift-certificates) and then checks pins; this measures that price per connection.
struct BenchPinning: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pinning",
        abstract: "Time a pinned HTTPS request against a BoringSSL-verified one to the same loopback server.")

    @Option(help: "Requests to time per client (each on a new TLS connection).") var iterations = 100

    func run() async throws {
        try await reportingErrors {
            guard iterations > 0 else { throw RuntimeError.badInput("--iterations must be positive") }
            let group = MultiThreadedEventLoopGroup.singleton
            let pki = try BenchPKI()
            let server = try await BenchServer.start(pki: pki, group: group)

            let pinned = try PinnedHTTPClient(configuration: .init(
                policy: try PinningPolicy([DomainPinningPolicy(domain: "rampart.test", pins: Set([pki.leafPin, pki.caPin]))]),
                trustRoots: .certificates([pki.ca]),
                connectAddressOverrides: ["rampart.test": "127.0.0.1"]), eventLoopGroup: group)
            let url = URL(string: "https://rampart.test:\(server.port)/")!
            let baseline = try BoringSSLVerifiedClient(caDER: pki.caDER, group: group)

            // Warm up both paths (first-use costs: trust store, TLS contexts).
            for _ in 0..<5 {
                _ = try await pinned.send(PinnedRequest(url: url))
                try await baseline.get(port: server.port)
            }
            var pinnedTimes: [Double] = []
            var baselineTimes: [Double] = []
            for _ in 0..<iterations {
                baselineTimes.append(try await milliseconds { try await baseline.get(port: server.port) })
                pinnedTimes.append(try await milliseconds { _ = try await pinned.send(PinnedRequest(url: url)) })
            }
            // The verification step alone, without network.
            let verifier = PinnedChainVerifier(
                policy: pinned.configuration.policy, trustRoots: .certificates([pki.ca]))
            var verifyTimes: [Double] = []
            for _ in 0..<iterations {
                verifyTimes.append(try await milliseconds {
                    let (verdict, _) = await verifier.verify(servedChain: [pki.leafDER], host: "rampart.test", port: 443)
                    guard case .pinned = verdict else { throw RuntimeError.badInput("bench chain did not pin: \(verdict)") }
                })
            }
            try await pinned.shutdown()
            await server.close()

            let pinnedMedian = median(pinnedTimes), baselineMedian = median(baselineTimes)
            print("rampart bench pinning — new TLS 1.3 connection + GET per request, loopback, \(iterations) runs each")
            print("BoringSSL verification (baseline): median \(formatMillis(baselineMedian))")
            print("Rampart pinned client:             median \(formatMillis(pinnedMedian))")
            print("pinned / baseline ratio:           \(String(format: "%.3f", pinnedMedian / baselineMedian))")
            print("chain validation + pin step alone: median \(formatMillis(median(verifyTimes)))")
        }
    }

    private func milliseconds(_ body: () async throws -> Void) async throws -> Double {
        let start = ContinuousClock.now
        try await body()
        let elapsed = ContinuousClock.now - start
        return elapsed.inSeconds * 1000
    }

    private func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}

/// A CA and a leaf for `rampart.test`, made for the benchmark run.
private struct BenchPKI {
    let ca: Certificate
    let caDER: [UInt8]
    let leafDER: [UInt8]
    let leafKeyPEM: String
    let leafPin: SPKIPin
    let caPin: SPKIPin

    init() throws {
        let caKey = P256.Signing.PrivateKey()
        let caName = try DistinguishedName { CommonName("Rampart bench CA") }
        let now = Date()
        ca = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(caKey.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(86_400),
            issuer: caName, subject: caName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(caKey))
        let leafKey = P256.Signing.PrivateKey()
        let leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(86_400),
            issuer: caName, subject: try DistinguishedName { CommonName("rampart.test") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName("rampart.test")])
            },
            issuerPrivateKey: .init(caKey))
        caDER = try ca.serializeAsPEM().derBytes
        leafDER = try leaf.serializeAsPEM().derBytes
        leafKeyPEM = leafKey.pemRepresentation
        leafPin = try SPKIPin(certificate: leaf)
        caPin = try SPKIPin(certificate: ca)
    }
}

/// A TLS + HTTP/1.1 server on 127.0.0.1 answering "ok" and closing.
private struct BenchServer {
    let channel: any Channel
    var port: Int { channel.localAddress?.port ?? 0 }

    static func start(pki: BenchPKI, group: any EventLoopGroup) async throws -> BenchServer {
        let tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: pki.leafDER, format: .der))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(pki.leafKeyPEM.utf8), format: .pem)))
        let context = try NIOSSLContext(configuration: tls)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(OKResponder())
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return BenchServer(channel: channel)
    }

    func close() async { try? await channel.close().get() }
}

private final class OKResponder: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .end = unwrapInboundIn(data) else { return }
        let headers: HTTPHeaders = ["Content-Length": "2", "Connection": "close"]
        context.write(wrapOutboundOut(.head(.init(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: "ok")))), promise: nil)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in bound.value.close(promise: nil) }
    }
}

/// The baseline: the same HTTP exchange with NIOSSL's default verification (BoringSSL checks
/// the chain against the CA and the host name; no custom callback, no pins).
private struct BoringSSLVerifiedClient {
    let context: NIOSSLContext
    let group: any EventLoopGroup

    init(caDER: [UInt8], group: any EventLoopGroup) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: caDER, format: .der)])
        context = try NIOSSLContext(configuration: tls)
        self.group = group
    }

    func get(port: Int) async throws {
        let loop = group.next()
        let done = loop.makePromise(of: Void.self)
        let context = self.context
        let channel = try await ClientBootstrap(group: loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: "rampart.test"))
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(BaselineExchange(done: done))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        try await done.futureResult.get()
        try? await channel.close().get()
    }
}

private final class BaselineExchange: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = Never
    typealias OutboundOut = HTTPClientRequestPart
    let done: EventLoopPromise<Void>

    init(done: EventLoopPromise<Void>) { self.done = done }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent {
            let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/",
                                       headers: ["Host": "rampart.test", "Connection": "close"])
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .end = unwrapInboundIn(data) { done.succeed(()) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        done.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        done.fail(ChannelError.eof)
        context.fireChannelInactive()
    }
}
