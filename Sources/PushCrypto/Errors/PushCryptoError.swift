import RampartCore

/// Why a push payload, a push key or a registration record was refused.
///
/// Trust-model row: **push payload key** — "pushes carry sender name and subject". Every bad
/// input to the push path ends in one of these cases; nothing is half-decrypted and returned.
public enum PushCryptoError: Error, Equatable, DescribedRampartError {
    /// The body ends before its header, or before one record's tag and delimiter; or the final
    /// record says that more records follow (RFC 8188 §2: the content was cut at a record boundary).
    case truncated(String)
    /// The header's record size is below RFC 8188's minimum of 18 bytes.
    case invalidRecordSize(UInt32)
    /// The header's key id is not a 65-byte uncompressed P-256 point (RFC 8291 §4).
    case invalidSenderKey
    /// AES-GCM refused the record: the payload was encrypted to another key (wrong key, an old
    /// session's deleted key), or its bytes were modified. AES-GCM cannot tell these apart.
    case authenticationFailed
    /// The body is larger than the push path accepts (RFC 8291 §4: 4096 bytes).
    case oversized(size: Int, limit: Int)
    /// The body has more than one record; RFC 8291 §4 allows a single record only.
    case multipleRecords
    /// The general decoder met more records than its caller allowed.
    case tooManyRecords(limit: Int)
    /// A decrypted record has no valid padding delimiter.
    case badPadding(String)
    /// This salt was already seen for this session: the payload is a replay.
    case replayedSalt
    /// The decrypted content is not the notification JSON Rampart expects.
    case invalidNotification(String)
    /// The notification names another user than the one whose key decrypted it.
    case notificationForAnotherUser
    /// No push key is stored for this session (logged out, or never subscribed).
    case noPushKeys(session: String)
    /// A session id that is empty, too long or has characters outside `[A-Za-z0-9._-]`.
    case invalidSessionID(String)
    /// A stored push key cannot be decoded.
    case corruptKeyItem(String)
    /// A registration record whose public key or auth secret is not well formed.
    case invalidRegistration(String)
    /// The plaintext (with its padding) does not fit the single record a push allows.
    case plaintextTooLarge(size: Int, limit: Int)

    /// The code, category and message of each case. A push that does not open is treated as
    /// tampered with (it is dropped, never shown).
    public var info: RampartErrorInfo {
        switch self {
        case .truncated(let why): RampartErrorInfo(code: "push.truncated", kind: .tampered, message: "The push payload is truncated (\(why)); ask the sender to resend it.")
        case .invalidRecordSize(let size): RampartErrorInfo(code: "push.invalidRecordSize", kind: .tampered, message: "The payload's record size \(size) is below the minimum of 18 bytes; it is not aes128gcm content.")
        case .invalidSenderKey: RampartErrorInfo(code: "push.invalidSenderKey", kind: .tampered, message: "The payload's key id is not an uncompressed P-256 public key (65 bytes); it is not a Web Push message.")
        case .authenticationFailed: RampartErrorInfo(code: "push.authenticationFailed", kind: .tampered, message: "The push payload does not decrypt: it was encrypted to another key (an old or foreign subscription) or modified in transit. Nothing was changed: the push was dropped.")
        case .oversized(let size, let limit): RampartErrorInfo(code: "push.oversized", kind: .tampered, message: "The push payload is \(size) bytes; at most \(limit) are accepted.")
        case .multipleRecords: RampartErrorInfo(code: "push.multipleRecords", kind: .tampered, message: "The push payload has more than one record; Web Push (RFC 8291) allows a single record.")
        case .tooManyRecords(let limit): RampartErrorInfo(code: "push.tooManyRecords", kind: .tampered, message: "The content has more than \(limit) records.")
        case .badPadding(let why): RampartErrorInfo(code: "push.badPadding", kind: .tampered, message: "The decrypted record's padding is invalid (\(why)).")
        case .replayedSalt: RampartErrorInfo(code: "push.replayedSalt", kind: .tampered, message: "This push payload was already received (its salt was seen before); the copy is dropped.")
        case .invalidNotification(let why): RampartErrorInfo(code: "push.invalidNotification", kind: .badInput, message: "The decrypted push is not a Rampart notification: \(why).")
        case .notificationForAnotherUser: RampartErrorInfo(code: "push.notificationForAnotherUser", kind: .tampered, message: "The decrypted push names another user than the one it was encrypted to; it is dropped.")
        case .noPushKeys(let session): RampartErrorInfo(code: "push.noKeys", kind: .notFound, message: "No push key is stored for session \(session): the session logged out or never subscribed.")
        case .invalidSessionID(let value): RampartErrorInfo(code: "push.invalidSessionID", kind: .badInput, message: "Invalid session id (\(value.count) characters): use 1–128 characters of letters, digits, '.', '_' or '-'.")
        case .corruptKeyItem(let why): RampartErrorInfo(code: "push.corruptKeyItem", kind: .tampered, message: "A stored push key is corrupt (\(why)); log in again to get a new one.")
        case .invalidRegistration(let why): RampartErrorInfo(code: "push.invalidRegistration", kind: .badInput, message: "The push registration record is invalid: \(why).")
        case .plaintextTooLarge(let size, let limit): RampartErrorInfo(code: "push.plaintextTooLarge", kind: .badInput, message: "The notification is \(size) bytes with padding; a push carries at most \(limit).")
        }
    }

}
