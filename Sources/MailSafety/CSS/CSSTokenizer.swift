// A CSS Syntax Level 3 tokenizer (https://www.w3.org/TR/css-syntax-3/#tokenization), written
// for the mail sanitizer: it decodes escapes exactly as a browser does, so `\65 xpression(` is
// seen as the function `expression(`, and the sanitizer serializes only tokens it understood.

/// One CSS token (CSS Syntax Level 3 §4).
///
/// Trust-model row: inbox (incoming mail) — style sheets in mail are read token by token so that
/// escapes, comments and odd spacing cannot hide `expression()`, `url()` or `@import`.
public enum CSSToken: Sendable, Equatable {
    case ident(String)
    case function(String)
    case atKeyword(String)
    /// `#name`; `isID` is the spec's type flag ("id" when the name would be a valid identifier).
    case hash(String, isID: Bool)
    case string(String)
    case badString
    case url(String)
    case badURL
    case delim(Unicode.Scalar)
    /// A number; `repr` is the source text of the number (kept so output matches input).
    case number(Double, repr: String, isInteger: Bool)
    case percentage(Double, repr: String)
    case dimension(Double, repr: String, unit: String)
    case whitespace
    case cdo
    case cdc
    case colon, semicolon, comma
    case openSquare, closeSquare, openParen, closeParen, openCurly, closeCurly
}

/// Tokenizes CSS text per CSS Syntax Level 3.
///
/// Trust-model row: inbox — the first step of CSS sanitizing.
public struct CSSTokenizer: Sendable {
    private var input: [Unicode.Scalar]
    private var position = 0

    /// Prepares `text` (the spec's preprocessing: CR, CRLF and FF become LF, NUL becomes U+FFFD).
    public init(_ text: String) {
        var scalars: [Unicode.Scalar] = []
        scalars.reserveCapacity(text.unicodeScalars.count)
        var previousCR = false
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\r": scalars.append("\n"); previousCR = true; continue
            case "\n": if !previousCR { scalars.append("\n") }
            case "\u{0C}": scalars.append("\n")
            case "\u{0}": scalars.append("\u{FFFD}")
            default: scalars.append(scalar)
            }
            previousCR = false
        }
        input = scalars
    }

    /// Every token of the input (comments are dropped, as the spec's tokenizer does).
    public static func tokenize(_ text: String) -> [CSSToken] {
        var tokenizer = CSSTokenizer(text)
        var tokens: [CSSToken] = []
        while let token = tokenizer.next() { tokens.append(token) }
        return tokens
    }

    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        let index = position + offset
        return index < input.count ? input[index] : nil
    }

    /// The next token, or `nil` at the end of input.
    public mutating func next() -> CSSToken? {
        consumeComments()
        guard let c = peek() else { return nil }
        position += 1
        switch c {
        case "\n", "\t", " ":
            while let n = peek(), n == "\n" || n == "\t" || n == " " { position += 1 }
            return .whitespace
        case "\"", "'":
            return consumeString(ending: c)
        case "#":
            if let n = peek(), Self.isNameCode(n) || Self.isValidEscape(n, peek(1)) {
                let isID = wouldStartIdentifier(peek(), peek(1), peek(2))
                return .hash(consumeName(), isID: isID)
            }
            return .delim(c)
        case "(": return .openParen
        case ")": return .closeParen
        case "+", ".":
            if startsNumber(c, peek(), peek(1)) { position -= 1; return consumeNumeric() }
            return .delim(c)
        case ",": return .comma
        case "-":
            if startsNumber(c, peek(), peek(1)) { position -= 1; return consumeNumeric() }
            if peek() == "-" && peek(1) == ">" { position += 2; return .cdc }
            if wouldStartIdentifier(c, peek(), peek(1)) { position -= 1; return consumeIdentLike() }
            return .delim(c)
        case ":": return .colon
        case ";": return .semicolon
        case "<":
            if peek() == "!" && peek(1) == "-" && peek(2) == "-" { position += 3; return .cdo }
            return .delim(c)
        case "@":
            if wouldStartIdentifier(peek(), peek(1), peek(2)) { return .atKeyword(consumeName()) }
            return .delim(c)
        case "[": return .openSquare
        case "\\":
            if Self.isValidEscape(c, peek()) { position -= 1; return consumeIdentLike() }
            return .delim(c)
        case "]": return .closeSquare
        case "{": return .openCurly
        case "}": return .closeCurly
        default:
            if Self.isDigit(c) { position -= 1; return consumeNumeric() }
            if Self.isNameStart(c) { position -= 1; return consumeIdentLike() }
            return .delim(c)
        }
    }

    private mutating func consumeComments() {
        while peek() == "/" && peek(1) == "*" {
            position += 2
            while position < input.count {
                if input[position] == "*" && peek(1) == "/" { position += 2; break }
                position += 1
            }
            if position > input.count { position = input.count }
        }
    }

    static func isDigit(_ c: Unicode.Scalar) -> Bool { c.value >= 0x30 && c.value <= 0x39 }
    static func isHex(_ c: Unicode.Scalar) -> Bool {
        isDigit(c) || (c.value >= 0x41 && c.value <= 0x46) || (c.value >= 0x61 && c.value <= 0x66)
    }
    static func isNameStart(_ c: Unicode.Scalar) -> Bool {
        (c.value >= 0x41 && c.value <= 0x5A) || (c.value >= 0x61 && c.value <= 0x7A) || c == "_" || c.value >= 0x80
    }
    static func isNameCode(_ c: Unicode.Scalar) -> Bool { isNameStart(c) || isDigit(c) || c == "-" }
    static func isNonPrintable(_ c: Unicode.Scalar) -> Bool {
        c.value <= 0x08 || c.value == 0x0B || (c.value >= 0x0E && c.value <= 0x1F) || c.value == 0x7F
    }
    static func isValidEscape(_ first: Unicode.Scalar?, _ second: Unicode.Scalar?) -> Bool {
        first == "\\" && second != nil && second != "\n"
    }

    private func wouldStartIdentifier(_ a: Unicode.Scalar?, _ b: Unicode.Scalar?, _ c: Unicode.Scalar?) -> Bool {
        guard let a else { return false }
        if a == "-" {
            guard let b else { return false }
            return Self.isNameStart(b) || b == "-" || Self.isValidEscape(b, c)
        }
        if Self.isNameStart(a) { return true }
        if a == "\\" { return Self.isValidEscape(a, b) }
        return false
    }

    private func startsNumber(_ a: Unicode.Scalar?, _ b: Unicode.Scalar?, _ c: Unicode.Scalar?) -> Bool {
        guard let a else { return false }
        if a == "+" || a == "-" {
            guard let b else { return false }
            if Self.isDigit(b) { return true }
            return b == "." && c.map(Self.isDigit) == true
        }
        if a == "." { return b.map(Self.isDigit) == true }
        return Self.isDigit(a)
    }

    private mutating func consumeEscape() -> Unicode.Scalar {
        // The backslash has been consumed.
        guard let c = peek() else { return "\u{FFFD}" }
        position += 1
        if Self.isHex(c) {
            var value = c.value <= 0x39 ? c.value - 0x30 : (c.value | 0x20) - 0x61 + 10
            var count = 1
            while count < 6, let n = peek(), Self.isHex(n) {
                value = value * 16 + (n.value <= 0x39 ? n.value - 0x30 : (n.value | 0x20) - 0x61 + 10)
                position += 1
                count += 1
            }
            if let n = peek(), n == "\n" || n == "\t" || n == " " { position += 1 }
            if value == 0 || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF) { return "\u{FFFD}" }
            return Unicode.Scalar(value) ?? "\u{FFFD}"
        }
        return c
    }

    private mutating func consumeName() -> String {
        // Runs of name code points are copied whole; only escapes are decoded one by one.
        var result = String.UnicodeScalarView()
        var runStart = position
        while let c = peek() {
            if Self.isNameCode(c) {
                position += 1
            } else if Self.isValidEscape(c, peek(1)) {
                appendRun(runStart..<position, to: &result)
                position += 1
                result.append(consumeEscape())
                runStart = position
            } else {
                break
            }
        }
        return finish(result, run: runStart..<position)
    }

    /// Appends the input scalars in `run` to `result`.
    private func appendRun(_ run: Range<Int>, to result: inout String.UnicodeScalarView) {
        if !run.isEmpty { result.append(contentsOf: input[run]) }
    }

    /// `result` followed by the input scalars in `run`, as a `String`: the same scalars the
    /// scalar-by-scalar loop appended. An all-ASCII run with nothing before it is written as
    /// its bytes (one byte per scalar).
    private func finish(_ result: String.UnicodeScalarView, run: Range<Int>) -> String {
        if result.isEmpty && !run.isEmpty {
            var ascii = true
            for k in run where input[k].value >= 0x80 { ascii = false; break }
            if ascii {
                return String(unsafeUninitializedCapacity: run.count) { out in
                    for (k, index) in run.enumerated() { out[k] = UInt8(truncatingIfNeeded: input[index].value) }
                    return run.count
                }
            }
        }
        var all = result
        appendRun(run, to: &all)
        return String(all)
    }

    private mutating func consumeString(ending: Unicode.Scalar) -> CSSToken {
        var result = String.UnicodeScalarView()
        while let c = peek() {
            position += 1
            if c == ending { return .string(String(result)) }
            if c == "\n" { position -= 1; return .badString }
            if c == "\\" {
                guard let n = peek() else { continue }
                if n == "\n" { position += 1; continue }
                result.append(consumeEscape())
                continue
            }
            result.append(c)
        }
        return .string(String(result))
    }

    private mutating func consumeNumber() -> (Double, String, Bool) {
        var repr = String.UnicodeScalarView()
        var isInteger = true
        if let c = peek(), c == "+" || c == "-" { repr.append(c); position += 1 }
        while let c = peek(), Self.isDigit(c) { repr.append(c); position += 1 }
        if peek() == ".", let d = peek(1), Self.isDigit(d) {
            isInteger = false
            repr.append("."); position += 1
            while let c = peek(), Self.isDigit(c) { repr.append(c); position += 1 }
        }
        if let e = peek(), e == "e" || e == "E" {
            if let d = peek(1), Self.isDigit(d) {
                isInteger = false
                repr.append(e); position += 1
                while let c = peek(), Self.isDigit(c) { repr.append(c); position += 1 }
            } else if let s = peek(1), s == "+" || s == "-", let d = peek(2), Self.isDigit(d) {
                isInteger = false
                repr.append(e); repr.append(s); position += 2
                while let c = peek(), Self.isDigit(c) { repr.append(c); position += 1 }
            }
        }
        let text = String(repr)
        return (Double(text) ?? 0, text, isInteger)
    }

    private mutating func consumeNumeric() -> CSSToken {
        let (value, repr, isInteger) = consumeNumber()
        if wouldStartIdentifier(peek(), peek(1), peek(2)) {
            return .dimension(value, repr: repr, unit: consumeName())
        }
        if peek() == "%" { position += 1; return .percentage(value, repr: repr) }
        return .number(value, repr: repr, isInteger: isInteger)
    }

    private mutating func consumeIdentLike() -> CSSToken {
        let name = consumeName()
        if name.lowercased() == "url" && peek() == "(" {
            position += 1
            while peek() == " " || peek() == "\n" || peek() == "\t", let n = peek(1), n == " " || n == "\n" || n == "\t" {
                position += 1
            }
            let a = peek()
            let b = (a == " " || a == "\n" || a == "\t") ? peek(1) : a
            if b == "\"" || b == "'" { return .function(name) }
            return consumeURL()
        }
        if peek() == "(" { position += 1; return .function(name) }
        return .ident(name)
    }

    private mutating func consumeURL() -> CSSToken {
        // As in consumeName, the URL's plain scalars are copied as runs.
        var result = String.UnicodeScalarView()
        while peek() == " " || peek() == "\n" || peek() == "\t" { position += 1 }
        var runStart = position
        while let c = peek() {
            let here = position
            position += 1
            switch c {
            case ")": return .url(finish(result, run: runStart..<here))
            case " ", "\n", "\t":
                while peek() == " " || peek() == "\n" || peek() == "\t" { position += 1 }
                if peek() == nil { return .url(finish(result, run: runStart..<here)) }
                if peek() == ")" { position += 1; return .url(finish(result, run: runStart..<here)) }
                consumeBadURLRemnants(); return .badURL
            case "\"", "'", "(":
                consumeBadURLRemnants(); return .badURL
            case "\\":
                guard Self.isValidEscape(c, peek()) else { consumeBadURLRemnants(); return .badURL }
                appendRun(runStart..<here, to: &result)
                result.append(consumeEscape())
                runStart = position
            default:
                if Self.isNonPrintable(c) { consumeBadURLRemnants(); return .badURL }
            }
        }
        return .url(finish(result, run: runStart..<position))
    }

    private mutating func consumeBadURLRemnants() {
        while let c = peek() {
            position += 1
            if c == ")" { return }
            if Self.isValidEscape(c, peek()) { _ = consumeEscape() }
        }
    }
}
