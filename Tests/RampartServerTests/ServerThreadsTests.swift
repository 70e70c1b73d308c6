import Foundation
import Testing
@testable import RampartServer

/// The name of the thread running the caller (a synchronous helper: `Thread.current` is not for
/// async code).
private func threadName() -> String { Thread.current.name ?? "" }

/// ``ServerThreads``: an embedded server's own threads, so a process whose shared pool is blocked
/// (a test process waiting for child processes) does not starve its request handlers.
@Suite("Server threads (the embedded server's own executor)")
struct ServerThreadsTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aTaskAndItsChildTasksRunOnTheServersThreadsAndLateJobsStillRunAfterShutdown() async throws {
        let executor = ServerThreads(count: 2, name: "srv-threads")
        let names = await Task(executorPreference: executor) { () -> [String] in
            var names = [threadName()]
            await withTaskGroup(of: String.self) { group in
                for _ in 0..<8 { group.addTask { threadName() } }
                for await name in group { names.append(name) }
            }
            try? await Task.sleep(for: .milliseconds(10))   // a resumption is a new job
            names.append(threadName())
            return names
        }.value
        #expect(names.count == 10)
        for name in names {
            #expect(name == "srv-threads-1" || name == "srv-threads-2", "ran on '\(name)'")
        }
        executor.shutdown()
        // A job arriving after the shutdown is not lost: it runs on the global executor.
        let late = await Task(executorPreference: executor) { threadName() }.value
        #expect(!late.hasPrefix("srv-threads"))
    }

}
