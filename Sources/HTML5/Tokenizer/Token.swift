/// A token produced by the tokenizer.
enum Token {
    /// Boxed (`indirect`): the doctype's three optional strings would make every token, and so
    /// every copy of one through the tree builder, twice as large; doctypes are one per document.
    indirect case doctype(DoctypeToken)
    case startTag(TagToken)
    case endTag(TagToken)
    case comment(String)
    /// A run of characters (may contain U+0000, which the tree builder handles per mode).
    case characters(String)
    case eof
}

struct TagToken {
    /// The interned name (``HTMLTag/unknown`` when `name` is not in the table).
    var tag: HTMLTag
    var name: String
    var attributes: [Attribute]
    var selfClosing: Bool

    init(tag: HTMLTag, name: String, attributes: [Attribute], selfClosing: Bool) {
        self.tag = tag
        self.name = name
        self.attributes = attributes
        self.selfClosing = selfClosing
    }

    /// A token the tree builder synthesizes (`<tbody>`, `<head>`, ...).
    init(_ tag: HTMLTag) {
        self.init(tag: tag, name: tag.name, attributes: [], selfClosing: false)
    }

    /// Renames the token (the tree builder's `image` -> `img`, SVG case adjustment).
    mutating func rename(_ newName: String) {
        name = newName
        tag = HTMLTag(localName: newName)
    }

    func attribute(_ name: String) -> String? {
        for attribute in attributes where attribute.name == name { return attribute.value }
        return nil
    }
}

struct DoctypeToken {
    var name: String?
    var publicId: String?
    var systemId: String?
    var forceQuirks: Bool
}

/// A parse error: the spec's error code and the byte offset in the (preprocessed) input where it
/// was found. Parse errors are reported, never thrown: the spec defines how to recover from each.
///
/// Trust-model row: inbox — a message full of parse errors is a hint of an attempt to confuse a
/// sanitizer; the errors are available to log or score, the tree is still the browser's.
public struct ParseError: Sendable, Hashable, CustomStringConvertible {
    public let code: String
    public let offset: Int
    public var description: String { "\(code) at byte \(offset)" }
}

/// Named character reference lookup, parsed once from the generated table.
enum NamedCharacterReferences {
    /// Name (without `&`, with `;` where the table has it) -> UTF-8 of the replacement.
    static let table: [String: [UInt8]] = {
        var table: [String: [UInt8]] = [:]
        table.reserveCapacity(2300)
        for line in NamedCharacterReferenceTable.source.split(separator: "\n") {
            let parts = line.split(separator: "\t")
            guard parts.count == 2 else { continue }
            var value = ""
            for hex in parts[1].split(separator: " ") {
                if let code = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(code) { value.unicodeScalars.append(scalar) }
            }
            table[String(parts[0])] = Array(value.utf8)
        }
        return table
    }()
    /// Longest name without a semicolon among the legacy entries.
    static let longestLegacy = 6
    static let longest = 32

    /// The table as flat byte arrays with an open-addressing index over the name bytes, so a
    /// reference is looked up without building a `String` key or hashing one with SipHash.
    ///
    /// Trust-model row: inbox (incoming mail) — entity-heavy mail (`&nbsp;` runs) is common and
    /// hostile mail can be nothing else; every index is bounds-checked by `Array`.
    struct Index {
        var names: [UInt8] = []
        var nameStarts: [Int] = [0]
        var values: [UInt8] = []
        var valueStarts: [Int] = [0]
        var slots: [Int32]
        static let mask = 8191

        init(_ table: [String: [UInt8]]) {
            slots = [Int32](repeating: -1, count: Index.mask + 1)
            for (entry, (name, value)) in table.sorted(by: { $0.key < $1.key }).enumerated() {
                let bytes = Array(name.utf8)
                names.append(contentsOf: bytes)
                nameStarts.append(names.count)
                values.append(contentsOf: value)
                valueStarts.append(values.count)
                var slot = bytes.withUnsafeBufferPointer { Index.hash($0) }
                while slots[slot] >= 0 { slot = (slot + 1) & Index.mask }
                slots[slot] = Int32(entry)
            }
        }

        @inline(__always) static func hash(_ name: UnsafeBufferPointer<UInt8>) -> Int {
            var h: UInt32 = 2_166_136_261
            for b in name { h = (h ^ UInt32(b)) &* 16_777_619 }
            return Int(truncatingIfNeeded: h ^ (h >> 13)) & mask
        }

        /// The range in ``values`` of the replacement for `name` (with its `;` if it has one).
        func lookup(_ name: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
            var slot = Index.hash(name)
            while true {
                let entry = Int(slots[slot])
                if entry < 0 { return nil }
                let start = nameStarts[entry], end = nameStarts[entry + 1]
                if end - start == name.count {
                    var i = 0
                    while i < name.count, names[start + i] == name[i] { i += 1 }
                    if i == name.count { return valueStarts[entry]..<valueStarts[entry + 1] }
                }
                slot = (slot + 1) & Index.mask
            }
        }
    }

    static let index = Index(table)
}
