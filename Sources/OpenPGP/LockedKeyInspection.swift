import CRNP
import Foundation

/// What a transferable secret key says about itself without its passphrase: its public part,
/// whether every key of it carries its secret part, and whether every secret part is locked.
///
/// Trust-model rows **the user's private and public keys (critical)** and **server (zero
/// access)**: the server, which must never hold a usable private key, reads an uploaded key this
/// way (through RNP) and refuses one that is not passphrase-protected.
public struct PGPSecretKeyInspection: Sendable {
    /// The public part (primary key, subkeys, user ids).
    public let publicKey: PGPPublicKey
    /// Whether the primary key and every subkey hold secret material (none is a stub).
    public let hasEverySecretPart: Bool
    /// Whether every secret part present is protected with a passphrase (S2K-encrypted).
    public let everySecretPartLocked: Bool
}

extension PGPPrivateKey {
    /// Inspects an armored (or binary) transferable secret key without unlocking it.
    /// - Throws: ``OpenPGPError/malformed(_:)`` unless the data is exactly one secret key.
    public static func inspectLocked(armored: String) throws -> PGPSecretKeyInspection {
        try RNPContext.run { context in
            let fingerprints = try context.importKeys(Data(armored.utf8), secret: true)
            guard fingerprints.count == 1 else {
                throw OpenPGPError.malformed("expected exactly one secret key, found \(fingerprints.count)")
            }
            let primary = try context.locate(fingerprint: fingerprints[0])
            guard primary.hasSecret else { throw OpenPGPError.malformed("the data holds no secret key") }
            // RNP counts a GnuPG stub (`--export-secret-subkeys`, a smartcard) as a protected
            // secret; its protection type says there is no secret material.
            let keys = [primary] + primary.subkeys
            let types = keys.map { $0.hasSecret ? $0.protectionType ?? "Unknown" : "GPG-None" }
            let present = types.filter { !["GPG-None", "GPG-Smartcard", "Unknown"].contains($0) }
            return PGPSecretKeyInspection(publicKey: try PGPPublicKey(key: primary), hasEverySecretPart: present.count == keys.count,
                                          everySecretPartLocked: present.allSatisfy { $0 == "Encrypted" || $0 == "Encrypted-Hashed" })
        }
    }
}

extension RNPKey {
    /// RNP's protection type of the secret part: "None", "Encrypted", "Encrypted-Hashed",
    /// "GPG-None" (a stub), "GPG-Smartcard", "Unknown"; nil when RNP cannot tell.
    var protectionType: String? {
        var value: UnsafeMutablePointer<CChar>?
        guard rnp_key_get_protection_type(handle, &value) == RNPResult.success else { return nil }
        return rnpTakeString(value)
    }
}
