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

    /// Writes a newline to standard output.
    static func newline() {
        var byte: UInt8 = 0x0A
        withUnsafePointer(to: &byte) { write(UnsafeBufferPointer(start: $0, count: 1)) }
    }
}
