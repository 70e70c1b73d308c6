import Foundation

/// A byte-level fast path for `<style>` sheets in the shape mail actually uses: plain qualified
/// rules (`td.cell{padding:8px 12px;color:#333}`, `#outlook a{padding:0}`,
/// `.menu[type="checkbox"]~.links{display:none}`), top-level `@media` blocks holding plain rules,
/// leading `@import url(…);` rules (web fonts), which are dropped, and the other at-rules the
/// full path drops whole with one report entry (`@goodbye{@gmail}`, `@page{…}`, `@charset "x";`);
/// `<!--` and `-->` between rules (sheets wrapped in them for old mail clients) are skipped, as
/// the full path skips them.
///
/// A first pass accepts only text whose rule structure the byte stream shows exactly: ASCII, no
/// comments, escapes, `url(`, `<` other than `<!--` or control characters; strings only on one line and
/// without quotes, backslashes, `<`, `@` or any of `{}()[];` (so no brace, bracket or semicolon
/// the scan sees is inside a string); `(`/`[` balanced and never holding `{`, `}` or `;`; braces
/// at most two deep (`@media{rule{}}`). Then each rule is cut at its braces. Selectors and
/// `@media` preludes (a few bytes each) are read from the bytes in their plainest shapes, or
/// tokenized and checked by the full path's own ``CSSSanitizer/scopedSelector(_:)`` and
/// `isSafePrelude`; declaration blocks go through ``CSSStyleFastPath`` (which answers only when
/// the full path would write the same text with no report entry, and gives up on at-keywords).
/// Anything else — `@import` after a rule, `@supports`, `@font-face`, `@media` inside a block or
/// without one, a block the declaration fast path gives up on, a prelude without a block — makes
/// the whole sheet take the full path (``CSSSanitizer/sanitizeStyleSheetFully(_:)``), and the
/// report is only touched once the fast path has answered.
///
/// Trust-model row: inbox (incoming mail) — sheets are still sanitized and scoped by the same
/// rules; only the common, provably plain shape skips the token trees of its declarations.
enum CSSSheetFastPath {
    /// The sanitized sheet, or `nil` when the sheet is outside the fast path's subset.
    static func sanitize(_ text: String, css: CSSSanitizer) -> String? {
        let result = text.utf8.withContiguousStorageIfAvailable { sheet -> String? in
            // Web fonts' `@import url(…);` rules first (MJML puts them in a sheet of their own).
            var start = 0
            var imports: [Range<Int>] = []
            while let (url, end) = leadingImport(sheet, from: start) {
                imports.append(url)
                start = end
            }
            let bytes = UnsafeBufferPointer(rebasing: sheet[start...])
            guard isPlain(bytes) else { return nil }
            var state = State(css: css, scratch: [UInt8](repeating: 0, count: bytes.count + 16))
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count + 256)
            guard state.rules(bytes, 0..<bytes.count, nested: false, into: &out) else { return nil }
            // The report as the full path makes it: each `@import` is a dropped rule whose URL
            // the gate sees as a style sheet (blocked, or listed), in the sheet's order, before
            // any rule after it (the rules the fast path takes hold no URL).
            for url in imports {
                css.gate.findings.note(.cssRule)
                _ = css.gate.resource(String(decoding: UnsafeBufferPointer(rebasing: sheet[url]), as: UTF8.self), kind: .stylesheet)
            }
            css.gate.findings.note(.cssRule, state.droppedRules)
            return String(decoding: out, as: UTF8.self)
        }
        return result ?? nil
    }

    /// An `@import url(URL);` rule at `from` (after CSS whitespace): the range of its URL and
    /// the offset after its `;`, or `nil` for anything else. Taken only in its plainest form,
    /// whose tokens the byte stream shows exactly: `@import` in lowercase, whitespace,
    /// `url(` in lowercase followed by a URL of printable ASCII without whitespace, quotes,
    /// parentheses, backslashes or `<` (one url token whose value is those bytes), `)`,
    /// optional whitespace and `;`. The full path drops such a rule (nothing of it is written)
    /// after giving its URL to the gate as a style sheet; so does the caller.
    static func leadingImport(_ p: UnsafeBufferPointer<UInt8>, from: Int) -> (url: Range<Int>, end: Int)? {
        let n = p.count
        var k = from
        while k < n && isSpace(p[k]) { k += 1 }
        let keyword: StaticString = "@import"
        guard k + keyword.utf8CodeUnitCount < n else { return nil }
        for j in 0..<keyword.utf8CodeUnitCount where p[k + j] != keyword.utf8Start[j] { return nil }
        k += keyword.utf8CodeUnitCount
        guard isSpace(p[k]) else { return nil }
        while k < n && isSpace(p[k]) { k += 1 }
        guard k + 4 < n, p[k] == 0x75, p[k + 1] == 0x72, p[k + 2] == 0x6C, p[k + 3] == 0x28 else { return nil }
        k += 4
        let urlStart = k
        while k < n {
            let b = p[k]
            guard b > 0x20 && b < 0x7F else { return nil }
            if b == 0x29 { break }
            if b == 0x22 || b == 0x27 || b == 0x28 || b == 0x5C || b == 0x3C { return nil }
            k += 1
        }
        guard k < n, k > urlStart else { return nil }
        let url = urlStart..<k
        k += 1
        while k < n && isSpace(p[k]) { k += 1 }
        guard k < n, p[k] == 0x3B else { return nil }
        return (url, k + 1)
    }

    @inline(__always) private static func isSpace(_ b: UInt8) -> Bool {
        b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D || b == 0x0C
    }

    /// The structural pre-check described above.
    static func isPlain(_ p: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = p.count
        // Open `(` / `[` waiting for their closers: one bit each (1 = `[`), up to 64 deep.
        var brackets: UInt64 = 0
        var open = 0
        var braces = 0
        var i = 0
        while i < n {
            let b = p[i]
            switch b {
            case 0x20, 0x09, 0x0A, 0x0D, 0x0C: break
            case 0..<0x20, 0x7F...0xFF: return false  // controls (NUL is replaced), non-ASCII
            case 0x5C: return false  // escapes
            case 0x3C:
                // `<` only as `<!--` (CDO, which the full path skips between rules, and drops
                // with its rule anywhere else).
                guard i + 3 < n, p[i + 1] == 0x21, p[i + 2] == 0x2D, p[i + 3] == 0x2D else { return false }
                i += 3
            case 0x22, 0x27:
                // A string: skipped to its closing quote, holding none of the bytes below.
                guard let close = plainStringEnd(p, from: i + 1, to: n, quote: b) else { return false }
                i = close
            case 0x2F: if i + 1 < n && p[i + 1] == 0x2A { return false }  // comment
            case 0x28:
                // `url(` (an unquoted URL token runs to `)` whatever it holds).
                if i >= 3 && p[i - 3] | 0x20 == 0x75 && p[i - 2] | 0x20 == 0x72 && p[i - 1] | 0x20 == 0x6C { return false }
                guard open < 64 else { return false }
                brackets = brackets << 1
                open += 1
            case 0x5B:
                guard open < 64 else { return false }
                brackets = brackets << 1 | 1
                open += 1
            case 0x29, 0x5D:
                guard open > 0, (brackets & 1 == 1) == (b == 0x5D) else { return false }
                brackets >>= 1
                open -= 1
            case 0x7B:
                guard open == 0, braces < 2 else { return false }
                braces += 1
            case 0x7D:
                guard open == 0, braces > 0 else { return false }
                braces -= 1
            case 0x3B:
                guard open == 0 else { return false }
            default: break
            }
            i += 1
        }
        return open == 0 && braces == 0
    }

    /// The offset of the `quote` closing a string whose content starts at `from`, when every
    /// byte before it is printable ASCII other than quotes, `\`, `<`, `@` and `{}()[];` (the
    /// tokenizer reads such a string as one string token of those bytes, the serializer writes
    /// it back as `"` those bytes `"`, and no structural byte of the sheet is inside it);
    /// `nil` for anything else.
    static func plainStringEnd(_ p: UnsafeBufferPointer<UInt8>, from: Int, to end: Int, quote: UInt8) -> Int? {
        var k = from
        while k < end {
            let c = p[k]
            if c == quote { return k }
            guard isPlainStringByte(c) else { return nil }
            k += 1
        }
        return nil
    }

    @inline(__always) private static func isPlainStringByte(_ c: UInt8) -> Bool {
        switch c {
        case 0x20...0x7E:
            switch c {
            case 0x22, 0x27, 0x5C, 0x3C, 0x40, 0x7B, 0x7D, 0x28, 0x29, 0x5B, 0x5D, 0x3B: return false
            default: return true
            }
        default: return false
        }
    }

    private struct State {
        let css: CSSSanitizer
        /// `css.scope`, made once per sheet.
        lazy var scope: String = css.scope
        /// Output buffer for one declaration block (never longer than the sheet).
        var scratch: [UInt8]
        var droppedRules = 0

        /// The rules in `range` (the sheet, or an `@media` block when `nested`); `false` = give up.
        mutating func rules(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, nested: Bool, into out: inout [UInt8]) -> Bool {
            var i = range.lowerBound
            let end = range.upperBound
            while true {
                while i < end && isSpace(p[i]) { i += 1 }
                if i >= end { return true }
                // `<!--` and `-->` (CDO, CDC) where a rule may start: skipped, as the full path
                // skips them there (mail wraps sheets in them for old clients).
                if let after = CSSSheetFastPath.cdoOrCDCEnd(p, at: i, to: end) {
                    i = after
                    continue
                }
                if p[i] == 0x40 {
                    // An at-keyword (`@` and a name: no escapes or non-ASCII here), else give up.
                    guard let nameEnd = CSSSheetFastPath.atKeywordEnd(p, at: i, to: end) else { return false }
                    let name = (i + 1)..<nameEnd
                    if !CSSSheetFastPath.isWord(p, name, "media") {
                        // `@import` (after a rule), `@supports` and `@font-face` are the full
                        // path's; every other at-rule it drops whole, noting one removed rule:
                        // `@name prelude;` or `@name prelude{block}`.
                        guard !CSSSheetFastPath.isWord(p, name, "import"), !CSSSheetFastPath.isWord(p, name, "supports"),
                              !CSSSheetFastPath.isWord(p, name, "font-face"),
                              let stop = CSSSheetFastPath.firstStructural(p, from: nameEnd, to: end) else { return false }
                        if p[stop] == 0x3B {
                            i = stop + 1
                        } else {
                            guard let close = matchingClose(p, from: stop + 1, to: end) else { return false }
                            i = close + 1
                        }
                        droppedRules += 1
                        continue
                    }
                    // `@media prelude{rules}`, at the top level only.
                    guard !nested else { return false }
                    let preludeStart = nameEnd
                    guard let open = find(p, from: preludeStart, to: end, stopAtSemicolon: true) else { return false }
                    guard let close = matchingClose(p, from: open + 1, to: end) else { return false }
                    // The prelude as the full path writes it: from its bytes when it is in the
                    // plainest shape, else tokenized, checked and serialized.
                    let preludeText: String
                    if let plain = CSSSheetFastPath.plainMediaPrelude(p, preludeStart..<open) {
                        preludeText = plain
                    } else {
                        let prelude = CSSParser.components(string(p, preludeStart..<open))
                        guard css.isSafePrelude(prelude) else { droppedRules += 1; i = close + 1; continue }
                        preludeText = CSSSerializer.serialize(css.trim(prelude))
                    }
                    var inner: [UInt8] = []
                    guard rules(p, (open + 1)..<close, nested: true, into: &inner) else { return false }
                    if !inner.isEmpty {
                        out.append(contentsOf: "@media ".utf8)
                        out.append(contentsOf: preludeText.utf8)
                        out.append(0x7B)
                        out.append(contentsOf: inner)
                        out.append(0x7D)
                    }
                    i = close + 1
                    continue
                }
                // A qualified rule: prelude `{` declarations `}`.
                guard let open = find(p, from: i, to: end, stopAtSemicolon: false) else { return false }
                var close = open + 1
                while close < end && p[close] != 0x7D {
                    if p[close] == 0x7B { return false }  // a nested block
                    close += 1
                }
                guard close < end else { return false }
                guard let selector = CSSSheetFastPath.scopedSelector(p, i..<open, scope: scope)
                    ?? css.scopedSelector(CSSParser.components(string(p, i..<open))) else {
                    droppedRules += 1
                    i = close + 1
                    continue
                }
                let block = UnsafeBufferPointer(rebasing: p[(open + 1)..<close])
                let count: Int? = scratch.withUnsafeMutableBufferPointer { buffer in
                    var writer = CSSStyleFastPath.Writer(base: buffer.baseAddress!, capacity: buffer.count)
                    guard CSSStyleFastPath.run(block, into: &writer), !writer.overflowed else { return nil }
                    return writer.count
                }
                guard let count else { return false }
                if count > 0 {
                    out.append(contentsOf: selector.utf8)
                    out.append(0x7B)
                    out.append(contentsOf: scratch[0..<count])
                    out.append(0x7D)
                }
                i = close + 1
            }
        }

        /// The first `{` at or after `from` (`nil` at a `}`, the end, or — when asked — a `;`).
        private func find(_ p: UnsafeBufferPointer<UInt8>, from: Int, to end: Int, stopAtSemicolon: Bool) -> Int? {
            var k = from
            while k < end {
                switch p[k] {
                case 0x7B: return k
                case 0x7D: return nil
                case 0x3B where stopAtSemicolon: return nil
                default: k += 1
                }
            }
            return nil
        }

        /// The `}` closing a block whose content starts at `from` (braces balanced by the pre-check).
        private func matchingClose(_ p: UnsafeBufferPointer<UInt8>, from: Int, to end: Int) -> Int? {
            var depth = 0
            var k = from
            while k < end {
                if p[k] == 0x7B { depth += 1 } else if p[k] == 0x7D {
                    if depth == 0 { return k }
                    depth -= 1
                }
                k += 1
            }
            return nil
        }

        private func string(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
            String(decoding: UnsafeBufferPointer(rebasing: p[range]), as: UTF8.self)
        }
    }

    /// The offset after a CDO (`<!--`) or CDC (`-->`) token starting at `at`, or `nil`. (A CDC
    /// token is exactly `-->` where a token starts; `--->` is an ident and `>`.)
    static func cdoOrCDCEnd(_ p: UnsafeBufferPointer<UInt8>, at: Int, to end: Int) -> Int? {
        if p[at] == 0x3C, at + 3 < end, p[at + 1] == 0x21, p[at + 2] == 0x2D, p[at + 3] == 0x2D { return at + 4 }
        if p[at] == 0x2D, at + 2 < end, p[at + 1] == 0x2D, p[at + 2] == 0x3E { return at + 3 }
        return nil
    }

    /// The end of the name of the at-keyword token whose `@` is at `at`, or `nil` when the `@`
    /// is a delimiter (what follows does not start an identifier: a letter, `_`, or `-` followed
    /// by one of those or `-`). Names are ASCII here (the pre-check refused escapes and non-ASCII).
    static func atKeywordEnd(_ p: UnsafeBufferPointer<UInt8>, at: Int, to end: Int) -> Int? {
        var k = at + 1
        guard k < end else { return nil }
        if p[k] == 0x2D {
            guard k + 1 < end, isNameStart(p[k + 1]) || p[k + 1] == 0x2D else { return nil }
            k += 2
        } else {
            guard isNameStart(p[k]) else { return nil }
            k += 1
        }
        while k < end && isNameCode(p[k]) { k += 1 }
        return k
    }

    /// The first `{`, `;` or `}` at or after `from`: where an at-rule's prelude ends (`{` or `;`;
    /// a `}` first, or none, is left to the full path). Exact here: the pre-check keeps those
    /// bytes out of strings and brackets.
    static func firstStructural(_ p: UnsafeBufferPointer<UInt8>, from: Int, to end: Int) -> Int? {
        var k = from
        while k < end {
            switch p[k] {
            case 0x7B, 0x3B: return k
            case 0x7D: return nil
            default: k += 1
            }
        }
        return nil
    }

    // MARK: Plain media preludes

    /// What the full path writes for the `@media` prelude `p[range]` — it is safe
    /// (``CSSSanitizer/isSafePrelude(_:)``) and written as its trimmed tokens serialized — read
    /// from the bytes when, once CSS whitespace is trimmed from both ends, it is items separated
    /// by single spaces, each a word `[a-z]+` or a feature `([a-z][a-z-]*:[0-9]+[a-z]*)`
    /// (`screen and (max-width:600px)`); `nil` for anything else, which the token path decides.
    ///
    /// Why the text is the answer: a word is one ident token (never a function: a space or the
    /// end follows it), a feature is a `(` block holding an ident, a colon and a number or
    /// dimension (digits only; the unit, letters only, is written as it is), and each single
    /// space is one whitespace token. None of them is a token the safety check refuses, and no
    /// two adjacent tokens are a pair the serializer separates with a comment (ident–colon,
    /// colon–number, number–`)`, `(`–ident, anything next to whitespace), so the serializer
    /// writes each token's own text: the bytes themselves.
    static func plainMediaPrelude(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String? {
        var lo = range.lowerBound
        var hi = range.upperBound
        while lo < hi && isSpace(p[lo]) { lo += 1 }
        while hi > lo && isSpace(p[hi - 1]) { hi -= 1 }
        guard lo < hi else { return nil }
        @inline(__always) func isLower(_ b: UInt8) -> Bool { b >= 0x61 && b <= 0x7A }
        @inline(__always) func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
        var k = lo
        while true {
            if p[k] == 0x28 {
                k += 1
                guard k < hi, isLower(p[k]) else { return nil }
                while k < hi && (isLower(p[k]) || p[k] == 0x2D) { k += 1 }
                guard k < hi, p[k] == 0x3A else { return nil }
                k += 1
                guard k < hi, isDigit(p[k]) else { return nil }
                while k < hi && isDigit(p[k]) { k += 1 }
                while k < hi && isLower(p[k]) { k += 1 }
                guard k < hi, p[k] == 0x29 else { return nil }
                k += 1
            } else {
                guard isLower(p[k]) else { return nil }
                while k < hi && isLower(p[k]) { k += 1 }
            }
            if k == hi { break }
            // One space (the trimmed end is not one), then the next item.
            guard p[k] == 0x20, p[k + 1] != 0x20 else { return nil }
            k += 1
        }
        return String(decoding: UnsafeBufferPointer(rebasing: p[lo..<hi]), as: UTF8.self)
    }

    // MARK: Plain selectors

    @inline(__always) private static func isNameStart(_ b: UInt8) -> Bool { ((b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A) || b == 0x5F }
    @inline(__always) private static func isNameCode(_ b: UInt8) -> Bool { isNameStart(b) || (b >= 0x30 && b <= 0x39) || b == 0x2D }

    /// ``CSSSanitizer/scopedSelector(_:)`` for the plainest selector lists, read from the bytes
    /// of a prelude the pre-check passed (ASCII, no escapes or comments): selectors
    /// separated by `,`, each made of compounds separated by whitespace and/or one of the
    /// combinators `>`, `+`, `~`, each compound a type name or `*` and/or `.class`, `#id`,
    /// `:pseudo` and `::pseudo` names and plain attribute selectors
    /// (``attributeSelectorEnd(_:from:to:)``), every name `[A-Za-z_][A-Za-z0-9_-]*` (so the tokenizer
    /// reads each as one ident or hash token and each sign as one delimiter or colon, never a
    /// number or a function, and the serializer writes them unchanged: no pair of these tokens
    /// needs a comment between them). An id that is the wrapper's own (`#outlook a` is taken,
    /// `#rampart-message a` is not), `:root`, a leading, doubled or trailing combinator and
    /// anything else give `nil` — then the token path decides, including every selector it
    /// drops.
    ///
    /// What the token path does with such a list: leading `html`/`body` compounds (any case)
    /// are dropped with the whitespace and `>` after them (the selector is then the scope alone
    /// if nothing follows; one followed by anything else, or a rest starting with `+` or `~`,
    /// drops the selector), the rest is written after the scope and a space, whitespace runs as
    /// one space (one whitespace token each); equal scoped selectors are written once; names
    /// `host`, `part` and `slotted` are refused (here: left to the token path).
    static func scopedSelector(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, scope: String) -> String? {
        // One selector (the usual case): no list to build.
        guard ByteSearch.firstIndex(of: 0x2C, in: p, from: range.lowerBound, to: range.upperBound) < range.upperBound else {
            return scopeOne(p, range, scope: scope)
        }
        var scoped: [String] = []
        var start = range.lowerBound
        while true {
            var comma = start
            while comma < range.upperBound && p[comma] != 0x2C { comma += 1 }
            guard let one = scopeOne(p, start..<comma, scope: scope) else { return nil }
            if !scoped.contains(one) { scoped.append(one) }
            if comma >= range.upperBound { break }
            start = comma + 1
        }
        return scoped.count == 1 ? scoped[0] : scoped.joined(separator: ",")
    }

    /// One selector of ``scopedSelector(_:_:scope:)``.
    private static func scopeOne(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, scope: String) -> String? {
        var lo = range.lowerBound
        var hi = range.upperBound
        while lo < hi && isSpace(p[lo]) { lo += 1 }
        while hi > lo && isSpace(p[hi - 1]) { hi -= 1 }
        guard lo < hi else { return nil }
        // Check every name: the shape above, and none the token path refuses.
        var k = lo
        // Nothing yet in the current compound; a combinator waiting for its compound.
        var compoundEmpty = true
        var needCompound = false
        while k < hi {
            let b = p[k]
            if isSpace(b) {
                while k < hi && isSpace(p[k]) { k += 1 }
                compoundEmpty = true
                continue
            }
            if b == 0x3E || b == 0x2B || b == 0x7E {
                // `>`, `+`, `~`: one between two compounds (a leading one, two in a row or a
                // trailing one are left to the token path).
                guard k > lo, !needCompound else { return nil }
                needCompound = true
                compoundEmpty = true
                k += 1
                continue
            }
            if b == 0x5B {
                // An attribute selector (`[name]`, `[name=value]`, `[name="value"]`), then what
                // may follow a compound's part.
                guard let close = attributeSelectorEnd(p, from: k, to: hi) else { return nil }
                k = close + 1
                if k < hi {
                    switch p[k] {
                    case 0x20, 0x09, 0x0A, 0x0D, 0x0C, 0x2E, 0x23, 0x3A, 0x3E, 0x2B, 0x7E, 0x5B: break
                    default: return nil
                    }
                }
                compoundEmpty = false
                needCompound = false
                continue
            }
            if b == 0x2A {
                // `*` starts a compound; a name right after it is left to the token path.
                guard compoundEmpty, k + 1 == hi || !isNameCode(p[k + 1]) && p[k + 1] != 0x2A else { return nil }
                compoundEmpty = false
                needCompound = false
                k += 1
                continue
            }
            var nameStart = k
            if b == 0x2E || b == 0x23 {
                nameStart = k + 1
            } else if b == 0x3A {
                // A pseudo-class or pseudo-element: `:name` or `::name`.
                nameStart = k + 1 < hi && p[k + 1] == 0x3A ? k + 2 : k + 1
            } else if !compoundEmpty {
                return nil  // a type name after something in the same compound
            }
            guard nameStart < hi, isNameStart(p[nameStart]) else { return nil }
            var nameEnd = nameStart + 1
            while nameEnd < hi && isNameCode(p[nameEnd]) { nameEnd += 1 }
            if nameEnd < hi {
                // What may follow a name (a `(` would make it a function, a `*` is left out).
                switch p[nameEnd] {
                case 0x20, 0x09, 0x0A, 0x0D, 0x0C, 0x2E, 0x23, 0x3A, 0x3E, 0x2B, 0x7E, 0x5B: break
                default: return nil
                }
            }
            if isWord(p, nameStart..<nameEnd, "host") || isWord(p, nameStart..<nameEnd, "part") || isWord(p, nameStart..<nameEnd, "slotted") {
                return nil
            }
            // The wrapper's own id and `:root`: the token path maps a leading one to the scope
            // (left to it).
            if b == 0x23 && isScopeID(p, nameStart..<nameEnd, scope: scope) { return nil }
            if b == 0x3A && isWord(p, nameStart..<nameEnd, "root") { return nil }
            compoundEmpty = false
            needCompound = false
            k = nameEnd
        }
        guard !needCompound else { return nil }
        // Leading `html`/`body` compounds (a lone type name followed by whitespace, `>` or the
        // end), with the whitespace and `>` after them.
        var mapped = false
        while true {
            var end = lo
            while end < hi && isNameCode(p[end]) { end += 1 }
            guard isWord(p, lo..<end, "html") || isWord(p, lo..<end, "body") else { break }
            // `body.x`, `body+p`: the token path drops the selector (the compound must end after
            // the name, and only whitespace or `>` may follow it).
            guard end == hi || isSpace(p[end]) || p[end] == 0x3E else { return nil }
            lo = end
            while lo < hi && (isSpace(p[lo]) || p[lo] == 0x3E) { lo += 1 }
            mapped = true
        }
        // What is left may not start with a combinator (`html + p` is dropped).
        if lo < hi && (p[lo] == 0x2B || p[lo] == 0x7E) { return nil }
        if lo == hi { return mapped ? scope : nil }
        // The scope, a space, the selector with each whitespace run as one space: written
        // straight into the new string (never longer than the scope + 1 + the selector).
        var scope = scope
        return scope.withUTF8 { scopeBytes in
            String(unsafeUninitializedCapacity: scopeBytes.count + 1 + hi - lo) { out in
                var count = 0
                for b in scopeBytes { out[count] = b; count += 1 }
                out[count] = 0x20
                count += 1
                var i = lo
                while i < hi {
                    if isSpace(p[i]) {
                        out[count] = 0x20
                        while i < hi && isSpace(p[i]) { i += 1 }
                    } else {
                        out[count] = p[i]
                        i += 1
                    }
                    count += 1
                }
                return count
            }
        }
    }

    /// The offset of the `]` closing the attribute selector whose `[` is at `from`, when it is
    /// `[name]`, `[name=name]` or `[name="text"]` with no whitespace, every name
    /// `[A-Za-z_][A-Za-z0-9_-]*` other than `host`, `part` and `slotted` (which the token path
    /// refuses) and the text as ``plainStringEnd(_:from:to:quote:)`` takes it; `nil` for
    /// anything else (the token path decides). The tokenizer reads these as a `[` block of an
    /// ident, a `=` delimiter and an ident or a string, which the serializer writes back as the
    /// same bytes: no pair of them needs a comment between them, and such a string is written
    /// with the double quotes it has.
    private static func attributeSelectorEnd(_ p: UnsafeBufferPointer<UInt8>, from: Int, to hi: Int) -> Int? {
        /// The end of a plain name starting at `k` that the token path does not refuse.
        func nameEnd(_ k: Int) -> Int? {
            guard k < hi, isNameStart(p[k]) else { return nil }
            var end = k + 1
            while end < hi && isNameCode(p[end]) { end += 1 }
            if isWord(p, k..<end, "host") || isWord(p, k..<end, "part") || isWord(p, k..<end, "slotted") { return nil }
            return end
        }
        guard var k = nameEnd(from + 1), k < hi else { return nil }
        if p[k] == 0x3D {
            k += 1
            guard k < hi else { return nil }
            if p[k] == 0x22 {
                guard let close = plainStringEnd(p, from: k + 1, to: hi, quote: 0x22) else { return nil }
                k = close + 1
            } else {
                guard let end = nameEnd(k) else { return nil }
                k = end
            }
        }
        guard k < hi, p[k] == 0x5D else { return nil }
        return k
    }

    /// Whether the id `p[range]` (a plain name) may be the wrapper's: `scope` is `#` and the
    /// wrapper's id (when the id needed escapes there, every id is taken for it: the token path
    /// decides).
    private static func isScopeID(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, scope: String) -> Bool {
        let id = scope.utf8.dropFirst()
        guard id.allSatisfy(isNameCode) else { return true }
        return id.elementsEqual(UnsafeBufferPointer(rebasing: p[range]))
    }

    /// Whether `p[range]` is `word` (lowercase ASCII) in any case.
    private static func isWord(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ word: StaticString) -> Bool {
        guard range.count == word.utf8CodeUnitCount else { return false }
        for k in 0..<range.count where p[range.lowerBound + k] | 0x20 != word.utf8Start[k] { return false }
        return true
    }
}
