import Foundation
import Testing
@testable import MIME
import RampartTestSupport

@Suite("Transfer encodings")
struct TransferEncodingTests {
    @Test("base64 decodes like CPython (padding repair, junk skipped, impossible length kept raw)")
    func base64() {
        func d(_ s: String) -> [UInt8] { TransferEncoding.decodeBase64(Array(s.utf8)[...]).bytes }
        #expect(d("SGVsbG8=") == Array("Hello".utf8))
        #expect(d("SGVs\r\nbG8=") == Array("Hello".utf8))
        #expect(d("SGVsbG8") == Array("Hello".utf8))                // missing padding
        #expect(TransferEncoding.decodeBase64(Array("SGVsbG8".utf8)[...]).problem != nil)
        #expect(d("QQ==QUJD") == Array("A".utf8))                   // stops after complete padding
        #expect(d("QU=JD") == Array("ABC".utf8))                    // incomplete padding ignored
        #expect(d("Q!Q==") == Array("A".utf8))                      // junk skipped
        #expect(d("QUJDR") == Array("QUJDR".utf8))                  // 4n+1 characters: kept raw
        #expect(TransferEncoding.decodeBase64(Array("SGVsbG8=".utf8)[...]).problem == nil)
    }

    @Test("base64 encoding round-trips and keeps lines at 76 characters")
    func base64Encode() {
        var g = SystemRandomNumberGenerator()
        for n in [0, 1, 2, 3, 57, 58, 1000] {
            let data = (0..<n).map { _ in UInt8.random(in: 0...255, using: &g) }
            let enc = TransferEncoding.encodeBase64(data)
            #expect(enc.split(separator: 0x0A).allSatisfy { $0.count <= 77 })
            #expect(TransferEncoding.decodeBase64(enc[...]).bytes == data)
        }
    }

    @Test("quoted-printable decodes soft breaks, keeps bad escapes like CPython")
    func qp() {
        func d(_ s: String) -> String { String(decoding: TransferEncoding.decodeQuotedPrintable(Array(s.utf8)[...]).bytes, as: UTF8.self) }
        #expect(d("caf=C3=A9") == "café")
        #expect(d("caf=c3=a9") == "café")
        #expect(d("soft=\r\nbreak=\nhere") == "softbreakhere")
        #expect(d("a===ZZ") == "a==ZZ")           // "==" → "=", "=Z" kept
        #expect(d("x=4") == "x=4")
        #expect(d("end=") == "end")
        #expect(TransferEncoding.decodeQuotedPrintable(Array("a=ZZ".utf8)[...]).problem != nil)
    }

    @Test("quoted-printable encoding: ≤ 76 characters per line, round-trips, escapes From and trailing blanks")
    func qpEncode() {
        let text = "Grüße " + String(repeating: "long words here ", count: 20) + "\nFrom the start \ntrailing \t\n=equals="
        let enc = TransferEncoding.encodeQuotedPrintable(Array(text.utf8))
        let lines = String(decoding: enc, as: UTF8.self).components(separatedBy: "\r\n")
        #expect(lines.allSatisfy { $0.count <= 76 })
        #expect(!lines.contains { $0.hasPrefix("From ") })
        #expect(!lines.contains { $0.hasSuffix(" ") || $0.hasSuffix("\t") })
        let dec = String(decoding: TransferEncoding.decodeQuotedPrintable(enc[...]).bytes, as: UTF8.self)
        #expect(dec == text.replacingOccurrences(of: "\n", with: "\r\n"))
    }
}

@Suite("Headers")
struct HeaderTests {
    @Test("RFC 2047: adjacent encoded words joined, bad ones kept, Q underscores, B padding")
    func encodedWords() {
        #expect(EncodedWords.decodeUnstructured("=?utf-8?q?a?= =?utf-8?q?b?= c") == "ab c")
        #expect(EncodedWords.decodeUnstructured("=?ISO-8859-1?Q?caf=E9_au_lait?=") == "café au lait")
        #expect(EncodedWords.decodeUnstructured("=?utf-8?b?w6k?=") == "é")
        #expect(EncodedWords.decodeUnstructured("x =?bogus?x?y?= z") == "x =?bogus?x?y?= z")
        #expect(EncodedWords.decodeUnstructured("=?utf-8?q?unterminated") == "=?utf-8?q?unterminated")
        #expect(EncodedWords.decodeUnstructured("=?koi8-r?b?8NLJ18XU?=") == "Привет")
        #expect(EncodedWords.decodeUnstructured("=?iso-2022-jp?b?GyRCJDMkcyRLJEEkTxsoQg==?=") == "こんにちは")
        let long = String(repeating: "Grüße aus Köln ", count: 10)
        let enc = EncodedWords.encode(long)
        #expect(enc.components(separatedBy: "\r\n ").allSatisfy { $0.count <= 75 })
        #expect(EncodedWords.decodeUnstructured(enc.replacingOccurrences(of: "\r\n", with: "")) == long)
    }

    @Test("folding: continuation lines unfolded, raw bytes kept")
    func folding() {
        let m = MIMEMessage("Subject: a\r\n  folded\r\n\tline\r\nX-Empty:\r\n\r\nbody")
        #expect(m.subject == "a  folded\tline")
        #expect(m.headers["x-empty"] == "")
        #expect(m.headers.first("subject")?.raw == Array("Subject: a\r\n  folded\r\n\tline\r\n".utf8))
    }

    @Test("RFC 2231 parameters: continuations, charset, percent-encoding; RFC 2047 in quoted names")
    func rfc2231() {
        let p = Parameters.parse("attachment; filename*0*=utf-8''%E2%82%AC%20a; filename*1=\" b.txt\"; size=3")
        #expect(p.value("filename") == "€ a b.txt")
        #expect(p.value("size") == "3")
        #expect(Parameters.parse("x; title*=iso-8859-1'de'Gr%FC%DFe").value("title") == "Grüße")
        #expect(Parameters.parse("x; name=\"=?utf-8?q?n=C3=A4me?=\"").value("name") == "näme")
        #expect(Parameters.parse("x; a=\"semi;colon\"; b=2").value("b") == "2")
        #expect(Parameters.parse("x; a=\"semi;colon\"; b=2").value("a") == "semi;colon")
    }

    @Test("addresses: display names, quotes, comments, groups, routes")
    func addresses() {
        let l = MailAddress.parseList("\"Doe, John\" <j@x.com>, =?utf-8?q?J=C3=BCrgen?= <jj@x.com>, Group: a@b.c, \"q d\"@e.f;, plain@x (Comment), <angle@x>, Bob <@r.example:bob@x>")
        #expect(l == [MailAddress(name: "Doe, John", address: "j@x.com"), MailAddress(name: "Jürgen", address: "jj@x.com"),
                      MailAddress(address: "a@b.c"), MailAddress(address: "\"q d\"@e.f"), MailAddress(address: "plain@x"),
                      MailAddress(address: "angle@x"), MailAddress(name: "Bob", address: "bob@x")])
        #expect(MailAddress.parseList("undisclosed-recipients:;").isEmpty)
        #expect(MailAddress.parseList("John   (x) Doe <a@b>") == [MailAddress(name: "John Doe", address: "a@b")])
        #expect(MailAddress(name: "Doe, John", address: "j@x").description == "\"Doe, John\" <j@x>")
        // Malformed input read like CPython: junk after the address ignored, blanks in local
        // parts kept (quoted), ':' after an address is not a group, the null address.
        #expect(MailAddress.parseList("a b@c") == [MailAddress(address: "\"a b\"@c")])
        #expect(MailAddress.parseList("Bob <bob@ex ample.com>, c@d") == [MailAddress(name: "Bob", address: "bob@ex"), MailAddress(address: "c@d")])
        #expect(MailAddress.parseList("x <a@b>c") == [MailAddress(name: "x", address: "a@b")])
        #expect(MailAddress.parseList("bbb@zzz.orgSubject: hi") == [MailAddress(address: "bbb@zzz.orgSubject")])
        #expect(MailAddress.parseList("abc@ example . com") == [MailAddress(address: "abc@example.com")])
        #expect(MailAddress.parseList("MAILER DAEMON <>") == [MailAddress(name: "MAILER DAEMON", address: "<>")])
        #expect(MailAddress.parseList("J. Doe <j@x>") == [MailAddress(name: "J. Doe", address: "j@x")])
    }

    @Test("Message-ID: <> removed, junk after the id ignored, odd values kept")
    func messageIDs() {
        func id(_ v: String) -> String? { MIMEMessage("Message-ID: \(v)\n\n").messageID }
        #expect(id("<a@b>") == "a@b")
        #expect(id(" <a@b>  ") == "a@b")
        #expect(id("<a@b>Content-Type: x") == "a@b")
        #expect(id("<a@b") == "a@b")
        #expect(id("<a@[1.2.3.4]>") == "a@[1.2.3.4]")
        #expect(id("a@b") == "a@b")
        #expect(id("<a@b.>") == "a@b.")
    }

    @Test("dates: RFC 5322, obsolete zones and two-digit years, converted to UTC")
    func dates() {
        func iso(_ s: String) -> String? { MailDate.parse(s).map(MailDate.iso8601) }
        #expect(iso("Tue, 1 Jul 2003 10:52:37 +0200") == "2003-07-01T08:52:37Z")
        #expect(iso("1 Jul 03 10:52 EST") == "2003-07-01T15:52:00Z")
        #expect(iso("Fri, 21 Nov 97 09:55:06 PDT (Pacific)") == "1997-11-21T16:55:06Z")
        #expect(iso("Thu, 13 Feb 1969 23:32:54 -0330") == "1969-02-14T03:02:54Z")
        #expect(iso("Mon, 31 Dec 2029 23:59:59 -0000") == "2029-12-31T23:59:59Z")
        #expect(iso("Mon, 31 Dec 2029 23:59:59 XYZ") == "2029-12-31T23:59:59Z")
        #expect(iso("not a date") == nil)
        #expect(iso("31 Feb 2020 10:00:00 +0000") == nil)
        #expect(MailDate.rfc5322(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 +0000")
    }
}

@Suite("Charsets")
struct CharsetTests {
    static let samples: [(String, String)] = [
        ("utf-8", "Grüße 你好"), ("us-ascii", "plain"), ("iso-8859-1", "Café"), ("iso-8859-2", "Zażółć"),
        ("iso-8859-3", "Ħaġar"), ("iso-8859-4", "ļ ņ ŗ"), ("iso-8859-5", "Съешь"), ("iso-8859-6", "مرحبا"),
        ("iso-8859-7", "Καλημέρα"), ("iso-8859-8", "שלום"), ("iso-8859-9", "ğüşıöç"), ("iso-8859-10", "ŋ ŧ đ"),
        ("iso-8859-11", "สวัสดี"), ("iso-8859-13", "ąčęė"), ("iso-8859-14", "ŵ ŷ"), ("iso-8859-15", "€ œ"),
        ("iso-8859-16", "ș ț"), ("windows-1250", "Příliš"), ("windows-1251", "Широкая"), ("windows-1252", "“quotes” €"),
        ("windows-1253", "Ξεσκεπάζω"), ("windows-1254", "Pijamalı"), ("windows-1255", "דג סקרן"), ("windows-1256", "نص حكيم"),
        ("windows-1257", "Įlinkdama"), ("windows-1258", "đương"), ("koi8-r", "Привет"), ("koi8-u", "Ґанок їжак"),
        ("iso-2022-jp", "こんにちは"), ("gb2312", "你好世界"), ("gbk", "這是中文"), ("gb18030", "你好𠀀"),
        ("big5", "這是繁體"), ("shift_jis", "こんにちは"), ("euc-jp", "日本語"), ("euc-kr", "안녕하세요"),
    ]

    @Test("every promised charset decodes (bytes from iconv's encoder)", arguments: samples.map(\.0))
    func decodes(_ cs: String) throws {
        let text = Self.samples.first { $0.0 == cs }!.1
        let bytes = try #require(Charset.encode(text, charset: cs), "cannot encode in \(cs)")
        let (t, known) = Charset.decode(bytes[...], charset: cs)
        #expect(known)
        #expect(t == text)
    }

    @Test("aliases normalize; unknown charsets fall back to UTF-8 and are reported")
    func aliases() {
        #expect(Charset.normalize("Latin1") == "iso-8859-1")
        #expect(Charset.normalize("CP1252") == "windows-1252")
        #expect(Charset.normalize("ISO_8859-15") == "iso-8859-15")
        #expect(Charset.normalize("x-sjis") == "shift_jis")
        #expect(Charset.normalize("ks_c_5601-1987") == "cp949")
        #expect(Charset.normalize("UTF8") == "utf-8")
        #expect(Charset.normalize("x-no-such") == nil)
        let r = Charset.decode(Array("naïve".utf8)[...], charset: "x-no-such")
        #expect(r.text == "naïve" && !r.known)
        let m = MIMEMessage("Content-Type: text/plain; charset=x-no-such\n\nna\u{EF}ve\n")
        #expect(m.problems.contains { $0.kind == .unknownCharset })
        #expect(Charset.decode([0x61, 0xFF, 0x62][...], charset: "us-ascii").text == "a\u{FFFD}b")
        #expect(Charset.decode([0x81][...], charset: "windows-1252").text == "\u{FFFD}")
    }
}

@Suite("MIME structure")
struct StructureTests {
    @Test("multipart: preamble, epilogue, nested alternative, message/rfc822, line break before boundary")
    func structure() throws {
        let raw = """
        From: a@example.com
        Content-Type: multipart/mixed; boundary="o"

        preamble
        --o
        Content-Type: multipart/alternative; boundary=i

        --i
        Content-Type: text/plain

        plain
        --i
        Content-Type: text/html

        <b>html</b>
        --i--
        --o
        Content-Type: message/rfc822

        Subject: inner

        inner body
        --o--
        epilogue
        """
        let m = MIMEMessage(raw)
        #expect(m.problems.isEmpty)
        guard case let .multipart(pre, parts, epi) = m.root.body else { Issue.record("not multipart"); return }
        #expect(pre == Array("preamble".utf8))
        #expect(epi == Array("epilogue".utf8))
        #expect(parts.count == 2)
        #expect(m.textBody == "plain")
        #expect(m.htmlBody == "<b>html</b>")
        guard case let .message(inner) = parts[1].body else { Issue.record("not a message"); return }
        #expect(inner.headers.decoded("subject") == "inner")
        #expect(inner.path == [1, 0])
        #expect(m.attachments.count == 1)
        // The line break before the boundary belongs to the boundary (also inside the attached message).
        #expect(m.attachments[0].data == Array("inner body".utf8))
    }

    @Test("missing final boundary and start boundary are problems, not crashes")
    func brokenBoundaries() throws {
        let m = MIMEMessage("Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n\nhello\n")
        #expect(m.problems.map(\.kind) == [.closeBoundaryNotFound])
        #expect(m.textBody == "hello")
        let n = MIMEMessage("Content-Type: multipart/mixed; boundary=b\n\nno parts here\n")
        #expect(n.problems.map(\.kind) == [.startBoundaryNotFound])
        #expect(n.root.hasChildren == false)
        let o = MIMEMessage("Content-Type: multipart/mixed\n\n--x\n\nhi\n")
        #expect(o.problems.map(\.kind) == [.noBoundary])
    }

    @Test("undecodable parts are kept raw and reported with their part path")
    func problems() throws {
        let m = MIMEMessage(bytes: try TestSupport.fixture("junk-base64.eml"))
        let kinds = m.problems.filter { $0.kind == .badBase64 }
        #expect(kinds.map(\.partPath) == [[1], [3], [4]])
        #expect(m.problems.allSatisfy { $0.description.contains("part ") })
        #expect(m.attachments.first { $0.filename == "c.bin" }?.data == Array("QUJDR".utf8))
    }

    @Test("attachments: filename from RFC 2231 or name, Content-ID without <>, disposition")
    func attachments() throws {
        let m = MIMEMessage(bytes: try TestSupport.fixture("rfc2231-filename.eml"))
        let a = m.attachments
        #expect(a.count == 2)
        #expect(a[0].filename == "€ rapport für 2024.pdf")
        #expect(a[0].disposition == "attachment")
        #expect(a[0].data == Array("%PDF-".utf8))
        #expect(a[1].filename == "bild ä.png")
        #expect(a[1].contentID == "img1@x")
        #expect(a[1].disposition == "inline")
    }

    @Test("summary JSON has the documented keys in order and decodes back")
    func summaryJSON() throws {
        let m = MIMEMessage(bytes: try TestSupport.fixture("crlf-nested.eml"))
        let json = m.summaryJSON()
        let keys = ["\"subject\"", "\"from\"", "\"to\"", "\"cc\"", "\"date\"", "\"messageId\"", "\"text\"", "\"html\"", "\"attachments\""]
        let positions = keys.map { json.range(of: $0)!.lowerBound }
        #expect(positions == positions.sorted())
        let back = try JSONDecoder().decode(MessageSummary.self, from: Data(json.utf8))
        #expect(back == m.summary)
        #expect(back.text == "plain =C3=A4")
        #expect(back.html == "<p>html ä</p>")
    }

    @Test("the differential comparison notices a changed field")
    func differenceDetector() throws {
        let s = MIMEMessage(bytes: try TestSupport.fixture("groups.eml")).summary
        var t = s
        t.cc[0].name = "Someone else"
        #expect(DifferentialTests.differences(s, s).isEmpty)
        #expect(Set(DifferentialTests.differences(s, t).keys) == ["cc"])
    }
}

@Suite("Hostile input")
struct HostileTests {
    /// Parses `text` and expects a problem of `kind` among those it reports.
    private func parse(_ text: String, reporting kind: MIMEProblem.Kind,
                       sourceLocation: SourceLocation = #_sourceLocation) -> MIMEMessage {
        let message = MIMEMessage(text)
        #expect(message.problems.contains { $0.kind == kind }, "no \(kind) problem reported", sourceLocation: sourceLocation)
        return message
    }

    @Test("100k nested multiparts: depth bounded, rest kept raw")
    func deepNesting() {
        var s = ""
        for i in 0..<100_000 { s += "Content-Type: multipart/mixed; boundary=b\(i)\n\n--b\(i)\n" }
        s += "\nleaf\n"
        let m = parse(s, reporting: .tooDeep)
        var depth = 0
        var p = m.root
        while let c = p.children.first { p = c; depth += 1 }
        #expect(depth == MIMELimits.default.maxDepth)
    }

    @Test("many parts: bounded by maxParts")
    func manyParts() {
        var s = "Content-Type: multipart/mixed; boundary=b\n\n"
        for _ in 0..<20_000 { s += "--b\n\nx\n" }
        s += "--b--\n"
        let m = parse(s, reporting: .tooManyParts)
        #expect(m.root.children.count < MIMELimits.default.maxParts)
        _ = m.summaryJSON()
    }

    @Test("100k header lines: at most maxHeaderCount kept")
    func manyHeaders() {
        var s = ""
        for i in 0..<100_000 { s += "X-H\(i): v\n" }
        s += "\nbody\n"
        let m = parse(s, reporting: .tooManyHeaders)
        #expect(m.headers.fields.count == MIMELimits.default.maxHeaderCount)
        #expect(m.textBody == "body\n")
    }

    @Test("one huge folded header is truncated at maxHeaderLength")
    func longHeader() {
        let s = "Subject: " + String(repeating: "word\n ", count: 50_000) + "\n\nbody"
        let m = parse(s, reporting: .headerLineTooLong)
        #expect((m.headers["subject"]?.utf8.count ?? 0) == MIMELimits.default.maxHeaderLength)
    }

    /// (Sizes kept moderate for debug builds; docs/mime.md gives release timings for 50 MB.)
    @Test("1 MB of boundary-like lines and an 8 MB single-line body finish")
    func boundaryFloodAndHugeLine() {
        var s = "Content-Type: multipart/mixed; boundary=bb\n\n--bb\nContent-Type: multipart/mixed; boundary=bbb\n\n"
        for _ in 0..<80_000 { s += "--bbx\n--bb-\n" }
        _ = parse(s, reporting: .startBoundaryNotFound)
        var big = Array("Content-Type: application/octet-stream\nContent-Transfer-Encoding: base64\n\n".utf8)
        big += [UInt8](repeating: UInt8(ascii: "Q"), count: 8 << 20)
        let n = MIMEMessage(bytes: big)
        #expect(n.attachments.first?.data.count == (8 << 20) / 4 * 3)
    }

    @Test("random mutations of the fixtures never trap (fuzz invariants hold)")
    func mutations() throws {
        let files = try FileManager.default.contentsOfDirectory(at: TestSupport.fixturesDir, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "eml" }.sorted { $0.path < $1.path }
        var rng = SplitMix64(seed: 42)
        for f in files {
            let base = Array(try Data(contentsOf: f))
            MIMEFuzzing.check(base)
            for _ in 0..<30 {
                var d = base
                for _ in 0..<Int(rng.next() % 8 + 1) where !d.isEmpty {
                    let i = Int(rng.next() % UInt64(d.count))
                    switch rng.next() % 4 {
                    case 0: d[i] = UInt8(truncatingIfNeeded: rng.next())
                    case 1: d.remove(at: i)
                    case 2: d.insert(contentsOf: Array("\n--".utf8), at: i)
                    default: d.insert(contentsOf: d[i..<min(d.count, i + 40)], at: i)
                    }
                }
                MIMEFuzzing.check(d)
            }
        }
    }
}
