/// Parses RFC 5322 messages with MIME (RFC 2045/2046) into a ``MIMEPart`` tree.
///
/// The structure follows CPython's `email.feedparser` (so the differential test agrees): lines
/// end at CRLF, LF or a lone CR; a boundary line is `--boundary`, optionally `--`, optional
/// blanks; a line matching the boundary of *any* enclosing multipart ends the current part; the
/// line break before a boundary belongs to the boundary; a missing final boundary ends the
/// multipart at the end of its enclosing part. Every line is looked at a bounded number of times
/// (at most once per enclosing boundary, and nesting is bounded by ``MIMELimits/maxDepth``), so
/// parsing is linear in the input size.
struct MIMEParser {
    let data: [UInt8]
    let limits: MIMELimits
    var pos: Int = 0
    /// Boundary markers (`--` + boundary) of the enclosing multiparts, innermost last.
    var boundaries: [[UInt8]] = []
    var problems: [MIMEProblem] = []
    var partCount = 0
    var reportedTooManyParts = false

    init(data: [UInt8], limits: MIMELimits) { self.data = data; self.limits = limits }

    /// End of the line starting at `start` (after its line break).
    @inline(__always) func lineEnd(_ start: Int) -> Int {
        var i = start
        let n = data.count
        while i < n {
            let c = data[i]
            if c == 0x0A { return i + 1 }
            if c == 0x0D { return (i + 1 < n && data[i + 1] == 0x0A) ? i + 2 : i + 1 }
            i += 1
        }
        return n
    }

    /// Whether line `[s, e)` is a boundary line for `marker`; returns (isClose, hasLineBreak).
    @inline(__always) func matchBoundary(_ s: Int, _ e: Int, _ marker: [UInt8]) -> (close: Bool, linesep: Bool)? {
        let m = marker.count
        guard e - s >= m else { return nil }
        var i = 0
        while i < m { if data[s + i] != marker[i] { return nil }; i += 1 }
        var p = s + m
        var close = false
        if p + 2 <= e && data[p] == 0x2D && data[p + 1] == 0x2D { close = true; p += 2 }
        while p < e && (data[p] == 0x20 || data[p] == 0x09) { p += 1 }
        if p == e { return (close, false) }
        // The rest must be exactly one line break.
        if data[p] == 0x0A && p + 1 == e { return (close, true) }
        if data[p] == 0x0D && (p + 1 == e || (data[p + 1] == 0x0A && p + 2 == e)) { return (close, true) }
        return nil
    }

    /// Inside `message/delivery-status`: a blank line ends the current block (CPython pushes
    /// a blank-line matcher).
    var blankLineEnds = false

    /// Reads the next line unless it is a boundary line of an enclosing multipart (or EOF).
    mutating func readLine() -> Range<Int>? {
        guard pos < data.count else { return nil }
        let e = lineEnd(pos)
        if blankLineEnds && (data[pos] == 0x0A || data[pos] == 0x0D) { return nil }
        if data[pos] == 0x2D && e - pos >= 2 && data[pos + 1] == 0x2D {
            for b in boundaries.reversed() where matchBoundary(pos, e, b) != nil { return nil }
        }
        let r = pos..<e
        pos = e
        return r
    }

    /// Reads every remaining line of the current part.
    mutating func readRest() -> Range<Int> {
        let start = pos
        if boundaries.isEmpty && !blankLineEnds { pos = data.count; return start..<pos }
        while readLine() != nil {}
        return start..<pos
    }

    static func isHeaderLine(_ d: [UInt8], _ s: Int, _ e: Int) -> Bool {
        // ^(From |[\041-\071\073-\176]*:|[\t ])
        if s >= e { return false }
        if d[s] == 0x20 || d[s] == 0x09 { return true }
        var i = s
        while i < e {
            let c = d[i]
            if c == 0x3A { return true }
            if c < 0x21 || c > 0x7E { break }
            i += 1
        }
        return e - s >= 5 && d[s] == 0x46 && d[s + 1] == 0x72 && d[s + 2] == 0x6F && d[s + 3] == 0x6D && d[s + 4] == 0x20
    }

    static func stripEOL(_ d: [UInt8], _ r: Range<Int>) -> Range<Int> {
        var e = r.upperBound
        if e > r.lowerBound && d[e - 1] == 0x0A { e -= 1; if e > r.lowerBound && d[e - 1] == 0x0D { e -= 1 } }
        else if e > r.lowerBound && d[e - 1] == 0x0D { e -= 1 }
        return r.lowerBound..<e
    }

    /// CPython strips one line break from the most recently created entity when a boundary
    /// ends a part: a leaf's payload, a multipart's epilogue, or (for `message/*`) the innermost
    /// such entity of the attached message. Multipart-typed leaves (no boundary, start boundary
    /// missing) keep theirs.
    static func stripTrailingLineBreak(_ part: inout MIMEPart) {
        switch part.body {
        case var .message(inner):
            stripTrailingLineBreak(&inner)
            part.body = .message(inner)
        case let .multipart(pre, ps, epi) where part.mimeType == "message/delivery-status":
            var blocks = ps
            if !blocks.isEmpty { stripTrailingLineBreak(&blocks[blocks.count - 1]) }
            part.body = .multipart(preamble: pre, parts: blocks, epilogue: epi)
        case let .multipart(pre, ps, epi):
            var e = epi
            if let ep = e { e = ep.isEmpty ? nil : Array(ep[stripEOL(ep, 0..<ep.count)]) }
            part.body = .multipart(preamble: pre, parts: ps, epilogue: e)
        case let .leaf(bytes):
            if part.mimeType.hasPrefix("multipart/") { return }
            part.body = .leaf(Array(bytes[stripEOL(bytes, 0..<bytes.count)]))
        }
    }

    mutating func problem(_ kind: MIMEProblem.Kind, _ path: [Int], _ offset: Int, _ detail: String) {
        // Keep the list itself bounded.
        if problems.count < 10_000 { problems.append(MIMEProblem(kind: kind, partPath: path, offset: offset, detail: detail)) }
    }

    mutating func parseHeaders(path: [Int]) -> MIMEHeaders {
        var lines: [Range<Int>] = []
        while let l = readLine() {
            if !Self.isHeaderLine(data, l.lowerBound, l.upperBound) {
                let c = data[l.lowerBound]
                if !(c == 0x0A || c == 0x0D) {
                    problem(.missingHeaderBodySeparator, path, l.lowerBound, "a line that is not a header field ends the header block without a blank line")
                    pos = l.lowerBound
                }
                break
            }
            lines.append(l)
        }
        var fields: [MIMEHeaderField] = []
        var cur: [Range<Int>] = []
        var dropped = 0
        func finish(_ p: inout MIMEParser) {
            guard let first = cur.first else { return }
            defer { cur.removeAll() }
            if fields.count >= p.limits.maxHeaderCount { dropped += 1; return }
            let d = p.data
            var colon = first.lowerBound
            while d[colon] != 0x3A { colon += 1 }
            let name = String(decoding: d[first.lowerBound..<colon], as: UTF8.self)
            var value: [UInt8] = []
            var i = colon + 1
            while i < first.upperBound && (d[i] == 0x20 || d[i] == 0x09) { i += 1 }
            var truncated = false
            for (n, r) in cur.enumerated() {
                let s = n == 0 ? i : r.lowerBound
                for j in s..<r.upperBound where d[j] != 0x0D && d[j] != 0x0A {
                    if value.count >= p.limits.maxHeaderLength { truncated = true; break }
                    value.append(d[j])
                }
            }
            if truncated {
                p.problem(.headerLineTooLong, path, first.lowerBound, "header field \(name) is longer than \(p.limits.maxHeaderLength) bytes; truncated")
            }
            let raw = Array(d[first.lowerBound..<cur.last!.upperBound])
            fields.append(MIMEHeaderField(name: name, raw: raw, value: String(decoding: value, as: UTF8.self)))
        }
        for (n, l) in lines.enumerated() {
            let c = data[l.lowerBound]
            if c == 0x20 || c == 0x09 {
                if cur.isEmpty {
                    problem(.invalidHeaderLine, path, l.lowerBound, "the first header line is a continuation line; ignored")
                    continue
                }
                cur.append(l); continue
            }
            finish(&self)
            if l.count >= 5 && data[l.lowerBound..<l.lowerBound + 5].elementsEqual("From ".utf8) {
                if n == 0 { continue }  // envelope line (mbox); not a header field
                if n == lines.count - 1 { pos = l.lowerBound; break }
                problem(.invalidHeaderLine, path, l.lowerBound, "misplaced \"From \" envelope line in the header block; ignored")
                continue
            }
            if data[l.lowerBound] == 0x3A {
                problem(.invalidHeaderLine, path, l.lowerBound, "header line with an empty field name; ignored")
                continue
            }
            cur = [l]
        }
        finish(&self)
        if dropped > 0 {
            problem(.tooManyHeaders, path, lines.first?.lowerBound ?? pos, "more than \(limits.maxHeaderCount) header fields; \(dropped) dropped")
        }
        return MIMEHeaders(fields)
    }

    /// Parses one entity from the current position up to EOF or an enclosing boundary.
    mutating func parseEntity(path: [Int], depth: Int, defaultType: String) -> MIMEPart {
        let offset = pos
        partCount += 1
        let headers = parseHeaders(path: path)
        var part = MIMEPart(headers: headers, body: .leaf([]), path: path, offset: offset, defaultType: defaultType)
        let ctype = part.mimeType
        let main = ctype.split(separator: "/", maxSplits: 1).first.map(String.init) ?? ""
        if depth >= limits.maxDepth && (main == "multipart" || (main == "message" && ctype != "message/delivery-status")) {
            problem(.tooDeep, path, pos, "nesting deeper than \(limits.maxDepth) levels; the body is kept as raw bytes")
            part.body = .leaf(Array(data[readRest()]))
            return part
        }
        if ctype == "message/delivery-status" {
            // Like CPython: a list of header blocks separated by blank lines, each a part.
            var blocks: [MIMEPart] = []
            while true {
                if partCount >= limits.maxParts { break }
                let saved = blankLineEnds
                blankLineEnds = true
                let blockOffset = pos
                partCount += 1
                let h = parseHeaders(path: path + [blocks.count])
                let body = readRest()
                blankLineEnds = saved
                blocks.append(MIMEPart(headers: h, body: .leaf(Array(data[body])), path: path + [blocks.count], offset: blockOffset, defaultType: "text/plain"))
                guard readLine() != nil else { break }   // the blank line
                let save = pos
                guard readLine() != nil else { break }
                pos = save
            }
            part.body = .multipart(preamble: nil, parts: blocks, epilogue: nil)
            return part
        }
        if main == "message" {
            let inner = parseEntity(path: path + [0], depth: depth + 1, defaultType: "text/plain")
            part.body = .message(inner)
            return part
        }
        if main == "multipart" {
            guard let boundaryRaw = part.contentType.parameter("boundary") else {
                problem(.noBoundary, path, pos, "multipart without a boundary parameter; the body is kept as raw bytes")
                part.body = .leaf(Array(data[readRest()]))
                return part
            }
            var b = boundaryRaw
            while let last = b.unicodeScalars.last, last == " " || last == "\t" || last == "\r" || last == "\n" { b.unicodeScalars.removeLast() }
            let marker = Array("--\(b)".utf8)
            let childDefault = ctype == "multipart/digest" ? "message/rfc822" : "text/plain"
            var preambleStart = pos, preambleEnd = pos
            var capturingPreamble = true
            var closeSeen = false, closeLinesep = false
            var preamble: [UInt8]? = nil
            var parts: [MIMEPart] = []
            var stoppedForLimit = false
            while let l = readLine() {
                if let mo = matchBoundary(l.lowerBound, l.upperBound, marker) {
                    if mo.close { closeSeen = true; closeLinesep = mo.linesep; break }
                    if capturingPreamble {
                        if preambleEnd > preambleStart {
                            preamble = Array(data[Self.stripEOL(data, preambleStart..<preambleEnd)])
                        }
                        capturingPreamble = false
                        pos = l.lowerBound
                        continue
                    }
                    // Consume consecutive boundary lines.
                    while true {
                        let save = pos
                        guard let n = readLine() else { break }
                        if matchBoundary(n.lowerBound, n.upperBound, marker) == nil { pos = save; break }
                    }
                    if partCount >= limits.maxParts {
                        if !reportedTooManyParts {
                            problem(.tooManyParts, path, pos, "more than \(limits.maxParts) parts; the rest is kept as raw bytes")
                            reportedTooManyParts = true
                        }
                        stoppedForLimit = true
                        break
                    }
                    boundaries.append(marker)
                    var child = parseEntity(path: path + [parts.count], depth: depth + 1, defaultType: childDefault)
                    boundaries.removeLast()
                    Self.stripTrailingLineBreak(&child)
                    parts.append(child)
                } else {
                    preambleEnd = l.upperBound
                }
            }
            if stoppedForLimit {
                let rest = readRest()
                part.body = .multipart(preamble: preamble, parts: parts, epilogue: Array(data[rest]))
                return part
            }
            if capturingPreamble {
                problem(.startBoundaryNotFound, path, preambleStart, "multipart boundary \"\(b)\" never appears; the body is kept as raw bytes")
                let body = Array(data[preambleStart..<preambleEnd])
                _ = readRest()
                part.body = .leaf(body)
                return part
            }
            if !closeSeen {
                problem(.closeBoundaryNotFound, path, pos, "multipart boundary \"\(b)\" is never closed (\"--\(b)--\" missing)")
                part.body = .multipart(preamble: preamble, parts: parts, epilogue: nil)
                return part
            }
            preambleStart = pos
            let rest = readRest()
            _ = closeLinesep
            let epilogue: [UInt8]? = Array(data[rest])
            part.body = .multipart(preamble: preamble, parts: parts, epilogue: epilogue)
            return part
        }
        let bodyRange = readRest()
        part.body = .leaf(Array(data[bodyRange]))
        checkLeaf(part, bodyRange)
        return part
    }

    /// Records transfer-encoding and charset problems of a leaf with a linear scan (no decoding).
    mutating func checkLeaf(_ part: MIMEPart, _ r: Range<Int>) {
        let cte = part.transferEncoding
        switch cte {
        case "", "7bit", "8bit", "binary": break
        case "base64":
            var dataChars = 0, junk = false, padSeen = false
            for i in r {
                let c = data[i]
                if c == 0x0A || c == 0x0D { continue }
                if c == UInt8(ascii: "=") { padSeen = true; continue }
                if TransferEncoding.b64Table[Int(c)] == 0xFF || padSeen { junk = true } else { dataChars += 1 }
            }
            if junk || dataChars % 4 == 1 {
                problem(.badBase64, part.path, r.lowerBound, dataChars % 4 == 1 ? "base64 data has an impossible length; kept undecoded" : "base64 contains characters outside the alphabet (ignored when decoding)")
            }
        case "quoted-printable":
            var i = r.lowerBound
            while i < r.upperBound {
                if data[i] == UInt8(ascii: "=") {
                    let n1 = i + 1 < r.upperBound ? data[i + 1] : 0x0A
                    let n2 = i + 2 < r.upperBound ? data[i + 2] : 0
                    let ok = n1 == 0x0A || n1 == 0x0D || (TransferEncoding.hexValue(n1) != nil && TransferEncoding.hexValue(n2) != nil)
                    if !ok {
                        problem(.badQuotedPrintable, part.path, i, "invalid quoted-printable escape; kept literally")
                        break
                    }
                }
                i += 1
            }
        case "x-uuencode", "uuencode", "uue", "x-uue":
            problem(.unknownTransferEncoding, part.path, r.lowerBound, "uuencoded body is not decoded; kept as raw bytes")
        default:
            problem(.unknownTransferEncoding, part.path, r.lowerBound, "unknown Content-Transfer-Encoding \"\(cte)\"; kept as raw bytes")
        }
        let ct = part.contentType
        if ct.mainType == "text", let cs = ct.parameter("charset"), !Charset.isKnown(cs) {
            problem(.unknownCharset, part.path, r.lowerBound, "unknown charset \"\(cs)\"; decoded as UTF-8")
        }
    }
}
