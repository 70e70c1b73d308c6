import Crypto
import Foundation
import RampartAPI

/// Ids of imported messages (`ImportRequest.id`, `ImportAttachment.id`), derived from their original bytes with a key only the user's
/// devices hold.
///
/// Trust-model row **inbox (low)**: the id makes import idempotent and resumable (a rerun after
/// a crash finds what is already stored) without telling the server a plain hash of the mail,
/// which would let it confirm a guess of a message's content. The key is derived from the
/// mailbox private key (`PGPPrivateKey.importKey`).
public enum ImportIdentity {
    static let messagePrefix = "mi_"
    static let attachmentPrefix = "ai_"
    static let hexCount = 32

    /// `mi_` followed by 32 hex digits of HMAC-SHA256(key, original).
    public static func messageID(original: Data, key: SymmetricKey) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: original, using: key)
        return messagePrefix + hex(Data(mac)).prefix(hexCount)
    }

    /// `ai_` followed by 32 hex digits of SHA-256(message id ‖ 0 ‖ index).
    public static func attachmentID(messageID: String, index: Int) -> String {
        let digest = SHA256.hash(data: Data("\(messageID)\u{0}\(index)".utf8))
        return attachmentPrefix + hex(Data(digest)).prefix(hexCount)
    }

    /// Whether `id` has the shape of an imported message id.
    public static func isMessageID(_ id: String) -> Bool { hasShape(id, prefix: messagePrefix) }
    /// Whether `id` has the shape of an imported attachment id.
    public static func isAttachmentID(_ id: String) -> Bool { hasShape(id, prefix: attachmentPrefix) }

    static func hasShape(_ id: String, prefix: String) -> Bool { WireID.hasShape(id, prefix: prefix, hexDigits: hexCount) }

    static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }
}
