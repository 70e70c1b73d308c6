import Foundation
import RampartCore
import Testing
@testable import RampartServer

/// Whether the caller runs on one of `threads`, and the thread's name (synchronous helpers:
/// `Thread.current` is not for async code).
private func onThreads(_ threads: ServerThreads) -> Bool { threads.isCurrent }
private func threadName() -> String { Thread.current.name ?? "" }

/// ``ServerThreads``: an embedded server's own threads, so a process whose shared pool is blocked
/// (a test process waiting for child processes) does not starve its request handlers.
@Suite("Server threads (the embedded server's own executor)")
struct ServerThreadsTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aTaskAndItsChildTasksRunOnTheServersThreadsAndLateJobsStillRunAfterShutdown() async throws {
        let executor = ServerThreads(count: 2, name: "srv-threads")
        let runs = await Task(executorPreference: executor) { () -> [(Bool, String)] in
            var runs = [(onThreads(executor), threadName())]
            await withTaskGroup(of: (Bool, String).self) { group in
                for _ in 0..<8 { group.addTask { (onThreads(executor), threadName()) } }
                for await run in group { runs.append(run) }
            }
            try? await Task.sleep(for: .milliseconds(10))   // a resumption is a new job
            runs.append((onThreads(executor), threadName()))
            return runs
        }.value
        #expect(runs.count == 10)
        for (onItsThreads, name) in runs {
            #expect(onItsThreads, "ran on '\(name)'")
        }
        executor.shutdown()
        // A job arriving after the shutdown is not lost: it runs on the global executor.
        let late = await Task(executorPreference: executor) { onThreads(executor) }.value
        #expect(!late)
    }
}
