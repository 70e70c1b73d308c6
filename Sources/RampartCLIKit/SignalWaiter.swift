import Dispatch
import Foundation

/// Waits for one of some signals (SIGINT, SIGTERM) or for a long-running task (a server) to end
/// by itself: what a foreground command such as `rampart server start` waits on.
public final class SignalWaiter: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]
    private let stream: AsyncStream<Int32>
    private let continuation: AsyncStream<Int32>.Continuation

    /// Ignores the default action of `numbers` and listens for them.
    public init(_ numbers: [Int32]) {
        (stream, continuation) = AsyncStream<Int32>.makeStream()
        var sources: [any DispatchSourceSignal] = []
        for number in numbers {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            let continuation = self.continuation
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    /// The first signal received, or nil when `stopped` returned first (the server stopped by itself).
    public func next(orWhen stopped: @escaping @Sendable () async -> Void) async -> Int32? {
        let continuation = self.continuation
        let watcher = Task {
            await stopped()
            continuation.finish()
        }
        defer { watcher.cancel() }
        var iterator = stream.makeAsyncIterator()
        return await iterator.next()
    }

    deinit { sources.forEach { $0.cancel() } }
}
