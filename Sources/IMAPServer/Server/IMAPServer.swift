import Foundation
import NIOCore
import MailListener
import RampartCore
import NIOPosix
import NIOSSL

/// How an ``IMAPServer`` listens.
///
/// Trust-model row **transport (low)**: the bridge listens on loopback only, and a password is
/// accepted in the clear only when the caller declares the listener loopback
/// (``plaintextOnLoopback``); otherwise STARTTLS with the caller's TLS context must come first.
public struct IMAPServerConfiguration: Sendable {
    /// The address to bind (default `127.0.0.1`).
    public var host: String
    /// The port (0: any free port; read the bound one from ``IMAPServer/port``).
    public var port: Int
    /// The TLS context STARTTLS uses; nil offers no STARTTLS.
    public var tls: NIOSSLContext?
    /// Allow LOGIN/AUTHENTICATE without TLS. Only valid when ``host`` is a loopback address.
    public var plaintextOnLoopback: Bool
    /// Bounds on lines, literals and commands.
    public var limits: IMAPLimits
    /// How long a connection may send nothing before it is logged out (RFC 3501 §5.4: at least 30 minutes).
    public var idleTimeout: TimeAmount
    /// Most connections served at once; further ones get `* BYE` and are closed. Default 64.
    public var maxConnections: Int
    /// Event loop threads (default 1).
    public var threads: Int

    /// Creates a configuration.
    public init(host: String = "127.0.0.1", port: Int = 0, tls: NIOSSLContext? = nil, plaintextOnLoopback: Bool = false,
                limits: IMAPLimits = .default, idleTimeout: TimeAmount = .minutes(30), maxConnections: Int = 64, threads: Int = 1) {
        self.host = host; self.port = port; self.tls = tls; self.plaintextOnLoopback = plaintextOnLoopback
        self.limits = limits; self.idleTimeout = idleTimeout; self.maxConnections = maxConnections; self.threads = threads
    }
}

/// Why the server could not start. Trust-model row **transport (low)**.
public typealias IMAPServerError = MailServerError<IMAP>

/// An IMAP4rev1 server on SwiftNIO: one ``IMAPSession`` per connection over an ``IMAPBackend``.
///
/// ```swift
/// let server = IMAPServer(configuration: .init(plaintextOnLoopback: true), backend: InMemoryIMAPBackend())
/// try await server.start()
/// print(server.port)   // the bound port
/// try await server.stop()
/// ```
/// Trust-model rows **transport (low)** (loopback, STARTTLS) and **inbox (low)** (bounded framing).
public final class IMAPServer: Sendable {
    private let configuration: IMAPServerConfiguration
    private let backend: any IMAPBackend
    private let listener: MailListener

    /// Creates a server; nothing listens until ``start()``.
    public init(configuration: IMAPServerConfiguration, backend: any IMAPBackend) {
        self.configuration = configuration
        self.backend = backend
        self.listener = MailListener(threads: configuration.threads, name: "imap")
    }

    /// The bound port (0 before ``start()``).
    public var port: Int { listener.port }

    /// Binds and starts accepting connections. - Throws: ``IMAPServerError``.
    public func start() async throws {
        let c = configuration
        let backend = self.backend
        let threads = listener.sessionThreads
        let counter = ConnectionCounter(limit: c.maxConnections)
        try await listener.listen(IMAP.self, host: c.host, port: c.port, plaintextOnLoopback: c.plaintextOnLoopback, hasTLS: c.tls != nil,
                                  idleTimeout: c.idleTimeout, maxMessagesPerRead: 4) {
            [ByteToMessageHandler(IMAPFrameDecoder(limits: c.limits)),
             IMAPConnectionHandler(backend: backend, configuration: c, counter: counter, threads: threads)]
        }
    }

    /// Stops listening, closes every connection and the event loops.
    public func stop() async throws { try await listener.stop() }
}

/// Runs ``IMAPCommandFramer`` in the pipeline.
struct IMAPFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = IMAPFrame
    var framer: IMAPCommandFramer
    init(limits: IMAPLimits) { framer = IMAPCommandFramer(limits: limits) }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard buffer.readableBytes > 0 else { return .needMoreData }
        let bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
        for frame in framer.feed(bytes) { context.fireChannelRead(Self.wrapInboundOut(frame)) }
        return .needMoreData
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        try decode(context: context, buffer: &buffer)
    }
}

/// Bridges a channel to an ``IMAPSession``: frames go into an async stream the session reads,
/// the session's writes go to the channel, an idle timeout logs the client out.
///
/// Backpressure: while the session has 32 frames (or a maximum command's worth of bytes) it has not
/// taken yet, the handler holds the channel's `read`, so a client pipelining faster than the store
/// answers waits in its own socket buffer instead of the server's memory.
final class IMAPConnectionHandler: ChannelDuplexHandler, @unchecked Sendable {
    typealias InboundIn = IMAPFrame
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    private let backend: any IMAPBackend
    private let configuration: IMAPServerConfiguration
    private let threads: (any Sendable & AnyObject)?
    private let feed: SessionFeed<IMAPFrame>

    static func size(_ frame: IMAPFrame) -> Int { if case .command(let b) = frame { b.count } else { 0 } }

    init(backend: any IMAPBackend, configuration: IMAPServerConfiguration, counter: ConnectionCounter,
         threads: (any Sendable & AnyObject)?) {
        self.backend = backend; self.configuration = configuration; self.threads = threads
        feed = SessionFeed(counter: counter, maxBytes: configuration.limits.maxCommandSize, size: Self.size)
    }

    func handlerAdded(context: ChannelHandlerContext) { feed.handlerAdded(context: context) }
    func handlerRemoved(context: ChannelHandlerContext) { feed.handlerRemoved(context: context) }
    func read(context: ChannelHandlerContext) { feed.read(context: context) }

    func channelActive(context: ChannelHandlerContext) {
        let connection = ChannelConnection(channel: SessionChannel(channel: context.channel, tls: configuration.tls),
                                           plaintext: configuration.plaintextOnLoopback)
        let (backend, limits) = (self.backend, configuration.limits)
        feed.open(context: context, refusal: IMAPResponse.untaggedStatus(.bye, code: nil, text: "Too many connections; try again later").encoded,
                  threads: threads) { frames in
            await IMAPSession(backend: backend, connection: connection, limits: limits).run(frames: frames)
        }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) { feed.yield(Self.unwrapInboundIn(data)) }

    func channelInactive(context: ChannelHandlerContext) {
        feed.close()
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.writeAndClose(IMAPResponse.untaggedStatus(.bye, code: nil, text: "Autologout: no command for too long").encoded)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// ``IMAPSessionConnection`` over a NIO channel.
struct ChannelConnection: IMAPSessionConnection {
    let channel: SessionChannel
    let plaintextLoginAllowed: Bool

    init(channel: SessionChannel, plaintext: Bool) { self.channel = channel; self.plaintextLoginAllowed = plaintext }

    var isEncrypted: Bool { channel.isEncrypted }
    var canStartTLS: Bool { channel.canStartTLS }
    func write(_ bytes: [UInt8]) async throws { try await channel.write(bytes) }
    func startTLS(after response: [UInt8]) async throws { try await channel.startTLS(after: response) }
}
