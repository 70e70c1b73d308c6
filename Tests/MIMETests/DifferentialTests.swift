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

    static func differences(_ a: MessageSummary, _ b: MessageSummary) -> [String: String] {
        var d: [String: String] = [:]
        if a.subject != b.subject { d["subject"] = "\(String(describing: a.subject)) vs \(String(describing: b.subject))" }
        if a.from != b.from { d["from"] = "\(a.from) vs \(b.from)" }
        if a.to != b.to { d["to"] = "\(a.to) vs \(b.to)" }
        if a.cc != b.cc { d["cc"] = "\(a.cc) vs \(b.cc)" }
        if a.date != b.date { d["date"] = "\(String(describing: a.date)) vs \(String(describing: b.date))" }
        if a.messageId != b.messageId { d["messageId"] = "\(String(describing: a.messageId)) vs \(String(describing: b.messageId))" }
        if a.text != b.text { d["text"] = "\(String(describing: a.text).prefix(300)) vs \(String(describing: b.text).prefix(300))" }
        if a.html != b.html { d["html"] = "\(String(describing: a.html).prefix(300)) vs \(String(describing: b.html).prefix(300))" }
        if a.attachments != b.attachments { d["attachments"] = "\(a.attachments) vs \(b.attachments)" }
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
