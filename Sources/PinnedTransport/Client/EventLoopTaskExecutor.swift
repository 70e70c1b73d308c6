import NIOCore

/// Runs Swift-concurrency jobs on one NIO event loop.
///
/// Certificate and pin verification is `async` (swift-certificates' `Verifier`), and NIOSSL asks
/// for it in the middle of a handshake. Run on the global concurrent executor, that step waits
/// for a free thread of the cooperative pool: in an app (or a test run) whose pool is busy with
/// other work, handshakes then stall into the request timeout although the network is fine.
/// Giving the verification task this executor as its preference keeps the whole exchange on the
/// client's own event loop. (Trust model, transport row: pinning must not fail open, nor fail
/// spuriously under load.)
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
final class EventLoopTaskExecutor: TaskExecutor {
    private let loop: any EventLoop

    init(_ loop: any EventLoop) {
        self.loop = loop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
