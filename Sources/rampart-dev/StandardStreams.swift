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
        var bytes = [UInt8](repeating: 0, count: max(hint + 1, 64 * 1024))
        var count = 0
        while true {
            if count == bytes.count { bytes.append(contentsOf: repeatElement(0, count: bytes.count)) }
            let n = bytes.withUnsafeMutableBufferPointer { read(0, $0.baseAddress! + count, $0.count - count) }
            if n > 0 { count += n } else if n < 0 && errno == EINTR { continue } else { break }
        }
        bytes.removeSubrange(count...)
        return bytes
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

    /// Writes a newline to standard output.
    static func newline() {
        var byte: UInt8 = 0x0A
        withUnsafePointer(to: &byte) { write(UnsafeBufferPointer(start: $0, count: 1)) }
    }
}
