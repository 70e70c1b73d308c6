import RampartCore
import RampartServer

/// Runs `body` (and its structured child tasks) on two threads of its own instead of the process's
/// shared Swift concurrency pool.
///
/// The test process runs every suite at once, and a synchronous test waiting for a child process
/// holds one of the pool's threads (two on a two-core machine) the whole time. An in-process
/// client talking to a server that keeps real-time deadlines (an SRP session lives 180 s) can then
/// wait longer than the deadline between two requests; a CI run failed this way. In-process
/// servers get the same with ``EmbeddedServerConfiguration/threads``.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
public func onThreadsOfItsOwn<T>(_ body: () async throws -> T) async throws -> T {
    let threads = ServerThreads(count: 2, name: "test-client")
    defer { threads.shutdown() }
    return try await withTaskExecutorPreference(threads, operation: body)
}
