import Foundation
import MIME

/// A message split into its MIME entities by byte ranges, so that sections (`BODY[1.2.MIME]`),
/// sizes and line counts refer to the exact bytes the client would get; header fields are read
/// with the project's MIME module. Bounded: at most 64 levels and 10,000 entities; a deeper or
/// larger structure is treated as one leaf. Trust-model row **inbox (low)**.
struct MessageStructure {
    final class Entity {
        let start: Int            // first header byte
        let bodyStart: Int        // first body byte (after the blank line)
        let end: Int              // end of the body
        let headers: MIMEHeaders
        let contentType: ContentType
        var children: [Entity] = []   // multipart parts
        var embedded: Entity?         // message/rfc822 content
        init(start: Int, bodyStart: Int, end: Int, headers: MIMEHeaders, contentType: ContentType) {
            self.start = start; self.bodyStart = bodyStart; self.end = end; self.headers = headers; self.contentType = contentType
        }
        var isMultipart: Bool { contentType.mainType == "multipart" }
        var isMessage: Bool { contentType.type == "message/rfc822" || contentType.type == "message/global" }
    }

    let bytes: [UInt8]
    let root: Entity

    init(bytes: [UInt8]) {
        self.bytes = bytes
        var budget = 10_000
        root = Self.entity(bytes, start: 0, end: bytes.count, defaultType: "text/plain", depth: 0, budget: &budget)
    }

    private static func entity(_ b: [UInt8], start: Int, end: Int, defaultType: String, depth: Int, budget: inout Int) -> Entity {
        budget -= 1
        let bodyStart = headerEnd(b, start, end)
        let headerBytes = Array(b[start..<bodyStart])
        let headers = MIMEMessage(bytes: headerBytes.isEmpty ? [0x0D, 0x0A] : headerBytes).headers
        let type = headers.contentType(default: defaultType)
        let e = Entity(start: start, bodyStart: bodyStart, end: end, headers: headers, contentType: type)
        guard depth < 64, budget > 0 else { return e }
        if e.isMultipart, let boundary = type.parameter("boundary"), !boundary.isEmpty {
            let childDefault = type.subType == "digest" ? "message/rfc822" : "text/plain"
            for range in parts(b, bodyStart, end, boundary: Array(("--" + boundary).utf8)) where budget > 0 {
                e.children.append(entity(b, start: range.lowerBound, end: range.upperBound, defaultType: childDefault, depth: depth + 1, budget: &budget))
            }
        } else if e.isMessage, (headers["content-transfer-encoding"] ?? "7bit").lowercased().trimmingCharacters(in: .whitespaces).contains("bit") || headers["content-transfer-encoding"] == nil {
            e.embedded = entity(b, start: bodyStart, end: end, defaultType: "text/plain", depth: depth + 1, budget: &budget)
        }
        return e
    }

    /// Index of the first body byte: after the first empty line (CRLF CRLF or LF LF); `end` when none.
    static func headerEnd(_ b: [UInt8], _ start: Int, _ end: Int) -> Int {
        var i = start
        // A body that starts with an empty line has an empty header.
        if i < end, b[i] == 0x0A { return i + 1 }
        if i + 1 < end, b[i] == 0x0D, b[i + 1] == 0x0A { return i + 2 }
        while i < end {
            if b[i] == 0x0A {
                if i + 1 < end, b[i + 1] == 0x0A { return i + 2 }
                if i + 2 < end, b[i + 1] == 0x0D, b[i + 2] == 0x0A { return i + 3 }
            }
            i += 1
        }
        return end
    }

    /// The byte ranges of a multipart body's parts (RFC 2046 §5.1.1: the CRLF before a delimiter
    /// belongs to the delimiter).
    static func parts(_ b: [UInt8], _ start: Int, _ end: Int, boundary: [UInt8]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var partStart: Int?
        var lineStart = start
        while lineStart < end {
            var lineEnd = lineStart
            while lineEnd < end, b[lineEnd] != 0x0A { lineEnd += 1 }
            let next = min(end, lineEnd + 1)
            if lineEnd - lineStart >= boundary.count, b[lineStart..<(lineStart + boundary.count)].elementsEqual(boundary) {
                let rest = b[(lineStart + boundary.count)..<lineEnd]
                let isClose = rest.starts(with: [0x2D, 0x2D])
                let trailingOK = (isClose ? rest.dropFirst(2) : rest[...]).allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
                if trailingOK {
                    if let s = partStart {
                        var e = lineStart
                        if e > s, b[e - 1] == 0x0A { e -= 1; if e > s, b[e - 1] == 0x0D { e -= 1 } }
                        ranges.append(s..<max(s, e))
                    }
                    if isClose { return ranges }
                    partStart = next
                }
            }
            lineStart = next
        }
        if let s = partStart, s <= end { ranges.append(s..<end) }
        return ranges
    }

    // MARK: Sections

    /// The bytes of `section`, or nil when the section does not exist (RFC 3501 §6.4.5).
    func sectionBytes(_ section: IMAPSection) -> [UInt8]? {
        var entity = root
        var isMessage = true   // `entity` is a message (the root, or an embedded one)
        for n in section.part {
            if isMessage {
                let parts = entity.isMultipart ? entity.children : [entity]
                guard n >= 1, n <= parts.count else { return nil }
                entity = parts[n - 1]
                isMessage = false
            } else if entity.isMultipart {
                guard n >= 1, n <= entity.children.count else { return nil }
                entity = entity.children[n - 1]
            } else if entity.isMessage, let inner = entity.embedded {
                let parts = inner.isMultipart ? inner.children : [inner]
                guard n >= 1, n <= parts.count else { return nil }
                entity = parts[n - 1]
            } else {
                return nil
            }
        }
        guard let text = section.text else {
            return section.part.isEmpty ? bytes : Array(bytes[entity.bodyStart..<entity.end])
        }
        if case .mime = text { return Array(bytes[entity.start..<entity.bodyStart]) }
        // HEADER, HEADER.FIELDS, TEXT apply to a message: the root or a message/rfc822 part.
        let message: Entity
        if section.part.isEmpty { message = entity } else if entity.isMessage, let inner = entity.embedded { message = inner } else { return nil }
        switch text {
        case .header: return Array(bytes[message.start..<message.bodyStart])
        case .text: return Array(bytes[message.bodyStart..<message.end])
        case .headerFields(let names): return Self.filterHeader(message.headers, names: names, keep: true)
        case .headerFieldsNot(let names): return Self.filterHeader(message.headers, names: names, keep: false)
        case .mime: return nil
        }
    }

    static func filterHeader(_ headers: MIMEHeaders, names: [String], keep: Bool) -> [UInt8] {
        let wanted = Set(names.map { $0.lowercased() })
        var out: [UInt8] = []
        for field in headers where wanted.contains(field.name.lowercased()) == keep {
            out += field.raw
            if field.raw.last != 0x0A { out += [0x0D, 0x0A] }
        }
        return out + [0x0D, 0x0A]
    }

    // MARK: ENVELOPE and BODYSTRUCTURE (RFC 3501 §7.4.2)

    func writeEnvelope(_ w: inout IMAPWriter) { Self.envelope(root.headers, &w) }

    static func envelope(_ h: MIMEHeaders, _ w: inout IMAPWriter) {
        func field(_ name: String) -> String? { h[name] }
        w.raw("(")
        w.nstring(field("date")); w.raw(" ")
        w.nstring(field("subject")); w.raw(" ")
        let from = addresses(h, "from")
        writeAddresses(from, &w); w.raw(" ")
        let sender = addresses(h, "sender")
        writeAddresses(sender.isEmpty ? from : sender, &w); w.raw(" ")
        let replyTo = addresses(h, "reply-to")
        writeAddresses(replyTo.isEmpty ? from : replyTo, &w); w.raw(" ")
        writeAddresses(addresses(h, "to"), &w); w.raw(" ")
        writeAddresses(addresses(h, "cc"), &w); w.raw(" ")
        writeAddresses(addresses(h, "bcc"), &w); w.raw(" ")
        w.nstring(field("in-reply-to")); w.raw(" ")
        w.nstring(field("message-id"))
        w.raw(")")
    }

    static func addresses(_ h: MIMEHeaders, _ name: String) -> [MailAddress] {
        h.values(name).flatMap { MailAddress.parseList($0) }
    }

    static func writeAddresses(_ list: [MailAddress], _ w: inout IMAPWriter) {
        guard !list.isEmpty else { w.raw("NIL"); return }
        w.raw("(")
        for a in list {
            let at = a.address.lastIndex(of: "@")
            let mailbox = at.map { String(a.address[..<$0]) } ?? a.address
            let host = at.map { String(a.address[a.address.index(after: $0)...]) }
            w.raw("(")
            w.nstring(a.name.flatMap { $0.isEmpty ? nil : encodedWord($0) }); w.raw(" NIL ")
            w.nstring(mailbox); w.raw(" ")
            w.nstring(host)
            w.raw(")")
        }
        w.raw(")")   // RFC 3501: "(" 1*address ")", no space between addresses
    }

    /// A display name as 7-bit text: itself when ASCII, else an RFC 2047 encoded word.
    static func encodedWord(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text }
        return "=?UTF-8?B?" + Data(text.utf8).base64EncodedString() + "?="
    }

    func writeBodyStructure(_ w: inout IMAPWriter, extensible: Bool) { Self.body(root, bytes, &w, extensible: extensible) }

    static func body(_ e: Entity, _ bytes: [UInt8], _ w: inout IMAPWriter, extensible: Bool) {
        let type = e.contentType
        if e.isMultipart && !e.children.isEmpty {
            w.raw("(")
            for child in e.children { body(child, bytes, &w, extensible: extensible) }
            w.raw(" "); w.string(type.subType.uppercased())
            if extensible {
                w.raw(" "); parameters(type.parameters, &w)
                w.raw(" "); disposition(e.headers, &w)
                w.raw(" "); w.nstring(e.headers["content-language"])
                w.raw(" "); w.nstring(e.headers["content-location"])
            }
            w.raw(")")
            return
        }
        let isMultipartWithoutParts = e.isMultipart
        let main = isMultipartWithoutParts ? "TEXT" : type.mainType.uppercased()
        let sub = isMultipartWithoutParts ? "PLAIN" : type.subType.uppercased()
        let size = e.end - e.bodyStart
        w.raw("("); w.string(main); w.raw(" "); w.string(sub); w.raw(" ")
        var params = type.parameters
        if main == "TEXT", !params.contains(where: { $0.name.lowercased() == "charset" }) { params.append((name: "charset", value: "us-ascii")) }
        parameters(isMultipartWithoutParts ? [] : params, &w)
        w.raw(" "); w.nstring(e.headers["content-id"])
        w.raw(" "); w.nstring(e.headers["content-description"])
        w.raw(" "); w.string((e.headers["content-transfer-encoding"]?.trimmingCharacters(in: .whitespaces) ?? "7BIT").uppercased())
        w.raw(" "); w.number(size)
        if e.isMessage, let inner = e.embedded {
            w.raw(" "); envelope(inner.headers, &w)
            w.raw(" "); body(inner, bytes, &w, extensible: extensible)
            w.raw(" "); w.number(lines(bytes, e.bodyStart, e.end))
        } else if e.isMessage {
            // Not parsed (an encoded or too deeply nested message/rfc822): the grammar still needs
            // an envelope, a body and a line count.
            w.raw(" (NIL NIL NIL NIL NIL NIL NIL NIL NIL NIL) (\"TEXT\" \"PLAIN\" NIL NIL NIL \"7BIT\" 0 0) ")
            w.number(lines(bytes, e.bodyStart, e.end))
        } else if main == "TEXT" {
            w.raw(" "); w.number(lines(bytes, e.bodyStart, e.end))
        }
        if extensible {
            w.raw(" "); w.nstring(e.headers["content-md5"])
            w.raw(" "); disposition(e.headers, &w)
            w.raw(" "); w.nstring(e.headers["content-language"])
            w.raw(" "); w.nstring(e.headers["content-location"])
        }
        w.raw(")")
    }

    static func parameters(_ list: [(name: String, value: String)], _ w: inout IMAPWriter) {
        let kept = list
        guard !kept.isEmpty else { w.raw("NIL"); return }
        w.raw("(")
        for (i, p) in kept.enumerated() {
            if i > 0 { w.raw(" ") }
            w.string(p.name.uppercased()); w.raw(" "); w.string(encodedWord(p.value))
        }
        w.raw(")")
    }

    static func disposition(_ h: MIMEHeaders, _ w: inout IMAPWriter) {
        guard let value = h["content-disposition"] else { w.raw("NIL"); return }
        let parsed = Parameters.parse(value)
        let kind = value.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        w.raw("("); w.string(kind.uppercased()); w.raw(" "); parameters(parsed.list, &w); w.raw(")")
    }

    static func lines(_ b: [UInt8], _ start: Int, _ end: Int) -> Int {
        guard start < end else { return 0 }
        var n = 0
        for i in start..<end where b[i] == 0x0A { n += 1 }
        return b[end - 1] == 0x0A ? n : n + 1
    }
}
