import Foundation
import NIOCore
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
public enum SMTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Plain-text AUTH was asked for on an address that is not loopback.
    case plaintextNeedsLoopback(host: String)
    /// Neither TLS nor loopback plain text: no client could authenticate.
    case noWayToAuthenticate
    /// Binding failed.
    case cannotListen(host: String, port: Int, reason: String)

    /// A sentence saying what to change.
    public var description: String {
        switch self {
        case .plaintextNeedsLoopback(let host):
            "Plain-text SMTP is allowed only on a loopback address, not \(host): listen on 127.0.0.1 or give a TLS context"
        case .noWayToAuthenticate: "Give a TLS context (for STARTTLS) or declare the loopback listener plain-text; otherwise no client can authenticate"
        case .cannotListen(let host, let port, let reason): "Cannot listen on \(host):\(port): \(reason)"
        }
    }
}

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
    private let group: MultiThreadedEventLoopGroup
    /// The sessions' own threads (`ServerTasks`), so a blocked shared pool does not stall a client.
    private let sessionThreads: (any Sendable & AnyObject)?
    private let state = LockedState()

    /// Creates a server; nothing listens until ``start()``.
    public init(configuration: SMTPServerConfiguration, backend: any SubmissionBackend) {
        self.configuration = configuration; self.backend = backend
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        sessionThreads = ServerTasks.makeThreads(count: 1, name: "smtp")
    }

    /// The bound port (0 before ``start()``).
    public var port: Int { state.withLock { $0.port } }

    /// Binds and accepts connections. - Throws: ``SMTPServerError``.
    public func start() async throws {
        let c = configuration
        let loopback = c.host == "localhost" || c.host == "::1" || c.host.hasPrefix("127.")
        if c.plaintextOnLoopback, !loopback { throw SMTPServerError.plaintextNeedsLoopback(host: c.host) }
        if !c.plaintextOnLoopback, c.tls == nil { throw SMTPServerError.noWayToAuthenticate }
        let backend = self.backend
        let counter = Counter(limit: c.maxConnections)
        let threads = sessionThreads
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(IdleStateHandler(readTimeout: c.idleTimeout))
                    try channel.pipeline.syncOperations.addHandler(SMTPConnectionHandler(backend: backend, configuration: c, counter: counter,
                                                                                            threads: threads))
                }
            }
        let channel: any Channel
        do { channel = try await bootstrap.bind(host: c.host, port: c.port).get() } catch {
            throw SMTPServerError.cannotListen(host: c.host, port: c.port, reason: "\(error)")
        }
        let port = channel.localAddress?.port ?? 0
        state.withLock { $0.channel = channel; $0.port = port }
    }

    /// Stops listening, closes connections and the event loop.
    public func stop() async throws {
        let channel = state.withLock { s -> (any Channel)? in defer { s.channel = nil }; return s.channel }
        try? await channel?.close().get()
        try await group.shutdownGracefully()
        ServerTasks.shutdown(sessionThreads)
    }
}

final class LockedState: @unchecked Sendable {
    struct Value { var channel: (any Channel)?; var port = 0 }
    private let lock = NSLock()
    private var value = Value()
    func withLock<T>(_ body: (inout Value) -> T) -> T { lock.lock(); defer { lock.unlock() }; return body(&value) }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    let limit: Int
    init(limit: Int) { self.limit = max(1, limit) }
    func enter() -> Bool { lock.lock(); defer { lock.unlock() }; guard count < limit else { return false }; count += 1; return true }
    func leave() { lock.lock(); count -= 1; lock.unlock() }
}

/// Frames bytes with ``SMTPInputFramer`` on the event loop and feeds an ``SMTPSession``.
/// Backpressure: while the session has 32 frames (or a maximum message's worth of bytes) it has
/// not taken yet, the handler holds the channel's `read`.
final class SMTPConnectionHandler: ChannelDuplexHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    private var queuedFrames = 0
    private var queuedBytes = 0
    private var heldRead = false
    private var context: ChannelHandlerContext?

    private var saturated: Bool { queuedFrames >= 32 || queuedBytes >= configuration.limits.maxMessageSize }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func read(context: ChannelHandlerContext) {
        if saturated { heldRead = true } else { context.read() }
    }

    func consumed(size: Int) {
        queuedFrames -= 1; queuedBytes -= size
        if heldRead, !saturated, let context { heldRead = false; context.read() }
    }

    static func size(_ frame: SMTPFrame) -> Int {
        switch frame { case .line(let b), .message(let b): b.count; default: 0 }
    }

    private func enqueue(_ frame: SMTPFrame) {
        queuedFrames += 1; queuedBytes += Self.size(frame)
        continuation?.yield(frame)
    }
    // Event-loop state: the framer and the stream continuation.
    private var framer: SMTPInputFramer
    private var continuation: AsyncStream<SMTPFrame>.Continuation?
    private var entered = false
    private let backend: any SubmissionBackend
    private let configuration: SMTPServerConfiguration
    private let counter: Counter
    private let threads: (any Sendable & AnyObject)?

    init(backend: any SubmissionBackend, configuration: SMTPServerConfiguration, counter: Counter,
         threads: (any Sendable & AnyObject)?) {
        self.backend = backend; self.configuration = configuration; self.counter = counter
        framer = SMTPInputFramer(limits: configuration.limits)
        self.threads = threads
    }

    func channelActive(context: ChannelHandlerContext) {
        let channel = context.channel
        guard counter.enter() else {
            let reply = channel.allocator.buffer(bytes: SMTPReply(421, "4.7.0", "Too many connections; try again later").encoded)
            context.writeAndFlush(NIOAny(reply)).whenComplete { _ in channel.close(promise: nil) }
            return
        }
        entered = true
        let (stream, continuation) = AsyncStream.makeStream(of: SMTPFrame.self)
        self.continuation = continuation
        let loopBound = NIOLoopBound(self, eventLoop: channel.eventLoop)
        let connection = SMTPChannelConnection(channel: channel, tls: configuration.tls, plaintext: configuration.plaintextOnLoopback) { accepted in
            loopBound.value.decide(accepted: accepted)
        }
        let session = SMTPSession(backend: backend, connection: connection, limits: configuration.limits, hostname: configuration.hostname)
        let eventLoop = channel.eventLoop
        let frames = ConsumedSMTPFrames(base: stream) { frame in
            let size = Self.size(frame)
            eventLoop.execute { loopBound.value.consumed(size: size) }
        }
        ServerTasks.start(on: threads) {
            await session.run(frames: frames)
            try? await channel.close().get()
        }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = Self.unwrapInboundIn(data)
        let bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
        for frame in framer.feed(bytes) { enqueue(frame) }
        // While the session decides about DATA the client should send nothing; a flood is cut off.
        if framer.isWaitingForDataDecision, framer.pendingCount > configuration.limits.maxLineLength * 4 + 65_536 {
            context.close(promise: nil)
        }
    }

    func decide(accepted: Bool) {
        for frame in framer.decideData(accepted: accepted) { enqueue(frame) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        continuation?.finish(); continuation = nil
        if entered { counter.leave(); entered = false }
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            let channel = context.channel
            let reply = channel.allocator.buffer(bytes: SMTPReply(421, "4.4.2", "Timeout: nothing received for too long").encoded)
            context.writeAndFlush(NIOAny(reply)).whenComplete { _ in channel.close(promise: nil) }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
}

final class SMTPChannelConnection: SMTPSessionConnection, @unchecked Sendable {
    private let channel: any Channel
    private let tls: NIOSSLContext?
    private let lock = NSLock()
    private var encrypted = false
    private let decide: @Sendable (Bool) -> Void
    let plaintextAuthAllowed: Bool

    init(channel: any Channel, tls: NIOSSLContext?, plaintext: Bool, decide: @escaping @Sendable (Bool) -> Void) {
        self.channel = channel; self.tls = tls; self.plaintextAuthAllowed = plaintext; self.decide = decide
    }

    var isEncrypted: Bool { lock.withLock { encrypted } }
    var canStartTLS: Bool { tls != nil && !isEncrypted }
    private func setEncrypted() { lock.withLock { encrypted = true } }

    func write(_ bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(channel.allocator.buffer(bytes: bytes)).get()
    }

    func decideData(accepted: Bool) async {
        let decide = self.decide
        try? await channel.eventLoop.submit { decide(accepted) }.get()
    }

    func startTLS(after reply: [UInt8]) async throws {
        guard let tls else { return }
        let channel = self.channel
        try await channel.eventLoop.submit {
            channel.writeAndFlush(channel.allocator.buffer(bytes: reply), promise: nil)
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls), position: .first)
        }.get()
        setEncrypted()
    }
}

/// An async sequence of frames that reports each one the session takes (for backpressure).
struct ConsumedSMTPFrames: AsyncSequence, Sendable {
    typealias Element = SMTPFrame
    let base: AsyncStream<SMTPFrame>
    let onConsume: @Sendable (SMTPFrame) -> Void

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<SMTPFrame>.AsyncIterator
        let onConsume: @Sendable (SMTPFrame) -> Void
        mutating func next() async -> SMTPFrame? {
            guard let frame = await base.next() else { return nil }
            onConsume(frame)
            return frame
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator(), onConsume: onConsume) }
}
