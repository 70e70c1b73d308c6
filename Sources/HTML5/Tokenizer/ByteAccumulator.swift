#if canImport(Glibc)
import Glibc  // memcmp
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The bytes of a token under construction: a character run, a tag name, an attribute name or
/// value.
///
/// While the bytes are one contiguous slice of the input — the common case: no character
/// reference, NUL, upper-case letter or interruption — only the slice's bounds are kept, and the
/// token's string is made from the input directly (one copy instead of two, and no scratch buffer
/// to clear). The first byte that does not extend the slice moves the slice into the buffer
/// ("materializes" it); the pending bytes are always `buffer` followed by `input[runStart..<runEnd]`.
///
/// Trust-model row: inbox (incoming mail) — every token string of a hostile message passes
/// through here. The run bounds are only ever a range the tokenizer has already read, and every
/// use checks them against the input first (`checkRun`, a `precondition`: release builds too).
struct ByteAccumulator {
    private var buffer: [UInt8] = []
    /// `!buffer.isEmpty`, kept as a flag: the tokenizer asks "anything pending?" several times
    /// per tag, and in its (large) state function `Array.isEmpty` stayed an out-of-line call.
    private var hasBuffered = false
    private var runStart = 0
    private var runEnd = 0
    /// Set when a byte went into `buffer` that may leave it ill-formed UTF-8: a non-ASCII byte
    /// on its own, or a run of the input not cut on scalar boundaries (or of an input not known
    /// to be well-formed). Clear while `buffer` is a concatenation of well-formed pieces (runs
    /// of a well-formed input cut on scalar boundaries, ASCII bytes, whole encoded scalars),
    /// which is itself well-formed.
    private var bufferMayBeIllFormed = false

    var isEmpty: Bool { runStart == runEnd && !hasBuffered }

    /// Appends `input[start..<end]`.
    @inline(__always) mutating func appendRun(_ start: Int, _ end: Int, from input: [UInt8]) {
        guard start < end else { return }
        if runStart == runEnd {
            runStart = start
            runEnd = end
        } else if runEnd == start {
            runEnd = end
        } else {
            materialize(input)
            runStart = start
            runEnd = end
        }
    }

    @inline(__always) mutating func append(_ byte: UInt8, from input: [UInt8]) {
        if runStart != runEnd { materialize(input) }
        buffer.append(byte)
        hasBuffered = true
        if byte >= 0x80 { bufferMayBeIllFormed = true }
    }

    /// Appends one byte of the UTF-8 encoding of a scalar (a character reference's value), whose
    /// other bytes the caller appends right after it the same way: the buffer stays well-formed
    /// once the scalar is complete, and nothing reads it in between.
    @inline(__always) mutating func appendEncodedScalarByte(_ byte: UInt8, from input: [UInt8]) {
        if runStart != runEnd { materialize(input) }
        buffer.append(byte)
        hasBuffered = true
    }

    @inline(__always) mutating func append(contentsOf bytes: [UInt8], from input: [UInt8]) {
        if runStart != runEnd { materialize(input) }
        buffer.append(contentsOf: bytes)
        hasBuffered = !buffer.isEmpty
        // The callers append ASCII and U+FFFD; anything else counts as possibly ill-formed.
        if bytes != Tokenizer.replacement && bytes.contains(where: { $0 >= 0x80 }) { bufferMayBeIllFormed = true }
    }

    private mutating func materialize(_ input: [UInt8]) {
        guard runStart != runEnd else { return }
        // Copied from the input's buffer (bounds checked by `checkRun`): an `ArraySlice` of the
        // input retained the array and took the generic append path.
        checkRun(in: input)
        let start = runStart, end = runEnd
        let wellFormed = input.withUnsafeBufferPointer { all in
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: all[start..<end]))
            return ByteAccumulator.isWellFormedRun(start, end, in: all, inputIsValidUTF8: inputIsValidUTF8)
        }
        if !wellFormed { bufferMayBeIllFormed = true }
        hasBuffered = true
        runStart = 0
        runEnd = 0
    }

    /// Traps unless the pending run lies inside `input` (release builds included).
    @inline(__always) private func checkRun(in input: [UInt8]) {
        precondition(0 <= runStart && runStart <= runEnd && runEnd <= input.count, "token run outside the input")
    }

    /// Set by the tokenizer when its input is well-formed UTF-8 (the parser's inputs always are:
    /// decoded bytes, or a `String`'s UTF-8). A run of such an input that starts and ends on
    /// scalar boundaries is well-formed UTF-8 too, so ``makeString(from:)`` copies it without
    /// validating it a second time.
    var inputIsValidUTF8 = false

    /// The pending bytes as a `String` (decoded, with U+FFFD for invalid sequences). Bytes known
    /// to be well-formed (see ``inputIsValidUTF8`` and `bufferMayBeIllFormed`) are copied
    /// without validating them again.
    mutating func makeString(from input: [UInt8]) -> String {
        if !hasBuffered {
            checkRun(in: input)
            let start = runStart, end = runEnd, valid = inputIsValidUTF8
            return input.withUnsafeBufferPointer { all in
                let bytes = UnsafeBufferPointer(rebasing: all[start..<end])
                if ByteAccumulator.isWellFormedRun(start, end, in: all, inputIsValidUTF8: valid) {
                    return ByteAccumulator.stringFromValidUTF8(bytes)
                }
                return String(decoding: bytes, as: UTF8.self)
            }
        }
        materialize(input)
        if !bufferMayBeIllFormed { return buffer.withUnsafeBufferPointer { ByteAccumulator.stringFromValidUTF8($0) } }
        return String(decoding: buffer, as: UTF8.self)
    }

    /// Whether `all[start..<end]` is known to be well-formed UTF-8: `all` is (the tokenizer's
    /// input, when `inputIsValidUTF8`), and the run begins and ends on scalar boundaries.
    @inline(__always) static func isWellFormedRun(_ start: Int, _ end: Int, in all: UnsafeBufferPointer<UInt8>, inputIsValidUTF8: Bool) -> Bool {
        inputIsValidUTF8 && isScalarBoundary(start, in: all) && isScalarBoundary(end, in: all)
    }

    /// Whether a scalar of `all` starts at `index` (or `index` is the end): its byte is not a
    /// continuation byte (`10xxxxxx`).
    @inline(__always) static func isScalarBoundary(_ index: Int, in all: UnsafeBufferPointer<UInt8>) -> Bool {
        index == all.count || all[index] & 0xC0 != 0x80
    }

    /// `bytes`, which must be well-formed UTF-8, as a `String`, without validating them again.
    ///
    /// Trust-model row: inbox (incoming mail) — a `String` holding ill-formed UTF-8 breaks the
    /// standard library's invariants, so only two kinds of bytes come here: a run of a
    /// well-formed input that begins and ends on scalar boundaries (checked by the caller; a
    /// slice of well-formed UTF-8 cut on scalar boundaries is well-formed), and a buffer made
    /// only of such runs, ASCII bytes and whole encoded scalars. The input's own
    /// well-formedness is established by the parser's decoding stage (``EncodingSniffer``), and
    /// debug builds check it again when the tokenizer is made (every test parse).
    @inline(__always) static func stringFromValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            // The string's ASCII flag must be right (an ASCII string flagged as not ASCII compares
            // and hashes through the slow, normalizing path): one word-at-a-time scan, cheaper
            // than validation (which is a scan plus decoding of every non-ASCII sequence).
            let span = unsafe Span(_unsafeElements: bytes)
            return String(copying: unsafe UTF8Span(unchecked: span, isKnownASCII: isASCII(bytes)))
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether every byte is below 0x80: 32 bytes per step, then 8, then the last eight bytes
    /// again (an overlapping load instead of a byte loop for the tail). Every load lies inside
    /// `bytes` (guarded by the count).
    @inline(__always) static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        guard count >= 8 else {
            var any: UInt8 = 0
            for byte in bytes { any |= byte }
            return any < 0x80
        }
        let raw = UnsafeRawPointer(base)
        var any: UInt64 = 0
        var i = 0
        while i &+ 32 <= count {
            any |= raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) | raw.loadUnaligned(fromByteOffset: i &+ 8, as: UInt64.self)
                | raw.loadUnaligned(fromByteOffset: i &+ 16, as: UInt64.self) | raw.loadUnaligned(fromByteOffset: i &+ 24, as: UInt64.self)
            i &+= 32
        }
        while i &+ 8 <= count {
            any |= raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i &+= 8
        }
        any |= raw.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self)
        return any & SWAR.highs == 0
    }

    /// The pending bytes as a `String`, through `cache` when they are at most 15 bytes (the
    /// strings Swift stores inline): a short string seen before in this input is returned
    /// without decoding and validating its bytes again.
    mutating func makeString(from input: [UInt8], cache: inout ShortStringCache) -> String {
        if !hasBuffered {
            let count = runEnd - runStart
            guard count <= ShortStringCache.maxLength else { return makeString(from: input) }
            checkRun(in: input)
            let start = runStart, end = runEnd
            return input.withUnsafeBufferPointer { buffer in
                let bytes = UnsafeBufferPointer(rebasing: buffer[start..<end])
                guard start + 16 <= buffer.count, let base = buffer.baseAddress else { return cache.string(for: bytes) }
                // Sixteen bytes from the run's start lie inside the input: load the key's two
                // words whole and keep the run's bytes (`count` is at most 15).
                let raw = UnsafeRawPointer(base + start)
                var low = UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self))
                var high = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
                if count < 8 {
                    low &= (1 &<< UInt64(8 &* count)) &- 1
                    high = 0
                } else {
                    high &= (1 &<< UInt64(8 &* (count &- 8))) &- 1
                }
                return cache.string(for: bytes, low: low, high: high | UInt64(count) &<< 56)
            }
        }
        guard buffer.count + (runEnd - runStart) <= ShortStringCache.maxLength else { return makeString(from: input) }
        materialize(input)
        return buffer.withUnsafeBufferPointer { cache.string(for: $0) }
    }

    /// The input range of the pending bytes when they are one run of the input known to be
    /// well-formed UTF-8 (the bytes ``makeString(from:)`` copies without validating), else `nil`.
    @inline(__always) func wellFormedInputRun(of input: [UInt8]) -> Range<Int>? {
        guard !hasBuffered else { return nil }
        checkRun(in: input)
        let start = runStart, end = runEnd, valid = inputIsValidUTF8
        return input.withUnsafeBufferPointer { all in
            ByteAccumulator.isWellFormedRun(start, end, in: all, inputIsValidUTF8: valid) ? start..<end : nil
        }
    }

    /// Appends the pending bytes to `out` when some are buffered (not one run of the input: for
    /// that, ``wellFormedInputRun(of:)``) and they are known to be well-formed UTF-8 (the same
    /// knowledge ``makeString(from:)`` uses to skip validation), and returns `true`; otherwise
    /// appends nothing and returns `false` (the caller makes a `String`, which repairs them).
    mutating func copyBufferedIfWellFormed(into out: ByteStore, from input: [UInt8]) -> Bool {
        guard hasBuffered else { return false }
        materialize(input)
        guard !bufferMayBeIllFormed else { return false }
        buffer.withUnsafeBufferPointer { out.append($0) }
        return true
    }

    /// Whether the pending bytes are exactly `bytes` (compared where they are, without making
    /// them contiguous first).
    func holds(exactly bytes: UnsafeBufferPointer<UInt8>, from input: [UInt8]) -> Bool {
        let runCount = runEnd - runStart
        // (`buffer` is empty when nothing is buffered.)
        guard buffer.count + runCount == bytes.count else { return false }
        guard let target = bytes.baseAddress else { return true }
        checkRun(in: input)
        let headMatches = !hasBuffered || buffer.withUnsafeBufferPointer { head in
            guard let base = head.baseAddress else { return true }
            return memcmp(base, target, head.count) == 0
        }
        return headMatches && input.withUnsafeBufferPointer { all in
            guard runCount > 0, let base = all.baseAddress else { return true }
            return memcmp(base + runStart, target + buffer.count, runCount) == 0
        }
    }

    /// The input range holding all the pending bytes, when they are one slice of the input.
    var inputRange: Range<Int>? { hasBuffered ? nil : runStart..<runEnd }

    /// Calls `body` with the pending bytes.
    mutating func withBytes<R>(from input: [UInt8], _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        // Borrowing the array and slicing its buffer takes no reference to the array, unlike an
        // `ArraySlice`. Slicing an unsafe buffer is checked in debug builds only, so the run's
        // bounds are checked here explicitly (the input is hostile mail: a wrong index must trap,
        // never read past the array).
        if !hasBuffered {
            checkRun(in: input)
            return input.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[runStart..<runEnd])) }
        }
        materialize(input)
        return buffer.withUnsafeBufferPointer(body)
    }

    /// Empties the accumulator, keeping the buffer's capacity.
    @inline(__always) mutating func reset() {
        runStart = 0
        runEnd = 0
        assert(hasBuffered == !buffer.isEmpty)
        if hasBuffered { buffer.removeAll(keepingCapacity: true); hasBuffered = false; bufferMayBeIllFormed = false }
    }
}

/// A direct-mapped cache of short token strings (at most 15 UTF-8 bytes) by their bytes. Mail
/// repeats short strings all the time: attribute names (`style`, `class`), short values
/// (`center`, `0`), the whitespace between tags. Making a `String` from bytes validates them
/// (the largest cost of a short string); a hit skips that. Strings of up to 15 bytes are stored
/// inline in the `String` value, so handing out the cached copy takes no reference count either.
///
/// The key is the bytes themselves (packed into two words with the length), so a hit returns
/// exactly what decoding the same bytes returns: the cache changes no output.
///
/// Trust-model row: inbox (incoming mail) — a fixed-size table (128 slots, at most one entry
/// each): a lookup costs one pass over at most 15 bytes and two compares, whatever the input.
struct ShortStringCache {
    static let maxLength = 15
    private static let slots = 128
    /// A cached string with its key.
    private struct Entry {
        let low: UInt64
        let high: UInt64
        let string: String
    }
    /// Per slot: the slot's index in `entries` plus one, 0 while the slot is empty. Made on first
    /// use; the entries live in an array that grows with use, so a parse makes and frees one
    /// small table and only the strings it stored (a table of 128 `String`s had to be filled,
    /// and destroyed slot by slot, on every parse).
    private var slotEntries: [UInt8] = []
    /// The filled slots' entries, in the order the slots were first filled (one per slot: a
    /// refilled slot replaces its own entry).
    private var entries: [Entry] = []

    /// `bytes` decoded as UTF-8 (with U+FFFD for invalid sequences), as `String(decoding:as:)`.
    /// `bytes.count` must be at most ``maxLength``.
    mutating func string(for bytes: UnsafeBufferPointer<UInt8>) -> String {
        let count = bytes.count
        precondition(count <= ShortStringCache.maxLength)
        // Bytes 0-7 in `low`, bytes 8-14 and the length (top byte) in `high`: distinct byte
        // sequences of up to 15 bytes have distinct keys.
        var low: UInt64 = 0, high = UInt64(count) &<< 56
        var i = 0
        while i < count && i < 8 { low |= UInt64(bytes[i]) &<< UInt64(8 &* i); i += 1 }
        while i < count { high |= UInt64(bytes[i]) &<< UInt64(8 &* (i &- 8)); i += 1 }
        return string(for: bytes, low: low, high: high)
    }

    /// ``string(for:)`` with the key already packed (as that function packs it).
    @inline(__always) mutating func string(for bytes: UnsafeBufferPointer<UInt8>, low: UInt64, high: UInt64) -> String {
        var h = (low &* 0x9E37_79B9_7F4A_7C15) ^ (high &* 0xC2B2_AE3D_27D4_EB4F)
        h ^= h &>> 32
        let slot = Int(truncatingIfNeeded: h & UInt64(ShortStringCache.slots - 1))
        if slotEntries.isEmpty { return fill(slot: slot, bytes, low: low, high: high, index: 0) }
        let index = Int(slotEntries[slot])
        if index != 0 {
            let entry = entries[index &- 1]
            if entry.low == low && entry.high == high { return entry.string }
        }
        return fill(slot: slot, bytes, low: low, high: high, index: index)
    }

    /// The miss: decodes `bytes` and stores the string in `slot` (whose entry index plus one is
    /// `index`).
    private mutating func fill(slot: Int, _ bytes: UnsafeBufferPointer<UInt8>, low: UInt64, high: UInt64, index: Int) -> String {
        let string = String(decoding: bytes, as: UTF8.self)
        let entry = Entry(low: low, high: high, string: string)
        if index != 0 {
            entries[index &- 1] = entry
            return string
        }
        if slotEntries.isEmpty {
            slotEntries = ZeroTables.bytes128
            // 24 entries of 32 bytes: under glibc's per-thread cache limit (1 KiB), where a
            // 32-entry buffer was not.
            entries.reserveCapacity(24)
        }
        entries.append(entry)
        // At most 128 entries: a slot gets one when it is first filled.
        slotEntries[slot] = UInt8(truncatingIfNeeded: entries.count)
        return string
    }
}

/// Zero-filled tables for the parser's per-parse lookup tables to start from. A table made from
/// one shares its storage until its first write, which copies it with one specialized
/// allocation and one `memcpy`: `Array(repeating:count:)` allocated through the standard
/// library's unspecialized path (a runtime metadata-cache lookup on every call, about as much as
/// the allocation) and filled element by element.
enum ZeroTables {
    static let bytes128 = [UInt8](repeating: 0, count: 128)
    /// One counter per interned HTML tag (raw values `0..<HTMLTag.allCases.count`).
    static let countsPerTag = [Int32](repeating: 0, count: HTMLTag.allCases.count)
}
