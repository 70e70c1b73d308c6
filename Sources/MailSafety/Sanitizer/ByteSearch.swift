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
    /// `memchr` finds candidates for the first byte, and `memcmp` checks those whose second byte
    /// matches too.
    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        haystack.withUnsafeBufferPointer { contains($0, needle) }
    }

    /// The index of the first `byte` in `bytes[start..<end]` (`memchr`; `end` defaults to the
    /// end), or `end` when there is none.
    static func firstIndex(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int? = nil) -> Int {
        let end = min(end ?? bytes.count, bytes.count)
        guard start < end, let base = bytes.baseAddress else { return end }
        guard let hit = memchr(base + start, Int32(byte), end - start) else { return end }
        return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(hit))
    }

    /// ``contains(_:_:)`` on bytes the caller already holds.
    static func contains(_ haystack: UnsafeBufferPointer<UInt8>, _ needle: [UInt8]) -> Bool {
        needle.withUnsafeBufferPointer { contains(haystack, $0) }
    }

    /// ``contains(_:_:)`` on bytes the caller already holds.
    static func contains(_ haystack: UnsafeBufferPointer<UInt8>, _ needle: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = needle.first else { return true }
        guard needle.count <= haystack.count else { return false }
        do {
            let n = UnsafeRawBufferPointer(needle)
            guard let hBase = UnsafeRawPointer(haystack.baseAddress), let nBase = n.baseAddress else { return false }
            var offset = 0
            let last = haystack.count - n.count  // the last offset a match can start at
            while offset <= last {
                guard let hit = memchr(hBase + offset, Int32(first), last - offset + 1) else { return false }
                let at = hBase.distance(to: UnsafeRawPointer(hit))
                // The second byte first (in bounds: a match would end within the haystack): most
                // candidates differ there, and are passed over without a call.
                if n.count < 2 || hBase.load(fromByteOffset: at + 1, as: UInt8.self) == n[1], memcmp(hBase + at, nBase, n.count) == 0 {
                    return true
                }
                offset = at + 1
            }
            return false
        }
    }
}

/// Eight ASCII bytes at a time (SWAR), for the URL fast paths' scans. Words are read with
/// `loadUnaligned` only where all eight bytes lie inside the buffer; the rest byte by byte.
enum ASCIIWords {
    static let ones: UInt64 = 0x0101_0101_0101_0101
    static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// The word of `bytes[offset..<offset + 8]` (the caller checks the bounds).
    @inline(__always)
    static func word(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> UInt64 {
        UnsafeRawPointer(bytes.baseAddress! + offset).loadUnaligned(as: UInt64.self)
    }

    /// Whether a byte of `w` is below `n` (`n` ≤ 0x80), for a word whose bytes are all below
    /// 0x80 (the classic "has less" test: exact as a yes/no answer).
    @inline(__always)
    static func hasByte(_ w: UInt64, below n: UInt8) -> Bool {
        (w &- ones &* UInt64(n)) & ~w & highBits != 0
    }

    /// Whether a byte of `w` (bytes below 0x80) equals `b`.
    @inline(__always)
    static func hasByte(_ w: UInt64, equalTo b: UInt8) -> Bool {
        hasByte(w ^ (ones &* UInt64(b)), below: 1)
    }

    /// The index of the first `a` or `b` in `bytes[start..<end]`, or `end` when there is none;
    /// every byte of that range below 0x80. Eight bytes at a time: in `(v - ones) & ~v & high`,
    /// the lowest set bit marks the first zero byte of `v` exactly (a borrow only reaches the
    /// bytes above a zero byte), and `v` is the word with `a` (or `b`) xored away.
    static func firstIndex(of a: UInt8, or b: UInt8, in bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Int {
        var k = start
        while k + 8 <= end {
            let w = UInt64(littleEndian: word(bytes, at: k))
            let va = w ^ ones &* UInt64(a)
            let vb = w ^ ones &* UInt64(b)
            let found = ((va &- ones) & ~va | (vb &- ones) & ~vb) & highBits
            if found != 0 { return k + found.trailingZeroBitCount / 8 }
            k += 8
        }
        while k < end && bytes[k] != a && bytes[k] != b { k += 1 }
        return k
    }

    /// `w` with its ASCII uppercase letters lowered, for a word whose bytes are all below 0x80
    /// (no carry crosses a byte then).
    @inline(__always)
    static func lowercased(_ w: UInt64) -> UInt64 {
        let atLeastA = w &+ ones &* (0x80 - 0x41)
        let aboveZ = w &+ ones &* (0x80 - 0x5B)
        let upper = atLeastA & ~aboveZ & highBits
        return w | (upper >> 2)
    }
}
