import Foundation
import HTML5
import Testing
@testable import MailSafety

/// `<pre>` (and `<listing>`, `<textarea>`) content that starts with a line feed once the cleaner
/// removed what stood before it: the serializer does not double that line feed and the parser
/// drops one after the start tag, so the output used to re-parse to another tree and the whole
/// message was cleaned again per line feed (mail written as text: `<pre wrap=""><!---->` LF …,
/// in the real-world corpus). The cleaner now drops them in its one pass.
@Suite struct LeadingNewlineTests {
    /// The output and whether a second sanitize leaves it as it is.
    private func sanitizeTwice(_ html: String) throws -> (SanitizedMessage, Bool) {
        let sanitizer = MailSanitizer()
        let first = try sanitizer.sanitize(html)
        return (first, try sanitizer.sanitize(first.html).html == first.html)
    }

    @Test(arguments: [
        ("<pre wrap=\"\"><!---->\nMy guess\n</pre>", "<pre>My guess\n</pre>"),
        ("<pre><!---->\n<!---->\nX</pre>", "<pre>X</pre>"),
        ("<pre><object>x</object>\n\nZ</pre>", "<pre>Z</pre>"),
        ("<pre><!---->\n</pre><p>after</p>", "<pre></pre><p>after</p>"),
        ("<pre>\n\nkept: the parser drops only the first</pre>", "<pre>kept: the parser drops only the first</pre>"),
        ("<div><!---->\nnot a pre</div>", "<div>\nnot a pre</div>"),
    ])
    func leadingLineFeedsOfPreformattedContentAreDropped(input: String, expected: String) throws {
        let (result, stable) = try sanitizeTwice(input)
        #expect(result.html == expected)
        #expect(stable)
        #expect(!result.report.truncated)
    }

    /// Five line feeds took five passes before: past the limit of four the message became text.
    @Test func manyLineFeedsNoLongerReduceTheMessageToText() throws {
        let (result, stable) = try sanitizeTwice("<p><b>bold</b></p><pre><!---->\n\n\n\n\nlast</pre>")
        #expect(result.html == "<p><b>bold</b></p><pre>last</pre>")
        #expect(stable)
        #expect(!result.report.truncated)
    }
}
