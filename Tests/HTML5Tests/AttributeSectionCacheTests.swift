import Testing
@testable import HTML5
import RampartTestSupport

/// The tokenizer replays a repeated start tag's attribute section from a cache. Every element of
/// a document full of repeats must carry exactly the attributes (and self-closing flag) that the
/// same tag gets when it is parsed alone (a fresh tokenizer, so no cache), and the parse errors
/// of repeated erroneous tags must all be reported.
@Suite struct AttributeSectionCacheTests {
    static let tags = [
        #"<td class="col" valign="top" width="200" style="padding:10px 20px;font-family:Arial">"#,
        #"<td class="col" valign="top" width="210" style="padding:10px 20px;font-family:Arial">"#,
        #"<td class="col" valign="top" width="200" style="padding:10px 20px;font-family:Arian">"#,
        #"<p style="margin:0 0 10px 0">"#,
        #"<p style='margin:0 0 10px 0'>"#,
        #"<p style="margin:0 0 10px 0" >"#,
        #"<a href="https://example.com/?a=1&amp;b=2" title="x > y">"#,
        #"<a href="https://example.com/?a=1&amp;b=2" title="x &gt; y">"#,
        #"<a href="x" title="1">"#, #"<a href="x" title="2">"#,
        #"<img src="https://cdn.example.com/i.png" alt="" style="display:block;border:0" />"#,
        #"<img src="https://cdn.example.com/i.png" alt="" style="display:block;border:0">"#,
        #"<span CLASS="Upper" Data-X=1 data-y = '2'>"#,
        #"<span class=unquoted id=a&amp;b>"#,
        #"<div dup="1" dup="2">"#,
        #"<div a="&notit;" b="&notin;">"#,
    ]

    /// The start tags the tokenizer emits for `html`, as name, attributes and self-closing flag.
    static func startTags(_ html: String) -> [String] {
        var tokenizer = Tokenizer(input: InputStream.preprocess(Array(html.utf8)))
        var out: [String] = []
        while true {
            switch tokenizer.nextToken() {
            case .startTag(let tag):
                let attributes = tag.attributes.map { "\($0.name)=\($0.value)" }.joined(separator: "|")
                out.append("\(tag.name) [\(attributes)]\(tag.selfClosing ? " /" : "")")
            case .eof: return out
            default: continue
            }
        }
    }

    @Test func repeatedTagsGetTheAttributesTheyGetAlone() throws {
        var g = SplitMix64(seed: 99)
        var order: [Int] = []
        var html = ""
        for _ in 0..<600 {
            let index = g.next(Self.tags.count)
            order.append(index)
            html += Self.tags[index] + "x"
        }
        // Each tag alone, in a fresh tokenizer (nothing cached).
        let expected = Self.tags.map { Self.startTags($0).first ?? "none" }
        let actual = Self.startTags(html)
        #expect(actual.count == order.count)
        for (tag, index) in zip(actual, order) {
            #expect(tag == expected[index], "\(Self.tags[index])")
        }
        // Distinct sections really are distinct (the cache must not merge near-identical ones).
        // Only the three spellings of <p style> and the two of title="x > y" coincide.
        #expect(Set(expected).count == Self.tags.count - 3)
    }

    @Test func repeatedErroneousTagsReportEveryError() throws {
        let html = String(repeating: #"<p dup="1" dup="2">a</p>"#, count: 5) + String(repeating: #"<p ok="1" ok2="&amp">b</p>"#, count: 4)
        let result = try HTML5Parser.parseDocument(html)
        #expect(result.errors.filter { $0.code == "duplicate-attribute" }.count == 5)
        #expect(result.errors.filter { $0.code == "missing-semicolon-after-character-reference" }.count == 4)
        let ps = result.root.documentElement!.childElements.last!.childElements
        #expect(ps.count == 9)
        #expect(ps.prefix(5).allSatisfy { $0.attributes.count == 1 && $0[attribute: "dup"] == "1" })
        #expect(ps.suffix(4).allSatisfy { $0[attribute: "ok2"] == "&" })
    }
}
