import Crypto
import Foundation
import OpenPGP
import RampartAPI
import RampartCore
import SRP

/// The server's side of SRP login: the signed modulus, the stored salt + verifier of each account,
/// the key the single-use SRP sessions are sealed with (``SRPSessionStore``; they and the
/// failed-proof throttle, ``SRPThrottle``, live in the database), and stable fake answers for
/// unknown usernames.
///
/// Trust-model rows **server (zero access)** — the server stores only a 10-byte salt and the
/// verifier `v = g^x mod N` per account (no password, no password hash it could replay) — and
/// **transport (network), low trust** — the modulus is signed by the modulus key whose
/// fingerprint is pinned in `server.json`, and the server proves it knows `v` with M2.
///
/// Files, in `<data>/tls/` (0600): `srp-modulus-key.pgp` (the modulus key, an unprotected OpenPGP
/// secret key, like the TLS keys next to it) and `srp-secret` (32 random bytes: the fake salts
/// and verifiers of unknown usernames are derived from it, so they are the same on every ask and
/// after a restart, and so is the key that seals the pending logins' server secrets; every
/// process on the data folder shares them).
final class SRPAuthority: Sendable {
    let group: SRPGroup
    /// The cleartext-signed base64 of N, signed once at start.
    let signedModulus: String
    /// The modulus key's fingerprint (40 hex), published in `server.json`.
    let modulusKeyFingerprint: String
    /// The modulus key's public key, armored, published in `server.json`.
    let modulusPublicKey: String
    private let fakeSecret: SymmetricKey
    /// The key the pending logins' server secrets are sealed with in the database (``SRPSessionStore``).
    let pendingLoginKey: SymmetricKey
    /// The key the throttles' names are stored under in the database (``WindowCounter``).
    let counterKey: SymmetricKey

    init(group: SRPGroup, signedModulus: String, modulusKeyFingerprint: String, modulusPublicKey: String, fakeSecret: SymmetricKey) {
        self.group = group; self.signedModulus = signedModulus; self.modulusKeyFingerprint = modulusKeyFingerprint
        self.modulusPublicKey = modulusPublicKey; self.fakeSecret = fakeSecret
        pendingLoginKey = SRPSessionStore.sealingKey(from: fakeSecret)
        counterKey = WindowCounter.nameKey(from: fakeSecret)
    }

    /// Loads (creating at first start) the modulus key and the fake-answer secret from `folder`
    /// (the TLS identity's folder), and signs the modulus.
    /// - Throws: ``ServerError/startFailed(_:)``.
    static func loadOrCreate(in folder: URL, group: SRPGroup = .rampart) throws -> SRPAuthority {
        do {
            try PrivateFiles.ensurePrivateDirectory(folder)
            let keyURL = folder.appendingPathComponent("srp-modulus-key.pgp")
            let key: PGPPrivateKey
            if FileManager.default.fileExists(atPath: keyURL.path) {
                try PrivateFiles.checkPrivateFile(keyURL)
                var bytes = [UInt8](try Data(contentsOf: keyURL))
                key = try PGPPrivateKey(unprotected: SecretBytes(consuming: &bytes))
            } else {
                key = try PGPPrivateKey.generate(name: "Rampart SRP modulus", address: "srp-modulus@localhost")
                let export = try key.unprotectedExport()
                try export.withUnsafeBytes { try PrivateFiles.writeAtomically(Data($0), to: keyURL) }
                export.wipe()
            }
            let secretURL = folder.appendingPathComponent("srp-secret")
            if !FileManager.default.fileExists(atPath: secretURL.path) {
                try PrivateFiles.writeAtomically(SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }, to: secretURL)
            }
            try PrivateFiles.checkPrivateFile(secretURL)
            let secret = try Data(contentsOf: secretURL)
            guard secret.count == 32 else { throw ServerError.startFailed("\(secretURL.path) is not 32 bytes") }
            let signed = try OpenPGP.cleartextSign(group.modulusBase64, with: key)
            return SRPAuthority(group: group, signedModulus: signed, modulusKeyFingerprint: key.fingerprint.hex,
                                modulusPublicKey: key.publicKey.armored(), fakeSecret: SymmetricKey(data: secret))
        } catch let error as ServerError {
            throw error
        } catch {
            throw ServerError.startFailed("the SRP modulus key in \(folder.path) cannot be read or created (\(error))")
        }
    }

    // MARK: Salt and verifier

    /// A salt and verifier for an unknown username: derived from the server secret, so the same on
    /// every ask; the verifier is `g^x'` for an `x'` nobody knows, so no proof can match it.
    func fakeCredentials(username: String) throws -> (salt: [UInt8], verifier: [UInt8]) {
        let salt = Array(HMAC<SHA256>.authenticationCode(for: Data(("salt\u{0}" + username).utf8), using: fakeSecret).prefix(SRPPassword.saltCount))
        var x: [UInt8] = []
        for counter in 0..<8 {
            x += HMAC<SHA256>.authenticationCode(for: Data(("verifier\u{0}\(counter)\u{0}" + username).utf8), using: fakeSecret)
        }
        let secret = SecretBytes(consuming: &x)
        defer { secret.wipe() }
        return (salt, try SRPPassword.verifier(x: secret, group: group))
    }

    /// A recovery-copy salt for a name without a copy (unknown, or an account that has none):
    /// derived from the server secret, so the same on every ask (``RecoveryRoutes``).
    func fakeRecoverySalt(username: String) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Data(("recovery-salt\u{0}" + username).utf8), using: fakeSecret).prefix(16))
    }

    /// The stored salt and verifier of an account.
    static func credentials(_ db: any StorageConnection, userID: String) throws -> (salt: [UInt8], verifier: [UInt8])? {
        guard let row = try StorageRow.fetchOne(db, sql: "SELECT salt, verifier FROM srpVerifiers WHERE userId = ?", arguments: [userID])
        else { return nil }
        return ([UInt8](row.data("salt")), [UInt8](row.data("verifier")))
    }

    /// Stores (or replaces) an account's salt and verifier, inside the caller's transaction.
    static func store(_ db: any StorageConnection, userID: String, salt: [UInt8], verifier: [UInt8]) throws {
        try db.execute(sql: """
            INSERT INTO srpVerifiers (userId, salt, verifier, version) VALUES (?, ?, ?, ?)
            ON CONFLICT (userId) DO UPDATE SET salt = excluded.salt, verifier = excluded.verifier, version = excluded.version
            """,
                       arguments: [userID, Data(salt), Data(verifier), SRPPassword.version])
    }

    /// The table of salts and verifiers. Login password hashes of an older database are erased:
    /// the server keeps no password-derived value other than SRP verifiers (such an account sets a
    /// new password through account creation again; the embedded server is a local test backend).
    static func registerMigration(_ migrator: inout StorageMigrator) {
        migrator.registerMigration("srp-v1") { db in
            try db.execute(sql: """
                CREATE TABLE srpVerifiers (
                    userId TEXT PRIMARY KEY NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    salt BLOB NOT NULL,
                    verifier BLOB NOT NULL,
                    version INTEGER NOT NULL);
                UPDATE users SET passwordSalt = x'', passwordLogN = 0, passwordHash = x'';
                """)
        }
    }
}

/// The server's reading of the SRP request bodies (`POST /auth`, `POST /v1/account/password`),
/// exposed for the fuzz target in `Fuzz/` (SPI `Fuzzing`, not part of the public API): the same
/// JSON decoding, username normalization and strict base64 as ``SRPAuthRoutes``.
///
/// Trust-model row **transport (network), low trust**: a bad request is refused with a typed
/// ``ServerError`` before any SRP arithmetic.
@_spi(Fuzzing)
public enum SRPAuthorityFuzzing {
    /// A `POST /auth` body as the route reads it.
    public struct AuthBody: Equatable {
        public let username: String
        public let clientEphemeral: [UInt8]
        public let clientProof: [UInt8]
        public let srpSession: String
    }

    /// A `POST /v1/account/password` body as the route reads it.
    public struct ChangePasswordBody: Equatable {
        public let clientEphemeral: [UInt8]
        public let clientProof: [UInt8]
        public let salt: [UInt8]
        public let verifier: [UInt8]
        public let srpSession: String
    }

    static func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T {
        guard !data.isEmpty else { throw ServerError.malformedJSON("the body is empty") }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw ServerError.malformedJSON(DecodingError.fieldProblem(in: error) ?? "the body is not JSON")
        }
    }

    /// Decodes and checks a `POST /auth` body (the route then takes the session and checks the proof).
    public static func authBody(_ data: Data) throws -> AuthBody {
        let body = try decode(SRPAuthRequest.self, data)
        return AuthBody(username: try SRPAuthRoutes.normalized(body.username),
                        clientEphemeral: try SRPAuthRoutes.bytes(body.clientEphemeral, field: "ClientEphemeral", maximum: SRPGroup.byteCount),
                        clientProof: try SRPAuthRoutes.bytes(body.clientProof, field: "ClientProof", maximum: SRPGroup.byteCount),
                        srpSession: body.srpSession)
    }

    /// Decodes and checks a `POST /v1/account/password` body, the new verifier included.
    public static func changePasswordBody(_ data: Data, group: SRPGroup) throws -> ChangePasswordBody {
        let body = try decode(SRPChangePasswordRequest.self, data)
        let clientEphemeral = try SRPAuthRoutes.bytes(body.clientEphemeral, field: "ClientEphemeral", maximum: SRPGroup.byteCount)
        let clientProof = try SRPAuthRoutes.bytes(body.clientProof, field: "ClientProof", maximum: SRPGroup.byteCount)
        let salt = try SRPAuthRoutes.bytes(body.salt, field: "Salt", maximum: 64)
        let verifier = try SRPAuthRoutes.bytes(body.verifier, field: "Verifier", maximum: SRPGroup.byteCount)
        guard salt.count >= SRPPassword.saltCount else { throw ServerError.badRequest("the field \"Salt\" must have 10 to 64 bytes") }
        guard verifier.count == SRPGroup.byteCount, (try? SRPServer(group: group, verifier: verifier)) != nil else {
            throw ServerError.badRequest("the field \"Verifier\" must be 256 bytes, a number in 1..<N")
        }
        return ChangePasswordBody(clientEphemeral: clientEphemeral, clientProof: clientProof, salt: salt, verifier: verifier,
                                  srpSession: body.srpSession)
    }
}
