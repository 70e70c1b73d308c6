import OpenPGP

/// The copy of a message for recipients outside Rampart, as PGP/MIME.
///
/// Trust-model row **outbox (moderate)**: ``PGPMIME/outgoing(_:recipients:keys:signer:alsoEncryptingTo:)`` chooses
/// the protection; the caller tells the user which one it was.
public struct PGPMIMEOutgoing: Sendable {
    /// How the copy is protected.
    public enum Protection: String, Sendable, Codable, Equatable {
        /// `multipart/encrypted`: encrypted to every outside recipient's pinned key (and the
        /// sender's own), signed by the sender.
        case encrypted
        /// `multipart/signed`: in clear, signed by the sender — at least one outside recipient
        /// has no usable key.
        case signed
    }

    /// The RFC 5322 message for the outbox.
    public var bytes: [UInt8]
    /// How it is protected.
    public var protection: Protection
    /// The outside recipients without a usable pinned key (why the copy is only signed); empty
    /// when it is encrypted.
    public var withoutKey: [String]
}

extension PGPMIME {
    /// How ``outgoing(_:recipients:keys:signer:alsoEncryptingTo:)`` will protect a copy for the
    /// outside `recipients`: `.encrypted` when every one of them has a pinned key in `keys` (by
    /// lower-cased address) that can encrypt, else `.signed`, with the recipients that have none.
    public static func outgoingProtection(recipients: [String], keys: [String: PGPPublicKey])
        -> (protection: PGPMIMEOutgoing.Protection, withoutKey: [String]) {
        let withoutKey = recipients.filter { keys[$0.lowercased()]?.canEncrypt != true }
        return (withoutKey.isEmpty ? .encrypted : .signed, withoutKey)
    }

    /// The outbox copy of `message` for the outside `recipients` (see
    /// ``outgoingProtection(recipients:keys:)``): encrypted and signed when every one of them has
    /// a usable pinned key, else signed only — one copy goes to all of them, so a single recipient
    /// without a key means the message leaves in clear for everyone (signed, so it still shows
    /// who wrote it and that it was not changed). The encrypted copy is encrypted to the sender's
    /// key too, and to `alsoEncryptingTo` (say, the message's recipients inside Rampart, who keep
    /// this copy as its original).
    /// - Throws: ``PGPMIMEError/invalidInput(_:)`` for no recipients or an unusable message;
    ///   `OpenPGP/OpenPGPError` from encrypting or signing.
    public static func outgoing(_ message: [UInt8], recipients: [String], keys: [String: PGPPublicKey],
                                signer: PGPPrivateKey, alsoEncryptingTo others: [PGPPublicKey] = []) throws -> PGPMIMEOutgoing {
        guard !recipients.isEmpty else { throw PGPMIMEError.invalidInput("there is no outside recipient") }
        let (protection, withoutKey) = outgoingProtection(recipients: recipients, keys: keys)
        guard protection == .encrypted else {
            return PGPMIMEOutgoing(bytes: try sign(message, with: signer), protection: .signed, withoutKey: withoutKey)
        }
        var recipientKeys: [PGPPublicKey] = []
        for key in recipients.compactMap({ keys[$0.lowercased()] }) + [signer.publicKey] + others
        where key.canEncrypt && !recipientKeys.contains(where: { $0.fingerprint == key.fingerprint }) {
            recipientKeys.append(key)
        }
        return PGPMIMEOutgoing(bytes: try encrypt(message, to: recipientKeys, signedBy: signer), protection: .encrypted, withoutKey: [])
    }
}
