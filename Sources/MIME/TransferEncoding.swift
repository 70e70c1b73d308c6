/// Content-Transfer-Encoding decoders and encoders (RFC 2045).
///
/// The decoders are lenient in the same way as CPython's `email` package (`binascii`), so that
/// the differential test against Python agrees on damaged input: base64 ignores characters
/// outside the alphabet and repairs missing padding; quoted-printable keeps bad escapes literally.
public enum TransferEncoding {
    static let b64Alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    static let b64Table: [UInt8] = {
        var t = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in b64Alphabet.enumerated() { t[Int(c)] = UInt8(i) }
        return t
    }()

    /// The result of a lenient decode: the bytes and whether the input was damaged.
    public struct Decoded: Sendable, Equatable {
        /// The decoded bytes.
        public var bytes: [UInt8]
        /// `nil` when the input was clean, else what was repaired or why it was kept raw.
        public var problem: String?
    }

    /// Non-strict base64 like CPython's `binascii.a2b_base64`: skips non-alphabet bytes, stops
    /// after a complete padding sequence; `nil` when the data characters leave a partial quad.
    static func a2bBase64(_ input: ArraySlice<UInt8>) -> [UInt8]? {
        var out = [UInt8](); out.reserveCapacity(input.count / 4 * 3 + 3)
        var quad = 0, left: UInt32 = 0, pads = 0
        for c in input {
            if c == UInt8(ascii: "=") {
                if quad >= 2 { pads += 1; if quad + pads >= 4 { return out } }
                continue
            }
            let v = b64Table[Int(c)]
            if v == 0xFF { continue }
            pads = 0
            switch quad {
            case 0: quad = 1; left = UInt32(v)
            case 1: quad = 2; out.append(UInt8((left << 2 | UInt32(v) >> 4) & 0xFF)); left = UInt32(v) & 0x0F
            case 2: quad = 3; out.append(UInt8((left << 4 | UInt32(v) >> 2) & 0xFF)); left = UInt32(v) & 0x03
            default: quad = 0; out.append(UInt8((left << 6 | UInt32(v)) & 0xFF)); left = 0
            }
        }
        return quad == 0 ? out : nil
    }

    /// Decodes base64 the way CPython's `email` does (`_encoded_words.decode_b` on the data with
    /// line breaks removed): strict with repaired padding first, then lenient, then with extra
    /// padding; if nothing works the (line-joined) input is returned unchanged.
    public static func decodeBase64(_ data: ArraySlice<UInt8>) -> Decoded {
        var joined = [UInt8](); joined.reserveCapacity(data.count)
        for c in data where c != 0x0A && c != 0x0D { joined.append(c) }
        let padErr = joined.count % 4
        // 1. validate=True with padding added: only alphabet characters, then at most two '='.
        var clean = true, seenPad = 0
        for c in joined {
            if c == UInt8(ascii: "=") { seenPad += 1; continue }
            if seenPad > 0 || b64Table[Int(c)] == 0xFF { clean = false; break }
        }
        let totalPad = seenPad + (padErr == 0 ? 0 : 4 - padErr)
        if clean && totalPad <= 2 {
            var padded = joined
            if padErr != 0 { padded += [UInt8](repeating: UInt8(ascii: "="), count: 4 - padErr) }
            if let d = a2bBase64(padded[...]) {
                return Decoded(bytes: d, problem: padErr != 0 ? "base64 padding was missing" : nil)
            }
        }
        if let d = a2bBase64(joined[...]) {
            return Decoded(bytes: d, problem: "base64 contains characters outside the alphabet")
        }
        if let d = a2bBase64((joined + [UInt8(ascii: "="), UInt8(ascii: "=")])[...]) {
            return Decoded(bytes: d, problem: "base64 contains invalid characters and lacks padding")
        }
        return Decoded(bytes: joined, problem: "base64 length is invalid (one character more than a multiple of 4); kept undecoded")
    }

    @inline(__always) static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }

    /// Decodes quoted-printable like CPython's `binascii.a2b_qp`: `=` + line break is a soft
    /// break, `=XX` a byte, anything else after `=` is kept literally. With `header: true`,
    /// `_` is a space (RFC 2047 "Q").
    public static func decodeQuotedPrintable(_ data: ArraySlice<UInt8>, header: Bool = false) -> Decoded {
        var out = [UInt8](); out.reserveCapacity(data.count)
        var i = data.startIndex
        let end = data.endIndex
        var bad = false
        while i < end {
            let c = data[i]
            if c == UInt8(ascii: "=") {
                i += 1
                if i >= end { break }
                let n = data[i]
                if n == 0x0A || n == 0x0D {
                    if n != 0x0A { while i < end && data[i] != 0x0A { i += 1 } }
                    if i < end { i += 1 }
                } else if n == UInt8(ascii: "=") {
                    out.append(UInt8(ascii: "=")); i += 1; bad = true
                } else if i + 1 < end, let h = hexValue(n), let l = hexValue(data[i + 1]) {
                    out.append(h << 4 | l); i += 2
                } else {
                    out.append(UInt8(ascii: "=")); bad = true
                }
            } else if header && c == UInt8(ascii: "_") {
                out.append(0x20); i += 1
            } else {
                out.append(c); i += 1
            }
        }
        return Decoded(bytes: out, problem: bad ? "quoted-printable contains invalid escapes (kept literally)" : nil)
    }

    /// Encodes base64 with lines of 76 characters separated by `lineBreak`.
    public static func encodeBase64(_ data: [UInt8], lineBreak: [UInt8] = [0x0D, 0x0A], lineLength: Int = 76) -> [UInt8] {
        var out = [UInt8](); out.reserveCapacity(data.count * 4 / 3 + data.count / 50 + 8)
        var col = 0
        var i = 0
        func put(_ c: UInt8) {
            if lineLength > 0 && col == lineLength { out += lineBreak; col = 0 }
            out.append(c); col += 1
        }
        while i + 3 <= data.count {
            let n = UInt32(data[i]) << 16 | UInt32(data[i + 1]) << 8 | UInt32(data[i + 2])
            put(b64Alphabet[Int(n >> 18 & 63)]); put(b64Alphabet[Int(n >> 12 & 63)])
            put(b64Alphabet[Int(n >> 6 & 63)]); put(b64Alphabet[Int(n & 63)])
            i += 3
        }
        let rest = data.count - i
        if rest > 0 {
            let n = UInt32(data[i]) << 16 | (rest == 2 ? UInt32(data[i + 1]) << 8 : 0)
            put(b64Alphabet[Int(n >> 18 & 63)]); put(b64Alphabet[Int(n >> 12 & 63)])
            put(rest == 2 ? b64Alphabet[Int(n >> 6 & 63)] : UInt8(ascii: "=")); put(UInt8(ascii: "="))
        }
        return out
    }

    static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Encodes quoted-printable (RFC 2045 §6.7): lines of at most 76 characters with soft breaks,
    /// `=`, control bytes, non-ASCII bytes and trailing whitespace escaped; line breaks in the
    /// input (LF or CRLF) become `lineBreak`.
    public static func encodeQuotedPrintable(_ data: [UInt8], lineBreak: [UInt8] = [0x0D, 0x0A]) -> [UInt8] {
        var out = [UInt8](); out.reserveCapacity(data.count + data.count / 8)
        var line = [UInt8]()
        func flushSoft() { out += line; out.append(UInt8(ascii: "=")); out += lineBreak; line.removeAll(keepingCapacity: true) }
        func emit(_ chunk: [UInt8]) {
            if line.count + chunk.count > 75 { flushSoft() }
            line += chunk
        }
        var i = 0
        while i < data.count {
            let c = data[i]
            if c == 0x0D && i + 1 < data.count && data[i + 1] == 0x0A { i += 1; continue }
            if c == 0x0A {
                // Escape trailing whitespace of the line.
                if let last = line.last, last == 0x20 || last == 0x09 {
                    line.removeLast()
                    let esc = [UInt8(ascii: "="), hexDigits[Int(last >> 4)], hexDigits[Int(last & 15)]]
                    if line.count + esc.count > 75 { flushSoft() }
                    line += esc
                }
                out += line; out += lineBreak; line.removeAll(keepingCapacity: true)
                i += 1; continue
            }
            let literal = (c >= 33 && c <= 126 && c != UInt8(ascii: "=")) || c == 0x20 || c == 0x09
            // A line starting with "." or "From " is escaped for SMTP/mbox safety.
            if literal && !(line.isEmpty && (c == UInt8(ascii: ".") || (c == UInt8(ascii: "F") && data[i...].starts(with: Array("From ".utf8))))) {
                emit([c])
            } else {
                emit([UInt8(ascii: "="), hexDigits[Int(c >> 4)], hexDigits[Int(c & 15)]])
            }
            i += 1
        }
        if let last = line.last, last == 0x20 || last == 0x09 {
            line.removeLast()
            let esc = [UInt8(ascii: "="), hexDigits[Int(last >> 4)], hexDigits[Int(last & 15)]]
            if line.count + esc.count > 75 { flushSoft() }
            line += esc
        }
        out += line
        return out
    }
}
