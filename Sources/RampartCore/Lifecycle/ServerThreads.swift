import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small pool of threads of a server's own, as a Swift task executor.
///
/// A server embedded in a process shares it with whatever else runs there: the reference client's
/// agent, or a test process whose other suites block the shared cooperative pool (two threads on a
/// two-core machine) while they wait for child processes. A server whose handlers wait for those
/// threads stalls, and its clients time out. The embedded backend (`EmbeddedServerConfiguration`'s
/// `threads`), the IMAP and the SMTP servers run their tasks with a preference for such an
/// executor, so they keep answering.
///
/// Trust-model row **device memory (moderate)** is not at stake here; this is availability: a
/// local server that stops answering makes the mail program or the client give up.
///
/// After ``shutdown()`` the threads end once their queue is empty; a job that still arrives (a
/// late continuation) goes to the global concurrent executor rather than being lost.
///
/// Tests also run in-process clients on it when the other side keeps real-time deadlines (an SRP
/// session lives 180 s): `onThreadsOfItsOwn` in `RampartServerTestSupport`.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
public final class ServerThreads: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [UnownedJob] = []
    private var head = 0
    private var stopping = false
    private var threads: Set<pthread_t> = []

    /// Starts `count` threads (at least one) named `name-1`, `name-2`, … (`name` is shortened so
    /// that each name fits Linux's 15-byte thread names; a longer one would not be set at all).
    public init(count: Int, name: String) {
        for index in 1...max(1, count) {
            let suffix = "-\(index)"
            let threadName = ThreadName.fitted(name, toBytes: ThreadName.maximumLength - suffix.utf8.count) + suffix
            // Named from inside: on Linux a name set before `start()` does not reach the thread,
            // and Foundation's `Thread.current.name` can miss too (see `ThreadName`).
            Thread { [self] in
                ThreadName.setCurrent(threadName)
                condition.lock()
                threads.insert(pthread_self())
                condition.unlock()
                self.work()
            }.start()
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        if stopping {
            condition.unlock()
            globalConcurrentExecutor.enqueue(job)
            return
        }
        queue.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Whether the caller runs on one of these threads.
    public var isCurrent: Bool {
        condition.lock()
        defer { condition.unlock() }
        return threads.contains(pthread_self())
    }

    /// Lets the threads end once the queued jobs have run.
    public func shutdown() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while head == queue.count && !stopping { condition.wait() }
            if head == queue.count {   // stopping, and nothing left
                threads.remove(pthread_self())
                condition.unlock()
                return
            }
            let job = queue[head]
            head += 1
            if head == queue.count { queue.removeAll(keepingCapacity: true); head = 0 }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// Starting a server's tasks on threads of its own where the platform has task executors
/// (Linux, macOS 15, iOS 18), and as plain tasks elsewhere: for servers whose configuration cannot
/// name `TaskExecutor` in a stored property on older Apple systems.
public enum ServerTasks {
    /// A ``ServerThreads`` of `count` threads named `name`, or nil where task executors do not exist.
    public static func makeThreads(count: Int, name: String) -> (any Sendable & AnyObject)? {
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
            return ServerThreads(count: count, name: name)
        }
        return nil
    }

    /// Starts `operation` as a task that prefers `threads` (made by ``makeThreads(count:name:)``).
    @discardableResult
    public static func start(on threads: (any Sendable & AnyObject)?,
                             _ operation: sending @escaping @isolated(any) () async -> Void) -> Task<Void, Never> {
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *), let executor = threads as? ServerThreads {
            return Task(executorPreference: executor, operation: operation)
        }
        return Task(operation: operation)
    }

    /// Lets the threads end once their queued jobs have run.
    public static func shutdown(_ threads: (any Sendable & AnyObject)?) {
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *), let executor = threads as? ServerThreads {
            executor.shutdown()
        }
    }
}
