import Foundation
import NIOCore
import NIOSSL
import RampartCore

/// What a connection handler shares with its session: the place in the server's
/// ``ConnectionCounter``, the stream of frames the session reads, and backpressure.
///
/// While the session has not taken 32 frames (or `maxBytes` of them), ``read(context:)`` holds the
/// channel's read, so a client sending faster than the session answers waits in its own socket
/// buffer, not in the server's memory. Trust-model row **inbox (low)**. Used on the channel's event
/// loop only: call ``handlerAdded(context:)``, ``read(context:)``, ``open(context:refusal:threads:run:)``,
/// ``yield(_:)`` and ``close()`` from the handler's methods of the same names.
public final class SessionFeed<Frame: Sendable>: @unchecked Sendable {
    private let counter: ConnectionCounter
    private let maxBytes: Int
    private let size: @Sendable (Frame) -> Int
    private var continuation: AsyncStream<Frame>.Continuation?
    private var entered = false
    private var context: ChannelHandlerContext?
    private var frames = 0
    private var bytes = 0
    private var held = false

    /// Creates a feed counted by `counter`, whose read stops at 32 queued frames or `maxBytes`
    /// queued bytes; `size` says how many bytes a frame holds.
    public init(counter: ConnectionCounter, maxBytes: Int, size: @escaping @Sendable (Frame) -> Int) {
        self.counter = counter; self.maxBytes = maxBytes; self.size = size
    }

    private var saturated: Bool { frames >= 32 || bytes >= maxBytes }

    /// The handler was added: the feed resumes reads on `context`.
    public func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    /// The handler was removed.
    public func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    /// The handler's `read(context:)`: passes the read on unless the session is behind.
    public func read(context: ChannelHandlerContext) {
        if saturated { held = true } else { context.read() }
    }

    /// Takes a place in the counter and starts `run` with the frames on `threads`
    /// (`ServerTasks`), closing the channel when it returns. When every place is taken, writes
    /// `refusal`, closes the channel and starts nothing.
    public func open(context: ChannelHandlerContext, refusal: [UInt8], threads: (any Sendable & AnyObject)?,
                     run: @escaping @Sendable (ConsumedFrames<Frame>) async -> Void) {
        guard counter.enter() else { context.writeAndClose(refusal); return }
        entered = true
        // Bounded by the framer's limits per frame; the stream holds frames the session has not taken yet.
        let (stream, continuation) = AsyncStream.makeStream(of: Frame.self, bufferingPolicy: .unbounded)
        self.continuation = continuation
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        let size = self.size
        let frames = ConsumedFrames(base: stream) { frame in
            let n = size(frame)
            eventLoop.execute { loopBound.value.consumed(size: n) }
        }
        let channel = context.channel
        ServerTasks.start(on: threads) {
            await run(frames)
            try? await channel.close().get()
        }
    }

    /// Queues `frame` for the session.
    public func yield(_ frame: Frame) {
        frames += 1; bytes += size(frame)
        continuation?.yield(frame)
    }

    /// The session took a frame of `size` bytes; a held read resumes once it is no longer behind.
    private func consumed(size: Int) {
        frames -= 1; bytes -= size
        if held, !saturated, let context { held = false; context.read() }
    }

    /// The channel went inactive: the session's frames end and the counter's place is given back.
    public func close() {
        continuation?.finish()
        continuation = nil
        if entered { counter.leave(); entered = false }
    }
}

/// An async sequence of frames that reports each one the session takes (for ``SessionFeed``'s backpressure).
public struct ConsumedFrames<Frame: Sendable>: AsyncSequence, Sendable {
    /// The frames.
    public typealias Element = Frame
    private let base: AsyncStream<Frame>
    private let onConsume: @Sendable (Frame) -> Void

    /// Wraps `base`, calling `onConsume` with each frame as the session takes it.
    public init(base: AsyncStream<Frame>, onConsume: @escaping @Sendable (Frame) -> Void) {
        self.base = base; self.onConsume = onConsume
    }

    /// Iterates the frames.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<Frame>.AsyncIterator
        let onConsume: @Sendable (Frame) -> Void
        /// The next frame, reported as taken; nil when the connection ended.
        public mutating func next() async -> Frame? {
            guard let frame = await base.next() else { return nil }
            onConsume(frame)
            return frame
        }
    }

    /// Makes the iterator.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator(), onConsume: onConsume) }
}

extension ChannelHandlerContext {
    /// Writes `bytes` (a final `BYE` or `421`) and closes the channel once they are sent.
    public func writeAndClose(_ bytes: [UInt8]) {
        let channel = self.channel
        writeAndFlush(NIOAny(channel.allocator.buffer(bytes: bytes))).whenComplete { _ in channel.close(promise: nil) }
    }
}

/// A session's side of a NIO channel: writing, and STARTTLS with nothing read in between.
///
/// Trust-model row **transport (low)**: the response to STARTTLS is queued below every handler and
/// the TLS handler goes in front in one event-loop task, before the loop reads the client's
/// handshake, so no cleartext byte is read as if it came over TLS.
public final class SessionChannel: @unchecked Sendable {
    private let channel: any Channel
    private let tls: NIOSSLContext?
    private let lock = NSLock()
    private var encrypted = false

    /// Wraps `channel`; `tls` is the context STARTTLS uses (nil: no STARTTLS).
    public init(channel: any Channel, tls: NIOSSLContext?) { self.channel = channel; self.tls = tls }

    /// Whether TLS is active.
    public var isEncrypted: Bool { lock.withLock { encrypted } }
    /// Whether STARTTLS can be offered (a TLS context and no TLS yet).
    public var canStartTLS: Bool { tls != nil && !isEncrypted }

    /// Writes `bytes` and returns once they are handed to the network.
    public func write(_ bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(channel.allocator.buffer(bytes: bytes)).get()
    }

    /// Runs `body` on the channel's event loop and waits for it.
    public func onEventLoop(_ body: @escaping @Sendable () -> Void) async {
        try? await channel.eventLoop.submit(body).get()
    }

    /// Writes `response` and starts TLS right behind it (nothing when no TLS context was given).
    public func startTLS(after response: [UInt8]) async throws {
        guard let tls else { return }
        let channel = self.channel
        try await channel.eventLoop.submit {
            channel.writeAndFlush(channel.allocator.buffer(bytes: response), promise: nil)
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls), position: .first)
        }.get()
        lock.withLock { encrypted = true }
    }
}
