import Foundation
import Keychain
import RampartCore

/// The push extension's side: opens an encrypted push with the session's keys from the shared
/// access group, refuses replays, and returns the typed notification.
///
/// It needs no PIN and no MainKey: it reads only the push keys and the replay ledger.
///
/// Trust-model row: **push payload key** — "the push extension cannot ask the user for a PIN, so
/// push payloads use their own keys".
///
/// Order of checks (each failure is a ``PushCryptoError`` and nothing is returned):
/// size (≤ 4096) → header → sender key → single record → salt not seen → decrypt with each
/// usable key pair → padding → salt recorded → JSON → user id matches the key's owner.
/// A push that does not open changes nothing: anyone can forge one, so it must not rotate the
/// keys (a forged push used to rotate them, and since nothing registered the new key with the
/// server, a few forgeries silently stopped every later push). Keys rotate only on schedule or
/// on the user's request, by a process holding the session, which registers the new key
/// (``PushKeyring/rotateIfDue(sessionID:)``).
public struct PushReceiver: Sendable {
    public let keyring: PushKeyring
    public let sessionID: PushSessionID
    public let ledger: SeenSaltLedger

    public init(keyring: PushKeyring, sessionID: PushSessionID, ledgerCapacity: Int = 512) {
        self.keyring = keyring
        self.sessionID = sessionID
        self.ledger = SeenSaltLedger(keychain: keyring.keychain, itemID: keyring.ledgerID(for: sessionID), capacity: ledgerCapacity)
    }

    /// Opens `body` and decodes the notification.
    /// - Throws: ``PushCryptoError`` for every bad payload; ``PushCryptoError/noPushKeys(session:)``
    ///   when the session has no key (logged out); keychain errors.
    public func decrypt(_ body: [UInt8]) throws -> PushNotification {
        let (header, _) = try WebPushMessage.checkedHeader(of: body)
        let pairs = try keyring.keyPairs()
        guard pairs.contains(where: { $0.sessionID == sessionID }) else {
            throw PushCryptoError.noPushKeys(session: sessionID.rawValue)
        }
        guard try !ledger.contains(header.salt) else { throw PushCryptoError.replayedSalt }
        // The session's own pairs first, then previous sessions' pairs in their grace period.
        let ordered = pairs.filter { $0.sessionID == sessionID } + pairs.filter { $0.sessionID != sessionID }
        let opened = try WebPushMessage.open(body, with: ordered)
        defer { opened.plaintext.wipe() }
        try ledger.record(header.salt)
        let notification = try PushNotification(decoding: opened.plaintext)
        guard notification.userId == keyring.userID else { throw PushCryptoError.notificationForAnotherUser }
        return notification
    }
}
