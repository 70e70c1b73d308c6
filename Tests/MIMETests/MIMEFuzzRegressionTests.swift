import Foundation
import Testing
@testable import MIME

/// Inputs the MIME fuzz target found (`Fuzz/`, docs/fuzzing.md), with the invariant that failed.
@Suite struct MIMEFuzzRegressionTests {
    /// The long run's input, byte for byte (base64): a text/plain body in which a line starts with
    /// U+0658 (a combining mark). Rebuilt, the line ends are CRLF; the oracle's normalization
    /// (Foundation's `replacingOccurrences`, which matches on grapheme clusters) did not find the
    /// CRLF before the mark and reported "text body changed" (an oracle bug, not a parser one).
    static let garbledCharsetBase64Body = [
            "RnJvbTogZiBiYWQgcXAKQ29udGVudC1UeXBlOiB0ZXh0L3BsYWluOyBjaGFyc2V0PcDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDA",
            "wMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAaXNvNDg4NTn//////////////////////2GT",
            "mtXGKj0lQ29uMHRlbnRCLVRyYdRzZmVyLUVuY29kaW5nOiBiYXNlNjRuYW1tZXNzYWdlL3JmYzgywMDAwMDAwMDAwMDAwMDAwMDA",
            "wMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwGlzbzQ4ODU5//////////////////////9hk5rVxio9JUNvbjB0ZW50",
            "Qi1UcmHUc2Zlci1FbmNvZGluZzogYmFzZTY0bmFtbWVzc2FnZS9yZmM4MjJlKjAqPXV0Zi04JyclRTIlODIlQUMlMgBib3VuZGFy",
            "eT1yYXBwb3Jh1HNmZXItRW5jb2Rpbmc6IGJhc2U2NAoKaVYKdHJhaWxpaWxpMmUqMCo9dXRmLTgnJyVFMiU4MiVBQyUyAGJvdW5k",
            "YXJ5PXJhcHBvcmHUc2Zlci1FbmNvZGluZzogYmFzZTY0CgppVgrZmGFpbGlpbGluZyBlcXVhbHM9",
    ].joined()

    @Test func lineEndsBeforeACombiningMarkAreNormalized() throws {
        let bytes = try #require(Data(base64Encoded: Self.garbledCharsetBase64Body))
        let m = MIMEMessage(bytes: [UInt8](bytes))
        let summary = m.summary
        var b = MessageBuilder()
        b.from = [MailAddress(address: "fuzz@example.invalid")]
        b.subject = m.subject
        b.text = summary.text
        b.html = summary.html
        b.date = Date(timeIntervalSince1970: 0)
        b.messageID = "fuzz@example.invalid"
        let rebuilt = MIMEMessage(bytes: try b.build())
        // The builder ends text lines with CRLF; the text is otherwise the same, scalar for scalar.
        #expect(rebuilt.textBody?.unicodeScalars.filter { $0 != "\r" }.map(\.value) == b.text?.unicodeScalars.map(\.value))
        #expect(MIMEFuzzing.normLines(rebuilt.textBody) == MIMEFuzzing.normLines(b.text), "\(String(reflecting: b.text)) → \(String(reflecting: rebuilt.textBody))")
        #expect(MIMEFuzzing.normLines(rebuilt.htmlBody) == MIMEFuzzing.normLines(b.html))
        #expect(rebuilt.attachments.map(\.data) == m.attachments.map(\.data))
        MIMEFuzzing.check([UInt8](bytes))
    }

    @Test func normalizationWorksOnScalars() {
        #expect(MIMEFuzzing.normLines("a\r\n\u{0658}b\rc") == "a\n\u{0658}b\nc")
        #expect(MIMEFuzzing.normBlanks(" a\r\n\u{0301}b\t c ") == "a \u{0301}b c")
    }

    /// The smoke run's input (base64): a UTF-16 LE file whose bytes, cut at an odd offset, decode to
    /// a CR LF followed by U+0D00 (a combining mark). The builder normalized line ends with
    /// Foundation's `replacingOccurrences`, which matches grapheme clusters, missed that CR LF and
    /// turned its CR into a second LF: "text body changed" (a builder bug, fixed on bytes).
    static let crlfBeforeACombiningMarkInUTF16 = [
            "//5GAHIAbwBtADoAIABBAG4AbgAgADwAYQBuAG4AQABlAHgAYQBtAHAAbABlAC4AYwBvAG0APgANAAoAVABvADoAIABiAG8AYgBA",
            "AGUAeABhAG0AcABsAGUALgBjAG8AbQANAAoAUwB1AGIAagBlAGMAdAA6ACAAVQBuAGkAYwBvAGQAZQAgAGYAaQBsAGUADQAKAEQA",
            "YQB0AGUAOgAgAFQAdQBlACwAIAAzACAATQBhAHIAIAAyADAAMgA2ACAAMQAwADoAMAAwADoAMAAwACAAKwAwADEAMAAwAA0ACgBN",
            "AGUAcwBzAGEAZwBlAC0ASQBEADoAIAA8AGIAbwBtADIAQABlAHgAYQBtAHAAbABlAC4AYwBvAG0APgANAAoAQwBvAG4AdABlAG4A",
            "dAAtAFQAeQBwAGUAOgAgAHQAZQB4AHQALwBwAGwAYQBpAG4AOwAgAGMAaABhAHIAcwBlAHQAPQB1AHQAZgAtADgADQAKAA0ACgBT",
            "AGEAdgBgAGQAIABhAHMAIACrAFUAbgBpAGMAbwBkAGUAuwAgACgAVQBUAEYALQAxADYAIABMAEUAKQAgAGIAeQAgAE4AbwB0AGUA",
            "cABhAGQALgANAAoAAA0ACgBTAHUAYgBqAGUAYwB0ADoAIABVAG4AaQBjAG8AZA==",
    ].joined()

    @Test func theBuilderKeepsACRLFBeforeACombiningMarkOneLineEnd() throws {
        let bytes = [UInt8](try #require(Data(base64Encoded: Self.crlfBeforeACombiningMarkInUTF16)))
        var b = MessageBuilder()
        b.from = [MailAddress(address: "fuzz@example.invalid")]
        b.text = "a\r\n\u{0D00}b"
        b.date = Date(timeIntervalSince1970: 0)
        b.messageID = "fuzz@example.invalid"
        let rebuilt = MIMEMessage(bytes: try b.build())
        #expect(rebuilt.textBody?.unicodeScalars.filter { $0 != "\r" }.map(\.value) == [0x61, 0x0A, 0x0D00, 0x62])
        MIMEFuzzing.check(bytes)
    }

    /// A fuzz input's file name that holds an encoded word in its middle
    /// (`utf-8'7="=?utf-8?q?bild_=C3=A4.png?="`): written quoted, it was read back decoded
    /// ("bild ä.png"). The builder now writes a name with "=?" in RFC 2231 form.
    @Test func aFileNameHoldingAnEncodedWordComesBackAsWritten() throws {
        let name = "utf-8'7=\"=?utf-8?q?bild_=C3=A4.png?=\""
        var b = MessageBuilder()
        b.from = [MailAddress(address: "fuzz@example.invalid")]
        b.date = Date(timeIntervalSince1970: 0)
        b.messageID = "fuzz@example.invalid"
        b.attachments = [MessageBuilder.Attachment(filename: name, contentType: "application/pdf", data: Array("%PDF".utf8))]
        let rebuilt = MIMEMessage(bytes: try b.build())
        #expect(rebuilt.attachments.map(\.filename) == [name])
    }
}
