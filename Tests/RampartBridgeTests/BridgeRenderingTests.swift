import Foundation
import MIME
@testable import RampartBridge
import SealedStore
import Testing

/// The MIME rendering of mail written in Rampart, built from stored fields: an attachment record's
/// media type, file name and Content-ID (another Rampart user's sender chose them) add no header.
@Suite struct BridgeRenderingTests {
    static let message = MailMessage(id: "m1", conversationID: "c1", time: 1_795_000_000, size: 10, labelIDs: [],
                                     subject: "Files", sender: .init(name: "Ann", address: "ann@rampart.test"),
                                     recipients: [.init(address: "bob@rampart.test")], body: "<p>Files</p>")

    @Test func storedFieldsAddNoHeader() throws {
        let hostile = AttachmentMetadata(id: "a1", messageID: "m1", size: 3, name: "x.pdf\r\nBcc: eve@elsewhere.example",
                                         mimeType: "application/pdf\r\nBcc: eve@elsewhere.example", keyPackets: Data())
        let image = AttachmentMetadata(id: "a2", messageID: "m1", size: 2, name: "logo.png", mimeType: "Image/PNG", keyPackets: Data())
        let parts = [BridgeRendering.attachment(hostile, contentID: nil, data: [0, 1, 2]),
                     BridgeRendering.attachment(image, contentID: "logo>\r\nBcc: eve@elsewhere.example", data: [9, 8])]
        #expect(parts[0].contentType == "application/octet-stream")
        #expect(parts[1].contentType == "image/png")
        #expect(parts[1].contentID == nil)
        let bytes = try BridgeRendering.mime(of: Self.message, attachments: parts)
        #expect(bytes.firstRange(of: Array("\nBcc".utf8)) == nil)
        let parsed = MIMEMessage(bytes: bytes)
        #expect(parsed.headers["bcc"] == nil)
        #expect(parsed.headers.contentType(default: "text/plain").type == "multipart/mixed")
        #expect(BridgeRendering.mediaType("text/plain; charset=utf-8") == "application/octet-stream")
        #expect(BridgeRendering.mediaType("application/vnd.oasis.opendocument.text") == "application/vnd.oasis.opendocument.text")
    }

    /// Copies an older bridge made of mail written in Rampart had no attachments: those, and only
    /// those, are found to be made again.
    @Test func renderingsWithoutTheirAttachmentsAreFoundAndNothingElse() throws {
        let record = AttachmentMetadata(id: "a1", messageID: "m1", size: 3, name: "x.pdf", mimeType: "application/pdf", keyPackets: Data())
        let image = AttachmentMetadata(id: "a2", messageID: "m1", size: 2, name: "logo.png", mimeType: "image/png", keyPackets: Data())
        let old = try BridgeRendering.mime(of: Self.message)
        let parts = [BridgeRendering.attachment(record, contentID: nil, data: [1, 2, 3]), BridgeRendering.attachment(image, contentID: "logo", data: [9, 8])]
        let now = try BridgeRendering.mime(of: Self.message, attachments: parts)
        #expect(BridgeRendering.isRenderingWithoutAttachments(old, id: "m1", attachments: 2))
        #expect(!BridgeRendering.isRenderingWithoutAttachments(now, id: "m1", attachments: 2))
        #expect(!BridgeRendering.isRenderingWithoutAttachments(old, id: "m1", attachments: 0))
        #expect(!BridgeRendering.isRenderingWithoutAttachments(old, id: "m2", attachments: 2))
        let original = Array("From: a@example.org\r\nMessage-ID: <m1@elsewhere.example>\r\nSubject: x\r\n\r\ntext\r\n".utf8)
        #expect(!BridgeRendering.isRenderingWithoutAttachments(original, id: "m1", attachments: 1))
    }
}
