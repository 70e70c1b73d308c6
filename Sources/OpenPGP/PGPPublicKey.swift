import CRNP
import Foundation
import RampartCore

/// A transferable public key (primary key, subkeys, user ids and their signatures), parsed and
/// checked by RNP.
///
/// Trust-model row: **the user's private and public keys (critical)** — a correspondent's public
/// key decides who can read what we send and whose signatures we accept, so it is only ever built
/// from data RNP parsed (never from a fingerprint alone), and compared by its full binary form.
public struct PGPPublicKey: Sendable, Hashable {
    /// The transferable public key, binary (as `gpg --export` writes it).
    public let binary: Data
    /// The primary key's fingerprint.
    public let fingerprint: PGPFingerprint
    /// The user ids with a valid self-signature that are not revoked, e.g. `"Alice <alice@example.org>"`.
    /// A user id anyone else appended to the key (no self-signature) or that its owner revoked is
    /// not listed, so it cannot claim an address for the key.
    public let userIDs: [String]
    /// Whether the key has a valid key usable for encryption (normally an encryption subkey).
    public let canEncrypt: Bool

    /// The primary key's key id.
    public var keyID: PGPKeyID { fingerprint.keyID }

    /// The lower-cased e-mail addresses in the user ids (the part between `<` and `>`, or a user id
    /// that is a bare address).
    public var addresses: [String] {
        var seen: [String] = []
        for userID in userIDs {
            let address: String?
            if let open = userID.lastIndex(of: "<"), let close = userID[open...].firstIndex(of: ">") {
                address = String(userID[userID.index(after: open)..<close])
            } else if userID.contains("@"), !userID.contains(" ") {
                address = userID
            } else {
                address = nil
            }
            if let address = address?.trimmingCharacters(in: .whitespaces).lowercased(), address.contains("@"),
               !seen.contains(address) {
                seen.append(address)
            }
        }
        return seen
    }

    /// Parses one armored public key (`-----BEGIN PGP PUBLIC KEY BLOCK-----`). A private key block
    /// is accepted too: only its public part is kept.
    /// - Throws: ``OpenPGPError/malformed(_:)`` on garbage or unless the block holds exactly one key.
    public init(armored: String) throws {
        try self.init(anyEncoding: Data(armored.utf8))
    }

    /// Parses one binary transferable public key.
    /// - Throws: ``OpenPGPError/malformed(_:)`` on garbage or unless the data holds exactly one key.
    public init(binary: Data) throws {
        try self.init(anyEncoding: binary)
    }

    private init(anyEncoding data: Data) throws {
        let keys = try Self.parse(data)
        guard keys.count == 1, let key = keys.first else {
            throw OpenPGPError.malformed("expected exactly one public key, found \(keys.count)")
        }
        self = key
    }

    /// Parses every public key of a keyring export (e.g. `gpg --armor --export a b c`).
    /// - Throws: ``OpenPGPError/malformed(_:)`` on garbage or when there is no key at all.
    public static func keys(inArmored armored: String) throws -> [PGPPublicKey] {
        let keys = try parse(Data(armored.utf8))
        guard !keys.isEmpty else { throw OpenPGPError.malformed("no public key found") }
        return keys
    }

    /// The key armored (`-----BEGIN PGP PUBLIC KEY BLOCK-----`), as `gpg --armor --export` writes it.
    public func armored() -> String {
        (try? RNPContext.run { context -> String in
            try context.importKeys(binary, secret: false)
            return try context.locate(fingerprint: fingerprint.hex).export(secret: false, armored: true).string()
        }) ?? ""
    }

    /// Builds the value from a key already in an RNP context.
    init(key: RNPKey) throws {
        guard let hex = key.fingerprint, let fingerprint = PGPFingerprint(hex: hex) else {
            throw OpenPGPError.unsupported("only v4 OpenPGP keys (40-digit fingerprints) are supported")
        }
        self.fingerprint = fingerprint
        self.binary = try key.export(secret: false, armored: false).data()
        self.userIDs = key.userIDs
        self.canEncrypt = key.defaultKey(for: "encrypt") != nil
    }

    static func parse(_ data: Data) throws -> [PGPPublicKey] {
        guard !data.isEmpty else { throw OpenPGPError.malformed("no key data") }
        return try RNPContext.run { context in
            let fingerprints = try data.withUnsafeBytes { try context.importKeys($0, secret: false) }
            return try fingerprints.map { try PGPPublicKey(key: context.locate(fingerprint: $0)) }
        }
    }
}
