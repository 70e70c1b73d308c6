import Foundation
import NIOCore
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
public enum IMAPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Plain-text logins were asked for on an address that is not loopback.
    case plaintextNeedsLoopback(host: String)
    /// Neither TLS nor loopback plain text: no client could ever log in.
    case noWayToLogIn
    /// Binding the address failed.
    case cannotListen(host: String, port: Int, reason: String)

    /// A sentence saying what to change.
    public var description: String {
        switch self {
        case .plaintextNeedsLoopback(let host):
            "Plain-text IMAP is allowed only on a loopback address, not \(host): listen on 127.0.0.1 or give a TLS context"
        case .noWayToLogIn: "Give a TLS context (for STARTTLS) or declare the loopback listener plain-text; otherwise no client can log in"
        case .cannotListen(let host, let port, let reason): "Cannot listen on \(host):\(port): \(reason)"
        }
    }
}

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
    private let group: MultiThreadedEventLoopGroup
    private let state = NIOLockedBox()
    /// The sessions' own threads (`ServerTasks`): a process whose shared cooperative pool is
    /// blocked (other work waiting on child processes) must not stall the mail program's session.
    private let sessionThreads: (any Sendable & AnyObject)?

    /// Creates a server; nothing listens until ``start()``.
    public init(configuration: IMAPServerConfiguration, backend: any IMAPBackend) {
        self.configuration = configuration
        self.backend = backend
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, configuration.threads))
        self.sessionThreads = ServerTasks.makeThreads(count: max(1, configuration.threads), name: "imap")
    }

    /// The bound port (0 before ``start()``).
    public var port: Int { state.withLock { $0.port } }

    /// Binds and starts accepting connections. - Throws: ``IMAPServerError``.
    public func start() async throws {
        let c = configuration
        if c.plaintextOnLoopback, !Self.isLoopback(c.host) { throw IMAPServerError.plaintextNeedsLoopback(host: c.host) }
        if !c.plaintextOnLoopback, c.tls == nil { throw IMAPServerError.noWayToLogIn }
        let backend = self.backend
        let threads = self.sessionThreads
        let counter = ConnectionCounter(limit: c.maxConnections)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 4)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(IdleStateHandler(readTimeout: c.idleTimeout))
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(IMAPFrameDecoder(limits: c.limits)))
                    try channel.pipeline.syncOperations.addHandler(IMAPConnectionHandler(
                        backend: backend, configuration: c, counter: counter, threads: threads))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.bind(host: c.host, port: c.port).get()
        } catch {
            throw IMAPServerError.cannotListen(host: c.host, port: c.port, reason: "\(error)")
        }
        let port = channel.localAddress?.port ?? 0
        state.withLock { $0.channel = channel; $0.port = port }
    }

    /// Stops listening, closes every connection and the event loops.
    public func stop() async throws {
        let channel = state.withLock { s -> (any Channel)? in defer { s.channel = nil }; return s.channel }
        try? await channel?.close().get()
        try await group.shutdownGracefully()
        ServerTasks.shutdown(sessionThreads)
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}

struct ServerState { var channel: (any Channel)?; var port = 0 }

final class NIOLockedBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value = ServerState()
    func withLock<T>(_ body: (inout ServerState) -> T) -> T { lock.lock(); defer { lock.unlock() }; return body(&value) }
}

final class ConnectionCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    let limit: Int
    init(limit: Int) { self.limit = max(1, limit) }
    func enter() -> Bool { lock.lock(); defer { lock.unlock() }; guard count < limit else { return false }; count += 1; return true }
    func leave() { lock.lock(); count -= 1; lock.unlock() }
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
    private let counter: ConnectionCounter
    private let threads: (any Sendable & AnyObject)?
    private var continuation: AsyncStream<IMAPFrame>.Continuation?
    private var entered = false
    // Event-loop state for backpressure.
    private var queuedFrames = 0
    private var queuedBytes = 0
    private var heldRead = false
    private var context: ChannelHandlerContext?

    private var saturated: Bool { queuedFrames >= 32 || queuedBytes >= configuration.limits.maxCommandSize }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func read(context: ChannelHandlerContext) {
        if saturated { heldRead = true } else { context.read() }
    }

    /// The session took a frame of `size` bytes (runs on the event loop).
    func consumed(size: Int) {
        queuedFrames -= 1; queuedBytes -= size
        if heldRead, !saturated, let context { heldRead = false; context.read() }
    }

    static func size(_ frame: IMAPFrame) -> Int { if case .command(let b) = frame { b.count } else { 0 } }

    init(backend: any IMAPBackend, configuration: IMAPServerConfiguration, counter: ConnectionCounter,
         threads: (any Sendable & AnyObject)?) {
        self.backend = backend; self.configuration = configuration; self.counter = counter; self.threads = threads
    }

    func channelActive(context: ChannelHandlerContext) {
        let channel = context.channel
        guard counter.enter() else {
            let bye = channel.allocator.buffer(bytes: IMAPResponse.untaggedStatus(.bye, code: nil, text: "Too many connections; try again later").encoded)
            context.writeAndFlush(NIOAny(bye)).whenComplete { _ in channel.close(promise: nil) }
            return
        }
        entered = true
        // Bounded by the framer's limits per frame; the stream holds frames the session has not taken yet.
        let (stream, continuation) = AsyncStream.makeStream(of: IMAPFrame.self, bufferingPolicy: .unbounded)
        self.continuation = continuation
        let connection = ChannelConnection(channel: channel, tls: configuration.tls, plaintext: configuration.plaintextOnLoopback)
        let session = IMAPSession(backend: backend, connection: connection, limits: configuration.limits)
        let loopBound = NIOLoopBound(self, eventLoop: channel.eventLoop)
        let eventLoop = channel.eventLoop
        let frames = ConsumedFrames(base: stream) { frame in
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
        let frame = Self.unwrapInboundIn(data)
        queuedFrames += 1; queuedBytes += Self.size(frame)
        continuation?.yield(frame)
    }

    func channelInactive(context: ChannelHandlerContext) {
        continuation?.finish()
        continuation = nil
        if entered { counter.leave(); entered = false }
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            let channel = context.channel
            let bye = channel.allocator.buffer(bytes: IMAPResponse.untaggedStatus(.bye, code: nil, text: "Autologout: no command for too long").encoded)
            context.writeAndFlush(NIOAny(bye)).whenComplete { _ in channel.close(promise: nil) }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// ``IMAPSessionConnection`` over a NIO channel.
final class ChannelConnection: IMAPSessionConnection, @unchecked Sendable {
    private let channel: any Channel
    private let tls: NIOSSLContext?
    private let lock = NSLock()
    private var encrypted = false
    let plaintextLoginAllowed: Bool

    init(channel: any Channel, tls: NIOSSLContext?, plaintext: Bool) {
        self.channel = channel; self.tls = tls; self.plaintextLoginAllowed = plaintext
    }

    var isEncrypted: Bool { lock.withLock { encrypted } }
    private func setEncrypted() { lock.withLock { encrypted = true } }
    var canStartTLS: Bool { tls != nil && !isEncrypted }

    func write(_ bytes: [UInt8]) async throws {
        let buffer = channel.allocator.buffer(bytes: bytes)
        try await channel.writeAndFlush(buffer).get()
    }

    func startTLS(after response: [UInt8]) async throws {
        guard let tls else { return }
        let channel = self.channel
        // One event-loop task: the response is queued below every handler, then TLS goes in front,
        // before the loop reads the client's handshake.
        try await channel.eventLoop.submit {
            channel.writeAndFlush(channel.allocator.buffer(bytes: response), promise: nil)
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls), position: .first)
        }.get()
        setEncrypted()
    }
}

/// An async sequence of frames that reports each one the session takes (for backpressure).
struct ConsumedFrames: AsyncSequence, Sendable {
    typealias Element = IMAPFrame
    let base: AsyncStream<IMAPFrame>
    let onConsume: @Sendable (IMAPFrame) -> Void

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<IMAPFrame>.AsyncIterator
        let onConsume: @Sendable (IMAPFrame) -> Void
        mutating func next() async -> IMAPFrame? {
            guard let frame = await base.next() else { return nil }
            onConsume(frame)
            return frame
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator(), onConsume: onConsume) }
}
