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
