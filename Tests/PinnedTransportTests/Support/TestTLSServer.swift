import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import X509

/// What a test server saw: every byte of request body, every request, every connection.
final class ServerRecorder: Sendable {
    struct Request: Sendable {
        var method: HTTPMethod
        var uri: String
        var host: String?
        var body: Data
    }

    private let state = NIOLockedValueBox((connections: 0, closed: 0, bodyBytes: 0, requests: [Request]()))

    var connections: Int { state.withLockedValue { $0.connections } }
    var closedConnections: Int { state.withLockedValue { $0.closed } }
    /// Request body bytes received, counted as they arrive (before a request is complete).
    var bodyBytesReceived: Int { state.withLockedValue { $0.bodyBytes } }
    var requests: [Request] { state.withLockedValue { $0.requests } }

    func connectionOpened() { state.withLockedValue { $0.connections += 1 } }
    func connectionClosed() { state.withLockedValue { $0.closed += 1 } }
    func bodyBytes(_ count: Int) { state.withLockedValue { $0.bodyBytes += count } }
    func request(_ request: Request) { state.withLockedValue { $0.requests.append(request) } }
}

/// The answer a test server gives to a request.
struct TestResponse: Sendable {
    var status: HTTPResponseStatus = .ok
    var headers: HTTPHeaders = [:]
    var body: Data = Data("pinned hello".utf8)
}

/// A real TLS + HTTP/1.1 server on 127.0.0.1 (SwiftNIO, NIOSSL), serving the given chain.
final class TestTLSServer: Sendable {
    let port: Int
    let recorder: ServerRecorder
    private let channel: any Channel
    private let group: MultiThreadedEventLoopGroup

    private init(channel: any Channel, group: MultiThreadedEventLoopGroup, recorder: ServerRecorder) {
        self.channel = channel
        self.group = group
        self.port = channel.localAddress!.port!
        self.recorder = recorder
    }

    /// Starts a TLS server serving `chain` (leaf first) with `leaf`'s key.
    static func start(
        serving leaf: Issued, intermediates: [Issued] = [],
        respond: @escaping @Sendable (ServerRecorder.Request) -> TestResponse = { _ in TestResponse() },
        onConnect: (@Sendable () -> Void)? = nil
    ) async throws -> TestTLSServer {
        let chain = try ([leaf] + intermediates).map { try NIOSSLCertificate(bytes: $0.der, format: .der) }
        let key = try NIOSSLPrivateKey(bytes: Array(leaf.keyPEM!.utf8), format: .pem)
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        tls.applicationProtocols = ["http/1.1"]
        let context = try NIOSSLContext(configuration: tls)
        let recorder = ServerRecorder()
        // Each server has its own event loop: the process-wide singleton is shared with every
        // other suite running in parallel (in-process servers, clients), and a loop kept busy
        // there stalled these exchanges past the client's 60 s limit in CI.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                onConnect?()
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPRequestDecoder()))
                    try channel.pipeline.syncOperations.addHandler(HTTPResponseEncoder())
                    try channel.pipeline.syncOperations.addHandler(RecordingHTTPHandler(recorder: recorder, respond: respond))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return TestTLSServer(channel: channel, group: group, recorder: recorder)
    }

    /// A TCP server that accepts connections and never says a word (no TLS, nothing).
    static func startSilent() async throws -> TestTLSServer {
        let recorder = ServerRecorder()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let channel = try await ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                recorder.connectionOpened()
                return channel.eventLoop.makeSucceededVoidFuture()
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return TestTLSServer(channel: channel, group: group, recorder: recorder)
    }

    func close() async {
        try? await channel.close().get()
        try? await group.shutdownGracefully()
    }
}

private final class RecordingHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let recorder: ServerRecorder
    private let respond: @Sendable (ServerRecorder.Request) -> TestResponse
    private var current: ServerRecorder.Request?

    init(recorder: ServerRecorder, respond: @escaping @Sendable (ServerRecorder.Request) -> TestResponse) {
        self.recorder = recorder
        self.respond = respond
    }

    func channelActive(context: ChannelHandlerContext) {
        recorder.connectionOpened()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        recorder.connectionClosed()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            current = .init(method: head.method, uri: head.uri, host: head.headers.first(name: "host"), body: Data())
        case .body(let buffer):
            recorder.bodyBytes(buffer.readableBytes)
            current?.body.append(contentsOf: buffer.readableBytesView)
        case .end:
            guard let request = current else { return }
            recorder.request(request)
            let response = respond(request)
            var headers = response.headers
            headers.replaceOrAdd(name: "Content-Length", value: String(response.body.count))
            headers.replaceOrAdd(name: "Connection", value: "close")
            context.write(wrapOutboundOut(.head(.init(version: .http1_1, status: response.status, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: response.body)))), promise: nil)
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in bound.value.close(promise: nil) }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
