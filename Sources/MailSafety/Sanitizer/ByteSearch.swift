#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Substring search on UTF-8 bytes, shared by the tracker list's literal pre-filter and the
/// sanitizer's pixel-style hints.
///
/// Trust-model row: inbox (incoming mail) — both callers decide whether a tracker or a hidden
/// pixel is reported; one search means one answer for both.
enum ByteSearch {
    /// `true` if `needle` occurs in `haystack` (an empty needle always does). The C library's
    /// `memchr` finds candidates for the first byte and `memcmp` checks the rest.
    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        haystack.withUnsafeBufferPointer { contains($0, needle) }
    }

    /// ``contains(_:_:)`` on bytes the caller already holds.
    static func contains(_ haystack: UnsafeBufferPointer<UInt8>, _ needle: [UInt8]) -> Bool {
        guard let first = needle.first else { return true }
        guard needle.count <= haystack.count else { return false }
        return needle.withUnsafeBytes { n in
            guard let hBase = UnsafeRawPointer(haystack.baseAddress), let nBase = n.baseAddress else { return false }
            var offset = 0
            let last = haystack.count - n.count  // the last offset a match can start at
            while offset <= last {
                guard let hit = memchr(hBase + offset, Int32(first), last - offset + 1) else { return false }
                let at = hBase.distance(to: UnsafeRawPointer(hit))
                if memcmp(hBase + at, nBase, n.count) == 0 { return true }
                offset = at + 1
            }
            return false
        }
    }
}
