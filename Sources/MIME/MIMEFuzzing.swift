import Foundation

/// The entry point for a libFuzzer target: parses arbitrary bytes, summarizes, rebuilds a
/// message from the summary with ``MessageBuilder``, reparses it, and traps (`preconditionFailure`)
/// when an invariant does not hold:
/// - the summary JSON decodes back to the same summary;
/// - the rebuilt message has the same subject (blanks normalized), the same plain addresses, the
///   same text and HTML bodies (line endings normalized) and the same attachment bytes.
///
/// Trust-model row **inbox (low)**: hostile mail must never crash or hang the parser.
public enum MIMEFuzzing {
    /// Line ends normalized to LF, on Unicode scalars: Foundation's `replacingOccurrences(of:)`
    /// matches on grapheme clusters and did not find a CRLF followed by a combining mark
    /// (`"\r\n\u{0658}"`), so a body the builder had only re-ended with CRLF looked changed.
    static func normLines(_ s: String?) -> String? {
        s.map { text in
            var out = String.UnicodeScalarView()
            var previousCR = false
            for scalar in text.unicodeScalars {
                if scalar == "\n", previousCR { previousCR = false; continue }
                previousCR = scalar == "\r"
                out.append(previousCR ? "\n" : scalar)
            }
            return String(out)
        }
    }

    /// Runs of blanks (space, tab, CR, LF) collapsed to one space, on Unicode scalars (a CRLF is
    /// one `Character`, equal to neither `"\r"` nor `"\n"`).
    static func normBlanks(_ s: String?) -> String? {
        s.map { text in
            text.unicodeScalars.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" })
                .map { String(String.UnicodeScalarView($0)) }.joined(separator: " ")
        }
    }

    /// Addresses the invariant covers: dot-atom local part and domain, nothing exotic.
    static func plain(_ a: MailAddress) -> Bool {
        let parts = a.address.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return false }
        return a.address.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-+@".unicodeScalars.contains($0)) }
    }

    /// Runs the invariants on `data`; traps on a violation.
    public static func check(_ data: [UInt8]) {
        let m = MIMEMessage(bytes: data)
        let summary = m.summary
        let json = summary.json()
        guard let back = try? JSONDecoder().decode(MessageSummary.self, from: Data(json.utf8)) else {
            preconditionFailure("summary JSON does not decode: \(json.prefix(200))")
        }
        precondition(back == summary, "summary JSON does not round-trip")

        var b = MessageBuilder()
        func clean(_ s: String) -> String { s.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ") }
        let from = m.from.filter(plain).map { MailAddress(name: $0.name.map(clean), address: $0.address) }
        let to = m.to.filter(plain).map { MailAddress(name: $0.name.map(clean), address: $0.address) }
        b.from = from.isEmpty ? [MailAddress(address: "fuzz@example.invalid")] : from
        b.to = to
        b.subject = m.subject.map(clean)
        b.text = summary.text
        b.html = summary.html
        b.date = Date(timeIntervalSince1970: 0)
        b.messageID = "fuzz@example.invalid"
        b.attachments = m.attachments.map {
            let t = $0.contentType.hasPrefix("multipart/") || $0.contentType.hasPrefix("message/") || !$0.contentType.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F && $0 != "\"" && $0 != ";" })
                ? "application/octet-stream" : $0.contentType
            return MessageBuilder.Attachment(filename: $0.filename.map(clean), contentType: t, data: $0.data)
        }
        guard let rebuilt = try? b.build() else { preconditionFailure("builder rejected input derived from a parsed message") }
        let r = MIMEMessage(bytes: rebuilt)
        precondition(normBlanks(r.subject) == normBlanks(b.subject), "subject changed: \(String(describing: b.subject)) → \(String(describing: r.subject))")
        precondition(r.from.map(\.address) == b.from.map(\.address), "from changed")
        precondition(r.to.map(\.address) == b.to.map(\.address), "to changed")
        precondition(r.from.map { normBlanks($0.name) } == b.from.map { normBlanks($0.name) }, "from names changed")
        precondition(normLines(r.textBody) == normLines(b.text) || (b.text == nil && r.textBody == ""), "text body changed")
        precondition(normLines(r.htmlBody) == normLines(b.html), "html body changed")
        precondition(r.attachments.map(\.data) == b.attachments.map(\.data), "attachment bytes changed")
        precondition(r.attachments.map { $0.filename?.trimmingASCIIWhitespace() } == b.attachments.map { $0.filename?.trimmingASCIIWhitespace() }, "attachment names changed")
    }
}

/// What `rampart-dev bench mime` times: every message of an mbox parsed, every body decoded and
/// every attachment decoded and hashed-over (touching all bytes).
public enum MIMEBenchmark {
    /// The work done (so that it cannot be optimized away, and to compare with the Python baseline).
    public struct Result: Sendable, Equatable {
        /// Messages parsed.
        public var messages: Int
        /// Bytes of the mbox read.
        public var bytes: Int
        /// Attachments decoded.
        public var attachments: Int
        /// Decoded attachment bytes.
        public var attachmentBytes: Int
        /// UTF-8 bytes of the decoded text and HTML bodies.
        public var bodyCharacters: Int
        /// Messages skipped because they exceed `maxMessageBytes`.
        public var skipped: Int
        /// A checksum over all decoded content.
        public var checksum: UInt64
    }

    /// Parses every message of the mbox at `path` in bounded memory, decoding the text and HTML
    /// bodies and every attachment.
    public static func parseMbox(path: String, maxMessageBytes: Int = MboxReader.defaultMaxMessageBytes) throws -> Result {
        let reader = try MboxReader(path: path, maxMessageBytes: maxMessageBytes)
        var r = Result(messages: 0, bytes: 0, attachments: 0, attachmentBytes: 0, bodyCharacters: 0, skipped: 0, checksum: 0)
        try reader.forEach { item in
            guard case let .success(entry) = item else { r.skipped += 1; return }
            r.messages += 1
            r.bytes += entry.originalBytes.count
            let m = entry.message()
            touch(m, &r)
        }
        return r
    }

    static func touch(_ m: MIMEMessage, _ r: inout Result) {
        var h = r.checksum
        func mix(_ v: UInt64) { h = (h ^ v) &* 0x100000001B3 }
        if let s = m.subject { mix(UInt64(s.utf8.count)) }
        mix(UInt64(m.from.count + m.to.count + m.cc.count))
        if let t = m.textBody { r.bodyCharacters += t.utf8.count; mix(UInt64(t.utf8.count)) }
        if let t = m.htmlBody { r.bodyCharacters += t.utf8.count; mix(UInt64(t.utf8.count)) }
        for a in m.attachments {
            r.attachments += 1
            r.attachmentBytes += a.data.count
            var x: UInt64 = 0
            for b in a.data { x = x &+ UInt64(b) }
            mix(x)
        }
        r.checksum = h
    }
}
