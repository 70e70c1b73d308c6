import OpenPGP

/// The copy of a message for recipients outside Rampart, as PGP/MIME.
///
/// Trust-model row **outbox (moderate)**: ``PGPMIME/outgoing(_:recipients:keys:signer:)`` chooses
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
    /// The outbox copy of `message` for the outside `recipients`: encrypted (and signed) when
    /// every one of them has a pinned key in `keys` (by lower-cased address) that can encrypt,
    /// else signed only — one copy goes to all of them, so a single recipient without a key
    /// means the message leaves in clear for everyone (signed, so it still shows who wrote it
    /// and that it was not changed). The encrypted copy is encrypted to the sender's key too.
    /// - Throws: ``PGPMIMEError/invalidInput(_:)`` for no recipients or an unusable message;
    ///   ``OpenPGP/OpenPGPError`` from encrypting or signing.
    public static func outgoing(_ message: [UInt8], recipients: [String], keys: [String: PGPPublicKey],
                                signer: PGPPrivateKey) throws -> PGPMIMEOutgoing {
        guard !recipients.isEmpty else { throw PGPMIMEError.invalidInput("there is no outside recipient") }
        var recipientKeys: [PGPPublicKey] = []
        var withoutKey: [String] = []
        for address in recipients {
            if let key = keys[address.lowercased()], key.canEncrypt {
                if !recipientKeys.contains(key) { recipientKeys.append(key) }
            } else {
                withoutKey.append(address)
            }
        }
        guard withoutKey.isEmpty else {
            return PGPMIMEOutgoing(bytes: try sign(message, with: signer), protection: .signed, withoutKey: withoutKey)
        }
        if !recipientKeys.contains(signer.publicKey) { recipientKeys.append(signer.publicKey) }
        return PGPMIMEOutgoing(bytes: try encrypt(message, to: recipientKeys, signedBy: signer), protection: .encrypted, withoutKey: [])
    }
}
