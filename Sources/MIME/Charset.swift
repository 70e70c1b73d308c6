#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Charset decoding and encoding for mail text.
///
/// UTF-8, US-ASCII and ISO-8859-1 are decoded natively (they are most of all mail and need no
/// table). Every other charset goes through the C library's `iconv` (glibc on Linux; Foundation's
/// `String.Encoding` on Linux covers only a handful of these charsets, so it is not used).
/// Charset names are normalized (case, `_`/`-`/space, common aliases such as `latin1`, `cp1252`,
/// `sjis`, `ks_c_5601-1987`, `x-gbk`) before lookup. Bytes that are invalid in the charset
/// become U+FFFD, one per bad byte.
public enum Charset {
    /// The canonical names this library knows, mapped to iconv names.
    static let canonical: [String: String] = {
        var m: [String: String] = [
            "utf-8": "UTF-8", "us-ascii": "ASCII", "iso-8859-1": "ISO-8859-1",
            "koi8-r": "KOI8-R", "koi8-u": "KOI8-U", "iso-2022-jp": "ISO-2022-JP",
            "gb2312": "GB2312", "gbk": "GBK", "gb18030": "GB18030", "big5": "BIG5",
            "big5-hkscs": "BIG5-HKSCS", "shift_jis": "SHIFT_JIS", "euc-jp": "EUC-JP", "euc-kr": "EUC-KR",
            "cp949": "CP949", "cp932": "CP932", "utf-16": "UTF-16", "utf-16le": "UTF-16LE", "utf-16be": "UTF-16BE",
            "utf-32": "UTF-32", "utf-7": "UTF-7", "tis-620": "TIS-620", "cp866": "CP866", "cp437": "CP437",
            "cp850": "CP850", "mac-roman": "MACINTOSH", "iso-2022-kr": "ISO-2022-KR", "hz": "HZ-GB-2312",
        ]
        for n in 2...16 where n != 12 { m["iso-8859-\(n)"] = "ISO-8859-\(n)" }
        for n in 1250...1258 { m["windows-\(n)"] = "WINDOWS-\(n)" }
        return m
    }()

    static let aliases: [String: String] = {
        var a: [String: String] = [
            "utf8": "utf-8", "unicode-1-1-utf-8": "utf-8", "ascii": "us-ascii", "us": "us-ascii",
            "ansi_x3.4-1968": "us-ascii", "iso646-us": "us-ascii", "646": "us-ascii",
            "latin1": "iso-8859-1", "latin-1": "iso-8859-1", "l1": "iso-8859-1", "iso8859-1": "iso-8859-1",
            "iso_8859-1": "iso-8859-1", "8859": "iso-8859-1", "cp819": "iso-8859-1", "ibm819": "iso-8859-1",
            "koi8r": "koi8-r", "koi8u": "koi8-u", "csiso2022jp": "iso-2022-jp", "iso2022jp": "iso-2022-jp",
            "iso2022-jp": "iso-2022-jp", "euc-cn": "gb2312", "euccn": "gb2312", "x-euc-cn": "gb2312",
            "chinese": "gb2312", "csgb2312": "gb2312", "x-gbk": "gbk", "cp936": "gbk", "ms936": "gbk",
            "windows-936": "gbk", "big5-tw": "big5", "csbig5": "big5", "x-big5": "big5", "cp950": "big5",
            "big5hkscs": "big5-hkscs", "shift-jis": "shift_jis", "sjis": "shift_jis", "s_jis": "shift_jis",
            "x-sjis": "shift_jis", "csshiftjis": "shift_jis", "ms_kanji": "shift_jis", "windows-31j": "cp932",
            "ms932": "cp932", "mskanji": "cp932", "eucjp": "euc-jp", "ujis": "euc-jp", "x-euc-jp": "euc-jp",
            "euckr": "euc-kr", "ks_c_5601-1987": "cp949", "ks_c_5601": "cp949", "ksc5601": "cp949",
            "uhc": "cp949", "windows-949": "cp949", "utf16": "utf-16", "utf32": "utf-32", "utf7": "utf-7",
            "tis620": "tis-620", "macintosh": "mac-roman", "macroman": "mac-roman", "ibm866": "cp866",
            "hz-gb-2312": "hz",
        ]
        let latinNames = [1: 1, 2: 2, 3: 3, 4: 4, 5: 9, 6: 10, 7: 13, 8: 14, 9: 15, 10: 16]
        for (l, iso) in latinNames { a["latin\(l)"] = "iso-8859-\(iso)"; a["l\(l)"] = "iso-8859-\(iso)" }
        for n in 1...16 where n != 12 {
            a["iso8859-\(n)"] = "iso-8859-\(n)"; a["iso_8859-\(n)"] = "iso-8859-\(n)"
            a["iso8859\(n)"] = "iso-8859-\(n)"; a["iso-8859\(n)"] = "iso-8859-\(n)"
        }
        a["cyrillic"] = "iso-8859-5"; a["greek"] = "iso-8859-7"; a["hebrew"] = "iso-8859-8"
        a["arabic"] = "iso-8859-6"; a["iso-8859-8-i"] = "iso-8859-8"; a["iso-8859-6-i"] = "iso-8859-6"
        for n in 1250...1258 { a["cp\(n)"] = "windows-\(n)"; a["x-cp\(n)"] = "windows-\(n)"; a["windows\(n)"] = "windows-\(n)"; a["ms\(n)"] = "windows-\(n)" }
        return a
    }()

    /// The canonical lowercase name of a charset (`"Latin1"` → `"iso-8859-1"`, `"CP1252"` →
    /// `"windows-1252"`), or `nil` when the name is unknown.
    public static func normalize(_ name: String) -> String? {
        lookup[key(name)]
    }

    /// Like CPython's `encodings.normalize_encoding`: lowercase, every run of characters other
    /// than ASCII letters, digits and `.` becomes one `-`, none at the ends.
    static func key(_ name: String) -> String {
        var out = String.UnicodeScalarView()
        var pending = false
        for u in name.lowercased().unicodeScalars {
            if (u >= "a" && u <= "z") || (u >= "0" && u <= "9") || u == "." {
                if pending && !out.isEmpty { out.append("-") }
                pending = false
                out.append(u)
            } else { pending = true }
        }
        return String(out)
    }

    /// Normalized key → canonical name, for canonical names and aliases.
    static let lookup: [String: String] = {
        var m: [String: String] = [:]
        for (k, v) in aliases { m[key(k)] = v }
        for k in canonical.keys { m[key(k)] = k }
        return m
    }()

    /// Whether the charset is known (by name or alias) and iconv can convert from it.
    public static func isKnown(_ name: String) -> Bool {
        guard let canon = normalize(name), let iconvName = canonical[canon] else { return false }
        if canon == "utf-8" || canon == "us-ascii" || canon == "iso-8859-1" { return true }
        let cd = iconv_open("UTF-8", iconvName)
        if cd == iconv_t(bitPattern: -1) { return false }
        iconv_close(cd)
        return true
    }

    /// Decodes `bytes` in charset `name`. Unknown charsets decode as UTF-8 (with U+FFFD for
    /// invalid bytes) and `known` is `false`, so the caller can report it.
    public static func decode(_ bytes: ArraySlice<UInt8>, charset name: String) -> (text: String, known: Bool) {
        guard let canon = normalize(name), let iconvName = canonical[canon] else {
            return (String(decoding: bytes, as: UTF8.self), false)
        }
        switch canon {
        case "utf-8": return (String(decoding: bytes, as: UTF8.self), true)
        case "us-ascii":
            var s = String.UnicodeScalarView()
            for b in bytes { s.append(b < 0x80 ? Unicode.Scalar(b) : "\u{FFFD}") }
            return (String(s), true)
        case "iso-8859-1":
            var s = String.UnicodeScalarView()
            for b in bytes { s.append(Unicode.Scalar(b)) }
            return (String(s), true)
        default:
            if let table = singleByteTables[canon] {
                var s = String.UnicodeScalarView()
                for b in bytes { s.append(table[Int(b)]) }
                return (String(s), true)
            }
            if let t = iconvDecode(bytes, from: iconvName) { return (t, true) }
            return (String(decoding: bytes, as: UTF8.self), false)
        }
    }

    /// Single-byte charsets, decoded with a 256-entry table built from iconv one byte at a time
    /// (faster, and never composes: glibc's Windows-1255/1258 would merge base letters with the
    /// following combining marks, Python's codecs keep them apart).
    static let singleByteNames: [String] = {
        var n = ["koi8-r", "koi8-u", "cp866", "cp437", "cp850", "tis-620", "mac-roman"]
        for i in 2...16 where i != 12 { n.append("iso-8859-\(i)") }
        for i in 1250...1258 { n.append("windows-\(i)") }
        return n
    }()

    static let singleByteTables: [String: [Unicode.Scalar]] = {
        var tables: [String: [Unicode.Scalar]] = [:]
        for name in singleByteNames {
            guard let iconvName = canonical[name] else { continue }
            var table = [Unicode.Scalar](repeating: "\u{FFFD}", count: 256)
            var ok = true
            for b in 0..<256 {
                guard let t = iconvDecode([UInt8(b)][...], from: iconvName) else { ok = false; break }
                let sc = Array(t.unicodeScalars)
                if sc.count == 1 { table[b] = sc[0] }
            }
            if ok { tables[name] = table }
        }
        return tables
    }()

    /// Converts with iconv to UTF-8; invalid input bytes become U+FFFD. `nil` if iconv does not
    /// know the charset.
    static func iconvDecode(_ bytes: ArraySlice<UInt8>, from: String) -> String? {
        let cd = iconv_open("UTF-8", from)
        if cd == iconv_t(bitPattern: -1) { return nil }
        defer { iconv_close(cd) }
        // Invalid or truncated sequences become U+FFFD.
        let (output, _) = convert(cd, Array(bytes), replacingInvalidWith: [0xEF, 0xBF, 0xBD])
        return String(decoding: output, as: UTF8.self)
    }

    /// Encodes text in a charset (for the builder and tests); `nil` if a character cannot be
    /// represented or the charset is unknown.
    public static func encode(_ text: String, charset name: String) -> [UInt8]? {
        guard let canon = normalize(name), let iconvName = canonical[canon] else { return nil }
        if canon == "utf-8" { return Array(text.utf8) }
        let cd = iconv_open(iconvName, "UTF-8")
        if cd == iconv_t(bitPattern: -1) { return nil }
        defer { iconv_close(cd) }
        let (output, complete) = convert(cd, Array(text.utf8), replacingInvalidWith: nil)
        return complete ? output : nil
    }

    /// Feeds `bytes` through `cd`, then flushes the characters iconv holds back. An invalid or
    /// truncated sequence (`EILSEQ`, `EINVAL`) becomes `replacement` (one input byte skipped, the
    /// state reset), or ends the conversion when there is none. `complete` is false when the
    /// conversion ended early.
    private static func convert(_ cd: iconv_t?, _ bytes: [UInt8],
                                replacingInvalidWith replacement: [UInt8]?) -> (output: [UInt8], complete: Bool) {
        var input = bytes
        var result = [UInt8](); result.reserveCapacity(input.count * 2)
        var outBuf = [UInt8](repeating: 0, count: 64 * 1024)
        var complete = true
        input.withUnsafeMutableBufferPointer { inPtr in
            var inLeft = inPtr.count
            var inP: UnsafeMutablePointer<CChar>? = inPtr.baseAddress.map { UnsafeMutableRawPointer($0).assumingMemoryBound(to: CChar.self) }
            outBuf.withUnsafeMutableBufferPointer { outPtr in
                var flushed = false
                while true {
                    var outP: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(outPtr.baseAddress!).assumingMemoryBound(to: CChar.self)
                    var outLeft = outPtr.count
                    let rc = inLeft > 0 ? iconv(cd, &inP, &inLeft, &outP, &outLeft) : iconv(cd, nil, nil, &outP, &outLeft)
                    result.append(contentsOf: UnsafeBufferPointer(start: outPtr.baseAddress, count: outPtr.count - outLeft))
                    if rc != -1 {
                        if inLeft == 0 {
                            // Flush characters iconv holds back (e.g. waiting for combining marks).
                            if flushed { break }
                            flushed = true
                        }
                        continue
                    }
                    let err = errno
                    if err == E2BIG { continue }
                    if let replacement, err == EILSEQ || err == EINVAL {
                        result += replacement
                        if inLeft > 0 { inP = inP! + 1; inLeft -= 1 }
                        _ = iconv(cd, nil, nil, nil, nil)
                        if inLeft == 0 { break }
                        continue
                    }
                    complete = false
                    break
                }
            }
        }
        return (result, complete)
    }
}

extension StringProtocol {
    func trimmingASCIIWhitespace() -> String {
        let scalars = unicodeScalars
        var start = scalars.startIndex, end = scalars.endIndex
        while start < end, [" ", "\t", "\r", "\n"].contains(scalars[start]) { start = scalars.index(after: start) }
        while end > start, [" ", "\t", "\r", "\n"].contains(scalars[scalars.index(before: end)]) { end = scalars.index(before: end) }
        return String(String.UnicodeScalarView(scalars[start..<end]))
    }
}
