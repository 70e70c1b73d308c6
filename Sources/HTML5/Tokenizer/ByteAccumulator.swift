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
/// use goes through a bounds-checked `ArraySlice` of the input.
struct ByteAccumulator {
    private var buffer: [UInt8] = []
    private var runStart = 0
    private var runEnd = 0

    var isEmpty: Bool { runStart == runEnd && buffer.isEmpty }

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
    }

    @inline(__always) mutating func append(contentsOf bytes: [UInt8], from input: [UInt8]) {
        if runStart != runEnd { materialize(input) }
        buffer.append(contentsOf: bytes)
    }

    private mutating func materialize(_ input: [UInt8]) {
        guard runStart != runEnd else { return }
        buffer.append(contentsOf: input[runStart..<runEnd])
        runStart = 0
        runEnd = 0
    }

    /// Traps unless the pending run lies inside `input` (release builds included).
    @inline(__always) private func checkRun(in input: [UInt8]) {
        precondition(0 <= runStart && runStart <= runEnd && runEnd <= input.count, "token run outside the input")
    }

    /// The pending bytes as a `String` (decoded, with U+FFFD for invalid sequences).
    mutating func makeString(from input: [UInt8]) -> String {
        if buffer.isEmpty {
            checkRun(in: input)
            return input.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[runStart..<runEnd]), as: UTF8.self) }
        }
        materialize(input)
        return String(decoding: buffer, as: UTF8.self)
    }

    /// The input range holding all the pending bytes, when they are one slice of the input.
    var inputRange: Range<Int>? { buffer.isEmpty ? runStart..<runEnd : nil }

    /// Calls `body` with the pending bytes.
    mutating func withBytes<R>(from input: [UInt8], _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        // Borrowing the array and slicing its buffer takes no reference to the array, unlike an
        // `ArraySlice`. Slicing an unsafe buffer is checked in debug builds only, so the run's
        // bounds are checked here explicitly (the input is hostile mail: a wrong index must trap,
        // never read past the array).
        if buffer.isEmpty {
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
        if !buffer.isEmpty { buffer.removeAll(keepingCapacity: true) }
    }
}
