import Foundation
import MIME
import Testing

/// Files as Windows tools and mail programs write them (trust-model row **inbox (low)**): a UTF-8
/// byte-order mark, a UTF-16 file, a DOS end-of-file mark. They used to be refused ("byte 0: no
/// header fields", "not an mbox file"); they parse like the same file without them.
@Suite struct WindowsFileTests {
    static let plain = "From: Ann <ann@example.com>\r\nTo: bob@example.com\r\nSubject: Hello\r\n\r\nBody line.\r\n"

    @Test func aByteOrderMarkBeforeTheHeadersIsSkipped() {
        let message = MIMEMessage(bytes: MessageFileBytes.utf8ByteOrderMark + Array(Self.plain.utf8))
        #expect(message.subject == "Hello")
        #expect(message.from.map(\.address) == ["ann@example.com"])
        #expect(message.problems.isEmpty, "\(message.problems)")
        #expect(message == MIMEMessage(Self.plain))
    }

    @Test func aUTF16FileIsReadAsItsText() {
        let text = Self.plain.replacingOccurrences(of: "Body line.", with: "Grüße, «Unicode».")
        let littleEndian: [UInt8] = [0xFF, 0xFE] + Array(text.data(using: .utf16LittleEndian)!)
        let bigEndian: [UInt8] = [0xFE, 0xFF] + Array(text.data(using: .utf16BigEndian)!)
        for bytes in [littleEndian, bigEndian] {
            let message = MIMEMessage(bytes: bytes)
            #expect(message.subject == "Hello")
            #expect(message == MIMEMessage(text))
        }
    }

    @Test func aDOSEndOfFileMarkIsDropped() {
        #expect(MessageFileBytes.normalized(Array(Self.plain.utf8) + [0x1A]) == Array(Self.plain.utf8))
        #expect(MIMEMessage(bytes: Array(Self.plain.utf8) + [0x1A]) == MIMEMessage(Self.plain))
    }

    @Test func otherBytesAreLeftAlone() {
        // Not a mark: an odd-length "UTF-16" file, a mark in the middle, a 0x1A inside the text.
        for bytes: [UInt8] in [[0xFF, 0xFE, 0x41], [0x41, 0xEF, 0xBB, 0xBF, 0x42], [0x41, 0x1A, 0x42], []] {
            #expect(MessageFileBytes.normalized(bytes) == bytes)
        }
    }

    @Test func anMboxThatStartsWithAByteOrderMarkIsRead() throws {
        let folder = try TestSupport.tempDir("bom-mbox")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("inbox.mbox").path
        let mbox = "From MAILER-DAEMON Thu Jan  1 00:00:00 2026\nFrom: a@example.com\nSubject: one\n\nfirst\n\n"
            + "From MAILER-DAEMON Thu Jan  1 00:00:00 2026\nFrom: b@example.com\nSubject: two\n\nsecond\n"
        try Data(MessageFileBytes.utf8ByteOrderMark + Array(mbox.utf8)).write(to: URL(fileURLWithPath: path))
        var subjects: [String?] = []
        var offsets: [UInt64] = []
        try MboxReader(path: path).forEach { entry in
            let read = try entry.get()
            subjects.append(read.message().subject)
            offsets.append(read.offset)
        }
        #expect(subjects == ["one", "two"])
        #expect(offsets.first == 3, "offsets stay offsets into the file")
    }
}
