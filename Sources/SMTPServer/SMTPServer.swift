import Foundation
import NIOCore
import MailListener
import RampartCore
import NIOPosix
import NIOSSL

/// How an ``SMTPServer`` listens. Trust-model row **transport (low)**: loopback only for plain
/// text (``plaintextOnLoopback``); otherwise AUTH needs STARTTLS with the caller's TLS context.
public struct SMTPServerConfiguration: Sendable {
    /// The address to bind (default `127.0.0.1`).
    public var host: String
    /// The port (0: any; read the bound one from ``SMTPServer/port``).
    public var port: Int
    /// The TLS context STARTTLS uses; nil offers no STARTTLS.
    public var tls: NIOSSLContext?
    /// Allow AUTH without TLS. Only valid when ``host`` is a loopback address.
    public var plaintextOnLoopback: Bool
    /// Bounds on lines, messages, recipients, errors.
    public var limits: SMTPLimits
    /// How long a client may send nothing before the connection is closed (RFC 5321 §4.5.3.2 suggests 5 minutes).
    public var idleTimeout: TimeAmount
    /// The host name in the greeting and EHLO reply.
    public var hostname: String
    /// Most connections at once (default 32).
    public var maxConnections: Int

    /// Creates a configuration.
    public init(host: String = "127.0.0.1", port: Int = 0, tls: NIOSSLContext? = nil, plaintextOnLoopback: Bool = false,
                limits: SMTPLimits = .default, idleTimeout: TimeAmount = .minutes(5), hostname: String = "localhost", maxConnections: Int = 32) {
        self.host = host; self.port = port; self.tls = tls; self.plaintextOnLoopback = plaintextOnLoopback; self.limits = limits
        self.idleTimeout = idleTimeout; self.hostname = hostname; self.maxConnections = maxConnections
    }
}

/// Why the server could not start. Trust-model row **transport (low)**.
public typealias SMTPServerError = MailServerError<SMTP>

/// An SMTP submission server (RFC 6409) on SwiftNIO: one ``SMTPSession`` per connection over a
/// ``SubmissionBackend``.
///
/// ```swift
/// let server = SMTPServer(configuration: .init(plaintextOnLoopback: true), backend: InMemorySubmissionBackend())
/// try await server.start()
/// print(server.port)
/// try await server.stop()
/// ```
/// Trust-model rows **transport (low)** and **inbox (low)**.
public final class SMTPServer: Sendable {
    private let configuration: SMTPServerConfiguration
    private let backend: any SubmissionBackend
    private let listener = MailListener(threads: 1, name: "smtp")

    /// Creates a server; nothing listens until ``start()``.
    public init(configuration: SMTPServerConfiguration, backend: any SubmissionBackend) {
        self.configuration = configuration; self.backend = backend
    }

    /// The bound port (0 before ``start()``).
    public var port: Int { listener.port }

    /// Binds and accepts connections. - Throws: ``SMTPServerError``.
    public func start() async throws {
        let c = configuration
        let backend = self.backend
        let counter = ConnectionCounter(limit: c.maxConnections)
        let threads = listener.sessionThreads
        try await listener.listen(SMTP.self, host: c.host, port: c.port, plaintextOnLoopback: c.plaintextOnLoopback, hasTLS: c.tls != nil,
                                  idleTimeout: c.idleTimeout) {
            [SMTPConnectionHandler(backend: backend, configuration: c, counter: counter, threads: threads)]
        }
    }

    /// Stops listening, closes connections and the event loop.
    public func stop() async throws { try await listener.stop() }
}

/// Frames bytes with ``SMTPInputFramer`` on the event loop and feeds an ``SMTPSession``.
/// Backpressure: while the session has 32 frames (or a maximum message's worth of bytes) it has
/// not taken yet, the handler holds the channel's `read`.
final class SMTPConnectionHandler: ChannelDuplexHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    // Event-loop state: the framer and the session's feed.
    private var framer: SMTPInputFramer
    private let feed: SessionFeed<SMTPFrame>
    private let backend: any SubmissionBackend
    private let configuration: SMTPServerConfiguration
    private let threads: (any Sendable & AnyObject)?

    static func size(_ frame: SMTPFrame) -> Int {
        switch frame { case .line(let b), .message(let b): b.count; default: 0 }
    }

    init(backend: any SubmissionBackend, configuration: SMTPServerConfiguration, counter: ConnectionCounter,
         threads: (any Sendable & AnyObject)?) {
        self.backend = backend; self.configuration = configuration; self.threads = threads
        framer = SMTPInputFramer(limits: configuration.limits)
        feed = SessionFeed(counter: counter, maxBytes: configuration.limits.maxMessageSize, size: Self.size)
    }

    func handlerAdded(context: ChannelHandlerContext) { feed.handlerAdded(context: context) }
    func handlerRemoved(context: ChannelHandlerContext) { feed.handlerRemoved(context: context) }
    func read(context: ChannelHandlerContext) { feed.read(context: context) }

    func channelActive(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let connection = SMTPChannelConnection(channel: SessionChannel(channel: context.channel, tls: configuration.tls),
                                               plaintext: configuration.plaintextOnLoopback) { accepted in
            loopBound.value.decide(accepted: accepted)
        }
        let (backend, limits, hostname) = (self.backend, configuration.limits, configuration.hostname)
        feed.open(context: context, refusal: SMTPReply(421, "4.7.0", "Too many connections; try again later").encoded, threads: threads) { frames in
            await SMTPSession(backend: backend, connection: connection, limits: limits, hostname: hostname).run(frames: frames)
        }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = Self.unwrapInboundIn(data)
        let bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
        for frame in framer.feed(bytes) { feed.yield(frame) }
        // While the session decides about DATA the client should send nothing; a flood is cut off.
        if framer.isWaitingForDataDecision, framer.pendingCount > configuration.limits.maxLineLength * 4 + 65_536 {
            context.close(promise: nil)
        }
    }

    func decide(accepted: Bool) {
        for frame in framer.decideData(accepted: accepted) { feed.yield(frame) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        feed.close()
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.writeAndClose(SMTPReply(421, "4.4.2", "Timeout: nothing received for too long").encoded)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
}

/// ``SMTPSessionConnection`` over a NIO channel; `decide` hands the DATA decision to the handler's framer.
struct SMTPChannelConnection: SMTPSessionConnection {
    let channel: SessionChannel
    let plaintextAuthAllowed: Bool
    private let decide: @Sendable (Bool) -> Void

    init(channel: SessionChannel, plaintext: Bool, decide: @escaping @Sendable (Bool) -> Void) {
        self.channel = channel; self.plaintextAuthAllowed = plaintext; self.decide = decide
    }

    var isEncrypted: Bool { channel.isEncrypted }
    var canStartTLS: Bool { channel.canStartTLS }
    func write(_ bytes: [UInt8]) async throws { try await channel.write(bytes) }
    func startTLS(after reply: [UInt8]) async throws { try await channel.startTLS(after: reply) }

    func decideData(accepted: Bool) async {
        let decide = self.decide
        await channel.onEventLoop { decide(accepted) }
    }
}
