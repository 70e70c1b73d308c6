/// A read-only map from short ASCII names (element, attribute and property names) to values,
/// looked up by the packed bytes of the name with a multiplicative hash and linear probing,
/// instead of hashing a `String` (SipHash) or comparing it case by case.
///
/// Only ASCII queries are answered by the table: a name with a non-ASCII byte may be canonically
/// equivalent to an ASCII one (U+212A KELVIN SIGN is `K`), which `Set<String>` treats as equal, so
/// such names are looked up in a `Dictionary` exactly as before. Keys longer than 16 bytes also
/// live in that dictionary.
///
/// Trust-model row: inbox (incoming mail) — the allowlists decide exactly as the `Set<String>`
/// they replace; they only answer faster.
final class ASCIINameTable<Value>: @unchecked Sendable {
    private struct Entry {
        var low: UInt64
        var high: UInt64
        var length: Int
        var value: Value?
    }

    /// Open addressing: `entries.count` is a power of two, at most a third full.
    private let entries: [Entry]
    private let mask: Int
    private let shift: UInt64
    /// Every entry by name: long names, and the exact answer for non-ASCII queries.
    private let byName: [String: Value]
    /// A pre-filter for ``find(_:_:_:)``: for each first byte, bit `n` is set when an entry of
    /// `entries` has `n` bytes and starts with that byte. No bit, no entry can match (an entry
    /// matches only with the same length and the same packed bytes), so most misses are
    /// answered without hashing and probing.
    private let shapes: [UInt32]

    init(_ pairs: [(String, Value)]) {
        var bits: UInt64 = 4
        while (1 << bits) < pairs.count * 3 { bits += 1 }
        shift = 64 - bits
        mask = (1 << Int(bits)) - 1
        var table = Array(repeating: Entry(low: 0, high: 0, length: -1, value: nil), count: 1 << Int(bits))
        var shapes = [UInt32](repeating: 0, count: 256)
        var all: [String: Value] = [:]
        for (name, value) in pairs {
            precondition(all[name] == nil, "duplicate name \(name)")
            all[name] = value
            guard name.utf8.count <= 16, name.utf8.allSatisfy({ $0 < 0x80 }) else { continue }
            let (low, high) = Array(name.utf8).withUnsafeBufferPointer { PackedASCIIName.pack($0) }
            var slot = Self.slot(low, high, name.utf8.count, shift)
            while table[slot].length >= 0 { slot = (slot + 1) & mask }
            table[slot] = Entry(low: low, high: high, length: name.utf8.count, value: value)
            shapes[Int(truncatingIfNeeded: low & 0xFF)] |= 1 << UInt32(name.utf8.count)
        }
        entries = table
        self.shapes = shapes
        byName = all
    }

    /// A table whose values are all `true` (a set).
    convenience init(_ names: some Sequence<String>) where Value == Bool {
        self.init(names.map { ($0, true) })
    }

    @inline(__always)
    private static func slot(_ low: UInt64, _ high: UInt64, _ length: Int, _ shift: UInt64) -> Int {
        let mixed = (low ^ (high &* 0x9E37_79B9_7F4A_7C15) ^ UInt64(truncatingIfNeeded: length)) &* 0xBF58_476D_1CE4_E5B9
        return Int(truncatingIfNeeded: mixed >> shift)
    }

    @inline(__always)
    private func find(_ low: UInt64, _ high: UInt64, _ length: Int) -> Value? {
        // (`length` is at most 16; the first byte is the lowest of `low`.)
        guard shapes[Int(truncatingIfNeeded: low & 0xFF)] & (1 << UInt32(length)) != 0 else { return nil }
        var slot = Self.slot(low, high, length, shift)
        while true {
            let entry = entries[slot]
            if entry.length < 0 { return nil }
            if entry.low == low && entry.high == high && entry.length == length { return entry.value }
            slot = (slot + 1) & mask
        }
    }

    /// The value for `name`. With `lowercasing`, the answer is the one for `name.lowercased()`.
    @inline(__always)
    func value(_ name: String, lowercasing: Bool = false) -> Value? {
        if let packed = PackedASCIIName(name) { return value(lowercasing ? packed.lowercased : packed) }
        return byName[lowercasing ? name.lowercased() : name]
    }

    /// The value for the name `packed` holds.
    @inline(__always)
    func value(_ packed: PackedASCIIName) -> Value? { find(packed.low, packed.high, packed.count) }

    /// The value for the UTF-8 name `bytes[range]` (lowercased with `lowercasing`), as for the
    /// `String` of those bytes.
    @inline(__always)
    func value(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, lowercasing: Bool = false) -> Value? {
        if let packed = PackedASCIIName(UnsafeBufferPointer(rebasing: bytes[range])) {
            return value(lowercasing ? packed.lowercased : packed)
        }
        let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        return byName[lowercasing ? name.lowercased() : name]
    }

    func contains(_ name: String, lowercasing: Bool = false) -> Bool { value(name, lowercasing: lowercasing) != nil }
}

/// A name of at most 16 ASCII bytes, packed as ``ASCIINameTable`` packs its keys: for callers
/// that ask several things of one name (its case, a prefix, a table entry), which then read its
/// bytes once. On ASCII, `lowercased()` is ASCII lowercasing and prefixes compare bytes, so the
/// answers from the packed words are those of the `String` questions.
///
/// Trust-model row: inbox (incoming mail) — the same answers, from one read of the name.
struct PackedASCIIName: Equatable {
    let low: UInt64
    let high: UInt64
    let count: Int

    /// `nil` when `bytes` holds more than 16 bytes or a byte that is not ASCII.
    @inline(__always)
    init?(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count <= 16 else { return nil }
        let (low, high) = Self.pack(bytes)
        guard (low | high) & 0x8080_8080_8080_8080 == 0 else { return nil }
        (self.low, self.high, count) = (low, high, bytes.count)
    }

    /// `nil` when `name` has more than 16 UTF-8 bytes or one that is not ASCII.
    @inline(__always)
    init?(_ name: String) {
        guard name.utf8.count <= 16, let packed = name.utf8.withContiguousStorageIfAvailable({ Self($0) }),
              let packed else { return nil }
        self = packed
    }

    private init(low: UInt64, high: UInt64, count: Int) { (self.low, self.high, self.count) = (low, high, count) }

    /// The name with ASCII `A`–`Z` lowered.
    var lowercased: PackedASCIIName {
        PackedASCIIName(low: ASCIIWords.lowercased(low), high: ASCIIWords.lowercased(high), count: count)
    }

    /// Whether the name starts with `prefix` (ASCII, at most 8 bytes), byte for byte.
    @inline(__always)
    func hasPrefix(_ prefix: StaticString) -> Bool {
        let n = prefix.utf8CodeUnitCount
        guard n <= count else { return false }
        for k in 0..<n where (low >> UInt64(8 * k)) & 0xFF != UInt64(prefix.utf8Start[k]) { return false }
        return true
    }

    /// At most 16 bytes packed little-endian into two words (zero-padded).
    ///
    /// Read with at most four loads, never outside `bytes` (a loop of shifts by byte was ~8
    /// instructions a byte, for every attribute and CSS property name): two words that overlap
    /// in the middle are combined by `|`, which leaves the shared bytes as they are.
    @inline(__always)
    static func pack(_ bytes: UnsafeBufferPointer<UInt8>) -> (UInt64, UInt64) {
        let count = bytes.count
        guard let base = bytes.baseAddress, count > 0 else { return (0, 0) }
        let raw = UnsafeRawPointer(base)
        @inline(__always) func word(_ offset: Int) -> UInt64 { UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
        @inline(__always) func half(_ offset: Int) -> UInt64 {
            UInt64(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        }
        let low: UInt64
        var high: UInt64 = 0
        if count >= 8 {
            low = word(0)
            // Bytes 8..<count: the last word, shifted down past the bytes `low` holds.
            if count > 8 { high = word(count - 8) >> UInt64(8 * (16 - count)) }
        } else if count >= 4 {
            low = half(0) | half(count - 4) << UInt64(8 * (count - 4))
        } else {
            // One to three bytes: the first, the middle and the last (some the same byte).
            let middle = count >> 1
            low = UInt64(base[0]) | UInt64(base[middle]) << UInt64(8 * middle) | UInt64(base[count - 1]) << UInt64(8 * (count - 1))
        }
        return (low, high)
    }
}

extension String {
    /// `hasPrefix(prefix)` for an ASCII `prefix`, answered from the UTF-8 bytes whenever that
    /// gives the same answer: the bytes match and the next byte is ASCII (so no combining mark
    /// extends the prefix's last character), or the first differing byte is ASCII. A non-ASCII
    /// byte there leaves the answer to `hasPrefix`, whose `Character` comparison it is.
    ///
    /// Trust-model row: inbox (incoming mail) — the attribute checks (`on*`, `data-rampart-`)
    /// decide exactly as before, without the generic comparison on every attribute.
    ///
    /// On the contiguous bytes when the string has them (an iterator over `utf8` holds a copy of
    /// the string: a retain and a release per call, on every attribute name).
    @inline(__always)
    func hasASCIIPrefix(_ prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        let p = prefix.utf8Start
        // `nil`: the answer is `hasPrefix`'s (a non-ASCII byte decides).
        let fast: Bool?? = utf8.withContiguousStorageIfAvailable { bytes -> Bool? in
            var index = 0
            for byte in bytes {
                if index == count { return byte < 0x80 ? true : nil }
                if byte != p[index] { return byte < 0x80 ? false : nil }
                index += 1
            }
            return index == count
        }
        if let fast { return fast ?? hasPrefix(prefix.description) }
        var index = 0
        for byte in utf8 {
            if index == count { return byte < 0x80 ? true : hasPrefix(prefix.description) }
            if byte != p[index] { return byte < 0x80 ? false : hasPrefix(prefix.description) }
            index += 1
        }
        return index == count
    }

    /// Whether the string holds an ASCII upper-case letter (`A`–`Z`), on its contiguous bytes
    /// when it has them (the generic `utf8.contains(where:)` walk cost ~190 instructions per
    /// attribute name).
    var containsASCIIUppercase: Bool {
        let fast: Bool? = utf8.withContiguousStorageIfAvailable { bytes in
            for byte in bytes where byte >= 0x41 && byte <= 0x5A { return true }
            return false
        }
        return fast ?? utf8.contains { $0 >= 0x41 && $0 <= 0x5A }
    }

    /// For an ASCII string and an ASCII `prefix`: whether it starts with `prefix`, ignoring
    /// ASCII case (what `lowercased().hasPrefix(prefix.lowercased())` answers for ASCII).
    func asciiCaseInsensitiveHasPrefix(_ prefix: String) -> Bool {
        var mine = utf8.makeIterator()
        for expected in prefix.utf8 {
            guard let byte = mine.next() else { return false }
            let a = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            let b = expected >= 0x41 && expected <= 0x5A ? expected | 0x20 : expected
            if a != b { return false }
        }
        return true
    }
}
