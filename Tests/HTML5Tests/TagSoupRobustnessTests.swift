import Foundation
import Testing
@testable import HTML5
import RampartTestSupport

/// Random tag soup (tables, formatting, foreign content, templates, select, comments, references,
/// NULs, broken tags) never crashes the parser, never exceeds the depth limit, and its
/// serialization always parses again.
@Suite struct TagSoupRobustnessTests {
    static let pieces = [
        "<b>", "</b>", "<i>", "</i>", "<a href=x>", "</a>", "<p>", "</p>", "<div>", "</div>", "<table>", "</table>",
        "<tr>", "<td>", "</td>", "<th>", "<tbody>", "<caption>", "<colgroup><col>", "<select>", "<option>", "<optgroup>",
        "</select>", "<svg>", "</svg>", "<math>", "<mi>", "<mtext>", "<annotation-xml encoding=text/html>",
        "<foreignObject>", "<desc>", "<template>", "</template>", "<frameset>", "<frame>", "<noscript>", "</noscript>",
        "<script>", "</script>", "<style>", "</style>", "<textarea>", "</textarea>", "<title>", "<plaintext>",
        "<!--c-->", "<!-", "<!DOCTYPE html>", "<![CDATA[x]]>", "&amp;", "&notit;", "&#x0;", "&#128;", "&",
        "\0", "\r\n", " ", "text", "é", "<", ">", "</", "<a b='c", "\"", "<li>", "<dd>", "<h1>", "</h2>", "<form>",
        "</form>", "<button>", "<nobr>", "<marquee>", "<object>", "<ruby><rt>", "<br/>", "</br>", "<image>",
        "<isindex>", "<input type=hidden>", "<keygen>", "<hr>", "<xmp>", "<iframe>", "<noembed>", "<body x=1>", "<html y=2>",
        "<head>", "</head>", "<selectedcontent>", "<font color=red>", "<center>", "<listing>\n",
    ]

    @Test func randomTagSoupNeverCrashesAndReparses() throws {
        var random = LinearCongruential64(seed: 0x1234_5678)
        func next() -> Int { random.next() }
        var options = HTML5ParserOptions(scripting: false)
        options.maxNestingDepth = 40
        let iterations = Int(ProcessInfo.processInfo.environment["HTML5_FUZZ_ITERATIONS"] ?? "") ?? 1500
        for iteration in 0..<iterations {
            var html = ""
            for _ in 0..<(5 + next() % 120) { html += Self.pieces[next() % Self.pieces.count] }
            options.scripting = iteration % 2 == 1
            let result = try HTML5Parser.parseDocument(html, options: options)
            var maximum = 0
            var stack: [(Node, Int)] = [(result.root, 0)]
            while let (node, depth) = stack.popLast() {
                maximum = max(maximum, depth)
                for child in node.children { stack.append((child, depth + 1)) }
                if let content = (node as? Element)?.templateContent { stack.append((content, depth)) }
            }
            #expect(maximum <= options.maxNestingDepth + 2, "depth \(maximum) for \(html.debugDescription)")
            let serialized = result.root.serialized(scripting: options.scripting)
            _ = try HTML5Parser.parseDocument(serialized, options: options)
            if iteration % 3 == 0 {
                _ = try HTML5Parser.parseFragment(html, contextName: ["td", "select", "svg path", "math mi", "template", "title", "tr"][iteration % 7], options: options)
            }
        }
    }
}
