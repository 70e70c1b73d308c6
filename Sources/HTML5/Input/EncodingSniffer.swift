import Foundation

/// Determines the character encoding of an HTML byte stream and decodes it to UTF-8
/// (WHATWG "encoding sniffing algorithm", §13.2.3.2): BOM, then the transport-layer charset (the
/// MIME part's `charset=`), then the `<meta>` prescan of the first 1024 bytes, then UTF-8 when the
/// bytes are valid UTF-8, else windows-1252.
///
/// Trust-model row: inbox — a wrong guess can turn bytes into markup (e.g. UTF-7/ISO-2022 tricks);
/// UTF-7 is never honoured, as the spec requires.
public enum EncodingSniffer {
    /// Returns the input as UTF-8 bytes and the WHATWG name of the encoding used.
    public static func decode(_ bytes: [UInt8], transportCharset: String? = nil) -> ([UInt8], String) {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return (validUTF8(Array(bytes.dropFirst(3))), "utf-8") }
        if bytes.starts(with: [0xFE, 0xFF]) { return (decodeFoundation(Array(bytes.dropFirst(2)), .utf16BigEndian), "utf-16be") }
        if bytes.starts(with: [0xFF, 0xFE]) { return (decodeFoundation(Array(bytes.dropFirst(2)), .utf16LittleEndian), "utf-16le") }
        if let label = transportCharset, let encoding = canonical(label) {
            return (decode(bytes, as: encoding), encoding)
        }
        if var encoding = prescan(bytes) {
            if encoding == "utf-16le" || encoding == "utf-16be" { encoding = "utf-8" }  // spec: meta can't pick UTF-16
            if encoding == "x-user-defined" { encoding = "windows-1252" }
            return (decode(bytes, as: encoding), encoding)
        }
        if isValidUTF8(bytes) { return (bytes, "utf-8") }
        return (decode(bytes, as: "windows-1252"), "windows-1252")
    }

    /// `true` if `bytes` is well-formed UTF-8 (Unicode Table 3-7: no overlong forms, no
    /// surrogates, nothing above U+10FFFF, no truncated sequence) — the same verdict as
    /// `String(validating:as:)`, without building a string of the whole message.
    ///
    /// Trust-model row: inbox (incoming mail) — decides between UTF-8 and the windows-1252
    /// fallback for every message, so it runs over every byte: ASCII is checked eight bytes at a
    /// time. Every read is inside the buffer: the word loads are guarded by `i + 8 <= count`,
    /// each continuation byte by `i + k < count`.
    package static func isValidUTF8(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buffer -> Bool in
            let count = buffer.count
            guard count > 0, let base = buffer.baseAddress else { return true }
            let raw = UnsafeRawPointer(base)
            @inline(__always) func isContinuation(_ b: UInt8) -> Bool { b & 0xC0 == 0x80 }
            var i = 0
            let high: UInt64 = 0x8080_8080_8080_8080
            while i < count {
                // 32 bytes per test while they are ASCII (guarded by `i + 32 <= count`), then 8.
                while i + 32 <= count {
                    let any = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                        | raw.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self)
                        | raw.loadUnaligned(fromByteOffset: i + 16, as: UInt64.self)
                        | raw.loadUnaligned(fromByteOffset: i + 24, as: UInt64.self)
                    if any & high != 0 { break }
                    i += 32
                }
                // Then eight at a time; a word holding a non-ASCII byte skips straight to it (its
                // lowest byte with the high bit set: the word is loaded little-endian), so the
                // ASCII bytes before it are not stepped through one by one. Mail text with a
                // non-ASCII letter every few words is the common case.
                while i + 8 <= count {
                    let nonASCII = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) & high
                    if nonASCII != 0 { i += nonASCII.trailingZeroBitCount &>> 3; break }
                    i += 8
                }
                guard i < count else { return true }
                let b0 = buffer[i]
                if b0 < 0x80 { i += 1; continue }
                if b0 < 0xC2 { return false }  // continuation byte or overlong 2-byte lead
                if b0 < 0xE0 {
                    guard i + 1 < count, isContinuation(buffer[i + 1]) else { return false }
                    i += 2
                } else if b0 < 0xF0 {
                    guard i + 2 < count else { return false }
                    let b1 = buffer[i + 1]
                    switch b0 {
                    case 0xE0: guard b1 >= 0xA0 && b1 <= 0xBF else { return false }  // overlong
                    case 0xED: guard b1 >= 0x80 && b1 <= 0x9F else { return false }  // surrogates
                    default: guard isContinuation(b1) else { return false }
                    }
                    guard isContinuation(buffer[i + 2]) else { return false }
                    i += 3
                } else if b0 < 0xF5 {
                    guard i + 3 < count else { return false }
                    let b1 = buffer[i + 1]
                    switch b0 {
                    case 0xF0: guard b1 >= 0x90 && b1 <= 0xBF else { return false }  // overlong
                    case 0xF4: guard b1 >= 0x80 && b1 <= 0x8F else { return false }  // above U+10FFFF
                    default: guard isContinuation(b1) else { return false }
                    }
                    guard isContinuation(buffer[i + 2]), isContinuation(buffer[i + 3]) else { return false }
                    i += 4
                } else {
                    return false
                }
            }
            return true
        }
    }

    static func validUTF8(_ bytes: [UInt8]) -> [UInt8] {
        isValidUTF8(bytes) ? bytes : Array(String(decoding: bytes, as: UTF8.self).utf8)
    }

    /// Maps a charset label to the encoding name this parser decodes (WHATWG label table, the
    /// common part).
    public static func canonical(_ label: String) -> String? {
        let l = label.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        switch l {
        case "utf-8", "utf8", "unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "x-unicode20utf8": return "utf-8"
        case "us-ascii", "ascii", "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "l1", "windows-1252", "cp1252",
             "x-cp1252", "ansi_x3.4-1968", "cp819", "ibm819", "iso-ir-100", "csisolatin1", "iso88591", "iso_8859-1:1987":
            return "windows-1252"
        case "utf-16", "utf-16le", "unicode", "ucs-2", "csunicode", "iso-10646-ucs-2", "unicodefeff": return "utf-16le"
        case "utf-16be", "unicodefffe": return "utf-16be"
        case "x-user-defined": return "x-user-defined"
        case "shift_jis", "sjis", "ms_kanji", "windows-31j", "x-sjis", "csshiftjis", "ms932": return "shift_jis"
        case "euc-jp", "x-euc-jp", "cseucpkdfmtjapanese": return "euc-jp"
        case "iso-2022-jp", "csiso2022jp": return "iso-2022-jp"
        case "gbk", "gb2312", "x-gbk", "chinese", "csgb2312", "gb18030": return "gb18030"
        case "big5", "big5-hkscs", "cn-big5", "x-x-big5", "csbig5": return "big5"
        case "euc-kr", "ks_c_5601-1987", "korean", "windows-949", "cseuckr": return "euc-kr"
        case "koi8-r", "koi8", "cskoi8r", "koi", "koi8_r": return "koi8-r"
        case "koi8-u", "koi8-ru": return "koi8-u"
        case "ibm866", "866", "cp866", "csibm866": return "ibm866"
        case "macintosh", "mac", "x-mac-roman", "csmacintosh": return "macintosh"
        case "windows-874", "tis-620", "iso-8859-11", "dos-874": return "windows-874"
        case "iso-8859-8-i", "csiso88598i", "logical": return "iso-8859-8-i"
        default: break
        }
        if (l.hasPrefix("windows-125") || l.hasPrefix("cp125") || l.hasPrefix("x-cp125")), let digit = l.last, digit.isNumber, l.count <= 12 {
            return digit == "2" ? "windows-1252" : "windows-125\(digit)"
        }
        for prefix in ["iso-8859-", "iso8859-", "iso_8859-", "latin"] where l.hasPrefix(prefix) {
            let rest = l.dropFirst(prefix.count).prefix { $0.isNumber }
            if let n = Int(rest) {
                if prefix == "latin" {
                    let map = [2: 2, 3: 3, 4: 4, 5: 9, 6: 10]
                    if let m = map[n] { return "iso-8859-\(m)" }
                    return nil
                }
                if n == 1 || n == 9 { return n == 1 ? "windows-1252" : "windows-1254" }
                if (2...16).contains(n) && n != 12 { return "iso-8859-\(n)" }
            }
        }
        return nil
    }

    static func decode(_ bytes: [UInt8], as encoding: String) -> [UInt8] {
        switch encoding {
        case "utf-8": return validUTF8(bytes)
        case "windows-1252": return decodeWindows1252(bytes)
        case "utf-16le": return decodeFoundation(bytes, .utf16LittleEndian)
        case "utf-16be": return decodeFoundation(bytes, .utf16BigEndian)
        default:
            if let table = SingleByteEncodings.tables[encoding] { return decodeSingleByte(bytes, table) }
            if let foundation = foundationEncoding(encoding) { return decodeFoundation(bytes, foundation) }
            return decodeWindows1252(bytes)
        }
    }

    /// Decodes a single-byte encoding through its generated 0x80...0xFF table.
    static func decodeSingleByte(_ bytes: [UInt8], _ table: [UInt16]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + bytes.count / 4)
        for b in bytes {
            if b < 0x80 { out.append(b); continue }
            let code = UInt32(table[Int(b - 0x80)])
            for u in String(Character(Unicode.Scalar(code)!)).utf8 { out.append(u) }
        }
        return out
    }

    static func foundationEncoding(_ name: String) -> String.Encoding? {
        switch name {
        case "iso-8859-2": return .isoLatin2
        case "windows-1250": return .windowsCP1250
        case "windows-1251": return .windowsCP1251
        case "windows-1253": return .windowsCP1253
        case "windows-1254": return .windowsCP1254
        case "shift_jis": return .shiftJIS
        case "euc-jp": return .japaneseEUC
        case "iso-2022-jp": return .iso2022JP
        default:
            #if canImport(Darwin)
            let cf = CFStringConvertIANACharSetNameToEncoding(name as CFString)
            if cf != kCFStringEncodingInvalidId { return String.Encoding(rawValue: CFStringConvertEncodingToNSStringEncoding(cf)) }
            #endif
            return nil
        }
    }

    static func decodeFoundation(_ bytes: [UInt8], _ encoding: String.Encoding) -> [UInt8] {
        if let string = String(data: Data(bytes), encoding: encoding) { return Array(string.utf8) }
        // Undecodable input: keep going with replacement characters rather than failing.
        if encoding == .utf16LittleEndian || encoding == .utf16BigEndian {
            var units: [UInt16] = []
            units.reserveCapacity(bytes.count / 2)
            var i = 0
            while i + 1 < bytes.count {
                let a = UInt16(bytes[i]), b = UInt16(bytes[i + 1])
                units.append(encoding == .utf16LittleEndian ? a | b << 8 : a << 8 | b)
                i += 2
            }
            var out = Array(String(decoding: units, as: UTF16.self).utf8)
            if bytes.count % 2 == 1 { out += [0xEF, 0xBF, 0xBD] }
            return out
        }
        return decodeWindows1252(bytes)
    }

    static let windows1252High: [UInt32] = [
        0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D, 0x8F,
        0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
    ]

    /// WHATWG windows-1252 (which is also what `iso-8859-1` and `us-ascii` mean on the web).
    static func decodeWindows1252(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + bytes.count / 8)
        for b in bytes {
            if b < 0x80 { out.append(b); continue }
            let code = b < 0xA0 ? windows1252High[Int(b - 0x80)] : UInt32(b)
            for u in String(Character(Unicode.Scalar(code)!)).utf8 { out.append(u) }
        }
        return out
    }

    // MARK: Prescan (§13.2.3.3, "prescan a byte stream to determine its encoding")

    static func prescan(_ all: [UInt8]) -> String? {
        // The first 1024 bytes are read in place (every index below is checked against `n`): a
        // copy of them was an allocation over 1 KiB at the start of every parse, and glibc's
        // malloc answers each such request by first merging every small chunk freed so far (the
        // whole previous tree): 4-5 % of the time of parsing a series of messages.
        let bytes = all
        var i = 0
        let n = min(all.count, 1024)
        func lower(_ b: UInt8) -> UInt8 { b >= 0x41 && b <= 0x5A ? b + 0x20 : b }
        func isSpace(_ b: UInt8) -> Bool { b == 0x09 || b == 0x0A || b == 0x0C || b == 0x0D || b == 0x20 }
        func matches(_ s: String, at p: Int) -> Bool {
            var k = p
            for c in s.utf8 { guard k < n, lower(bytes[k]) == c else { return false }; k += 1 }
            return true
        }
        // Returns (name, value) and advances i; nil at '>' or end.
        func getAttribute() -> (String, String)? {
            while i < n && (isSpace(bytes[i]) || bytes[i] == 0x2F) { i += 1 }
            guard i < n, bytes[i] != 0x3E else { return nil }
            var name: [UInt8] = [], value: [UInt8] = []
            while i < n {
                let b = bytes[i]
                if b == 0x3D && !name.isEmpty { i += 1; break }
                if isSpace(b) {
                    while i < n && isSpace(bytes[i]) { i += 1 }
                    if i < n && bytes[i] == 0x3D { i += 1; break }
                    return (String(decoding: name, as: UTF8.self), "")
                }
                if b == 0x2F || b == 0x3E { return (String(decoding: name, as: UTF8.self), "") }
                name.append(lower(b)); i += 1
            }
            while i < n && isSpace(bytes[i]) { i += 1 }
            guard i < n else { return nil }
            if bytes[i] == 0x22 || bytes[i] == 0x27 {
                let q = bytes[i]; i += 1
                while i < n && bytes[i] != q { value.append(lower(bytes[i])); i += 1 }
                guard i < n else { return nil }
                i += 1
            } else {
                while i < n && !isSpace(bytes[i]) && bytes[i] != 0x3E { value.append(lower(bytes[i])); i += 1 }
            }
            return (String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
        }
        while i < n {
            // Every construct below starts with `<` (anything else advances one byte): skip to
            // the next `<` without trying each pattern at every byte.
            if bytes[i] != 0x3C { i += 1; continue }
            if matches("<!--", at: i) {
                i += 4
                while i < n && !(bytes[i] == 0x2D && matches("-->", at: i)) { i += 1 }
                i += 3
            } else if matches("<meta", at: i), i + 5 < n, isSpace(bytes[i + 5]) || bytes[i + 5] == 0x2F {
                i += 5
                var seen: Set<String> = []
                var gotPragma = false, needPragma: Bool? = nil, charset: String?
                while let (name, value) = getAttribute() {
                    if seen.contains(name) { continue }
                    seen.insert(name)
                    if name == "http-equiv" && value == "content-type" { gotPragma = true }
                    else if name == "content" && charset == nil, let c = charsetFromContent(value) { charset = c; needPragma = true }
                    else if name == "charset" { charset = value; needPragma = false }
                }
                if let needPragma, let charset, !(needPragma && !gotPragma), let encoding = canonical(charset) {
                    return encoding
                }
            } else if i + 1 < n, bytes[i] == 0x3C, (bytes[i + 1] | 0x20) >= 0x61 && (bytes[i + 1] | 0x20) <= 0x7A || (bytes[i + 1] == 0x2F) {
                i += 1
                while i < n && !isSpace(bytes[i]) && bytes[i] != 0x3E { i += 1 }
                while getAttribute() != nil {}
            } else if matches("<!", at: i) || matches("</", at: i) || matches("<?", at: i) {
                while i < n && bytes[i] != 0x3E { i += 1 }
                i += 1
            } else {
                i += 1
            }
        }
        return nil
    }

    /// "Extracting a character encoding from a meta element".
    static func charsetFromContent(_ content: String) -> String? {
        guard let range = content.range(of: "charset") else { return nil }
        var rest = content[range.upperBound...].drop { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\u{0C}" }
        guard rest.first == "=" else { return charsetFromContent(String(content[range.upperBound...])) }
        rest = rest.dropFirst().drop { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\u{0C}" }
        if let q = rest.first, q == "\"" || q == "'" {
            let body = rest.dropFirst()
            guard let end = body.firstIndex(of: q) else { return nil }
            return String(body[..<end])
        }
        let value = rest.prefix { !($0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\u{0C}" || $0 == ";") }
        return value.isEmpty ? nil : String(value)
    }
}
