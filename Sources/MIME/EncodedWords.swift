/// RFC 2047 encoded words (`=?charset?B|Q?text?=`), decoded like CPython's `email` parser
/// (policy.default, `get_unstructured`): whitespace between two adjacent encoded words is dropped,
/// malformed encoded words or ones with an unknown encoding stay as written, an encoded word that
/// follows other characters without a blank is decoded too. An unknown charset decodes as UTF-8.
public enum EncodedWords {
    typealias Scalars = [Unicode.Scalar]

    static func isWSP(_ c: Unicode.Scalar) -> Bool { c == " " || c == "\t" }
    static func isHex(_ c: Unicode.Scalar) -> Bool {
        ("0"..."9").contains(c) || ("a"..."f").contains(c) || ("A"..."F").contains(c)
    }

    /// Index of the first occurrence of `a` `b` at or after `from` before `to`.
    static func find(_ s: Scalars, _ a: Unicode.Scalar, _ b: Unicode.Scalar, from: Int, to: Int) -> Int? {
        var i = from
        while i + 1 < to { if s[i] == a && s[i + 1] == b { return i }; i += 1 }
        return nil
    }

    /// Decodes the Q or B payload of an encoded word to text; `nil` if the encoding letter is
    /// neither. Exposed for tests.
    static func decodePayload(charset rawCharset: String, encoding: String, text: String) -> String? {
        var charset = rawCharset
        if let star = charset.firstIndex(of: "*") { charset = String(charset[..<star]) }
        let textBytes = Array(text.utf8)
        let bytes: [UInt8]
        switch encoding.lowercased() {
        case "b": bytes = TransferEncoding.decodeBase64(textBytes[...]).bytes
        case "q":
            var out: [UInt8] = []; out.reserveCapacity(textBytes.count)
            var i = 0
            while i < textBytes.count {
                let c = textBytes[i]
                if c == UInt8(ascii: "_") {
                    out.append(0x20); i += 1
                } else if c == UInt8(ascii: "="), i + 2 < textBytes.count,
                          let h = TransferEncoding.hexValue(textBytes[i + 1]),
                          let l = TransferEncoding.hexValue(textBytes[i + 2]) {
                    out.append(h << 4 | l); i += 3
                } else {
                    out.append(c); i += 1
                }
            }
            bytes = out
        default: return nil
        }
        let (decoded, known) = Charset.decode(bytes[...], charset: charset)
        return known ? decoded : String(decoding: bytes, as: UTF8.self)
    }

    /// Tries to read an encoded word at `i` (which starts with `=?`). Returns `.notFound` when no
    /// `?=` follows (CPython: HeaderParseError), `.invalid` when malformed, else the text and the
    /// index after the word.
    enum WordResult { case notFound, invalid, word(String, Int) }

    static func readWord(_ s: Scalars, at i: Int) -> WordResult {
        let start = i + 2
        guard let q = find(s, "?", "=", from: start, to: s.count) else { return .notFound }
        var tokEnd = q
        var after = q + 2
        // "=?cs?q?=41…": the "?=" found right after the encoding letter is really "?" + "=XX".
        let qCount = s[start..<q].filter { $0 == "?" }.count
        if s.count - after > 1, isHex(s[after]), isHex(s[after + 1]), qCount < 2 {
            if let q2 = find(s, "?", "=", from: after, to: s.count) {
                tokEnd = q2; after = q2 + 2
            } else {
                tokEnd = s.count; after = s.count
            }
        }
        let tok = s[start..<tokEnd]
        let pieces = tok.split(separator: "?", omittingEmptySubsequences: false)
        guard pieces.count == 3 else { return .invalid }
        func str(_ x: ArraySlice<Unicode.Scalar>) -> String { var v = String.UnicodeScalarView(); v.append(contentsOf: x); return String(v) }
        guard let text = decodePayload(charset: str(pieces[0]), encoding: str(pieces[1]), text: str(pieces[2])) else { return .invalid }
        return .word(text, after)
    }

    /// `=\?[^?]*\?[qQbB]\?.*?\?=` occurs in `s[from..<to]`.
    static func containsEncodedWordShape(_ s: Scalars, from: Int, to: Int) -> Bool {
        var i = from
        while let p = find(s, "=", "?", from: i, to: to) {
            var j = p + 2
            while j < to && s[j] != "?" { j += 1 }
            if j + 2 < to, ["q", "Q", "b", "B"].contains(s[j + 1]), s[j + 2] == "?",
               find(s, "?", "=", from: j + 3, to: to) != nil { return true }
            i = p + 1
        }
        return false
    }

    /// Decodes an unstructured header value (Subject, Comments, Content-ID…).
    public static func decodeUnstructured(_ value: String) -> String {
        if !value.contains("=?") { return value }
        let s = Array(value.unicodeScalars)
        enum Tok { case fws(Int, Int), ew(String), vtext(Int, Int) }
        var toks: [Tok] = []
        var i = 0
        while i < s.count {
            if isWSP(s[i]) {
                let st = i
                while i < s.count && isWSP(s[i]) { i += 1 }
                toks.append(.fws(st, i)); continue
            }
            var validEW = true
            if s[i] == "=" && i + 1 < s.count && s[i + 1] == "?" {
                switch readWord(s, at: i) {
                case .notFound: break
                case .invalid: validEW = false
                case let .word(text, next):
                    var haveWS = true
                    if let last = toks.last, case .fws = last {} else if !toks.isEmpty { haveWS = false }
                    if haveWS && toks.count > 1, case .ew = toks[toks.count - 2], case .fws = toks[toks.count - 1] {
                        toks[toks.count - 1] = .fws(0, 0)
                    }
                    toks.append(.ew(text)); i = next; continue
                }
            }
            var end = i
            while end < s.count && !isWSP(s[end]) { end += 1 }
            if validEW && containsEncodedWordShape(s, from: i, to: end) {
                // Stop before the first "=?" of the rest of the value.
                if let p = find(s, "=", "?", from: i, to: s.count) { end = p }
                if end == i {
                    // Cannot make progress (CPython would loop); take the "=?" literally.
                    end = i + 2
                }
            }
            toks.append(.vtext(i, end)); i = end
        }
        var out = String.UnicodeScalarView()
        for t in toks {
            switch t {
            case let .fws(a, b), let .vtext(a, b): out.append(contentsOf: s[a..<b])
            case let .ew(text): out.append(contentsOf: text.unicodeScalars)
            }
        }
        return String(out)
    }

    // MARK: encoding

    /// Encodes `text` as RFC 2047 encoded words if it is not plain printable ASCII; words are at
    /// most 75 characters (the first at most `75 - startColumn`), separated by `fold` (e.g. CRLF + space). UTF-8, base64 or Q, whichever
    /// is shorter. `startColumn` is where the value begins on the first line.
    public static func encode(_ text: String, fold: String = "\r\n ", startColumn: Int = 0) -> String {
        let needs = text.unicodeScalars.contains { !($0.value >= 0x20 && $0.value < 0x7F) } || text.contains("=?")
        if !needs { return text }
        // Split into chunks of whole characters whose encoding fits in one word.
        var words: [String] = []
        var chunk: [UInt8] = []
        func wordFor(_ bytes: [UInt8]) -> String {
            let b = String(decoding: TransferEncoding.encodeBase64(bytes, lineLength: 0), as: UTF8.self)
            var q = ""
            for c in bytes {
                if c == 0x20 { q += "_" }
                else if (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == UInt8(ascii: "!") || c == UInt8(ascii: "*") || c == UInt8(ascii: "+") || c == UInt8(ascii: "-") || c == UInt8(ascii: "/") {
                    q.unicodeScalars.append(Unicode.Scalar(c))
                } else {
                    q += "=" + String(decoding: [TransferEncoding.hexDigits[Int(c >> 4)], TransferEncoding.hexDigits[Int(c & 15)]], as: UTF8.self)
                }
            }
            return q.count <= b.count ? "=?utf-8?q?\(q)?=" : "=?utf-8?b?\(b)?="
        }
        for ch in text {
            let cb = Array(String(ch).utf8)
            let limit = words.isEmpty ? max(20, 75 - startColumn) : 75
            if !chunk.isEmpty && wordFor(chunk + cb).count > limit {
                words.append(wordFor(chunk)); chunk = []
            }
            chunk += cb
        }
        if !chunk.isEmpty { words.append(wordFor(chunk)) }
        return words.joined(separator: fold)
    }
}
