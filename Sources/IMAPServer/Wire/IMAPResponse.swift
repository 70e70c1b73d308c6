/// The status of a tagged or untagged status response (RFC 3501 §7.1).
public enum IMAPStatus: String, Sendable, Equatable {
    /// OK.
    case ok = "OK"
    /// NO: the command failed.
    case no = "NO"
    /// BAD: the command was not understood or not valid now.
    case bad = "BAD"
    /// PREAUTH (not used by this server).
    case preauth = "PREAUTH"
    /// BYE: the server closes the connection.
    case bye = "BYE"
}

/// One server response line (or lines, when it carries literals).
public enum IMAPResponse: Sendable, Equatable {
    /// `tag OK|NO|BAD [code] text`.
    case tagged(tag: String, status: IMAPStatus, code: String?, text: String)
    /// `* OK|NO|BAD|BYE|PREAUTH [code] text`.
    case untaggedStatus(IMAPStatus, code: String?, text: String)
    /// `* <data>`: server data written by an ``IMAPWriter`` (without the `* ` and the CRLF).
    case data([UInt8])
    /// `+ text`: a continuation request.
    case continuation(String)

    /// The response's bytes, CRLF included. Texts are made safe: CR, LF and non-ASCII become spaces
    /// or `?`, so a message a backend wrote can never split a response line.
    public var encoded: [UInt8] {
        var out: [UInt8]
        switch self {
        case .tagged(let tag, let status, let code, let text):
            out = Array("\(tag) \(status.rawValue) ".utf8) + Self.codeAndText(code, text)
        case .untaggedStatus(let status, let code, let text):
            out = Array("* \(status.rawValue) ".utf8) + Self.codeAndText(code, text)
        case .data(let bytes):
            out = [UInt8(ascii: "*"), 0x20] + bytes
        case .continuation(let text):
            out = [UInt8(ascii: "+"), 0x20] + Self.safe(text)
        }
        return out + [0x0D, 0x0A]
    }

    private static func codeAndText(_ code: String?, _ text: String) -> [UInt8] {
        var out: [UInt8] = []
        if let code { out += [UInt8(ascii: "[")] + safe(code) + [UInt8(ascii: "]"), 0x20] }
        return out + safe(text.isEmpty ? "done" : text)
    }

    static func safe(_ text: String) -> [UInt8] {
        text.utf8.prefix(4000).map { $0 == 0x0D || $0 == 0x0A || $0 == 0 ? 0x20 : ($0 >= 0x80 ? UInt8(ascii: "?") : $0) }
    }
}

/// Writes IMAP data values (RFC 3501 §4): atoms, numbers, strings chosen as quoted or literal,
/// `NIL`, parenthesized lists.
public struct IMAPWriter: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8] = []

    /// An empty writer.
    public init() {}

    /// Raw text (an atom, a keyword, a number, punctuation).
    public mutating func raw(_ text: String) { bytes += text.utf8 }
    /// Raw bytes.
    public mutating func raw(_ data: [UInt8]) { bytes += data }
    /// A number.
    public mutating func number<N: BinaryInteger>(_ n: N) { bytes += String(n).utf8 }

    /// A string: quoted when it is short 7-bit text without CR, LF or NUL, else a literal.
    public mutating func string(_ text: String) { string(Array(text.utf8)) }

    /// A string from bytes: quoted when possible, else a literal `{n}` followed by the bytes.
    public mutating func string(_ data: [UInt8]) {
        if data.count <= 1024, data.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
            bytes.append(UInt8(ascii: "\""))
            for b in data {
                if b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") { bytes.append(UInt8(ascii: "\\")) }
                bytes.append(b)
            }
            bytes.append(UInt8(ascii: "\""))
        } else {
            literal(data)
        }
    }

    /// A literal: `{n}` CRLF and the bytes.
    public mutating func literal(_ data: [UInt8]) {
        bytes += "{\(data.count)}\r\n".utf8
        bytes += data
    }

    /// A string or `NIL`.
    public mutating func nstring(_ text: String?) { if let text { string(text) } else { raw("NIL") } }
    /// Bytes as a string, or `NIL`.
    public mutating func nstring(_ data: [UInt8]?) { if let data { string(data) } else { raw("NIL") } }

    /// A mailbox name in modified UTF-7 (astring rules: an atom when possible, INBOX as is).
    public mutating func mailbox(_ name: String) {
        let utf8 = Array(IMAPMailboxName.encode(name).utf8)
        if !utf8.isEmpty, utf8.allSatisfy(IMAPCommandParser.isAStringChar) { bytes += utf8 } else { string(utf8) }
    }

    /// `(a b c)` with `element` writing each item.
    public mutating func list<T>(_ items: [T], _ element: (inout IMAPWriter, T) -> Void) {
        bytes.append(UInt8(ascii: "("))
        for (i, item) in items.enumerated() {
            if i > 0 { bytes.append(0x20) }
            element(&self, item)
        }
        bytes.append(UInt8(ascii: ")"))
    }
}
