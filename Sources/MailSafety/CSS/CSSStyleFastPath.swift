import Foundation

/// A one-pass, byte-level fast path for `style` attributes in the shape mail actually uses
/// (`margin:0 0 8px;font-family:Arial,sans-serif;color:#333`): plain ASCII identifiers, numbers,
/// dimensions, percentages, hashes, commas, `/`, quoted strings and allowlisted functions such as
/// `rgb(…)`, with an optional `!important`.
///
/// It writes exactly the text the full path (``CSSTokenizer`` → ``CSSParser`` →
/// ``CSSSanitizer`` → ``CSSSerializer``) writes for such input, and it gives up
/// (``Result/unhandled``) on everything else: escapes, comments, `url(`/`image-set(`, functions
/// off the allowlist, custom properties, forbidden properties, `position`/`z-index` (which are
/// rewritten), at-keywords, blocks, `<`, non-ASCII outside strings, adjacent tokens the
/// serializer separates with a comment, and any declaration the full path would drop or report.
/// So the fast path never decides anything the full path would decide differently, and never
/// touches the report: when it answers, the full path would have answered the same with no
/// report entry (PropertyTests' fast-path differential checks both on generated input).
///
/// Trust-model row: inbox (incoming mail) — inline CSS is still sanitized by the same rules; only
/// the common, provably inert shape skips the token trees.
enum CSSStyleFastPath {
    enum Result: Equatable {
        /// The sanitized declarations (the input itself when it was already in that form).
        case kept(String)
        /// No declaration at all (the attribute is dropped, nothing is reported).
        case empty
        /// Outside the fast path's subset: use the full path.
        case unhandled
    }

    /// ``Result``, with input that is already in the sanitized form told apart (``same``)
    /// instead of returned: the caller has the text already. (Trust-model row: inbox.) Returning
    /// it, as ``Result/kept(_:)``, is a retain of the text, and the caller's drop of the copy a
    /// release, each an atomic read-modify-write, for most style attributes of every message.
    enum Answer {
        /// The input itself is the sanitized text.
        case same
        /// Sanitized text that differs from the input.
        case kept(String)
        case empty
        case unhandled
    }

    static func sanitize(_ text: String) -> Result {
        result(answer(text, urls: false, resolve: { _, _ in nil }), text)
    }

    /// ``sanitize(_:)`` with plain `url(…)` tokens resolved by `resolve` (see below).
    static func sanitize(_ text: String, resolve: (_ url: String, _ quoted: Bool) -> String?) -> Result {
        result(answer(text, urls: true, resolve: resolve), text)
    }

    /// ``sanitize(_:resolve:)``, answering ``Answer/same`` where that answers `.kept(text)`.
    static func answer(_ text: String, resolve: (_ url: String, _ quoted: Bool) -> String?) -> Answer {
        answer(text, urls: true, resolve: resolve)
    }

    private static func result(_ answer: Answer, _ text: String) -> Result {
        switch answer {
        case .same: return .kept(text)
        case .kept(let style): return .kept(style)
        case .empty: return .empty
        case .unhandled: return .unhandled
        }
    }

    /// ``sanitize(_:)``, and with `urls` also declarations with plain `url(…)` URLs (unquoted
    /// or quoted, printable ASCII, no escape): `resolve` is called once per URL, in the
    /// order and for exactly the URLs the full path sends to the resource gate (so the report
    /// gets the same entries in the same order), and returns the URL to load or `nil`, which
    /// drops the declaration as the full path does; `quoted` says the URL was the string form
    /// `url("…")`, whose drop the full path also counts as a removed declaration (the resolver
    /// notes it, as it notes what the gate decided). It is called only once the whole attribute
    /// is known to be in the fast path's subset, so a fast path that gives up has reported
    /// nothing and the full path reports everything.
    /// (`resolve` is a non-escaping closure: no allocation per attribute.)
    private static func answer(_ text: String, urls handled: Bool, resolve: (_ url: String, _ quoted: Bool) -> String?) -> Answer {
        let result = text.utf8.withContiguousStorageIfAvailable { bytes -> Answer in
            // The output is never longer than the input (every byte written stands for at least
            // one byte read) unless loaded URLs are written; the writer checks its bounds anyway
            // and gives up when full.
            var found: [(declaration: Int, range: Range<Int>)] = []
            let first = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bytes.count + 16) { buffer -> Answer? in
                guard let base = buffer.baseAddress else { return .unhandled }
                var out = Writer(base: base, capacity: buffer.count)
                var urls = URLs(mode: handled ? .collect : .refuse)
                guard run(bytes, into: &out, urls: &urls), !out.overflowed else { return .unhandled }
                // URLs seen: resolved below, then written by a second run. (Swapped out, not
                // copied: no retain of the array, and nothing left for `urls` to release.)
                swap(&found, &urls.found)
                if !found.isEmpty { return nil }
                return finish(bytes, out)
            }
            if let first { return first }
            return resolveAndWrite(bytes, found, resolve)
        }
        return result ?? .unhandled
    }

    private static func finish(_ bytes: UnsafeBufferPointer<UInt8>, _ out: Writer) -> Answer {
        if out.count == 0 { return .empty }
        if out.count == bytes.count, let input = bytes.baseAddress, memcmp(out.base, input, out.count) == 0 { return .same }
        return .kept(String(decoding: UnsafeBufferPointer(start: out.base, count: out.count), as: UTF8.self))
    }

    /// The second run for an attribute with URLs: each URL is resolved in source order, except
    /// those after a dropped URL in the same declaration (the full path stops at the first); then
    /// the declarations are written with the loaded URLs, or left out.
    private static func resolveAndWrite(_ bytes: UnsafeBufferPointer<UInt8>,
                                        _ found: [(declaration: Int, range: Range<Int>)], _ resolve: (String, Bool) -> String?) -> Answer {
        var resolved: [[UInt8]?] = []
        resolved.reserveCapacity(found.count)
        var droppedDeclaration = -1
        var extra = 0
        for (declaration, range) in found {
            if declaration == droppedDeclaration { resolved.append(nil); continue }
            // The string form (`url("…")`): its URL follows the quote.
            let quoted = range.lowerBound > 0 && (bytes[range.lowerBound - 1] == 0x22 || bytes[range.lowerBound - 1] == 0x27)
            if let url = resolve(String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self), quoted) {
                // `url(` + the URL as the serializer writes a string + `)`.
                let written = Array(("url(" + CSSSerializer.string(url) + ")").utf8)
                extra += written.count
                resolved.append(written)
            } else {
                droppedDeclaration = declaration
                resolved.append(nil)
            }
        }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bytes.count + extra + 16) { buffer -> Answer in
            guard let base = buffer.baseAddress else { return .unhandled }
            var out = Writer(base: base, capacity: buffer.count)
            var urls = URLs(mode: .write(resolved))
            // The same input as the first run, which succeeded, and only the URL tokens are written
            // differently: this run succeeds too, and its output (the input's bytes, or fewer,
            // with each URL token replaced by its written form) fits the buffer. The gate has
            // been asked already, so giving up here would report twice: it cannot happen.
            guard run(bytes, into: &out, urls: &urls), !out.overflowed else { preconditionFailure("CSS style fast path: second run failed") }
            return finish(bytes, out)
        }
    }

    /// What the run does with `url(…)` tokens.
    struct URLs {
        enum Mode {
            /// Give up (the `<style>` sheet path, and attributes without a resolver).
            case refuse
            /// Record each URL: the ordinal of its declaration and its bytes.
            case collect
            /// Write the k-th URL as `written[k]`, or drop its declaration when `nil`.
            case write([[UInt8]?])
        }
        var mode: Mode
        var found: [(declaration: Int, range: Range<Int>)] = []
        var next = 0
    }

    /// Appends bytes to a fixed buffer; past its end it only records the overflow.
    struct Writer {
        let base: UnsafeMutablePointer<UInt8>
        let capacity: Int
        var count = 0
        var overflowed = false

        init(base: UnsafeMutablePointer<UInt8>, capacity: Int) {
            self.base = base
            self.capacity = capacity
        }

        @inline(__always) mutating func append(_ byte: UInt8) {
            guard count < capacity else { overflowed = true; return }
            base[count] = byte
            count += 1
        }

        @inline(__always) mutating func append(contentsOf bytes: UnsafeBufferPointer<UInt8>) {
            guard bytes.count <= capacity - count else { overflowed = true; return }
            if let source = bytes.baseAddress { (base + count).update(from: source, count: bytes.count) }
            count += bytes.count
        }

        @inline(__always) mutating func append(_ literal: StaticString) {
            append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
        }

        /// Appends `bytes` with ASCII `A`–`Z` lowered (every other byte as it is): the names the
        /// serializer writes lowercased. One bounds check for the run, and whole words while the
        /// bytes are ASCII (a byte at a time, each checked and counted, was ~15 instructions a
        /// byte of every property name). Words may overlap: a byte written twice is written the
        /// same both times.
        @inline(__always) mutating func appendLowercased(_ bytes: UnsafeBufferPointer<UInt8>) {
            let n = bytes.count
            guard n <= capacity - count else { overflowed = true; return }
            guard let source = bytes.baseAddress else { return }
            let from = UnsafeRawPointer(source)
            let target = base + count
            let to = UnsafeMutableRawPointer(target)
            count += n
            if n >= 8 {
                // Eight bytes at a time, the last word ending at the end.
                var k = 0
                while true {
                    let w = from.loadUnaligned(fromByteOffset: k, as: UInt64.self)
                    guard w & ASCIIWords.highBits == 0 else { break }
                    to.storeBytes(of: ASCIIWords.lowercased(w), toByteOffset: k, as: UInt64.self)
                    if k == n - 8 { return }
                    k = min(k + 8, n - 8)
                }
            } else if n >= 4 {
                // The first four bytes and the last four.
                let a = UInt64(from.loadUnaligned(as: UInt32.self))
                let b = UInt64(from.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self))
                if (a | b) & ASCIIWords.highBits == 0 {
                    to.storeBytes(of: UInt32(truncatingIfNeeded: ASCIIWords.lowercased(a)), as: UInt32.self)
                    to.storeBytes(of: UInt32(truncatingIfNeeded: ASCIIWords.lowercased(b)), toByteOffset: n - 4, as: UInt32.self)
                    return
                }
            }
            // Short, or not ASCII: a byte at a time (over any bytes written above, the same).
            for k in 0..<n {
                let b = source[k]
                target[k] = b >= 0x41 && b <= 0x5A ? b | 0x20 : b
            }
        }
    }

    // MARK: Byte classes (CSS Syntax Level 3 §4.2, ASCII only; non-ASCII gives up)

    @inline(__always) private static func isLetter(_ b: UInt8) -> Bool { (b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A }
    @inline(__always) private static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
    /// Name-start code point, ASCII part (non-ASCII name-starts make the caller give up).
    @inline(__always) private static func isNameStart(_ b: UInt8) -> Bool { isLetter(b) || b == 0x5F }
    /// A name code point, ASCII part: letter, digit, `_`, `-`. One bit test (bit `b` of the
    /// two words below: `-` and `0`–`9` in the first, `A`–`Z`, `_`, `a`–`z` in the second) instead
    /// of four range tests, for every byte of every name.
    @inline(__always) private static func isNameCode(_ b: UInt8) -> Bool {
        b < 0x40 ? (0x03FF_2000_0000_0000 as UInt64) >> UInt64(b) & 1 != 0 : b < 0x80 && (0x07FF_FFFE_87FF_FFFE as UInt64) >> UInt64(b & 0x3F) & 1 != 0
    }
    /// Whitespace after the tokenizer's preprocessing: space, tab, LF, CR, FF.
    @inline(__always) private static func isSpace(_ b: UInt8) -> Bool {
        b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D || b == 0x0C
    }

    private enum Previous { case start, space, word, other }

    /// The end of the run of name code points (``isNameCode(_:)``) that starts at `start`: the
    /// index of the first other byte, or `p.count`. Eight bytes at a time while they are ASCII
    /// (each byte of each name went through the class test and the loop's bookkeeping, ~11
    /// instructions a byte): per byte of the word, the high bit of `name` is set exactly when
    /// the byte is a letter, a digit, `-` or `_`. Each test adds a constant below 0x80 to bytes
    /// below 0x80, so no sum carries into the next byte and every byte's answer is its own; the
    /// first byte whose bit is clear is the lowest (the word is read little-endian).
    private static func nameCodeRunEnd(_ p: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        let n = p.count
        let high = ASCIIWords.highBits
        let ones = ASCIIWords.ones
        // Per byte of `x` (below 0x80): high bit set iff the byte is at least / above `c`.
        @inline(__always) func atLeast(_ x: UInt64, _ c: UInt8) -> UInt64 { (x &+ ones &* UInt64(0x80 - c)) & high }
        @inline(__always) func above(_ x: UInt64, _ c: UInt8) -> UInt64 { (x &+ ones &* UInt64(0x7F - c)) & high }
        @inline(__always) func equal(_ x: UInt64, _ c: UInt8) -> UInt64 { ~((x ^ ones &* UInt64(c)) &+ ones &* 0x7F) & high }
        var k = start
        while k + 8 <= n {
            let w = UInt64(littleEndian: ASCIIWords.word(p, at: k))
            guard w & high == 0 else { break }
            let folded = w | ones &* 0x20
            let letter = atLeast(folded, 0x61) & ~above(folded, 0x7A)
            let digit = atLeast(w, 0x30) & ~above(w, 0x39)
            let name = letter | digit | equal(w, 0x2D) | equal(w, 0x5F)
            let other = ~name & high
            if other != 0 { return k + other.trailingZeroBitCount / 8 }
            k += 8
        }
        while k < n && isNameCode(p[k]) { k += 1 }
        return k
    }

    /// Tokenizes, checks and serializes `bytes`; `false` = give up. (Also used for the
    /// declaration blocks of ``CSSSheetFastPath``.)
    static func run(_ p: UnsafeBufferPointer<UInt8>, into out: inout Writer) -> Bool {
        var urls = URLs(mode: .refuse)
        return run(p, into: &out, urls: &urls)
    }

    /// ``run(_:into:)`` with `url(…)` tokens handled as `urls` says.
    static func run(_ p: UnsafeBufferPointer<UInt8>, into out: inout Writer, urls: inout URLs) -> Bool {
        let n = p.count
        var i = 0
        @inline(__always) func at(_ k: Int) -> UInt8 { k < n ? p[k] : 0 }
        /// The spec's "would start an identifier" at `k` (ASCII; a backslash or a non-ASCII
        /// byte there is reported as `nil`: give up).
        func startsIdentifier(_ k: Int) -> Bool? {
            let a = at(k)
            if a == 0x5C || a >= 0x80 { return nil }
            if a == 0x2D {
                let b = at(k + 1)
                if b == 0x5C || b >= 0x80 { return nil }
                return isNameStart(b) || b == 0x2D
            }
            return isNameStart(a)
        }
        /// The spec's "starts a number" at `k`.
        func startsNumber(_ k: Int) -> Bool {
            let a = at(k)
            if a == 0x2B || a == 0x2D {
                let b = at(k + 1)
                return isDigit(b) || (b == 0x2E && isDigit(at(k + 2)))
            }
            if a == 0x2E { return isDigit(at(k + 1)) }
            return isDigit(a)
        }
        /// Consumes name code points from `i`; `false` on an escape or non-ASCII.
        func consumeName() -> Bool {
            let k = nameCodeRunEnd(p, from: i)
            i = k
            return k == n || (p[k] != 0x5C && p[k] < 0x80)
        }

        var declarations = 0
        while true {
            while i < n && (isSpace(p[i]) || p[i] == 0x3B) { i += 1 }  // whitespace and empty declarations
            if i >= n { break }
            // The name: an ident token, then `:`.
            guard startsIdentifier(i) == true else { return false }
            let nameStart = i
            guard consumeName() else { return false }
            let nameEnd = i
            if at(i) == 0x28 { return false }  // a function token, not a name
            while i < n && isSpace(p[i]) { i += 1 }
            guard at(i) == 0x3A else { return false }
            i += 1
            guard isPlainProperty(p, nameStart, nameEnd) else { return false }
            let declarationStart = out.count
            var dropped = false  // a URL of this declaration was not loaded: it is left out
            if declarations > 0 { out.append(0x3B) }
            declarations += 1
            out.appendLowercased(UnsafeBufferPointer(rebasing: p[nameStart..<nameEnd]))
            out.append(0x3A)
            while i < n && isSpace(p[i]) { i += 1 }

            // The value, up to a top-level `;` or the end.
            var depth = 0
            var previous = Previous.start
            var pendingSpace = false
            var important = false
            value: while i < n {
                let b = p[i]
                if isSpace(b) {
                    while i < n && isSpace(p[i]) { i += 1 }
                    pendingSpace = true
                    continue
                }
                if b == 0x3B {
                    guard depth == 0 else { return false }
                    break value
                }
                if b == 0x21 {
                    // `!important`, then only whitespace up to the end of the declaration.
                    guard depth == 0 else { return false }
                    var k = i + 1
                    while k < n && isSpace(p[k]) { k += 1 }
                    let word = k
                    while k < n && isNameCode(p[k]) { k += 1 }
                    guard k - word == 9, at(k) != 0x5C, at(k) < 0x80, at(k) != 0x28 else { return false }
                    let expected: [UInt8] = Array("important".utf8)
                    for m in 0..<9 where p[word + m] | 0x20 != expected[m] { return false }
                    while k < n && isSpace(p[k]) { k += 1 }
                    guard k == n || p[k] == 0x3B else { return false }
                    i = k
                    important = true
                    pendingSpace = false
                    break value
                }
                if pendingSpace {
                    out.append(0x20)
                    previous = .space
                    pendingSpace = false
                }
                switch b {
                case 0x2C:  // ,
                    out.append(b); i += 1; previous = .other
                case 0x29:  // )
                    guard depth > 0 else { return false }
                    depth -= 1
                    out.append(b); i += 1; previous = .other
                case 0x2F:  // `/` (a comment start gives up)
                    guard at(i + 1) != 0x2A else { return false }
                    out.append(b); i += 1; previous = .other
                case 0x22, 0x27:  // a string, written with double quotes as the serializer does
                    let quote = b
                    var k = i + 1
                    while k < n && p[k] != quote {
                        let c = p[k]
                        // Escapes, newlines (bad string), controls and DEL (escaped on output),
                        // `"` (escaped), `<` (escaped), and `:`/`(` (the scriptable-word check) give up.
                        if c < 0x20 || c == 0x7F || c == 0x5C || c == 0x22 || c == 0x3C || c == 0x3A || c == 0x28 { return false }
                        k += 1
                    }
                    guard k < n else { return false }  // unterminated
                    out.append(0x22)
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: p[(i + 1)..<k]))
                    out.append(0x22)
                    i = k + 1
                    previous = .other
                case 0x23:  // #name
                    guard previous != .word else { return false }
                    let c = at(i + 1)
                    guard c != 0x5C, c < 0x80, isNameCode(c) else { return false }
                    let start = i
                    i += 1
                    guard consumeName() else { return false }
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: p[start..<i]))
                    previous = .word
                default:
                    if startsNumber(i) {
                        guard previous != .word, consumeNumeric(p, &i, into: &out) else { return false }
                        previous = .word
                        continue value
                    }
                    if b == 0x2D && at(i + 1) == 0x2D && at(i + 2) == 0x3E { return false }  // CDC
                    if b == 0x2D && previous == .space && i + 1 < n && isSpace(p[i + 1]) {
                        // A `-` delim between spaces (`calc(100% - 2px)`): no comment is needed
                        // before or after it there.
                        out.append(b); i += 1; previous = .other
                        continue value
                    }
                    guard startsIdentifier(i) == true, previous != .word else { return false }
                    let start = i
                    guard consumeName() else { return false }
                    if at(i) == 0x28, i - start == 3, p[start] | 0x20 == 0x75, p[start + 1] | 0x20 == 0x72, p[start + 2] | 0x20 == 0x6C {
                        // `url(`: with a resolver, the unquoted URL token (else the full path).
                        guard let range = urlToken(p, &i) else { return false }
                        switch urls.mode {
                        case .refuse:
                            return false
                        case .collect:
                            urls.found.append((declarations - 1, range))
                        case .write(let written):
                            if let bytes = written[urls.next] {
                                bytes.withUnsafeBufferPointer { out.append(contentsOf: $0) }
                            } else {
                                dropped = true
                            }
                            urls.next += 1
                        }
                        // No comment is needed after a URL token (and a word before it gave up above).
                        previous = .other
                    } else if at(i) == 0x28 {
                        // A function: allowlisted, and never `url(` or `image-set(` (URLs go
                        // through the resource gate on the full path).
                        guard depth < 6, isPlainFunction(p, start, i) else { return false }
                        out.appendLowercased(UnsafeBufferPointer(rebasing: p[start..<i]))
                        out.append(0x28)
                        i += 1
                        depth += 1
                        previous = .other
                    } else {
                        out.append(contentsOf: UnsafeBufferPointer(rebasing: p[start..<i]))
                        previous = .word
                    }
                }
            }
            guard depth == 0 else { return false }
            if important { out.append("!important") }
            if dropped {
                out.count = declarationStart
                declarations -= 1
            }
        }
        return true
    }

    /// The URL after `url` at `i` (the `(`), as the tokenizer reads it: the range of the URL
    /// between optional whitespace, with `i` moved past the `)`. Either the unquoted URL token,
    /// or the string form `url("…")`/`url('…')` — a `url` function holding one string token
    /// (and whitespace), whose string the full path sends to the resource gate and writes back
    /// as a URL token, `url("…")`, exactly as it does the unquoted form's URL. `nil` (give up)
    /// for a bad URL (`"`, `'`, `(`, whitespace inside, non-printable bytes), a string with an
    /// escape or a line break (a bad string), anything but whitespace around the string, an
    /// escape, non-ASCII, CR or FF (preprocessed), or a missing `)`.
    private static func urlToken(_ p: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Range<Int>? {
        let n = p.count
        @inline(__always) func isURLSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x0A || b == 0x09 }
        var k = i + 1
        while k < n && isURLSpace(p[k]) { k += 1 }
        if k < n && (p[k] == 0x22 || p[k] == 0x27) {
            // The string form: printable ASCII up to the same quote, no escape.
            let quote = p[k]
            k += 1
            let start = k
            while k < n && p[k] != quote {
                let c = p[k]
                if c == 0x5C || c < 0x20 || c >= 0x7F { return nil }
                k += 1
            }
            guard k < n else { return nil }
            let end = k
            k += 1
            while k < n && isURLSpace(p[k]) { k += 1 }
            guard k < n && p[k] == 0x29 else { return nil }
            i = k + 1
            return start..<end
        }
        let start = k
        while k < n {
            let c = p[k]
            if c == 0x29 || isURLSpace(c) { break }
            if c == 0x22 || c == 0x27 || c == 0x28 || c == 0x5C || c < 0x20 || c >= 0x7F { return nil }
            k += 1
        }
        let end = k
        while k < n && isURLSpace(p[k]) { k += 1 }
        guard k < n && p[k] == 0x29 else { return nil }
        i = k + 1
        return start..<end
    }

    /// A number, percentage or dimension at `i` (which starts a number), written as its source
    /// text; `false` when the unit needs escaping or holds an escape or non-ASCII.
    private static func consumeNumeric(_ p: UnsafeBufferPointer<UInt8>, _ i: inout Int, into out: inout Writer) -> Bool {
        let n = p.count
        @inline(__always) func at(_ k: Int) -> UInt8 { k < n ? p[k] : 0 }
        let start = i
        if p[i] == 0x2B || p[i] == 0x2D { i += 1 }
        while i < n && isDigit(p[i]) { i += 1 }
        if at(i) == 0x2E && isDigit(at(i + 1)) {
            i += 1
            while i < n && isDigit(p[i]) { i += 1 }
        }
        if at(i) | 0x20 == 0x65 {  // e/E exponent
            if isDigit(at(i + 1)) {
                i += 1
                while i < n && isDigit(p[i]) { i += 1 }
            } else if (at(i + 1) == 0x2B || at(i + 1) == 0x2D) && isDigit(at(i + 2)) {
                i += 2
                while i < n && isDigit(p[i]) { i += 1 }
            }
        }
        // A unit (dimension), `%` (percentage), or nothing (number).
        let a = at(i)
        let startsUnit: Bool
        if a == 0x5C || a >= 0x80 { return false }
        if a == 0x2D {
            let b = at(i + 1)
            if b == 0x5C || b >= 0x80 { return false }
            startsUnit = isNameStart(b) || b == 0x2D
        } else {
            startsUnit = isNameStart(a)
        }
        if startsUnit {
            let unitStart = i
            while i < n && isNameCode(p[i]) { i += 1 }
            if at(i) == 0x5C || at(i) >= 0x80 { return false }
            // A unit starting `e` + digit/sign is written with an escape by the serializer.
            if i - unitStart >= 2, p[unitStart] | 0x20 == 0x65 {
                let second = p[unitStart + 1]
                if isDigit(second) || second == 0x2B || second == 0x2D { return false }
            }
            // `1px(`: a block follows, which the fast path does not handle.
            if at(i) == 0x28 { return false }
        } else if a == 0x25 {
            i += 1
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: p[start..<i]))
        return true
    }

    /// The properties the fast path leaves to the full path, in one table (one lookup per
    /// declaration): the forbidden ones, and `position`/`z-index` (whose values it rewrites).
    private static let unplainProperties = ASCIINameTable(CSSSanitizer.forbiddenProperties.union(["position", "z-index"]))
    private static let allowedFunctions = ASCIINameTable(CSSSanitizer.allowedFunctions)
    private static let urlFunctions = ASCIINameTable(["url", "image-set", "-webkit-image-set"])

    /// A property the full path keeps as it is: not custom (`--x`), not forbidden, and not one
    /// whose value it rewrites (`position`, `z-index`).
    private static func isPlainProperty(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Bool {
        if end - start >= 2 && p[start] == 0x2D && p[start + 1] == 0x2D { return false }
        return unplainProperties.value(p, start..<end, lowercasing: true) == nil
    }

    /// An allowlisted function whose arguments hold no URL.
    private static func isPlainFunction(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Bool {
        if urlFunctions.value(p, start..<end, lowercasing: true) != nil { return false }
        return allowedFunctions.value(p, start..<end, lowercasing: true) != nil
    }
}
