// The tokenizer's character references: named (with the five common ones read as one word),
// decimal and hexadecimal, into the text or the attribute value.

extension Tokenizer {
    // MARK: Character references (§13.2.5.72-80), as one routine

    /// Called with `pos` just after `&`. Appends the result to the text buffer or, when
    /// `inAttribute`, to the attribute value.
    mutating func consumeCharacterReference(inAttribute: Bool) {
        @inline(__always) func put(_ byte: UInt8) {
            if inAttribute { attrValue.append(byte, from: input) } else { appendText(byte) }
        }
        @inline(__always) func put(_ bytes: ArraySlice<UInt8>) {
            for byte in bytes { put(byte) }
        }
        /// The replacement for the name `input[range]`, if it is one (read in place: no
        /// `ArraySlice` of the input and no copy of the table, each of which costs retains).
        @inline(__always) func lookup(_ range: Range<Int>) -> Range<Int>? {
            input.withUnsafeBufferPointer { buffer in
                precondition(range.lowerBound >= 0 && range.upperBound <= buffer.count)
                return NamedCharacterReferences.index.lookup(UnsafeBufferPointer(rebasing: buffer[range]))
            }
        }
        // A reference's value goes in whole scalars (the table's values are encoded scalars):
        // the pending bytes stay well-formed UTF-8 (``ByteAccumulator/appendEncodedScalarByte``).
        @inline(__always) func putEncoded(_ byte: UInt8) {
            if inAttribute { attrValue.appendEncodedScalarByte(byte, from: input) } else { text.appendEncodedScalarByte(byte, from: input) }
        }
        @inline(__always) func putValue(_ value: Range<Int>) {
            NamedCharacterReferences.index.values.withUnsafeBufferPointer { values in
                precondition(value.lowerBound >= 0 && value.upperBound <= values.count)
                for i in value { putEncoded(values[i]) }
            }
        }
        // The five references mail is full of, recognized from one word of the input: each is a
        // name with its semicolon, which the general path below would find in the table and
        // replace the same way (a name ending in `;` is never subject to the attribute rule).
        if pos + 8 <= inputCount {
            let word = input.withUnsafeBufferPointer { buffer in
                precondition(pos >= 0 && pos + 8 <= buffer.count, "tokenizer read out of bounds")
                return UInt64(littleEndian: UnsafeRawPointer(buffer.baseAddress! + pos).loadUnaligned(as: UInt64.self))
            }
            switch word & 0xFF_FFFF_FFFF {
            case Tokenizer.nbspWord: pos += 5; putEncoded(0xC2); putEncoded(0xA0); return
            case Tokenizer.quotWord: pos += 5; put(0x22); return
            default: break
            }
            switch word & 0xFFFF_FFFF {
            case Tokenizer.ampWord: pos += 4; put(0x26); return
            default: break
            }
            switch word & 0xFF_FFFF {
            case Tokenizer.ltWord: pos += 3; put(0x3C); return
            case Tokenizer.gtWord: pos += 3; put(0x3E); return
            default: break
            }
        }
        let c = peek()
        if Tokenizer.isAlnum(c) {
            var end = pos
            while end < inputCount, end - pos < NamedCharacterReferences.longest, Tokenizer.isAlnum(Int(byte(end))) { end += 1 }
            if end < inputCount, byte(end) == 0x3B, let value = lookup(pos..<(end + 1)) {
                pos = end + 1
                putValue(value)
                return
            }
            var length = min(end - pos, NamedCharacterReferences.longestLegacy)
            while length >= 2 {
                if let value = lookup(pos..<(pos + length)) {
                    let next = pos + length < inputCount ? Int(byte(pos + length)) : Tokenizer.eof
                    if inAttribute && (next == 0x3D || Tokenizer.isAlnum(next)) {
                        put(0x26)  // not a reference: the name is consumed as ordinary characters
                        return
                    }
                    error("missing-semicolon-after-character-reference")
                    pos += length
                    putValue(value)
                    return
                }
                length -= 1
            }
            // No match: `&` as text; the alphanumerics are consumed normally by the caller.
            if end < inputCount, byte(end) == 0x3B, end > pos { error("unknown-named-character-reference") }
            put(0x26)
            return
        }
        if c == 0x23 {  // '#'
            let start = pos
            pos += 1
            var hex = false
            if pos < inputCount, byte(pos) | 0x20 == 0x78 { hex = true; pos += 1 }
            var value: UInt32 = 0
            var digits = 0
            while pos < inputCount {
                let d = Int(byte(pos))
                var digit: Int
                if d >= 0x30 && d <= 0x39 { digit = d - 0x30 }
                else if hex && (d | 0x20) >= 0x61 && (d | 0x20) <= 0x66 { digit = (d | 0x20) - 0x61 + 10 }
                else { break }
                value = value > 0x10FFFF ? value : value * (hex ? 16 : 10) + UInt32(digit)
                digits += 1
                pos += 1
            }
            if digits == 0 {
                error("absence-of-digits-in-numeric-character-reference")
                put(0x26); put(input[start..<pos])
                return
            }
            if pos < inputCount, byte(pos) == 0x3B { pos += 1 } else { error("missing-semicolon-after-character-reference") }
            var code = value
            if code == 0 { error("null-character-reference"); code = 0xFFFD }
            else if code > 0x10FFFF { error("character-reference-outside-unicode-range"); code = 0xFFFD }
            else if code >= 0xD800 && code <= 0xDFFF { error("surrogate-character-reference"); code = 0xFFFD }
            else if code >= 0x80 && code <= 0x9F, let mapped = Tokenizer.c1Replacements[Int(code - 0x80)] {
                error("control-character-reference"); code = mapped
            }
            // `code` is a scalar value here: surrogates and values above U+10FFFF became U+FFFD.
            UTF8.encode(Unicode.Scalar(code) ?? "\u{FFFD}") { putEncoded($0) }
            return
        }
        put(0x26)
    }

    private static let c1Replacements: [UInt32?] = [
        0x20AC, nil, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, nil, 0x017D, nil,
        nil, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, nil, 0x017E, 0x0178,
    ]
}
