import Foundation
import PushCrypto
import RampartCore

/// Rotating the session's push keys: on schedule (`PushKeyring/RetentionPolicy/rotationInterval`)
/// or on the user's request, always by a process that holds the session, and always followed by
/// registering the new public key with the server — a rotation the server does not accept is
/// discarded, so the pair the server encrypts to stays the newest and keeps opening pushes.
///
/// Trust-model row **push payload key (high)**: a push that does not open never rotates
/// anything (anyone can forge one); the keys change only here.
public enum PushKeyRotation {
    /// What happened.
    public enum Outcome: Sendable, Equatable {
        /// No rotation was due (or the session has no push key on this device).
        case notDue
        /// A new pair was made and registered; its public key (base64url).
        case rotated(publicKey: String)
    }

    /// Rotates the push key of `account`'s session when due (or now, with `force`), then
    /// registers the new record through `api`.
    /// - Throws: `LockedError`, ``ClientError`` / API errors from the registration (the new
    ///   pair is discarded first), keychain errors.
    public static func run(account: ClientAccount, api: APIClient, force: Bool = false,
                           policy: PushKeyring.RetentionPolicy = .default) async throws -> Outcome {
        let record = try account.session()
        let keyring = PushKeyring(keychain: account.keychain, clock: account.clock,
                                  userID: try UserID(validating: record.serverUserID), policy: policy)
        let session = try PushSessionID(record.sessionID)
        let registration: PushRegistration?
        if force {
            registration = try keyring.rotate(sessionID: session)
        } else {
            registration = try keyring.rotateIfDue(sessionID: session)
        }
        guard let registration else { return .notDue }
        do {
            try await api.registerPush(registration)
        } catch {
            _ = try? keyring.discard(registration)
            throw error
        }
        return .rotated(publicKey: registration.publicKey)
    }
}
