/// One header field as it appeared in the message.
public struct MIMEHeaderField: Sendable, Equatable {
    /// The field name exactly as written (compare case-insensitively).
    public let name: String
    /// The raw bytes of the whole field, name, folding and line endings included.
    public let raw: [UInt8]
    /// The value unfolded: text after the colon, leading blanks removed, CR and LF removed,
    /// bytes decoded as UTF-8 (invalid bytes become U+FFFD). Encoded words are not decoded.
    public let value: String

    /// Creates a field from parsed parts.
    public init(name: String, raw: [UInt8], value: String) {
        self.name = name; self.raw = raw; self.value = value
    }

    /// Creates a field from a name and a value (for building); `raw` is `name: value`.
    public init(name: String, value: String) {
        self.name = name; self.value = value
        self.raw = Array("\(name): \(value)\r\n".utf8)
    }

    /// The value with RFC 2047 encoded words decoded (as an unstructured field, RFC 5322 §3.2.5).
    public var decodedValue: String { EncodedWords.decodeUnstructured(value) }
}

/// The header fields of a message or part, in order, with case-insensitive lookup.
///
/// Bound: at most ``MIMELimits/maxHeaderCount`` fields per part; each unfolded field at most
/// ``MIMELimits/maxHeaderLength`` bytes.
public struct MIMEHeaders: Sendable, Equatable, Sequence {
    /// All fields in order.
    public private(set) var fields: [MIMEHeaderField]

    /// Creates headers from fields in order.
    public init(_ fields: [MIMEHeaderField] = []) { self.fields = fields }

    /// Iterates the fields in order.
    public func makeIterator() -> IndexingIterator<[MIMEHeaderField]> { fields.makeIterator() }

    /// The first field with this name (case-insensitive), unfolded but not decoded.
    public subscript(_ name: String) -> String? { first(name)?.value }

    /// The first field with this name.
    public func first(_ name: String) -> MIMEHeaderField? {
        let l = name.lowercased()
        return fields.first { $0.name.lowercased() == l }
    }

    /// Every value of fields with this name, in order.
    public func values(_ name: String) -> [String] {
        let l = name.lowercased()
        return fields.filter { $0.name.lowercased() == l }.map(\.value)
    }

    /// The first field's value with RFC 2047 encoded words decoded.
    public func decoded(_ name: String) -> String? { first(name)?.decodedValue }

    /// Appends a field.
    public mutating func append(_ field: MIMEHeaderField) { fields.append(field) }

    /// The parsed Content-Type (`text/plain` when missing or invalid, or the given default).
    public func contentType(default def: String = "text/plain") -> ContentType {
        guard let v = self["content-type"] else { return ContentType(type: def, parameters: []) }
        return ContentType.parse(v, default: def)
    }

    /// The Content-Disposition value lowercased (`"attachment"`, `"inline"`, …) or `nil`.
    public var contentDisposition: String? {
        guard let v = self["content-disposition"] else { return nil }
        let token = v.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first.map { $0.trimmingASCIIWhitespace().lowercased() } ?? ""
        return token.isEmpty ? nil : token
    }

    /// A parameter of a parameterized field (Content-Type, Content-Disposition), with RFC 2231
    /// continuations, charsets and percent-encoding decoded and quotes removed.
    public func parameter(_ name: String, of field: String = "content-type") -> String? {
        guard let v = self[field] else { return nil }
        return Parameters.parse(v).value(name)
    }

    /// The file name: Content-Disposition `filename`, else Content-Type `name` (RFC 2231 decoded).
    public var filename: String? {
        if let f = parameter("filename", of: "content-disposition") { return f.trimmingASCIIWhitespace() }
        if let f = parameter("name", of: "content-type") { return f.trimmingASCIIWhitespace() }
        return nil
    }
}

/// A parsed Content-Type value.
public struct ContentType: Sendable, Equatable {
    /// `type/subtype`, lowercased.
    public let type: String
    /// The parameters in order (names lowercased, values decoded).
    public let parameters: [(name: String, value: String)]

    /// Same type and same parameters in the same order.
    public static func == (a: ContentType, b: ContentType) -> Bool {
        a.type == b.type && a.parameters.map(\.name) == b.parameters.map(\.name) && a.parameters.map(\.value) == b.parameters.map(\.value)
    }

    /// The part before `/`.
    public var mainType: String { String(type.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first ?? "") }
    /// The part after `/`.
    public var subType: String { String(type.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).dropFirst().first ?? "") }

    /// A parameter value (name case-insensitive).
    public func parameter(_ name: String) -> String? {
        let l = name.lowercased()
        return parameters.first { $0.name == l }?.value
    }

    /// Creates a content type from `type/subtype` and decoded parameters.
    public init(type: String, parameters: [(name: String, value: String)]) {
        self.type = type; self.parameters = parameters
    }

    /// Parses like CPython's `Message.get_content_type`: the text before `;`, lowercased; a value
    /// without exactly one `/` gives `text/plain`.
    public static func parse(_ value: String, default def: String = "text/plain") -> ContentType {
        let head = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first.map { $0.trimmingASCIIWhitespace().lowercased() } ?? ""
        let t = head.filter { $0 == "/" }.count == 1 ? head : "text/plain"
        let params = Parameters.parse(value)
        return ContentType(type: t, parameters: params.list)
    }
}

/// Parameter lists of structured MIME fields (RFC 2045 §5.1, RFC 2231).
public struct Parameters: Sendable {
    /// Decoded parameters, names lowercased, in order of first appearance.
    public var list: [(name: String, value: String)]

    /// The first value of a parameter (name case-insensitive).
    public func value(_ name: String) -> String? {
        let l = name.lowercased()
        return list.first { $0.name == l }?.value
    }

    /// Splits at `;` outside quotes (like CPython's `_parseparam`, but linear), then decodes
    /// RFC 2231 (`name*0*=charset'lang'%XX…`, continuations joined in numeric order) and RFC 2047
    /// encoded words inside values.
    public static func parse(_ value: String) -> Parameters {
        let scalars = Array(value.unicodeScalars)
        var pieces: [String] = []
        var cur = String.UnicodeScalarView()
        var inQuote = false, escaped = false
        for c in scalars {
            if escaped { cur.append(c); escaped = false; continue }
            if inQuote && c == "\\" { cur.append(c); escaped = true; continue }
            if c == "\"" { inQuote.toggle() }
            if c == ";" && !inQuote { pieces.append(String(cur)); cur = String.UnicodeScalarView(); continue }
            cur.append(c)
        }
        pieces.append(String(cur))
        var plain: [(String, String)] = []
        var rfc2231: [String: [(num: Int, value: String, encoded: Bool)]] = [:]
        var order: [String] = []
        for p in pieces.dropFirst() {
            guard let eq = p.firstIndex(of: "=") else {
                // A bare name (CPython: value "").
                let name = p.trimmingASCIIWhitespace().lowercased()
                if !name.isEmpty {
                    if !plain.contains(where: { $0.0 == name }) && rfc2231[name] == nil { order.append(name) }
                    plain.append((name, ""))
                }
                continue
            }
            let name = p[..<eq].trimmingASCIIWhitespace().lowercased()
            let raw = p[p.index(after: eq)...].trimmingASCIIWhitespace()
            if name.isEmpty { continue }
            let encoded = name.hasSuffix("*")
            let v = unquote(raw)
            // name*, name*N, name*N*
            if let star = name.firstIndex(of: "*") {
                let base = String(name[..<star])
                var rest = name[name.index(after: star)...]
                if rest.hasSuffix("*") { rest = rest.dropLast() }
                let isWord = !base.isEmpty && base.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
                if isWord && (rest.isEmpty || rest.allSatisfy(\.isASCIIDigitChar)), !(rest.isEmpty && !name.hasSuffix("*")) {
                    let num = rest.isEmpty ? -1 : (Int(rest) ?? Int.max)
                    if rfc2231[base] == nil { order.append(base); rfc2231[base] = [] }
                    rfc2231[base]!.append((num, v, encoded))
                    continue
                }
            }
            if !plain.contains(where: { $0.0 == name }) && rfc2231[name] == nil { order.append(name) }
            plain.append((name, decodeWordsInValue(v)))
        }
        var out: [(name: String, value: String)] = []
        var done = Set<String>()
        // Like CPython's decode_params: plain parameters first, RFC 2231 ones after them.
        order = order.filter { rfc2231[$0] == nil } + order.filter { rfc2231[$0] != nil }
        for name in order where !done.contains(name) {
            done.insert(name)
            if let conts = rfc2231[name] {
                let sorted = conts.enumerated().sorted { ($0.element.num, $0.offset) < ($1.element.num, $1.offset) }.map(\.element)
                var bytes: [UInt8] = []
                var extended = false
                for c in sorted {
                    if c.encoded { extended = true; bytes += percentDecodeLatin1(c.value) } else { bytes += latin1Bytes(c.value) }
                }
                if extended {
                    // charset'language'text
                    let parts = bytes.split(separator: UInt8(ascii: "'"), maxSplits: 2, omittingEmptySubsequences: false)
                    if parts.count == 3 {
                        let cs = String(decoding: parts[0], as: UTF8.self)
                        let (t, known) = Charset.decode(parts[2], charset: cs.isEmpty ? "us-ascii" : cs)
                        out.append((name, known ? t : String(decoding: parts[2], as: UTF8.self)))
                    } else {
                        out.append((name, String(decoding: bytes, as: UTF8.self)))
                    }
                } else {
                    out.append((name, String(decoding: bytes, as: UTF8.self)))
                }
            } else if let p = plain.first(where: { $0.0 == name }) {
                out.append((name, p.1))
            }
        }
        return Parameters(list: out)
    }

    /// A value starting with `"` is the quoted string up to its closing quote (escapes
    /// removed; anything after it is ignored); other values are returned as they are.
    static func unquote(_ s: String) -> String {
        guard s.hasPrefix("\"") else { return s }
        var out = ""
        var esc = false
        for c in s.dropFirst() {
            if esc { out.append(c); esc = false } else if c == "\\" { esc = true } else if c == "\"" { break } else { out.append(c) }
        }
        return out
    }

    static func latin1Bytes(_ s: String) -> [UInt8] {
        // Values are text; keep their UTF-8 bytes (non-ASCII raw bytes were decoded as UTF-8).
        Array(s.utf8)
    }

    static func percentDecodeLatin1(_ s: String) -> [UInt8] {
        let u = Array(s.utf8)
        var out: [UInt8] = []; out.reserveCapacity(u.count)
        var i = 0
        while i < u.count {
            if u[i] == UInt8(ascii: "%"), i + 2 < u.count,
               let h = TransferEncoding.hexValue(u[i + 1]), let l = TransferEncoding.hexValue(u[i + 2]) {
                out.append(h << 4 | l); i += 3
            } else { out.append(u[i]); i += 1 }
        }
        return out
    }

    static func decodeWordsInValue(_ v: String) -> String {
        v.contains("=?") ? EncodedWords.decodeUnstructured(v) : v
    }
}

extension Character {
    var isASCIIDigitChar: Bool { isASCII && isNumber }
}
