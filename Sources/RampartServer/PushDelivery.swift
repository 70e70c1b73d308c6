import Crypto
import Foundation
import Logging
import PushCrypto
import RampartAPI
import RampartCore

/// The push service of the embedded backend: sessions register a Web Push subscription (their
/// own P-256 public key and auth secret), and each new message in a user's inbox becomes an
/// RFC 8291 `aes128gcm` body (``WebPushSender``) written as a file into the session's inbox
/// folder `<data>/push/<sessionId>/`, which the client's push process reads as it would read
/// what a platform push service delivers.
///
/// Trust-model row **push payload key**: the payload (sender name, subject) is encrypted to the
/// session's own key; a public key is accepted once only (a SHA-256 fingerprint of every key ever
/// registered is kept), a registration must name the caller's session, and logout deletes the
/// subscription and the session's inbox. Files are 0600 in 0700 folders, written atomically.
struct PushDelivery: Sendable {
    let store: BackendStore
    let directory: URL
    let logger: Logger

    /// Registers `registration` for `session`.
    /// - Throws: ``ServerError/badRequest(_:)`` (malformed key or secret),
    ///   ``ServerError/conflict(_:)`` (another session's id, or a reused public key).
    func register(_ registration: PushRegistration, for session: AuthenticatedSession) throws {
        do { try registration.validate() } catch let error as any RampartError {
            throw ServerError.badRequest(error.description)
        }
        guard registration.sessionId == session.sessionID else {
            throw ServerError.conflict("a push subscription can only be registered for the caller's own session")
        }
        let fingerprint = Data(SHA256.hash(data: try registration.publicKeyBytes()))
        let json = try registration.jsonString()
        try store.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM pushSeenKeys WHERE fingerprint = ?", arguments: [fingerprint]) != true else {
                throw ServerError.conflict("this push public key was registered before; generate a new key pair (keys are never reused)")
            }
            try db.execute(sql: "INSERT INTO pushSeenKeys (fingerprint) VALUES (?)", arguments: [fingerprint])
            try db.execute(sql: """
                INSERT INTO pushSubscriptions (sessionId, userId, registration) VALUES (?, ?, ?)
                ON CONFLICT (sessionId) DO UPDATE SET userId = excluded.userId, registration = excluded.registration
                """,
                           arguments: [session.sessionID, session.userID, json])
        }
        try PrivateFiles.ensurePrivateDirectory(inbox(for: session.sessionID))
    }

    /// The inbox folder of a session.
    func inbox(for sessionID: String) -> URL { directory.appendingPathComponent(sessionID, isDirectory: true) }

    /// Deletes a session's inbox (at logout; the subscription row goes with the session).
    func removeInbox(for sessionID: String) {
        try? FileManager.default.removeItem(at: inbox(for: sessionID))
    }

    /// Encrypts a notification to every registered session of `userID` and writes it to their
    /// inboxes. Failures are logged (without content) and do not undo the delivery.
    func notify(userID: String, messageID: String, sender: Correspondent, subject: String) {
        let registrations: [PushRegistration]
        do {
            registrations = try store.read { db in
                try String.fetchAll(db, sql: "SELECT registration FROM pushSubscriptions WHERE userId = ?", arguments: [userID])
            }.compactMap { try? JSONDecoder().decode(PushRegistration.self, from: Data($0.utf8)) }
        } catch {
            logger.error("push: cannot read subscriptions", metadata: ["user": "\(userID)"])
            return
        }
        guard !registrations.isEmpty, let user = try? UserID(validating: userID) else { return }
        // Subject and sender name are cut so the payload stays within one 4096-byte record.
        let notification = PushNotification(sender: String((sender.name.isEmpty ? sender.address : sender.name).prefix(200)),
                                            subject: String(subject.prefix(500)), messageId: messageID, userId: user)
        for registration in registrations {
            do {
                let body = try WebPushSender.encrypt(notification, to: registration, paddingLength: 0)
                let folder = inbox(for: registration.sessionId)
                try PrivateFiles.ensurePrivateDirectory(folder)
                let name = String(format: "%020.0f", Date().timeIntervalSince1970 * 1_000_000) + "-" + BackendStore.newID("p") + ".push"
                try PrivateFiles.writeAtomically(Data(body), to: folder.appendingPathComponent(name))
                logger.info("push: delivered", metadata: ["session": "\(registration.sessionId)", "bytes": "\(body.count)"])
            } catch {
                logger.error("push: delivery failed", metadata: ["session": "\(registration.sessionId)",
                                                                 "error": "\((error as? any RampartError)?.code ?? "\(type(of: error))")"])
            }
        }
    }
}
