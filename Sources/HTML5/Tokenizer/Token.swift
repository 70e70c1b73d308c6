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
    /// A run of characters as bytes (well-formed UTF-8) instead of a `String`: `range` of the
    /// tokenizer's input when `inInput` (a run copied from the input unchanged), else of
    /// ``Tokenizer/textBytes``. Only when the tree builder asked for them
    /// (``Tokenizer/textAsBytes``, a sink that stores text as bytes); ``Tokenizer/textBytes``
    /// holds them until the next call of ``Tokenizer/nextToken()`` finds no token queued. The
    /// tree builder turns the token into ``characters(_:)`` wherever it does not take the bytes
    /// itself.
    case characterBytes(Range<Int>, inInput: Bool)
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
        self.init(tag: tag, name: tag.internedName, attributes: [], selfClosing: false)
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
    /// Longest name without a semicolon among the legacy entries.
    static let longestLegacy = 6
    static let longest = 32

    /// The table as flat byte arrays with an open-addressing index over the name bytes, so a
    /// reference is looked up without building a `String` key or hashing one with SipHash. Built
    /// straight from the generated source text on first use (one pass over its bytes).
    ///
    /// Trust-model row: inbox (incoming mail) — entity-heavy mail (`&nbsp;` runs) is common and
    /// hostile mail can be nothing else; every index is bounds-checked by `Array`.
    struct Index {
        var names: [UInt8] = []
        var nameStarts: [Int] = [0]
        var values: [UInt8] = []
        var valueStarts: [Int] = [0]
        var slots: [Int32]
        private(set) var count = 0
        static let mask = 8191

        /// Parses `source`: one entry per line, the name (with its `;` if it has one), a tab, and
        /// the replacement's code points in hex separated by spaces.
        init(source: String) {
            slots = [Int32](repeating: -1, count: Index.mask + 1)
            let bytes = Array(source.utf8)
            var i = 0
            while i < bytes.count {
                let nameStart = i
                while i < bytes.count, bytes[i] != 0x09, bytes[i] != 0x0A { i += 1 }
                let nameEnd = i
                guard i < bytes.count, bytes[i] == 0x09, nameEnd > nameStart else {
                    while i < bytes.count, bytes[i] != 0x0A { i += 1 }
                    i += 1
                    continue
                }
                i += 1
                let valueStart = values.count
                while i < bytes.count, bytes[i] != 0x0A {
                    var code: UInt32 = 0
                    var digits = 0
                    while i < bytes.count, let digit = Index.hexDigit(bytes[i]), digits < 8 {
                        code = code << 4 | digit
                        digits += 1
                        i += 1
                    }
                    if digits > 0, let scalar = Unicode.Scalar(code) { UTF8.encode(scalar) { values.append($0) } }
                    if digits == 0 { i += 1 }  // the separating space (or anything unexpected)
                }
                i += 1
                guard values.count > valueStart else { values.removeSubrange(valueStart...); continue }
                names.append(contentsOf: bytes[nameStart..<nameEnd])
                nameStarts.append(names.count)
                valueStarts.append(values.count)
                var slot = bytes[nameStart..<nameEnd].withUnsafeBufferPointer { Index.hash($0) }
                while slots[slot] >= 0 { slot = (slot + 1) & Index.mask }
                slots[slot] = Int32(count)
                count += 1
            }
        }

        private static func hexDigit(_ b: UInt8) -> UInt32? {
            switch b {
            case 0x30...0x39: UInt32(b - 0x30)
            case 0x41...0x46: UInt32(b - 0x41 + 10)
            case 0x61...0x66: UInt32(b - 0x61 + 10)
            default: nil
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

    static let index = Index(source: NamedCharacterReferenceTable.source)
}
