import CRNP
import Foundation
import RampartCore

/// An unlocked private key: the transferable secret key (primary key, subkeys, user ids), with its
/// secret material unprotected in `SecretBytes` (zeroized on ``wipe()`` and on release).
///
/// Trust-model row: **the user's private and public keys (critical)** — "decrypts captured and old
/// messages". This is a key *handle*: no API hands out the secret bytes except
/// ``unprotectedExport()`` (for sealing under the MainKey locally) and ``locked(passphrase:)``
/// (passphrase-protected, for the server). `description` never prints secret material. Each
/// operation loads the key into a fresh in-memory RNP context and destroys it afterwards; RNP
/// clears its own secret key structures when it frees them, and the memory buffers this module
/// reads secret keys from are cleared with `rnp_buffer_clear` before they are freed.
public final class PGPPrivateKey: Sendable, CustomStringConvertible {
    /// The unprotected transferable secret key, binary.
    let secret: SecretBytes
    /// The public part of this key.
    public let publicKey: PGPPublicKey

    /// The primary key's fingerprint.
    public var fingerprint: PGPFingerprint { publicKey.fingerprint }

    /// S2K iteration count for ``locked(passphrase:)``: the passphrase Rampart uses is itself
    /// derived with bcrypt, so the S2K only needs to be a sound key derivation, not a slow one.
    static let s2kIterations = 1_015_808

    public var description: String { "PGPPrivateKey(\(fingerprint), secret material redacted)" }

    /// Generates a new key: a v4 Ed25519 primary key (sign, certify) and a Curve25519 ECDH
    /// encryption subkey, one user id `"\(name) <\(address)>"`, no expiry — Proton's default shape.
    /// Preferences: AES-256/AES-128, SHA-256/SHA-512, no compression.
    /// - Throws: ``OpenPGPError/unsupported(_:)`` for a name or address with `<`, `>` or line
    ///   breaks; ``OpenPGPError/library(_:)`` if RNP fails.
    public static func generate(name: String, address: String) throws -> PGPPrivateKey {
        try generate(name: name, address: address, createdAt: nil)
    }

    /// ``generate(name:address:)`` with the key's creation time (seconds since 1970) given, for
    /// tests that need a key made at a set moment. `nil`: now.
    static func generate(name: String, address: String, createdAt: UInt64?) throws -> PGPPrivateKey {
        let forbidden: Set<Character> = ["<", ">", "\n", "\r", "\0"]
        guard !address.isEmpty, !name.contains(where: forbidden.contains), !address.contains(where: forbidden.contains) else {
            throw OpenPGPError.unsupported("a user id name or address must not contain <, > or line breaks")
        }
        let userID = name.isEmpty ? "<\(address)>" : "\(name) <\(address)>"
        let preferences: [String: Any] = [
            "hashes": ["SHA256", "SHA512"], "ciphers": ["AES256", "AES128"], "compression": ["Uncompressed"],
        ]
        let request: [String: Any] = [
            // RNP's EDDSA is Ed25519 (it takes no curve name).
            "primary": ["type": "EDDSA", "userid": userID, "usage": ["sign", "certify"],
                        "expiration": 0, "hash": "SHA256", "preferences": preferences] as [String: Any],
            "sub": ["type": "ECDH", "curve": "Curve25519", "usage": ["encrypt"], "expiration": 0, "hash": "SHA256"]
                as [String: Any],
        ]
        let json = String(decoding: try JSONSerialization.data(withJSONObject: request), as: UTF8.self)
        let exported: SecretBytes = try RNPContext.run { context in
            // The key's creation time: RNP takes it from the context's "now".
            try rnpCheck(rnp_set_timestamp(context.ffi, createdAt ?? RNPClock.stamp()), "setting the creation time")
            var results: UnsafeMutablePointer<CChar>?
            try rnpCheck(rnp_generate_key_json(context.ffi, json, &results), "generating a key")
            let resultText = rnpTakeString(results) ?? ""
            guard let object = try? JSONSerialization.jsonObject(with: Data(resultText.utf8)) as? [String: Any],
                  let primary = object["primary"] as? [String: Any], let grip = primary["grip"] as? String else {
                throw OpenPGPError.library("RNP did not report the generated key")
            }
            return try context.locate(grip: grip).export(secret: true, armored: false).secret()
        }
        return try PGPPrivateKey(unprotected: exported)
    }

    /// Loads an unprotected transferable secret key (binary, as ``unprotectedExport()`` writes it).
    /// The bytes are copied; the caller keeps (and wipes) its own `SecretBytes`.
    /// - Throws: ``OpenPGPError/malformed(_:)`` unless it is exactly one secret key with its secret
    ///   material in the clear; ``OpenPGPError/unsupported(_:)`` for a passphrase-protected key
    ///   (use ``unlock(armored:passphrase:)``).
    public convenience init(unprotected: SecretBytes) throws {
        let publicKey: PGPPublicKey = try RNPContext.run { context in
            let primary = try unprotected.withUnsafeBytes { bytes -> RNPKey in
                let fingerprints = try context.importKeys(bytes, secret: true)
                guard fingerprints.count == 1 else {
                    throw OpenPGPError.malformed("expected exactly one secret key, found \(fingerprints.count)")
                }
                return try context.locate(fingerprint: fingerprints[0])
            }
            let keys = [primary] + primary.subkeys
            guard primary.hasSecret else { throw OpenPGPError.malformed("the data holds no secret key") }
            if keys.contains(where: { $0.hasSecret && $0.isProtected }) {
                throw OpenPGPError.unsupported("the secret key is protected with a passphrase; unlock it instead")
            }
            return try PGPPublicKey(key: primary)
        }
        self.init(secret: try unprotected.withUnsafeBytes { SecretBytes(copying: $0) }, publicKey: publicKey)
    }

    /// Convenience for callers that hold the unprotected key as `Data` (tests, interop): copies it.
    public convenience init(unprotectedBinary data: Data) throws {
        try self.init(unprotected: SecretBytes(copying: data))
    }

    init(secret: SecretBytes, publicKey: PGPPublicKey) {
        self.secret = secret
        self.publicKey = publicKey
    }

    /// The transferable secret key locked with `passphrase` (iterated and salted S2K with SHA-256,
    /// AES-256 in CFB, SHA-1 checksum), armored (`-----BEGIN PGP PRIVATE KEY BLOCK-----`), as
    /// `gpg --armor --export-secret-keys` writes it. This is the form stored on the server.
    /// - Throws: ``OpenPGPError/unsupported(_:)`` for an empty passphrase or one with a NUL byte.
    public func locked(passphrase: SecretBytes) throws -> String {
        try Self.checkPassphrase(passphrase)
        return try RNPContext.run { context in
            let primary = try load(into: context)
            try context.withPassphrase(passphrase) {
                for key in [primary] + primary.subkeys where key.hasSecret {
                    var password: UnsafeMutablePointer<CChar>?
                    try rnpCheck(rnp_request_password(context.ffi, key.handle, "protect", &password), "reading the passphrase")
                    defer {
                        if let password { rnp_buffer_clear(password, strlen(password)); rnp_buffer_destroy(password) }
                    }
                    try rnpCheck(rnp_key_protect(key.handle, password, "AES256", "CFB", "SHA256", Self.s2kIterations),
                                 "protecting the key")
                }
            }
            return try primary.export(secret: true, armored: true).string()
        }
    }

    /// Unlocks a passphrase-protected transferable secret key (armored or binary, e.g. from
    /// ``locked(passphrase:)`` or `gpg --export-secret-keys`).
    /// - Throws: ``OpenPGPError/wrongPassphrase`` if the passphrase does not unlock it;
    ///   ``OpenPGPError/malformed(_:)`` unless it is exactly one secret key, every secret part of
    ///   it locked (an unprotected key would accept any passphrase, so whoever stored it could
    ///   have substituted their own).
    public static func unlock(armored: String, passphrase: SecretBytes) throws -> PGPPrivateKey {
        try checkPassphrase(passphrase)
        let (exported, publicKey): (SecretBytes, PGPPublicKey) = try RNPContext.run { context in
            let fingerprints = try context.importKeys(Data(armored.utf8), secret: true)
            guard fingerprints.count == 1 else {
                throw OpenPGPError.malformed("expected exactly one secret key, found \(fingerprints.count)")
            }
            let primary = try context.locate(fingerprint: fingerprints[0])
            guard primary.hasSecret else { throw OpenPGPError.malformed("the data holds no secret key") }
            // An unprotected key would "unlock" with any passphrase: whoever stores the locked key
            // (the server) could then substitute a key of its own. Every secret key must be locked.
            let secretKeys = ([primary] + primary.subkeys).filter(\.hasSecret)
            guard secretKeys.allSatisfy(\.isProtected) else {
                throw OpenPGPError.malformed("the private key is not locked with a passphrase")
            }
            try context.withPassphrase(passphrase) {
                for key in [primary] + primary.subkeys where key.hasSecret && key.isProtected {
                    let result = rnp_key_unprotect(key.handle, nil)
                    if result == RNPResult.badPassword { throw OpenPGPError.wrongPassphrase }
                    try rnpCheck(result, "unlocking the key")
                }
            }
            return (try primary.export(secret: true, armored: false).secret(), try PGPPublicKey(key: primary))
        }
        return PGPPrivateKey(secret: exported, publicKey: publicKey)
    }

    /// The unprotected transferable secret key (binary), for sealing under the MainKey locally.
    /// Handle the result as the key itself: seal it and wipe it.
    public func unprotectedExport() throws -> SecretBytes {
        try secret.withUnsafeBytes { SecretBytes(copying: $0) }
    }

    /// Zeroizes the secret material now (e.g. at lock or logout); every later use throws
    /// `SecretError.wiped`.
    public func wipe() {
        secret.wipe()
    }

    /// Imports this key (secret and public parts) into `context` and returns its primary key.
    func load(into context: RNPContext) throws -> RNPKey {
        try secret.withUnsafeBytes { bytes in
            _ = try context.importKeys(bytes, secret: true)
        }
        return try context.locate(fingerprint: fingerprint.hex)
    }

    private static func checkPassphrase(_ passphrase: SecretBytes) throws {
        let usable = try passphrase.withUnsafeBytes { bytes in !bytes.isEmpty && !bytes.contains(0) }
        guard usable else { throw OpenPGPError.unsupported("a key passphrase must be non-empty and contain no NUL byte") }
    }
}
