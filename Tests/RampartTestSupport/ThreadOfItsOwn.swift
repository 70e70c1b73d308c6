import Foundation
import RampartCore

/// Runs the blocking `body` on a new thread of its own and resumes the caller with its result.
///
/// A test that waits for a child process (its exit, a line it prints) blocks while it waits. On
/// the shared cooperative pool (two threads on a two-core machine) that wait starves every other
/// suite of the test process, including in-process servers and clients with real-time deadlines;
/// a one-second test once took four minutes in a full run. The async waits of ``CLITool`` and
/// ``ChildProcess`` block here instead, so an awaiting test holds no pool thread.
public func onThreadOfItsOwn<T: Sendable>(named name: String = "test-wait",
                                          _ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            ThreadName.setCurrent(name)
            continuation.resume(with: Result { try body() })
        }.start()
    }
}

/// `onThreadOfItsOwn(named:_:)` for a `body` that cannot fail.
public func onThreadOfItsOwn<T: Sendable>(named name: String = "test-wait", _ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread {
            ThreadName.setCurrent(name)
            continuation.resume(returning: body())
        }.start()
    }
}

/// `onThreadOfItsOwn(named:_:)` that stops waiting after `timeLimit`: the result of `body`, or
/// nil when it has not returned by then (it goes on running on its thread; calling that a hang is
/// the caller's). Neither the caller nor the timer holds a cooperative thread while it waits.
public func onThreadOfItsOwn<T: Sendable>(named name: String = "test-wait", timeLimit: Duration,
                                          _ body: @escaping @Sendable () throws -> T) async -> Result<T, any Error>? {
    let first = FirstAnswer<Result<T, any Error>?>()
    return await withCheckedContinuation { continuation in
        first.waiting(continuation)
        Thread {
            ThreadName.setCurrent(name)
            first.answer(Result { try body() })
        }.start()
        DispatchQueue.global().asyncAfter(deadline: .now() + timeLimit.timeInterval) { first.answer(nil) }
    }
}

/// Resumes a continuation with the first of several answers; later ones are dropped.
private final class FirstAnswer<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, Never>?
    private var answered = false

    func waiting(_ continuation: CheckedContinuation<T, Never>) { lock.withLock { self.continuation = continuation } }

    func answer(_ value: T) {
        let waiting = lock.withLock { () -> CheckedContinuation<T, Never>? in
            guard !answered else { return nil }
            answered = true
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(returning: value)
    }
}

/// Clean-ups that a test cannot await where it starts them (a `defer`, a `deinit`): stopping a
/// child process and waiting for its exit, stopping an agent. Each runs at once on a thread of its
/// own, so the caller, often on the cooperative pool, returns without waiting; the test process
/// waits for every one still running when it exits (at most ``exitWait``), so no child outlives
/// the run.
public enum BackgroundCleanup {
    /// How long the exiting test process waits for the clean-ups still running.
    public static let exitWait: Duration = .seconds(120)
    private static let running = DispatchGroup()
    private static let waitsAtExit: Void = {
        atexit { _ = BackgroundCleanup.running.wait(timeout: .now() + BackgroundCleanup.exitWait.timeInterval) }
    }()

    /// Starts `body` on a thread of its own and returns.
    public static func start(named name: String, _ body: @escaping @Sendable () -> Void) {
        _ = waitsAtExit
        running.enter()
        Thread {
            ThreadName.setCurrent(name)
            body()
            running.leave()
        }.start()
    }

    /// Waits for every clean-up started so far, on a thread of its own (for a test that checks
    /// what they leave behind).
    public static func finished() async {
        await onThreadOfItsOwn(named: "cleanup-wait") { running.wait() }
    }
}
