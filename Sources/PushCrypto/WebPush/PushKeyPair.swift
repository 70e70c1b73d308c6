import Crypto
import Foundation
import RampartCore

/// A push subscription's receiving keys: a P-256 key-agreement key pair and a 16-byte auth
/// secret (RFC 8291 §3), tied to the session that created them.
///
/// Trust-model row: **push payload key** — "at each login a new key pair is generated, the
/// private key kept in the keychain". The private key and auth secret are loaded from the
/// keychain's shared access group only for the time a payload is decrypted.
public struct PushKeyPair: Sendable {
    /// The session that generated this pair.
    public let sessionID: PushSessionID
    /// When the pair was generated (wall clock of the injected `RampartClock`).
    public let createdAt: Date
    /// The receiving private key (swift-crypto zeroizes its copy when released).
    public let privateKey: P256.KeyAgreement.PrivateKey
    /// The 16-byte authentication secret shared with the sender.
    public let authSecret: SecretBytes

    /// The length of an auth secret (RFC 8291 §3.2).
    public static let authSecretLength = 16

    public init(sessionID: PushSessionID, createdAt: Date, privateKey: P256.KeyAgreement.PrivateKey, authSecret: SecretBytes) throws {
        guard authSecret.count == Self.authSecretLength else {
            throw PushCryptoError.invalidRegistration("the auth secret is \(authSecret.count) bytes, not 16")
        }
        self.sessionID = sessionID
        self.createdAt = createdAt
        self.privateKey = privateKey
        self.authSecret = authSecret
    }

    /// Generates a fresh pair and auth secret.
    public static func generate(sessionID: PushSessionID, now: Date) throws -> PushKeyPair {
        try PushKeyPair(sessionID: sessionID, createdAt: now, privateKey: P256.KeyAgreement.PrivateKey(), authSecret: SecretBytes(randomCount: authSecretLength))
    }

    /// The uncompressed public key (65 bytes, `0x04 ‖ X ‖ Y`).
    public var publicKeyBytes: [UInt8] { Array(privateKey.publicKey.x963Representation) }

    /// A short, stable, non-secret name of the public key (first 8 bytes of its SHA-256, hex).
    public var fingerprint: String { Self.fingerprint(ofPublicKey: publicKeyBytes) }

    static func fingerprint(ofPublicKey bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    /// The registration record sent to the push server with the session id.
    public func registration() throws -> PushRegistration {
        PushRegistration(
            sessionId: sessionID.rawValue,
            publicKey: Base64URL.encode(publicKeyBytes),
            authSecret: try authSecret.withUnsafeBytes { Base64URL.encode($0) }
        )
    }
}

/// The id of a login session (the backend's session id). Not secret; used in keychain names.
public struct PushSessionID: Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String

    /// - Throws: ``PushCryptoError/invalidSessionID(_:)`` unless 1–128 characters of `[A-Za-z0-9._-]`.
    public init(_ rawValue: String) throws(PushCryptoError) {
        guard UserID.isValid(rawValue) else { throw .invalidSessionID(rawValue) }
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        try self.init(decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
