import MIME

/// Writes a parsed MIME entity back out in canonical form (RFC 3156 §3, RFC 2046): every line
/// end CRLF, header fields as they were written (only their line ends changed), multiparts
/// with their own boundaries.
///
/// With ``sevenBit`` set (for `multipart/signed`, RFC 3156 §3 and §5) every leaf whose bytes
/// would not survive a mail transport unchanged — 8-bit or NUL bytes, a line ending in a blank
/// (which transports strip), a line starting with `From ` (which mbox writers quote), a line
/// longer than 998 bytes — is decoded and encoded again, text as quoted-printable and anything
/// else as base64, and header lines lose trailing blanks; 8-bit header fields are refused. So the
/// bytes a signature covers are the bytes the recipient gets.
struct EntityWriter {
    static let crlf: [UInt8] = [0x0D, 0x0A]

    /// Re-encode what is not 7-bit safe.
    var sevenBit: Bool
    /// Entities (already canonical) that replace the part at a path.
    var replacements: [[Int]: [UInt8]] = [:]

    /// The header fields of the message itself (`From`, `To`, `Subject`, …) and those that
    /// describe its content (`Content-*`); `MIME-Version` belongs to neither.
    static func split(_ headers: MIMEHeaders) -> (message: [MIMEHeaderField], content: [MIMEHeaderField]) {
        var message: [MIMEHeaderField] = [], content: [MIMEHeaderField] = []
        for field in headers.fields {
            let name = field.name.lowercased()
            if name.hasPrefix("content-") { content.append(field) } else if name != "mime-version" { message.append(field) }
        }
        return (message, content)
    }

    /// `bytes` with every line end (CRLF, LF or a lone CR) made CRLF.
    static func canonical<C: Collection>(_ bytes: C) -> [UInt8] where C.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + bytes.count / 32)
        var previousCR = false
        for c in bytes {
            if c == 0x0A {
                if !previousCR { out += crlf }
                previousCR = false
            } else if c == 0x0D {
                out += crlf
                previousCR = true
            } else {
                out.append(c)
                previousCR = false
            }
        }
        return out
    }

    /// Whether canonical (CRLF) bytes pass every mail transport unchanged.
    static func isSevenBitSafe(_ bytes: [UInt8]) -> Bool {
        var lineStart = 0
        var i = 0
        let from = Array("From ".utf8)
        while i <= bytes.count {
            let atEnd = i == bytes.count
            if atEnd || bytes[i] == 0x0D {
                let line = bytes[lineStart..<i]
                if line.count > 998 { return false }
                if let last = line.last, last == 0x20 || last == 0x09 { return false }
                if line.starts(with: from) { return false }
                if atEnd { break }
                i += 2
                lineStart = i
                continue
            }
            let c = bytes[i]
            if c == 0 || c >= 0x80 { return false }
            i += 1
        }
        return true
    }

    /// The header fields written out, each line CRLF-terminated.
    func headerBlock(_ fields: [MIMEHeaderField]) throws -> [UInt8] {
        var out: [UInt8] = []
        for field in fields {
            for line in Armor.splitLinesRaw(field.raw) {
                var l = line[...]
                if sevenBit {
                    guard !l.contains(where: { $0 >= 0x80 || $0 == 0 }) else {
                        throw PGPMIMEError.invalidInput("the header field \(field.name) has 8-bit bytes; a signature over it would not survive transport (encode it with RFC 2047)")
                    }
                    while let last = l.last, last == 0x20 || last == 0x09 { l = l.dropLast() }
                }
                out += l
                out += Self.crlf
            }
        }
        return out
    }

    /// The entity: `fields` (the part's own header fields unless given), a blank line, the body.
    func entity(_ part: MIMEPart, fields: [MIMEHeaderField]? = nil) throws -> [UInt8] {
        if let replacement = replacements[part.path] { return replacement }
        var fields = fields ?? part.headers.fields
        var body: [UInt8] = []
        switch part.body {
        case .leaf(let raw):
            body = Self.canonical(raw)
            if sevenBit && !Self.isSevenBitSafe(body) {
                let content = part.content
                let isText = part.contentType.mainType == "text"
                body = isText ? TransferEncoding.encodeQuotedPrintable(content, lineBreak: Self.crlf)
                              : TransferEncoding.encodeBase64(content, lineBreak: Self.crlf)
                fields.removeAll { $0.name.lowercased() == "content-transfer-encoding" }
                fields.append(MIMEHeaderField(name: "Content-Transfer-Encoding", value: isText ? "quoted-printable" : "base64"))
            }
        case .message(let root):
            body = try entity(root)
        case let .multipart(preamble, parts, epilogue):
            if part.mimeType == "message/delivery-status" {
                for (n, block) in parts.enumerated() {
                    if n > 0 { body += Self.crlf }
                    body += try headerBlock(block.headers.fields)
                    if case .leaf(let raw) = block.body { body += Self.canonical(raw) }
                }
                break
            }
            var boundary = part.contentType.parameter("boundary") ?? ""
            while let last = boundary.unicodeScalars.last, last == " " || last == "\t" { boundary.unicodeScalars.removeLast() }
            let marker = Array("--\(boundary)".utf8)
            if let preamble {
                let p = Self.canonical(preamble)
                if !sevenBit || Self.isSevenBitSafe(p) { body += p + Self.crlf }
            }
            for child in parts {
                body += marker + Self.crlf
                body += try entity(child)
                body += Self.crlf
            }
            body += marker + Array("--".utf8) + Self.crlf
            if let epilogue, !epilogue.isEmpty {
                let e = Self.canonical(epilogue)
                if !sevenBit || Self.isSevenBitSafe(e) { body += e }
            }
        }
        return try headerBlock(fields) + Self.crlf + body
    }
}

extension Armor {
    /// Physical lines of raw bytes without their line ends.
    static func splitLinesRaw(_ raw: [UInt8]) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = 0, i = 0
        while i < raw.count {
            let c = raw[i]
            if c == 0x0A || c == 0x0D {
                lines.append(raw[start..<i])
                if c == 0x0D && i + 1 < raw.count && raw[i + 1] == 0x0A { i += 1 }
                start = i + 1
            }
            i += 1
        }
        if start < raw.count { lines.append(raw[start...]) }
        return lines
    }
}
