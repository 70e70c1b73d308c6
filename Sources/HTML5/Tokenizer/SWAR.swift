// Eight bytes at a time ("SIMD within a register"): the serializer's escaping tests runs of 4 to
// 15 bytes with it. (Longer runs there, and the tokenizer's text and attribute-value scans, use
// 16-byte vector compares: `firstSpecial`, `firstStop`.)

/// Word-at-a-time byte search helpers. A scan loads eight input bytes as one `UInt64` and skips
/// the word when none of its bytes is one it stops at; only the word that holds one (and the
/// tail) is looked at byte by byte.
enum SWAR {
    @inline(__always) static var ones: UInt64 { 0x0101_0101_0101_0101 }
    @inline(__always) static var highs: UInt64 { 0x8080_8080_8080_8080 }

    /// `byte` repeated in all eight lanes of a word: the pattern ``matches(_:_:)`` compares with.
    @inline(__always) static func broadcast(_ byte: UInt8) -> UInt64 { ones &* UInt64(byte) }

    /// Nonzero exactly when some byte of `word` equals the byte repeated in `pattern` (the "has a
    /// zero byte" test on `word ^ pattern`): the high bit of each matching lane is set. Lanes
    /// above a match may be flagged too (the borrow runs upward), never lanes below the first one,
    /// so the lowest flagged lane is always a real match; OR several results together to test
    /// several bytes at once.
    @inline(__always) static func matches(_ word: UInt64, _ pattern: UInt64) -> UInt64 {
        let x = word ^ pattern
        return (x &- ones) & ~x & highs
    }

    /// The index (0 to 7) of the first matching byte of a little-endian loaded word, given the
    /// nonzero result of ``matches(_:_:)`` (or an OR of several).
    @inline(__always) static func firstMatch(_ found: UInt64) -> Int { found.trailingZeroBitCount &>> 3 }
}
