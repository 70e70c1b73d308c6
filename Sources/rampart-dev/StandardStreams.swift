import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Standard input and output as bytes for the commands that filter a document (`html5 serialize`,
/// `sanitize`): stdin read with `read(2)` straight into one array sized from `fstat` when stdin is
/// a file (no `Data` and no second copy), output written with `write(2)` from the caller's
/// buffer (no `String` or `Data` of it).
enum StandardStreams {
    /// Everything on standard input.
    static func readAll() -> [UInt8] {
        var status = stat()
        let hint = fstat(0, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG ? Int(status.st_size) : 0
        var capacity = max(hint + 1, 64 * 1024)
        var bytes: [UInt8] = []
        while true {
            // Read into uninitialized room (no zero fill of memory the read overwrites anyway).
            let had = bytes.count
            var ended = false
            bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
                bytes.withUnsafeBufferPointer { old in
                    if let base = old.baseAddress { buffer.baseAddress!.initialize(from: base, count: had) }
                }
                var count = had
                while count < capacity {
                    let n = read(0, buffer.baseAddress! + count, capacity - count)
                    if n > 0 { count += n } else if n < 0 && errno == EINTR { continue } else { ended = true; break }
                }
                initialized = count
            }
            if ended { return bytes }
            capacity *= 2
        }
    }

    /// Writes `bytes` to standard output (all of them, or until it is closed).
    static func write(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard var next = bytes.baseAddress else { return }
        var left = bytes.count
        while left > 0 {
            let n = Glibc.write(1, next, left)
            if n > 0 { next += n; left -= n } else if n < 0 && errno == EINTR { continue } else { return }
        }
    }

    /// Ends the process with status 0 once the output is written, without freeing what the
    /// command built: the parsed tree of a large document is millions of allocations, and
    /// releasing them one by one (~3 % of `html5 serialize` on 25 MB, `perf`) only to exit is
    /// work the kernel does at once when it takes the process's memory back (what clang's
    /// `-disable-free` does for its syntax tree). Standard output is written with `write(2)`
    /// and flushed by then; buffered `print` output is flushed by `exit`.
    static func exitWithoutFreeing() -> Never {
        exit(0)
    }

    /// Runs `work` on a thread of its own whose allocations come from glibc's main arena, and
    /// waits for it. The commands run on a worker thread of the concurrency pool, and glibc gives
    /// such a thread an arena of its own whose heap grows one page at a time, each page an
    /// `mprotect` call (the main arena grows by `brk`, with a pad): sanitizing the 25 MB
    /// real-world mail file made 21 190 of them, 5 % of the process (`strace -c`, `perf`).
    /// With at most one arena (`M_ARENA_MAX`), a thread started afterwards is given an existing
    /// arena, the main one first (whose lock nobody holds: the async `main` has parked the main
    /// thread); if it is busy, another, as before. For the filter commands only, whose process
    /// does this one thing and exits.
    ///
    /// The main arena is also told to keep what is freed for the next allocation
    /// (``keepFreedMemory(_:)``).
    static func onMainArena<T: Sendable, E: Error>(_ work: @escaping @Sendable () throws(E) -> T) throws(E) -> T {
        // `mallopt` (`<malloc.h>`, which the Glibc module leaves out).
        let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt")
        let mallopt = symbol.map { unsafeBitCast($0, to: Mallopt.self) }
        if let mallopt {
            _ = mallopt(-8, 1)  // M_ARENA_MAX
            keepFreedMemory(mallopt)
        }
        let outcome = ThreadOutcome<T, E>()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            outcome.result = Result { () throws(E) -> T in try work() }
            done.signal()
        }
        thread.stackSize = 8 << 20
        thread.start()
        done.wait()
        return try outcome.result!.get()
    }

    /// glibc's `mallopt(param, value)`.
    private typealias Mallopt = @convention(c) (Int32, Int32) -> Int32

    /// Large blocks (the input, the tree's rows and texts, the output: up to 32 MiB each, glibc's
    /// most) come from the heap instead of a mapping of their own (`M_MMAP_THRESHOLD`), and the
    /// heap is never given back to the kernel (`M_TRIM_THRESHOLD`): a block freed during the
    /// run (an array outgrown, a pass's copy of the message) is reused by the next one without
    /// new page faults, where a mapping freed with `munmap` is faulted in again page by page
    /// once the next one is touched. Sanitizing the 25 MB real-world mail file: 64 400 → 58 000
    /// page faults, task-clock 447 → 420 ms (medians of 7, alternating); `html5 serialize`
    /// unchanged. For a process that does one thing and exits.
    ///
    /// Transparent huge pages for the heap (`madvise(MADV_HUGEPAGE)` on a heap grown at once)
    /// were measured and left out: page faults 58 000 → 8 400, but on this VM a huge page the
    /// guest had not touched recently took long to clear (`clear_page_erms` 34 % of a run), so
    /// runs were either 20–28 % faster or 1.5–2× slower, in no order one could rely on.
    private static func keepFreedMemory(_ mallopt: Mallopt) {
        _ = mallopt(-3, 32 << 20)  // M_MMAP_THRESHOLD (glibc's maximum on 64-bit)
        _ = mallopt(-1, Int32.max)  // M_TRIM_THRESHOLD
    }

    /// Writes a newline to standard output.
    static func newline() {
        var byte: UInt8 = 0x0A
        withUnsafePointer(to: &byte) { write(UnsafeBufferPointer(start: $0, count: 1)) }
    }
}

/// The result of ``StandardStreams/onMainArena(_:)``'s thread, read after it signalled.
private final class ThreadOutcome<T, E: Error>: @unchecked Sendable {
    var result: Result<T, E>?
}
