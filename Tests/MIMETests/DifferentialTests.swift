import Foundation
import Testing
@testable import MIME

/// Differential test against CPython's `email` package (policy.default): the generated corpus
/// (scripts/mime/make-corpus.py) plus the hand-written fixtures, each summarized by
/// scripts/mime/reference.py and by `MIMEMessage.summaryJSON()`. Any disagreement fails unless
/// the file and field are in `acceptedDifferences` (each one explained in docs/mime.md).
@Suite("Differential against Python email")
struct DifferentialTests {
    /// file name → fields allowed to differ (documented in docs/mime.md, "Accepted differences").
    static let acceptedDifferences: [String: Set<String>] = [:]

    struct Reference: Decodable {
        let file: String
        let summary: MessageSummary?
        let error: String?
    }

    /// Fields that differ, compared exactly (Unicode scalars, not canonical equivalence).
    static func differences(_ a: MessageSummary, _ b: MessageSummary) -> [String: String] {
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys]
        func j<T: Encodable>(_ v: T) -> Data { (try? enc.encode(v)) ?? Data() }
        func show<T: Encodable>(_ v: T) -> String { String(decoding: j(v), as: UTF8.self).prefix(400).description }
        var d: [String: String] = [:]
        func cmp<T: Encodable>(_ name: String, _ x: T, _ y: T) { if j(x) != j(y) { d[name] = "\(show(x)) vs \(show(y))" } }
        cmp("subject", a.subject, b.subject)
        cmp("from", a.from, b.from)
        cmp("to", a.to, b.to)
        cmp("cc", a.cc, b.cc)
        cmp("date", a.date, b.date)
        cmp("messageId", a.messageId, b.messageId)
        cmp("text", a.text, b.text)
        cmp("html", a.html, b.html)
        cmp("attachments", a.attachments, b.attachments)
        return d
    }

    static func compare(files: [URL]) throws -> (agree: Int, accepted: [String], failures: [String]) {
        let py = TestSupport.python
        let out = try TestSupport.run(py, [TestSupport.scriptsDir.appendingPathComponent("reference.py").path] + files.map(\.path))
        var agree = 0
        var accepted: [String] = []
        var failures: [String] = []
        let lines = out.split(separator: UInt8(ascii: "\n"))
        #expect(lines.count == files.count, "reference.py printed \(lines.count) lines for \(files.count) files")
        for line in lines {
            let ref = try JSONDecoder().decode(Reference.self, from: Data(line))
            let name = URL(fileURLWithPath: ref.file).lastPathComponent
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: ref.file)))
            let json = MIMEMessage(bytes: bytes).summaryJSON()
            MIMEFuzzing.check(bytes)
            let mine = try JSONDecoder().decode(MessageSummary.self, from: Data(json.utf8))
            guard let theirs = ref.summary else {
                if acceptedDifferences[name]?.contains("pythonError") == true { accepted.append("\(name): pythonError") }
                else { failures.append("\(name): Python failed: \(ref.error ?? "?")") }
                continue
            }
            let diffs = differences(mine, theirs)
            let allowed = acceptedDifferences[name] ?? []
            var ok = true
            for (field, what) in diffs.sorted(by: { $0.key < $1.key }) {
                if allowed.contains(field) { accepted.append("\(name): \(field)") }
                else { ok = false; failures.append("\(name): \(field): swift \(what) [swift vs python]") }
            }
            if ok && diffs.isEmpty { agree += 1 }
        }
        return (agree, accepted, failures)
    }

    @Test("generated corpus agrees with Python's email package")
    func generatedCorpus() throws {
        let dir = try TestSupport.tempDir("corpus")
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try TestSupport.run(TestSupport.python, [TestSupport.scriptsDir.appendingPathComponent("make-corpus.py").path, dir.path])
        let files = try FileManager.default.contentsOfDirectory(at: dir, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "eml" }.sorted { $0.lastPathComponent < $1.lastPathComponent }
        #expect(files.count >= 80)
        let r = try Self.compare(files: files)
        print("MIME differential (generated): \(files.count) files, \(r.agree) agree, accepted: \(r.accepted)")
        #expect(r.failures.isEmpty, "\(r.failures.count) disagreements:\n\(r.failures.joined(separator: "\n"))")
    }

    /// CPython's own email test messages (Lib/test/test_email/data/msg_*.txt), when the Python
    /// installation ships its test package (pyenv does; Debian's python3 does not).
    static let cpythonDataDir: URL? = {
        guard let out = try? TestSupport.run(TestSupport.python, ["-c", "import os, test.test_email as t; print(os.path.join(os.path.dirname(t.__file__), 'data'))"]) else { return nil }
        let path = String(decoding: out, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return FileManager.default.fileExists(atPath: path) ? URL(fileURLWithPath: path) : nil
    }()

    @Test("CPython's email test messages agree", .enabled(if: cpythonDataDir != nil, "Python has no test.test_email data"))
    func cpythonTestData() throws {
        let dir = try #require(Self.cpythonDataDir)
        let files = try FileManager.default.contentsOfDirectory(at: dir, includingPropertiesForKeys: nil)
            .filter { $0.lastPathComponent.hasPrefix("msg_") && $0.pathExtension == "txt" }.sorted { $0.lastPathComponent < $1.lastPathComponent }
        #expect(files.count >= 40)
        let r = try Self.compare(files: files)
        print("MIME differential (CPython test data): \(files.count) files, \(r.agree) agree, accepted: \(r.accepted)")
        #expect(r.failures.isEmpty, "\(r.failures.count) disagreements:\n\(r.failures.joined(separator: "\n"))")
    }

    @Test("hand-written fixtures agree with Python's email package (or are accepted differences)")
    func fixtures() throws {
        let files = try FileManager.default.contentsOfDirectory(at: TestSupport.fixturesDir, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "eml" }.sorted { $0.lastPathComponent < $1.lastPathComponent }
        #expect(files.count >= 10)
        let r = try Self.compare(files: files)
        print("MIME differential (fixtures): \(files.count) files, \(r.agree) agree, accepted: \(r.accepted)")
        #expect(r.failures.isEmpty, "\(r.failures.count) disagreements:\n\(r.failures.joined(separator: "\n"))")
    }
}
