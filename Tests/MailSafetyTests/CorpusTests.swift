import Foundation
import HTML5
import RampartTestSupport
import Testing
@testable import MailSafety

/// The XSS / mXSS vector corpus (Resources/xss-vectors.txt; sources cited in the file).
enum Corpus {
    static let vectors: [String] = {
        guard let url = Bundle.module.url(forResource: "xss-vectors", withExtension: "txt", subdirectory: "Resources"),
              let text = try? String(contentsOf: url, encoding: .utf8)
        else { return [] }
        return text.split(separator: "\n", omittingEmptySubsequences: true)
            .filter { !$0.hasPrefix("#") }
            .map {
                $0.replacingOccurrences(of: "{NL}", with: "\n").replacingOccurrences(of: "{TAB}", with: "\t")
                    .replacingOccurrences(of: "{CR}", with: "\r").replacingOccurrences(of: "{NUL}", with: "\u{0}")
                    .replacingOccurrences(of: "{FF}", with: "\u{0C}")
            }
    }()

    static let attachments = ["logo@example": EmbeddedAttachment(mimeType: "image/png", bytes: Data([0x89, 0x50, 0x4E, 0x47]))]

    /// The package root (for scripts/), from this file's path.
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every element and attribute of a sanitized output, re-parsed in the rendering context.
    static func elements(of html: String) -> [HTML5.Element] {
        MessageParsing.parseFragment(html).descendants.compactMap { $0 as? HTML5.Element }
    }
}

@Suite struct CorpusTests {
    @Test func corpusHasAtLeast300Vectors() {
        #expect(Corpus.vectors.count >= 300)
    }

    /// For every vector, under both policies: no script element, no event handler, no
    /// script-capable URL, nothing remote loadable when blocked, and a stable result.
    @Test(arguments: [RemoteContentPolicy.block, .allowAll])
    func everyVectorIsInertAndStable(policy: RemoteContentPolicy) throws {
        let sanitizer = MailSanitizer(options: SanitizerOptions(remote: policy, attachments: Corpus.attachments))
        for vector in Corpus.vectors {
            let once = try sanitizer.sanitize(vector)
            let twice = try sanitizer.sanitize(once.html)
            #expect(twice.html == once.html, "unstable: \(vector)\n1: \(once.html)\n2: \(twice.html)")
            for element in Corpus.elements(of: once.html) {
                #expect(element.localName.lowercased() != "script", "script kept: \(vector)")
                #expect(!["iframe", "object", "embed", "base", "meta", "link", "form", "input", "template", "foreignObject"].contains(element.localName), "\(element.localName) kept: \(vector)")
                for attribute in element.attributes {
                    #expect(!attribute.name.lowercased().hasPrefix("on"), "handler kept: \(vector) → \(once.html)")
                    let value = URLPolicy.clean(attribute.value).lowercased()
                    for bad in ["javascript:", "vbscript:", "data:text/html", "livescript:"] {
                        #expect(!value.hasPrefix(bad), "\(attribute.qualifiedName)=\(attribute.value) kept: \(vector)")
                    }
                    if policy == .block, ["src", "srcset", "poster", "background", "href"].contains(attribute.name),
                       !(element.localName == "a" && attribute.name == "href") {
                        #expect(!value.hasPrefix("http") && !value.hasPrefix("//"), "remote loadable: \(attribute.qualifiedName)=\(attribute.value) in \(vector)")
                    }
                }
                if element.localName == "style" {
                    let css = element.textContent.lowercased()
                    #expect(!css.contains("expression") && !css.contains("javascript") && !css.contains("@import") && !css.contains("binding"), "css: \(css)")
                    if policy == .block { #expect(!css.contains("url(\"http") && !css.contains("url(\"//"), "css remote: \(css)") }
                }
                if let style = element[attribute: "style"]?.lowercased() {
                    #expect(!style.contains("expression") && !style.contains("javascript") && !style.contains("position:fixed") && !style.contains("position:absolute"))
                    if policy == .block { #expect(!style.contains("url(\"http") && !style.contains("url(\"//"), "style remote: \(style)") }
                }
            }
        }
    }
}

/// Differential test against DOMPurify 2.4.1 (Debian node-dompurify, run under jsdom): every
/// feature Rampart keeps that DOMPurify removes must be justified here.
@Suite struct DOMPurifyDifferentialTests {
    /// Feature (as the script names it) → why Rampart keeping it is safe.
    static let justified: [String: String] = [
        "a@target": "Rampart adds target=_blank to every link it keeps (links open outside the viewer).",
        "a@rel": "Rampart adds rel=\"noopener noreferrer\" to every link it keeps.",
        "area@target": "As for a@target.",
        "area@rel": "As for a@rel.",
        "img@data-rampart-src": "Placeholder for a blocked remote image: inert (a data-* attribute), restored only by the UI when the user allows remote content.",
        "img@data-rampart-srcset": "Placeholder for a blocked srcset.",
        "source@data-rampart-srcset": "Placeholder for a blocked srcset.",
        "source@data-rampart-src": "Placeholder for a blocked source.",
        "video@data-rampart-poster": "Placeholder for a blocked poster.",
        "video@data-rampart-src": "Placeholder for blocked remote media.",
        "audio@data-rampart-src": "Placeholder for blocked remote media.",
        "table@data-rampart-background": "Placeholder for a blocked background image.",
        "td@data-rampart-background": "Placeholder for a blocked background image.",
        "svg:image@data-rampart-href": "Placeholder for a blocked SVG image.",
        "svg:image@data-rampart-xlink-href": "Placeholder for a blocked SVG image.",
        "svg:use@data-rampart-href": "Placeholder for a blocked remote <use> reference.",
        "svg:use@data-rampart-xlink-href": "Placeholder for a blocked remote <use> reference.",
        "svg:use": "<use> is kept only with a local #fragment href (checked by ResourceGate; external and data: references are dropped), so it cannot pull in outside documents.",
        "svg:use@href": "Only #fragment values survive (see svg:use).",
        "svg:use@href=#": "A same-document fragment reference.",
        "svg:use@xlink:href": "Only #fragment values survive (see svg:use).",
        "svg:use@xlink:href=#": "A same-document fragment reference.",
        "img@src=data": "data: images of image MIME types are kept (inline images of mail); DOMPurify 2.4.1 keeps them too except in some tag contexts.",
        "style": "<style> is kept after the CSS sanitizer (no @import, url() through the remote policy, selectors scoped to the wrapper). DOMPurify 2.4.1 loses a <style> that starts the input, because it parses a whole document where that <style> lands in <head>.",
        "video@controls": "Media controls: a boolean attribute with no script or URL.",
        "audio@controls": "Media controls: a boolean attribute with no script or URL.",
    ]

    @Test func rampartKeepsNothingDOMPurifyRemovesWithoutAJustification() async throws {
        let node = ["/usr/bin/node", "/usr/bin/nodejs", "/usr/local/bin/node"].first { FileManager.default.isExecutableFile(atPath: $0) }
        let nodeBinary = try #require(node, "node is not installed: run scripts/setup.sh (scripts/deps/mailsafety.apt)")
        let sanitizer = MailSanitizer(options: SanitizerOptions(attachments: Corpus.attachments))
        var items: [[String: String]] = []
        for vector in Corpus.vectors {
            items.append(["vector": vector, "rampart": try sanitizer.sanitize(vector).html])
        }
        let directory = try TemporaryHome("dompurify")
        let input = directory.child("in.json"), output = directory.child("out.json")
        try JSONSerialization.data(withJSONObject: items).write(to: input)
        let diff = try await CLITool(path: URL(fileURLWithPath: nodeBinary))
            .run([Corpus.packageRoot.appendingPathComponent("scripts/mailsafety/dompurify-diff.js").path, input.path, output.path],
                 environment: ["NODE_PATH": "/usr/share/nodejs"])
        try #require(diff.status == 0, "dompurify-diff.js failed (is node-dompurify/node-jsdom installed?): \(diff.stderr.suffix(2000))")
        let result = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: output)) as? [String: Any])
        #expect(result["vectors"] as? Int == Corpus.vectors.count)
        #expect(result["dompurifyErrors"] as? Int == 0)
        let summary = result["summary"] as? [String: Int] ?? [:]
        let unjustified = summary.keys.filter { Self.justified[$0] == nil }.sorted()
        if !unjustified.isEmpty {
            let differences = result["differences"] as? [[String: Any]] ?? []
            let examples = unjustified.map { feature in
                let example = differences.first { ($0["extra"] as? [String])?.contains(feature) == true }
                return "\(feature): \(example?["vector"] ?? "") → rampart \(example?["rampart"] ?? "") | dompurify \(example?["dompurify"] ?? "")"
            }
            let message = "Rampart keeps what DOMPurify removes, unjustified:\n" + examples.joined(separator: "\n")
            Issue.record(Comment(rawValue: message))
        }
        print("dompurify-differential: \(Corpus.vectors.count) vectors, \((result["differences"] as? [Any])?.count ?? -1) with extra features, kinds: \(summary)")
    }
}
