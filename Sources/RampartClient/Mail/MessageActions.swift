import Foundation
import MailboxCrypto
import RampartAPI

extension APIClient {
    /// `POST /v1/messages/<id>/read` (`?unread=1` with `unread`): the read state other devices see.
    public func markRead(_ messageID: String, unread: Bool = false) async throws {
        _ = try await send(.POST, APIRoute.markRead(Self.escape(messageID)) + (unread ? "?unread=1" : ""))
    }

    /// `DELETE /v1/messages/<id>`: deletes the message for good (every label, every device).
    public func deleteMessage(_ messageID: String) async throws {
        _ = try await send(.DELETE, APIRoute.message(Self.escape(messageID)))
    }
}

extension MailImporter {
    /// Imports one message a mail program handed over (IMAP APPEND): the same identity, sealing and
    /// upload as a file import, so appending a message twice stores it once.
    /// - Returns: the message id, and whether it was new (else it joined `labelIDs`).
    /// - Throws: ``ClientError/badInput(_:)`` when the server refused it or it is too large.
    public func importMessage(_ bytes: [UInt8], labelIDs: [String], unread: Bool) async throws -> (id: String, created: Bool) {
        let id = ImportIdentity.messageID(original: Data(bytes), key: try keys.importKey)
        var summary = MailImportSummary()
        let original = MailOriginal(kind: .message, batch: UInt64(Date().timeIntervalSince1970 * 1000), sequence: 0, bytes: Data(bytes))
        try await upload([Entry(label: "the message", message: bytes, original: original, unread: unread)], labelIDs: labelIDs, summary: &summary)
        if let failure = summary.failed.first { throw ClientError.badInput(failure) }
        return (id, summary.imported == 1)
    }
}
