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
struct ASCIINameTable<Value>: @unchecked Sendable {
    private var lows: [UInt64] = []
    private var highs: [UInt64] = []
    private var lengths: [Int] = []
    private var values: [Value] = []
    /// Slot → index into the arrays above, or -1.
    private var slots: [Int32]
    private let shift: UInt64
    /// Every entry by name: long names, and the exact answer for non-ASCII queries.
    private let byName: [String: Value]

    init(_ entries: [(String, Value)]) {
        var bits: UInt64 = 4
        while (1 << bits) < entries.count * 3 { bits += 1 }
        shift = 64 - bits
        slots = Array(repeating: -1, count: 1 << bits)
        var all: [String: Value] = [:]
        for (name, value) in entries {
            precondition(all[name] == nil, "duplicate name \(name)")
            all[name] = value
            guard let (low, high, length) = Self.pack(name, foldCase: false) else { continue }
            var slot = Self.hash(low, high, length, shift)
            while slots[slot] >= 0 { slot = (slot + 1) & (slots.count - 1) }
            slots[slot] = Int32(lows.count)
            lows.append(low); highs.append(high); lengths.append(length); values.append(value)
        }
        byName = all
    }

    /// A table whose values are all `true` (a set).
    init(_ names: some Sequence<String>) where Value == Bool {
        self.init(names.map { ($0, true) })
    }

    @inline(__always)
    private static func hash(_ low: UInt64, _ high: UInt64, _ length: Int, _ shift: UInt64) -> Int {
        let mixed = (low ^ (high &* 0x9E37_79B9_7F4A_7C15) ^ UInt64(truncatingIfNeeded: length)) &* 0xBF58_476D_1CE4_E5B9
        return Int(truncatingIfNeeded: mixed >> shift)
    }

    /// The bytes of an ASCII name of at most 16 bytes (ASCII uppercase lowered with `foldCase`),
    /// or `nil` for a longer or non-ASCII name.
    @inline(__always)
    private static func pack(_ name: String, foldCase: Bool) -> (UInt64, UInt64, Int)? {
        var low: UInt64 = 0
        var high: UInt64 = 0
        var index = 0
        for var byte in name.utf8 {
            guard index < 16, byte < 0x80 else { return nil }
            if foldCase && byte >= 0x41 && byte <= 0x5A { byte |= 0x20 }
            if index < 8 { low |= UInt64(byte) << UInt64(8 * index) } else { high |= UInt64(byte) << UInt64(8 * (index - 8)) }
            index += 1
        }
        return (low, high, index)
    }

    /// The value for `name`. With `lowercasing`, the answer is the one for `name.lowercased()`.
    @inline(__always)
    func value(_ name: String, lowercasing: Bool = false) -> Value? {
        guard let (low, high, length) = Self.pack(name, foldCase: lowercasing) else {
            return byName[lowercasing ? name.lowercased() : name]
        }
        var slot = Self.hash(low, high, length, shift)
        while true {
            let index = Int(slots[slot])
            if index < 0 { return nil }
            if lows[index] == low && highs[index] == high && lengths[index] == length { return values[index] }
            slot = (slot + 1) & (slots.count - 1)
        }
    }

    /// The value for the UTF-8 name `bytes[range]` (lowercased with `lowercasing`), as for the
    /// `String` of those bytes.
    @inline(__always)
    func value(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, lowercasing: Bool = false) -> Value? {
        func byString() -> Value? {
            let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
            return byName[lowercasing ? name.lowercased() : name]
        }
        guard range.count <= 16 else { return byString() }
        var low: UInt64 = 0
        var high: UInt64 = 0
        for (index, k) in range.enumerated() {
            var byte = bytes[k]
            if byte >= 0x80 { return byString() }
            if lowercasing && byte >= 0x41 && byte <= 0x5A { byte |= 0x20 }
            if index < 8 { low |= UInt64(byte) << UInt64(8 * index) } else { high |= UInt64(byte) << UInt64(8 * (index - 8)) }
        }
        var slot = Self.hash(low, high, range.count, shift)
        while true {
            let index = Int(slots[slot])
            if index < 0 { return nil }
            if lows[index] == low && highs[index] == high && lengths[index] == range.count { return values[index] }
            slot = (slot + 1) & (slots.count - 1)
        }
    }

    func contains(_ name: String, lowercasing: Bool = false) -> Bool { value(name, lowercasing: lowercasing) != nil }
}

extension String {
    /// `hasPrefix(prefix)` for an ASCII `prefix`, answered from the UTF-8 bytes whenever that
    /// gives the same answer: the bytes match and the next byte is ASCII (so no combining mark
    /// extends the prefix's last character), or the first differing byte is ASCII. A non-ASCII
    /// byte there leaves the answer to `hasPrefix`, whose `Character` comparison it is.
    ///
    /// Trust-model row: inbox (incoming mail) — the attribute checks (`on*`, `data-rampart-`)
    /// decide exactly as before, without the generic comparison on every attribute.
    @inline(__always)
    func hasASCIIPrefix(_ prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        let p = prefix.utf8Start
        var index = 0
        for byte in utf8 {
            if index == count { return byte < 0x80 ? true : hasPrefix(prefix.description) }
            if byte != p[index] { return byte < 0x80 ? false : hasPrefix(prefix.description) }
            index += 1
        }
        return index == count
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
