// CSS Syntax Level 3 parsing (component values, rules, declarations) and a serializer that turns
// tokens back into text that re-tokenizes to the same tokens (the spec's comment-insertion table),
// so sanitized CSS is stable under re-sanitizing.

/// A component value: a token, a function with its arguments, or a `()`/`[]`/`{}` block.
indirect enum CSSComponent: Sendable, Equatable {
    case token(CSSToken)
    case function(name: String, arguments: [CSSComponent])
    /// `open` is one of `(`, `[`, `{`.
    case block(open: CSSToken, content: [CSSComponent])

    var isWhitespace: Bool { if case .token(.whitespace) = self { return true } else { return false } }
}

/// A rule of a style sheet.
enum CSSRule: Sendable {
    case at(name: String, prelude: [CSSComponent], block: [CSSComponent]?)
    case qualified(prelude: [CSSComponent], block: [CSSComponent])
}

/// One `name: value [!important]` declaration.
struct CSSDeclaration: Sendable {
    var name: String
    var value: [CSSComponent]
    var important: Bool
}

enum CSSParser {
    /// Bounds nesting so a hostile sheet of 100 000 `(` cannot exhaust the stack.
    static let maxNesting = 64

    static func components(_ text: String) -> [CSSComponent] {
        let tokens = CSSTokenizer.tokenize(text)
        var index = 0
        return consumeList(tokens, &index, until: nil, depth: 0)
    }

    private static func closing(_ open: CSSToken) -> CSSToken {
        switch open {
        case .openParen, .function: .closeParen
        case .openSquare: .closeSquare
        default: .closeCurly
        }
    }

    private static func consumeList(_ tokens: [CSSToken], _ index: inout Int, until end: CSSToken?, depth: Int) -> [CSSComponent] {
        var result: [CSSComponent] = []
        while index < tokens.count {
            let token = tokens[index]
            index += 1
            if let end, token == end { return result }
            switch token {
            case .openParen, .openSquare, .openCurly:
                if depth >= maxNesting { skipBlock(tokens, &index, end: closing(token)); continue }
                result.append(.block(open: token, content: consumeList(tokens, &index, until: closing(token), depth: depth + 1)))
            case .function(let name):
                if depth >= maxNesting { skipBlock(tokens, &index, end: .closeParen); continue }
                result.append(.function(name: name, arguments: consumeList(tokens, &index, until: .closeParen, depth: depth + 1)))
            default:
                result.append(.token(token))
            }
        }
        return result
    }

    private static func skipBlock(_ tokens: [CSSToken], _ index: inout Int, end: CSSToken) {
        var stack: [CSSToken] = [end]
        while index < tokens.count, let expected = stack.last {
            let token = tokens[index]
            index += 1
            switch token {
            case .openParen, .function: stack.append(.closeParen)
            case .openSquare: stack.append(.closeSquare)
            case .openCurly: stack.append(.closeCurly)
            default: if token == expected { stack.removeLast() }
            }
        }
    }

    /// Parses a list of rules (top level of a sheet, or the block of `@media`).
    static func rules(_ components: [CSSComponent], topLevel: Bool) -> [CSSRule] {
        var rules: [CSSRule] = []
        var index = 0
        while index < components.count {
            let component = components[index]
            switch component {
            case .token(.whitespace): index += 1
            case .token(.cdo), .token(.cdc):
                // At the top level these are skipped; inside blocks they would start a selector
                // that cannot be valid, so they are skipped too.
                index += 1
            case .token(.atKeyword(let name)):
                index += 1
                var prelude: [CSSComponent] = []
                var block: [CSSComponent]?
                while index < components.count {
                    let c = components[index]
                    index += 1
                    if case .token(.semicolon) = c { break }
                    if case .block(.openCurly, let content) = c { block = content; break }
                    prelude.append(c)
                }
                rules.append(.at(name: name.lowercased(), prelude: prelude, block: block))
            default:
                var prelude: [CSSComponent] = []
                var block: [CSSComponent]?
                while index < components.count {
                    let c = components[index]
                    index += 1
                    if case .block(.openCurly, let content) = c { block = content; break }
                    prelude.append(c)
                }
                if let block { rules.append(.qualified(prelude: prelude, block: block)) }
            }
        }
        return rules
    }

    /// Parses the declarations of a style attribute or a rule's block. Nested rules and at-rules
    /// inside a declaration block are dropped (counted by the caller as removed).
    static func declarations(_ components: [CSSComponent], dropped: inout Int) -> [CSSDeclaration] {
        var result: [CSSDeclaration] = []
        var pieces: [[CSSComponent]] = [[]]
        for component in components {
            if case .token(.semicolon) = component { pieces.append([]) } else { pieces[pieces.count - 1].append(component) }
        }
        for piece in pieces {
            var items = piece[...]
            while let first = items.first, first.isWhitespace { items.removeFirst() }
            while let last = items.last, last.isWhitespace { items.removeLast() }
            if items.isEmpty { continue }
            guard case .token(.ident(let name)) = items.first else { dropped += 1; continue }
            items.removeFirst()
            while let first = items.first, first.isWhitespace { items.removeFirst() }
            guard case .token(.colon) = items.first else { dropped += 1; continue }
            items.removeFirst()
            var value = Array(items)
            while let first = value.first, first.isWhitespace { value.removeFirst() }
            var important = false
            // `! important` at the end.
            var tail = value.count - 1
            if tail >= 0, case .token(.ident(let word)) = value[tail], word.lowercased() == "important" {
                tail -= 1
                while tail >= 0, value[tail].isWhitespace { tail -= 1 }
                if tail >= 0, case .token(.delim("!")) = value[tail] {
                    important = true
                    value.removeSubrange(tail...)
                    while let last = value.last, last.isWhitespace { value.removeLast() }
                }
            }
            result.append(CSSDeclaration(name: name, value: value, important: important))
        }
        return result
    }
}

/// Serializes CSS tokens so that re-tokenizing gives the same tokens, and so that the text can sit
/// inside a `<style>` element or a `style="..."` attribute: `<` never appears except as an escape,
/// so `</style>` and `<!--` cannot be formed.
enum CSSSerializer {
    static func serialize(_ components: [CSSComponent]) -> String {
        var out = ""
        var previous: CSSToken?
        append(components, to: &out, previous: &previous)
        return out
    }

    private static func append(_ components: [CSSComponent], to out: inout String, previous: inout CSSToken?) {
        for component in components {
            switch component {
            case .token(let token):
                emit(token, to: &out, previous: &previous)
            case .function(let name, let arguments):
                emit(.function(name), to: &out, previous: &previous)
                append(arguments, to: &out, previous: &previous)
                emit(.closeParen, to: &out, previous: &previous)
            case .block(let open, let content):
                emit(open, to: &out, previous: &previous)
                append(content, to: &out, previous: &previous)
                let close: CSSToken = open == .openParen ? .closeParen : open == .openSquare ? .closeSquare : .closeCurly
                emit(close, to: &out, previous: &previous)
            }
        }
    }

    private static func emit(_ token: CSSToken, to out: inout String, previous: inout CSSToken?) {
        // Whitespace, a comment, whitespace tokenizes as two whitespace tokens (the comment is
        // dropped); written as two spaces they would read back as one token, so a second pass
        // wrote something else. Adjacent whitespace means the same as one: one space is written.
        if case .whitespace = token, case .whitespace? = previous { return }
        if let previous, needsComment(previous, token) { out += "/**/" }
        out += text(of: token)
        previous = token
    }

    /// The pairs of CSS Syntax Level 3 §9 ("Serialization") that need a comment between them.
    private static func needsComment(_ a: CSSToken, _ b: CSSToken) -> Bool {
        enum Kind { case ident, function, url, badURL, number, percentage, dimension, cdc, openParen, delimMinus, other }
        func kind(_ t: CSSToken) -> Kind {
            switch t {
            case .ident: .ident
            case .function: .function
            case .url: .url
            case .badURL: .badURL
            case .number: .number
            case .percentage: .percentage
            case .dimension: .dimension
            case .cdc: .cdc
            case .openParen: .openParen
            case .delim("-"): .delimMinus
            default: .other
            }
        }
        let kb = kind(b)
        func inSet(_ k: Kind, withParen: Bool, withCDC: Bool) -> Bool {
            switch k {
            case .ident, .function, .url, .badURL, .delimMinus, .number, .percentage, .dimension: true
            case .cdc: withCDC
            case .openParen: withParen
            default: false
            }
        }
        switch a {
        case .ident("--") where b == .delim(">"):
            // "-->" reads as CDC, not as the ident `--` and `>` (the tokenizer checks for CDC
            // before an ident): not in the spec's table, found by the CSS fuzz target.
            return true
        case .ident:
            return inSet(kb, withParen: true, withCDC: true)
        case .atKeyword, .hash, .dimension:
            return inSet(kb, withParen: false, withCDC: true)
        case .delim("#"), .delim("-"):
            return inSet(kb, withParen: false, withCDC: false)
        case .number:
            switch kb {
            case .ident, .function, .url, .badURL, .number, .percentage, .dimension: return true
            case .delimMinus: return false
            default:
                if case .delim("%") = b { return true }
                return false
            }
        case .delim("@"):
            switch kb {
            case .ident, .function, .url, .badURL, .delimMinus: return true
            default: return false
            }
        case .delim("."), .delim("+"):
            return kb == .number || kb == .percentage || kb == .dimension
        case .delim("/"):
            return b == .delim("*")
        case .delim("\\"):
            return true
        default:
            return false
        }
    }

    static func text(of token: CSSToken) -> String {
        switch token {
        case .ident(let name): return identifier(name)
        case .function(let name): return identifier(name) + "("
        case .atKeyword(let name): return "@" + identifier(name)
        case .hash(let name, _): return "#" + name.unicodeScalars.map { isNameCode($0) ? String($0) : escape($0) }.joined()
        case .string(let value): return string(value)
        case .badString: return "\"\""
        case .url(let value): return "url(" + string(value) + ")"
        case .badURL: return "url(\"\")"
        case .delim(let c):
            if c == "<" || c == "\\" { return "\\" + String(c.value, radix: 16) + " " }
            return String(c)
        case .number(_, let repr, _): return repr
        case .percentage(_, let repr): return repr + "%"
        case .dimension(_, let repr, let unit):
            // A unit starting with `e` after a number would read as an exponent.
            let u = identifier(unit)
            let scalars = Array(unit.unicodeScalars)
            if scalars.count >= 2, scalars[0] == "e" || scalars[0] == "E",
               CSSTokenizer.isDigit(scalars[1]) || scalars[1] == "+" || scalars[1] == "-" {
                return repr + "\\" + String(scalars[0].value, radix: 16) + " " + String(u.unicodeScalars.dropFirst())
            }
            return repr + u
        case .whitespace: return " "
        case .cdo, .cdc: return ""
        case .colon: return ":"
        case .semicolon: return ";"
        case .comma: return ","
        case .openSquare: return "["
        case .closeSquare: return "]"
        case .openParen: return "("
        case .closeParen: return ")"
        case .openCurly: return "{"
        case .closeCurly: return "}"
        }
    }

    private static func isNameCode(_ c: Unicode.Scalar) -> Bool {
        CSSTokenizer.isNameCode(c) && c != "<" && !(c.value >= 0x80 && c.value < 0xA0)
    }

    private static func escape(_ c: Unicode.Scalar) -> String {
        if c.value < 0x20 || c.value == 0x7F || c == "<" || (c.value >= 0x80 && c.value < 0xA0) || CSSTokenizer.isDigit(c) || c == "e" || c == "E" {
            return "\\" + String(c.value, radix: 16) + " "
        }
        return "\\" + String(c)
    }

    /// CSSOM "serialize an identifier".
    static func identifier(_ name: String) -> String {
        // Most names (properties, keywords, units, the wrapper id) serialize as themselves.
        if isPlainIdentifier(name) { return name }
        return identifierByScalars(name)
    }

    /// Whether `name` is one the scalar loop below copies unchanged: ASCII letters, digits, `_`
    /// and `-` only, not `-` alone, and no digit first or right after a leading `-`.
    static func isPlainIdentifier(_ name: String) -> Bool {
        let answer: Bool? = name.utf8.withContiguousStorageIfAvailable { bytes in
            let n = bytes.count
            if n == 1 && bytes[0] == 0x2D { return false }
            for k in 0..<n {
                let c = bytes[k]
                let isLetter = (c | 0x20) >= 0x61 && (c | 0x20) <= 0x7A
                let isDigit = c >= 0x30 && c <= 0x39
                guard isLetter || isDigit || c == 0x5F || c == 0x2D else { return false }
                if isDigit && (k == 0 || (k == 1 && bytes[0] == 0x2D)) { return false }
            }
            return true
        }
        return answer ?? false
    }

    /// ``identifier(_:)`` scalar by scalar (the reference for the plain-name shortcut).
    static func identifierByScalars(_ name: String) -> String {
        var out = ""
        let scalars = Array(name.unicodeScalars)
        if scalars == ["-"] { return "\\-" }
        for (i, c) in scalars.enumerated() {
            if c == "\0" { out += "\u{FFFD}"; continue }
            if i == 0 && CSSTokenizer.isDigit(c) { out += "\\" + String(c.value, radix: 16) + " "; continue }
            if i == 1 && CSSTokenizer.isDigit(c) && scalars[0] == "-" { out += "\\" + String(c.value, radix: 16) + " "; continue }
            if isNameCode(c) { out.unicodeScalars.append(c) } else { out += escape(c) }
        }
        return out
    }

    /// CSSOM "serialize a string", plus `<` escaped so no tag can be formed.
    static func string(_ value: String) -> String {
        var out = "\""
        for c in value.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "<": out += "\\3c "
            case "\0": out += "\u{FFFD}"
            default:
                if c.value < 0x20 || c.value == 0x7F { out += "\\" + String(c.value, radix: 16) + " " } else { out.unicodeScalars.append(c) }
            }
        }
        return out + "\""
    }
}
