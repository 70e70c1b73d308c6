/// One entity of a message: its header fields and body. The body of a multipart holds its
/// sub-parts (of `message/delivery-status`: its header blocks); the body of a `message/*` part
/// (other than `message/delivery-status`) holds the
/// attached message's root part; every other body is a leaf with its raw, still
/// transfer-encoded bytes.
public struct MIMEPart: Sendable, Equatable {
    /// The body of a part.
    public indirect enum Body: Sendable, Equatable {
        /// A leaf: the raw bytes between the header block and the next boundary (the line break
        /// before the boundary belongs to the boundary, RFC 2046 §5.1.1).
        case leaf([UInt8])
        /// A parsed multipart: preamble, parts, epilogue (`nil` when absent). Also used for
        /// `message/delivery-status`, whose parts are its header blocks (as CPython does).
        case multipart(preamble: [UInt8]?, parts: [MIMEPart], epilogue: [UInt8]?)
        /// An attached message (`message/rfc822`, `message/global`, …): its root part.
        case message(MIMEPart)
    }

    /// The header fields.
    public var headers: MIMEHeaders
    /// The body.
    public var body: Body
    /// Where the part is: `[]` for the message itself, `[2, 0]` for the first child of the
    /// third child. An attached message's root has its `message/*` part's path plus `0`.
    public var path: [Int]
    /// Byte offset of the part's first header line in the parsed input.
    public var offset: Int
    /// The type used when Content-Type is missing (`text/plain`, or `message/rfc822` inside
    /// `multipart/digest`).
    public var defaultType: String

    /// Creates a part.
    public init(headers: MIMEHeaders, body: Body, path: [Int] = [], offset: Int = 0, defaultType: String = "text/plain") {
        self.headers = headers; self.body = body; self.path = path; self.offset = offset; self.defaultType = defaultType
    }

    /// The parsed Content-Type (the default type when missing or invalid).
    public var contentType: ContentType { headers.contentType(default: defaultType) }

    /// `type/subtype`, lowercased.
    public var mimeType: String {
        guard let v = headers["content-type"] else { return defaultType }
        return ContentType.parse(v).type
    }

    /// The sub-parts of a multipart, or the attached message's root for `message/*`, else `[]`.
    public var children: [MIMEPart] {
        switch body {
        case .leaf: return []
        case let .multipart(_, parts, _): return parts
        case let .message(root): return [root]
        }
    }

    /// Whether the body holds parts (a parsed multipart or an attached message).
    public var hasChildren: Bool { if case .leaf = body { return false }; return true }

    /// The Content-Disposition is `attachment`.
    public var isAttachment: Bool { headers.contentDisposition == "attachment" }

    /// The file name (Content-Disposition `filename`, RFC 2231 decoded, else Content-Type `name`).
    public var filename: String? { headers.filename }

    /// Content-ID without the angle brackets.
    public var contentID: String? { headers.decoded("content-id").map(stripAngle) }

    /// The declared Content-Transfer-Encoding, lowercased (`""` when absent).
    public var transferEncoding: String {
        (headers.decoded("content-transfer-encoding") ?? "").trimmingASCIIWhitespace().lowercased()
    }

    /// The body bytes with the transfer encoding removed (base64, quoted-printable; anything
    /// else unchanged), and a note when the encoded data was damaged. Empty for parts with
    /// children.
    public func decodedBody() -> TransferEncoding.Decoded {
        guard case let .leaf(raw) = body else { return .init(bytes: [], problem: nil) }
        switch transferEncoding {
        case "base64": return TransferEncoding.decodeBase64(raw[...])
        case "quoted-printable": return TransferEncoding.decodeQuotedPrintable(raw[...])
        default: return .init(bytes: raw, problem: nil)
        }
    }

    /// The decoded bytes (transfer encoding removed).
    public var content: [UInt8] { decodedBody().bytes }

    /// The text of a leaf decoded with its `charset` (US-ASCII when absent; an unknown charset
    /// decodes as UTF-8 and `knownCharset` is `false`). Line endings are kept as in the message.
    public func text() -> (text: String, knownCharset: Bool) {
        let cs = contentType.parameter("charset") ?? "us-ascii"
        let r = Charset.decode(content[...], charset: cs)
        return (r.text, r.known)
    }

    /// Every part of the tree in depth-first order, this one first.
    public func walk() -> [MIMEPart] {
        var out: [MIMEPart] = []
        var stack: [MIMEPart] = [self]
        while let p = stack.popLast() {
            out.append(p)
            stack.append(contentsOf: p.children.reversed())
        }
        return out
    }
}

func stripAngle(_ v: String) -> String {
    var s = v.trimmingASCIIWhitespace()
    if s.count >= 2 && s.hasPrefix("<") && s.hasSuffix(">") { s = String(s.dropFirst().dropLast()).trimmingASCIIWhitespace() }
    return s
}
