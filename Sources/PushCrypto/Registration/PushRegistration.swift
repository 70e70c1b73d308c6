import Crypto
import Foundation
import RampartCore

/// The record a client sends to the push server at login:
/// `{"sessionId": …, "publicKey": <uncompressed P-256, base64url>, "authSecret": <16 bytes, base64url>}`.
///
/// Trust-model row: **push payload key** — "the public key sent with the session id to the push
/// server, which encrypts every notification to it". It holds no private material.
public struct PushRegistration: Codable, Sendable, Equatable {
    public var sessionId: String
    /// The receiver's public key, uncompressed (65 bytes), base64url without padding.
    public var publicKey: String
    /// The 16-byte auth secret, base64url without padding.
    public var authSecret: String

    public init(sessionId: String, publicKey: String, authSecret: String) {
        self.sessionId = sessionId
        self.publicKey = publicKey
        self.authSecret = authSecret
    }

    /// The validated session id. - Throws: ``PushCryptoError/invalidSessionID(_:)``.
    public func session() throws -> PushSessionID { try PushSessionID(sessionId) }

    /// The decoded public key bytes. - Throws: ``PushCryptoError/invalidRegistration(_:)``.
    public func publicKeyBytes() throws -> [UInt8] {
        guard let bytes = Base64URL.decode(publicKey), bytes.count == 65, bytes.first == 0x04 else {
            throw PushCryptoError.invalidRegistration("publicKey is not an uncompressed P-256 point in base64url")
        }
        return bytes
    }

    /// The decoded public key, checked to be on the curve. - Throws: ``PushCryptoError/invalidRegistration(_:)``.
    public func receiverPublicKey() throws -> P256.KeyAgreement.PublicKey {
        do {
            return try P256.KeyAgreement.PublicKey(x963Representation: publicKeyBytes())
        } catch let error as PushCryptoError {
            throw error
        } catch {
            throw PushCryptoError.invalidRegistration("publicKey is not a point on P-256")
        }
    }

    /// The decoded auth secret. - Throws: ``PushCryptoError/invalidRegistration(_:)``.
    public func authSecretBytes() throws -> SecretBytes {
        guard var bytes = Base64URL.decode(authSecret), bytes.count == PushKeyPair.authSecretLength else {
            throw PushCryptoError.invalidRegistration("authSecret is not 16 bytes in base64url")
        }
        return SecretBytes(consuming: &bytes)
    }

    /// Checks every field. - Throws: ``PushCryptoError``.
    public func validate() throws {
        _ = try session()
        _ = try receiverPublicKey()
        _ = try authSecretBytes()
    }

    /// The record as JSON (sorted keys).
    public func jsonString() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }
}

/// The notification a push carries, as JSON inside the encrypted payload:
/// `{"sender": …, "subject": …, "messageId": …, "userId": …}`.
///
/// Trust-model row: **push payload key** — the sender name and subject are why pushes are
/// encrypted at all.
public struct PushNotification: Codable, Sendable, Equatable {
    public var sender: String
    public var subject: String
    public var messageId: String
    public var userId: UserID

    public init(sender: String, subject: String, messageId: String, userId: UserID) {
        self.sender = sender
        self.subject = subject
        self.messageId = messageId
        self.userId = userId
    }

    /// The JSON encoding (sorted keys), as a secret buffer.
    public func encodedJSON() throws -> SecretBytes {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(self)
        defer { data.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
        return SecretBytes(copying: data)
    }

    /// Decodes the JSON of a decrypted payload.
    /// - Throws: ``PushCryptoError/invalidNotification(_:)``.
    public init(decoding plaintext: SecretBytes) throws {
        do {
            self = try plaintext.withUnsafeBytes { bytes in
                try JSONDecoder().decode(PushNotification.self, from: Data(bytes))
            }
        } catch let error as SecretError {
            throw error
        } catch is InvalidUserID {
            throw PushCryptoError.invalidNotification("the field \"userId\" is not a valid user id")
        } catch {
            throw PushCryptoError.invalidNotification(DecodingError.fieldProblem(in: error) ?? "the content is not JSON")
        }
    }
}
