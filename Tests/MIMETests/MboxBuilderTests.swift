import Foundation
import Testing
@testable import MIME

@Suite("mbox, Maildir, EML")
struct MboxTests {
    static func write(_ bytes: [UInt8], _ dir: URL, _ name: String) throws -> String {
        let p = dir.appendingPathComponent(name).path
        try Data(bytes).write(to: URL(fileURLWithPath: p))
        return p
    }

    @Test("mboxrd: entries split at From lines, >From unquoted, originalBytes reproduce the file")
    func readRoundTrip() throws {
        let dir = try TestSupport.tempDir("mbox")
        defer { try? FileManager.default.removeItem(at: dir) }
        // Bodies larger than the 64 KiB read buffer cross buffer boundaries.
        let big = String(repeating: "0123456789abcdef", count: 10_000)
        let file = "From a@x Mon Jan  1 00:00:00 2024\nSubject: one\n\n>From quoted\n>>From twice\nbody\n\n"
            + "From b@x Mon Jan  1 00:00:01 2024\r\nSubject: two\r\n\r\n\(big)\r\n\r\n"
            + "From c@x Mon Jan  1 00:00:02 2024\nSubject: three\n\nlast line without newline"
        let path = try Self.write(Array(file.utf8), dir, "in.mbox")
        let r = try MboxReader(path: path)
        var entries: [MboxEntry] = []
        try r.forEach { entries.append(try $0.get()) }
        #expect(entries.count == 3)
        #expect(entries.map(\.index) == [0, 1, 2])
        #expect(String(decoding: entries[0].fromLine, as: UTF8.self) == "From a@x Mon Jan  1 00:00:00 2024")
        #expect(String(decoding: entries[0].messageBytes, as: UTF8.self) == "Subject: one\n\nFrom quoted\n>From twice\nbody\n")
        #expect(entries[1].message().subject == "two")
        #expect(entries[1].message().textBody == big + "\r\n")
        #expect(entries[2].message().textBody == "last line without newline")
        #expect(entries.flatMap(\.originalBytes) == Array(file.utf8))
        #expect(entries[1].offset == UInt64(entries[0].originalBytes.count))

        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var viaHandle: [MboxEntry] = []
        try MboxReader(fileHandle: handle).forEach { viaHandle.append(try $0.get()) }
        #expect(viaHandle == entries)

        let mboxo = try MboxReader(path: path, format: .mboxo)
        let first = try #require(try mboxo.nextEntry()).get()
        #expect(String(decoding: first.messageBytes, as: UTF8.self) == "Subject: one\n\nFrom quoted\n>>From twice\nbody\n")
    }

    @Test("an entry over the size limit is an error for that entry only, and is not loaded")
    func tooLarge() throws {
        let dir = try TestSupport.tempDir("mbox")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = "From a\nSubject: small\n\nx\n\nFrom b\nSubject: big\n\n" + String(repeating: "y", count: 300_000) + "\n\nFrom c\nSubject: after\n\nz\n"
        let path = try Self.write(Array(file.utf8), dir, "big.mbox")
        let r = try MboxReader(path: path, maxMessageBytes: 100_000)
        var results: [Result<MboxEntry, MIMEError>] = []
        try r.forEach { results.append($0) }
        #expect(results.count == 3)
        #expect((try? results[0].get().message().subject) == "small")
        if case let .failure(e) = results[1] {
            #expect(e == .messageTooLarge(entry: 1, offset: 26, limit: 100_000))
            #expect(e.description.contains("entry 1"))
        } else { Issue.record("expected a failure") }
        #expect((try? results[2].get().message().subject) == "after")
        #expect(throws: MIMEError.self) { _ = try MboxReader(path: Self.write(Array("Subject: x\n\n".utf8), dir, "bad.mbox")).nextEntry() }
        #expect(throws: MIMEError.self) { _ = try MboxReader(path: dir.appendingPathComponent("missing").path) }
    }

    @Test("MboxWriter quotes From lines (mboxrd) and the reader restores the messages exactly")
    func writer() throws {
        let dir = try TestSupport.tempDir("mbox")
        defer { try? FileManager.default.removeItem(at: dir) }
        let msgs = ["Subject: a\n\nFrom start\n>From already\nend\n", "Subject: b\n\nno newline at end", "Subject: c\r\n\r\nFrom crlf\r\n"]
        let path = dir.appendingPathComponent("out.mbox").path
        do {
            let w = try MboxWriter(path: path)
            for m in msgs { try w.write(message: Array(m.utf8), sender: "me@example.com", date: Date(timeIntervalSince1970: 86400 * 365)) }
        }
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.hasPrefix("From me@example.com Fri Jan  1 00:00:00 1971\n"))
        #expect(text.contains("\n>From start\n>>From already\n"))
        var back: [String] = []
        try MboxReader(path: path).forEach { back.append(String(decoding: try $0.get().messageBytes, as: UTF8.self)) }
        #expect(back == [msgs[0], msgs[1] + "\n", msgs[2]])
        // Python's mailbox module reads the same messages.
        let py = try TestSupport.run(TestSupport.python, ["-c", "import mailbox,sys\nfor m in mailbox.mbox(sys.argv[1]): print(m['subject'])", path])
        #expect(String(decoding: py, as: UTF8.self) == "a\nb\nc\n")
    }

    @Test("Maildir lists cur/ then new/, sorted, ignoring tmp/ and dot files; EMLReader reads one file")
    func maildir() throws {
        let dir = try TestSupport.tempDir("maildir")
        defer { try? FileManager.default.removeItem(at: dir) }
        for sub in ["cur", "new", "tmp"] { try FileManager.default.createDirectory(at: dir.appendingPathComponent(sub), withIntermediateDirectories: true) }
        _ = try MboxTests.write(Array("Subject: n2\n\nx".utf8), dir, "new/2")
        _ = try MboxTests.write(Array("Subject: n1\n\nx".utf8), dir, "new/1")
        _ = try MboxTests.write(Array("Subject: c1\n\nx".utf8), dir, "cur/1:2,S")
        _ = try MboxTests.write(Array("Subject: t\n\nx".utf8), dir, "tmp/3")
        _ = try MboxTests.write(Array("Subject: h\n\nx".utf8), dir, "cur/.hidden")
        let md = MaildirReader(path: dir.path)
        let subjects = try md.messages().map { try $0.message.get().subject }
        #expect(subjects == ["c1", "n1", "n2"])
        let eml = try EMLReader.read(path: dir.appendingPathComponent("new/1").path)
        #expect(eml.subject == "n1")
        #expect(throws: MIMEError.self) { _ = try EMLReader.read(path: dir.appendingPathComponent("new/1").path, maxMessageBytes: 3) }
    }

    @Test("benchmark API parses every message and touches every attachment")
    func benchmarkAPI() throws {
        let dir = try TestSupport.tempDir("bench")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("b.mbox").path
        _ = try TestSupport.run(TestSupport.python, [TestSupport.scriptsDir.appendingPathComponent("make-mbox.py").path, path, "--messages", "40", "--size-mb", "1"])
        let r = try MIMEBenchmark.parseMbox(path: path)
        #expect(r.messages == 40)
        #expect(r.attachments > 0)
        #expect(r.bytes == (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int))
        let base = try TestSupport.run(TestSupport.python, [TestSupport.scriptsDir.appendingPathComponent("python-baseline.py").path, path])
        let obj = try JSONSerialization.jsonObject(with: base) as? [String: Any]
        #expect(obj?["messages"] as? Int == 40)
        #expect(obj?["attachments"] as? Int == r.attachments)
        #expect(obj?["attachmentBytes"] as? Int == r.attachmentBytes)
        // Every message of the generated mbox also agrees field by field with Python.
        var files: [URL] = []
        try MboxReader(path: path).forEach { entry in
            let e = try entry.get()
            let u = dir.appendingPathComponent("m\(e.index).eml")
            try Data(e.messageBytes).write(to: u)
            files.append(u)
        }
        let cmp = try DifferentialTests.compare(files: files)
        #expect(cmp.failures.isEmpty, "\(cmp.failures.joined(separator: "\n"))")
        #expect(cmp.agree == 40)
    }
}

@Suite("MessageBuilder")
struct BuilderTests {
    static func sample(lf: Bool = false) -> MessageBuilder {
        var b = MessageBuilder()
        b.from = [MailAddress(name: "Jürgen Müller-Lüdenscheidt", address: "jm@example.de")]
        b.to = [MailAddress(name: "Doe, John", address: "john@example.com"), MailAddress(address: "x@example.org")]
        b.cc = [MailAddress(name: "Plain Name", address: "p@example.net")]
        b.subject = "Grüße aus Köln – a rather long subject line that will need folding because it goes past seventy-eight"
        b.date = Date(timeIntervalSince1970: 1_700_000_000)
        b.messageID = "abc.123@example.de"
        b.text = "Hallo,\nGrüße!\nFrom the team\n" + String(repeating: "long line ", count: 20) + "\n"
        b.html = "<p>Hallo <img src=\"cid:logo@x\"></p>\n"
        b.inlineImages = [.init(filename: "logo.png", contentType: "image/png", data: Array(0...255), contentID: "logo@x")]
        b.attachments = [.init(filename: "Bericht für 2024 – sehr langer Dateiname mit Umlauten äöü.pdf", contentType: "application/pdf", data: Array("%PDF-1.4 data".utf8)),
                         .init(filename: "notes.txt", contentType: "text/plain", data: Array("a\nb\n".utf8))]
        b.lineEnding = lf ? .lf : .crlf
        return b
    }

    @Test("round-trips through the parser (CRLF and LF)", arguments: [false, true])
    func roundTrip(lf: Bool) throws {
        let b = Self.sample(lf: lf)
        let bytes = try b.build()
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.split(separator: lf ? "\n" : "\r\n", omittingEmptySubsequences: false).allSatisfy { $0.utf8.count <= 78 })
        #expect(lf ? !text.contains("\r") : !text.replacingOccurrences(of: "\r\n", with: "").contains("\n"))
        #expect(bytes.allSatisfy { $0 < 0x80 })
        let m = MIMEMessage(bytes: bytes)
        #expect(m.problems.isEmpty)
        #expect(m.subject == b.subject)
        #expect(m.from == b.from)
        #expect(m.to == b.to)
        #expect(m.cc == b.cc)
        #expect(m.messageID == "abc.123@example.de")
        #expect(m.date == b.date)
        let nl = lf ? "\n" : "\r\n"
        #expect(m.textBody == b.text!.replacingOccurrences(of: "\n", with: nl))
        #expect(m.htmlBody == b.html!.replacingOccurrences(of: "\n", with: nl))
        let atts = m.attachments
        #expect(atts.map(\.filename) == ["logo.png"] + b.attachments.map(\.filename))
        #expect(atts.map(\.data) == [Array(0...255)] + b.attachments.map(\.data))
        #expect(atts[0].contentID == "logo@x" && atts[0].disposition == "inline")
        #expect(atts[1].disposition == "attachment")
    }

    @Test("boundaries are unique per build and multipart nesting is mixed > alternative > related")
    func structure() throws {
        let a = try Self.sample().build(), b = try Self.sample().build()
        let m = MIMEMessage(bytes: a)
        #expect(m.root.mimeType == "multipart/mixed")
        #expect(m.root.children[0].mimeType == "multipart/alternative")
        #expect(m.root.children[0].children[1].mimeType == "multipart/related")
        let ba = m.root.contentType.parameter("boundary"), bb = MIMEMessage(bytes: b).root.contentType.parameter("boundary")
        #expect(ba != nil && ba != bb)
        let inner = m.root.children[0].contentType.parameter("boundary")
        #expect(inner != ba)
    }

    @Test("invalid input is a typed error")
    func invalid() {
        var b = MessageBuilder()
        #expect(throws: MIMEError.self) { try b.build() }
        b.from = [MailAddress(address: "no-at-sign")]
        #expect(throws: MIMEError.self) { try b.build() }
        b.from = [MailAddress(address: "a@b")]
        b.subject = "line\nbreak"
        #expect(throws: MIMEError.self) { try b.build() }
        b.subject = "ok"
        b.inlineImages = [.init(filename: nil, contentType: "image/png", data: [1])]
        #expect(throws: MIMEError.self) { try b.build() }
    }

    @Test("built messages read the same in Python's email package")
    func throughPython() throws {
        let dir = try TestSupport.tempDir("built")
        defer { try? FileManager.default.removeItem(at: dir) }
        var files: [URL] = []
        var variants: [MessageBuilder] = [Self.sample(), Self.sample(lf: true)]
        var textOnly = MessageBuilder()
        textOnly.from = [MailAddress(address: "a@example.com")]
        textOnly.subject = "=?not-an-encoded-word?= plain"
        textOnly.text = "just text, ünïcödé\n"
        variants.append(textOnly)
        var htmlOnly = textOnly
        htmlOnly.text = nil
        htmlOnly.html = "<p>only html €</p>"
        htmlOnly.attachments = [.init(filename: "a.bin", contentType: "application/octet-stream", data: Array(repeating: 7, count: 1000))]
        variants.append(htmlOnly)
        for (i, v) in variants.enumerated() {
            let u = dir.appendingPathComponent("built-\(i).eml")
            try Data(try v.build()).write(to: u)
            files.append(u)
        }
        let r = try DifferentialTests.compare(files: files)
        #expect(r.failures.isEmpty, "\(r.failures.joined(separator: "\n"))")
        #expect(r.agree == variants.count)
        #expect(MIMEMessage(bytes: Array(try Data(contentsOf: files[2]))).subject == "=?not-an-encoded-word?= plain")
    }
}
