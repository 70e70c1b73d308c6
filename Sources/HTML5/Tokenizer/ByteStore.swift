// A growable run of bytes with one owner: the tokenizer's character runs handed out as bytes,
// and the arena tree's text pool.

/// A growable byte buffer: an append is a capacity check and a copy, and emptying it keeps its
/// memory. (`Array.append(contentsOf:)` of an unsafe buffer, and `removeAll(keepingCapacity:)`,
/// cost several times the copy for the short runs of mail text: uniqueness checks and a generic
/// path per call, measured with callgrind.)
///
/// Trust-model row: inbox (incoming mail) — holds text of hostile messages. Every read is
/// checked against ``count`` (a `precondition`, release builds too); growth checks for overflow.
/// A class so that the owner (a tokenizer, a tree) and its readers share one buffer without a
/// copy; it is used by one thread at a time, like its owners, so its fields are read without
/// dynamic exclusivity checks (no access to them runs other code while it lasts).
final class ByteStore {
    @exclusivity(unchecked) private var base: UnsafeMutablePointer<UInt8>? = nil
    @exclusivity(unchecked) private(set) var count = 0
    @exclusivity(unchecked) private var capacity = 0

    init() {}

    deinit { base?.deallocate() }

    /// Appends a copy of `bytes`.
    @inline(__always) func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        if bytes.count > capacity &- count { grow(toAtLeast: count + bytes.count) }
        guard let base else { preconditionFailure("ByteStore: no storage after growing") }
        (base + count).update(from: source, count: bytes.count)
        count &+= bytes.count
    }

    /// Forgets the bytes, keeping the memory.
    @inline(__always) func removeAll() { count = 0 }

    /// Calls `body` with the bytes `range` (which must lie within ``count``).
    @inline(__always) func withBytes<R>(_ range: Range<Int>, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "ByteStore: bytes outside the buffer")
        guard let base else { return body(UnsafeBufferPointer(start: nil, count: 0)) }
        return body(UnsafeBufferPointer(start: base + range.lowerBound, count: range.count))
    }

    /// Makes room for at least `bytes` bytes in all, at once (a large document's text pool: no
    /// copies as it grows; the pages never written are never touched).
    func reserve(_ bytes: Int) {
        if bytes > capacity { grow(toAtLeast: bytes) }
    }

    @inline(never) private func grow(toAtLeast needed: Int) {
        precondition(needed > 0 && needed <= Int.max / 2, "ByteStore: too large")
        var newCapacity = max(capacity &* 2, 256)
        while newCapacity < needed { newCapacity &*= 2 }
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        if let base {
            newBase.initialize(from: base, count: count)
            base.deallocate()
        }
        base = newBase
        capacity = newCapacity
    }
}
