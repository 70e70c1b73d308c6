import Crypto
import Foundation
import RampartCore

/// Why the push server refused a registration.
public enum PushRegistryError: Error, Equatable, RampartError {
    /// The user has no open session (never logged in, or logged out).
    case noSession(UserID)
    /// The record names a session that is not the user's current one (an old session).
    case staleSession(given: String, current: String)
    /// This public key was registered before (by any session): keys are never reused.
    case publicKeyReused
    /// The record is malformed.
    case invalidRegistration(PushCryptoError)

    /// The category the CLI's exit status uses.
    public var kind: RampartErrorKind {
        switch self {
        case .noSession, .staleSession, .publicKeyReused, .invalidRegistration: .badInput
        }
    }

    public var code: String {
        switch self {
        case .noSession: "pushRegistry.noSession"
        case .staleSession: "pushRegistry.staleSession"
        case .publicKeyReused: "pushRegistry.publicKeyReused"
        case .invalidRegistration: "pushRegistry.invalidRegistration"
        }
    }

    public var description: String {
        switch self {
        case .noSession(let user): "User \(user) has no open session; log in before registering for pushes."
        case .staleSession(let given, let current):
            "The registration is for session \(given), but the current session is \(current); log in again to register."
        case .publicKeyReused: "This push public key was registered before; generate a new key pair (keys are never reused across sessions)."
        case .invalidRegistration(let error): "The registration record is invalid: \(error.description)"
        }
    }
}

/// The backend's record of push subscriptions (used by the embedded server): one current
/// session per user, registrations accepted only for it, public keys never accepted twice.
///
/// Trust-model row: **push payload key** — "one key per session … a public key is never reused
/// across sessions". After ``endSession(for:)`` (logout) nothing more is encrypted to the
/// session's keys.
///
/// The set of seen keys holds SHA-256 fingerprints of public keys (not the keys), in memory; a
/// persistent server saves ``seenPublicKeyFingerprints`` and passes it back to ``init(seenPublicKeyFingerprints:)``.
public final class PushRegistry: @unchecked Sendable {
    private let lock = NSLock()
    private var currentSession: [UserID: String] = [:]
    private var registrations: [UserID: PushRegistration] = [:]
    private var seenKeys: Set<Data>

    public init(seenPublicKeyFingerprints: Set<Data> = []) {
        self.seenKeys = seenPublicKeyFingerprints
    }

    /// Fingerprints of every public key ever registered.
    public var seenPublicKeyFingerprints: Set<Data> { lock.withLock { seenKeys } }

    /// Login on the backend: `sessionID` becomes the user's current session; registrations of
    /// earlier sessions are dropped.
    public func startSession(_ sessionID: String, for user: UserID) {
        lock.withLock {
            if currentSession[user] != sessionID { registrations[user] = nil }
            currentSession[user] = sessionID
        }
    }

    /// Logout on the backend: the session and its registration are dropped.
    public func endSession(for user: UserID) {
        lock.withLock {
            currentSession[user] = nil
            registrations[user] = nil
        }
    }

    /// Accepts `registration` for `user` if it names the user's current session and a public
    /// key never seen before. Re-sending the current registration unchanged is accepted (a retry).
    /// - Throws: ``PushRegistryError``.
    public func register(_ registration: PushRegistration, for user: UserID) throws(PushRegistryError) {
        let fingerprint: Data
        do {
            try registration.validate()
            fingerprint = Data(SHA256.hash(data: try registration.publicKeyBytes()))
        } catch let error as PushCryptoError {
            throw .invalidRegistration(error)
        } catch {
            throw .invalidRegistration(.invalidRegistration("unreadable record"))
        }
        lock.lock()
        defer { lock.unlock() }
        guard let current = currentSession[user] else { throw .noSession(user) }
        guard registration.sessionId == current else { throw .staleSession(given: registration.sessionId, current: current) }
        if registrations[user] == registration { return }
        guard !seenKeys.contains(fingerprint) else { throw .publicKeyReused }
        seenKeys.insert(fingerprint)
        registrations[user] = registration
    }

    /// The registration to encrypt the user's notifications to, if the user has one.
    public func registration(for user: UserID) -> PushRegistration? {
        lock.withLock { registrations[user] }
    }
}
