import Foundation
import RampartTestSupport
import Testing
@testable import MailSafety

/// Headless Chromium loads every sanitized vector, rendered with the stage-2 CSP (header and
/// `<meta>`), from a loopback server (scripts/mailsafety/chromium-check.js). No script may
/// compile, no dialog open, no request leave for any host. Two unsanitized positive controls
/// under a permissive policy prove the counters see scripts and requests.
@Suite(.serialized) struct BrowserTests {
    @Test func chromiumRunsNoScriptAndMakesNoRequestForAnySanitizedVector() async throws {
        let node = try #require(["/usr/bin/node", "/usr/bin/nodejs"].first { FileManager.default.isExecutableFile(atPath: $0) }, "node missing: run scripts/setup.sh")
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"), "chromium missing: run scripts/setup.sh (scripts/deps/mailsafety.apt)")
        let folder = try TemporaryHome("chromium")
        let directory = folder.url
        let policy = ContentSecurityPolicy.viewer(.embeddedImagesOnly, appScheme: "rampart-cid")
        try policy.headerValue.write(to: directory.appendingPathComponent("policy.txt"), atomically: true, encoding: .utf8)
        let sanitizer = MailSanitizer(options: SanitizerOptions(attachments: Corpus.attachments))
        for (index, vector) in Corpus.vectors.enumerated() {
            let document = renderDocument(try sanitizer.sanitize(vector), policy: policy)
            try document.write(to: directory.appendingPathComponent("\(index).html"), atomically: true, encoding: .utf8)
        }
        // Positive controls: raw (unsanitized) script and a remote image under a permissive policy.
        let controlScript = Corpus.vectors.count, controlRequest = Corpus.vectors.count + 1
        try "<script>alert(1)</script><img src=\"data:,\" onerror=alert(2)>".write(to: directory.appendingPathComponent("\(controlScript).html"), atomically: true, encoding: .utf8)
        try "script-src 'unsafe-inline'".write(to: directory.appendingPathComponent("\(controlScript).policy"), atomically: true, encoding: .utf8)
        try "<img src=\"http://127.0.0.1:9/pixel.gif\">".write(to: directory.appendingPathComponent("\(controlRequest).html"), atomically: true, encoding: .utf8)
        try "img-src *".write(to: directory.appendingPathComponent("\(controlRequest).policy"), atomically: true, encoding: .utf8)

        let output = directory.appendingPathComponent("out.json")
        let check = try await CLITool(path: URL(fileURLWithPath: node))
            .run(["--experimental-websocket", Corpus.packageRoot.appendingPathComponent("scripts/mailsafety/chromium-check.js").path,
                  directory.path, output.path], timeout: .seconds(1200))
        try #require(check.status == 0, "chromium-check.js failed: \(check.stderr.suffix(2000))")
        let result = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: output)) as? [String: Any])
        let perDocument = result["perDocument"] as? [[String: Any]] ?? []
        let controls = Set([controlScript, controlRequest])
        let control = Dictionary(uniqueKeysWithValues: perDocument.compactMap { d -> (Int, [String: Any])? in
            guard let i = d["index"] as? Int, controls.contains(i) else { return nil }
            return (i, d)
        })
        #expect((control[controlScript]?["dialogs"] as? [Any])?.isEmpty == false, "the canary did not see the control's script")
        #expect((control[controlScript]?["scripts"] as? [Any])?.isEmpty == false)
        #expect((control[controlRequest]?["requests"] as? [Any])?.isEmpty == false, "the request counter did not see the control's image")
        let failures = perDocument.filter { !controls.contains($0["index"] as? Int ?? -1) }
        for failure in failures {
            let index = failure["index"] as? Int ?? 0
            Issue.record("vector \(index) \(Corpus.vectors[index].debugDescription): \(failure)")
        }
        print("chromium: \(result["documents"] ?? 0) documents (\(Corpus.vectors.count) sanitized vectors + 2 controls); sanitized: \(failures.count) with scripts/dialogs/requests; stray server hits \(result["serverHitsOtherThanDocuments"] ?? 0) \(result["serverHits"] ?? [])")
        // Chromium itself asks the page's origin for /favicon.ico (not a request of the document:
        // the DevTools network log of the page does not list it); anything else is a failure.
        let stray = (result["serverHits"] as? [String] ?? []).filter { $0 != "/favicon.ico" }
        #expect(stray.isEmpty, "requests reached the loopback server: \(stray)")
    }
}
