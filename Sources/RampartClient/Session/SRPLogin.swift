import Foundation
import MailboxCrypto
import OpenPGP
import RampartAPI
import RampartCore
import SRP

/// The client side of SRP login (`POST /auth/info`, `POST /auth`): the login password never
/// leaves the device, the modulus must be signed by the pinned modulus key, and the server must
/// prove that it knows the verifier before anything of the answer is used.
///
/// Trust-model rows **transport (network), low trust** — an unsigned or differently signed
/// modulus, a bad server ephemeral or a wrong server proof is refused with exit status 8 (like a
/// certificate that does not match its pins) and nothing is stored — and **server (zero access)**
/// — the server gets only A and the proof M1.
enum SRPLogin {
    /// The result of the `/auth/info` step: the verified group and the challenge.
    struct Challenge {
        let group: SRPGroup
        let salt: [UInt8]
        let serverEphemeral: [UInt8]
        let version: Int
        let session: String
    }

    /// Logs in and returns Rampart's login answer, after checking the server's proof.
    /// - Throws: ``ClientError/loginRefused(_:)`` (wrong username or password, throttled),
    ///   ``SRPError`` (`.invalidModulus`, `.invalidServerEphemeral`, `.serverProofMismatch`:
    ///   exit status 8), ``ClientError/badServer(_:)`` (no modulus key pinned), transport errors.
    static func run(api: APIClient, username: String, password: SecretBytes) async throws -> LoginResponse {
        let challenge = try await self.challenge(api: api, username: username)
        let client = try SRPClient(group: challenge.group, password: password, salt: challenge.salt,
                                   serverEphemeral: challenge.serverEphemeral, version: challenge.version)
        let request = SRPAuthRequest(username: username, clientEphemeral: Data(client.clientEphemeral).base64EncodedString(),
                                     clientProof: Data(client.clientProof).base64EncodedString(), srpSession: challenge.session)
        let answer: SRPAuthResponse
        do {
            answer = try await api.json(.POST, APIRoute.auth, body: request, authenticated: false)
        } catch ClientError.http(let status, let body) where status == 422 || status == 429 || status == 401 || status == 403 {
            throw ClientError.loginRefused(body?.error.message ?? "wrong username or password")
        }
        guard let proof = Data(base64Encoded: answer.serverProof) else { throw SRPError.serverProofMismatch }
        // Before the tokens, the user or the keys of this answer are used or stored.
        try client.verifyServerProof([UInt8](proof))
        return answer.login
    }

    /// `POST /auth/info` and the checks of its answer: the modulus signature against the pinned key.
    static func challenge(api: APIClient, username: String) async throws -> Challenge {
        let info: SRPAuthInfoResponse
        do {
            info = try await api.json(.POST, APIRoute.authInfo, body: SRPAuthInfoRequest(username: username), authenticated: false)
        } catch ClientError.http(let status, let body) where status == 422 || status == 429 {
            throw ClientError.loginRefused(body?.error.message ?? "the server refused the login")
        }
        // After the request, so that a TLS pin mismatch is reported first (as the alert it is).
        return try checkedChallenge(info, key: try pinnedModulusKey(api.endpoint))
    }

    /// The checks of an `/auth/info` answer: the modulus signed by `key`, the version, the salt
    /// and server ephemeral in base64, the session's length.
    static func checkedChallenge(_ info: SRPAuthInfoResponse, key: PGPPublicKey) throws -> Challenge {
        let group = try verifiedGroup(info.modulus, key: key)
        guard info.version == 4 || info.version == 3 else { throw SRPError.unsupportedVersion(info.version) }
        guard let salt = Data(base64Encoded: info.salt), let serverEphemeral = Data(base64Encoded: info.serverEphemeral) else {
            throw SRPError.invalidServerEphemeral("the salt or the server ephemeral is not base64")
        }
        guard !info.srpSession.isEmpty, info.srpSession.utf8.count <= 128 else { throw ClientError.malformedResponse("the SRPSession is empty or too long") }
        return Challenge(group: group, salt: [UInt8](salt), serverEphemeral: [UInt8](serverEphemeral), version: info.version,
                         session: info.srpSession)
    }

    /// The modulus key of the endpoint, after checking it against the pinned fingerprint.
    static func pinnedModulusKey(_ endpoint: ServerEndpoint) throws -> PGPPublicKey {
        guard let pinned = endpoint.modulusKeyFingerprint.flatMap(PGPFingerprint.init(hex:)), let armored = endpoint.modulusPublicKey else {
            throw ClientError.badServer("no SRP modulus key is pinned for \(endpoint.url.absoluteString) (server.json's modulusKeyFingerprint and modulusPublicKey)")
        }
        let key: PGPPublicKey
        do { key = try PGPPublicKey(armored: armored) } catch {
            throw SRPError.invalidModulus("the modulus public key given for this server is unreadable")
        }
        guard key.fingerprint == pinned else {
            throw SRPError.invalidModulus("the modulus public key given for this server is not the pinned one (\(pinned.hex))")
        }
        return key
    }

    /// The group in a cleartext-signed modulus, if and only if it is signed by `key`.
    static func verifiedGroup(_ signed: String, key: PGPPublicKey) throws -> SRPGroup {
        let text: String
        do {
            let verified = try OpenPGP.verifyCleartext(signed, against: [key])
            guard case .verified(let fingerprint) = verified.signature, fingerprint == key.fingerprint else {
                throw SRPError.invalidModulus("it is not signed by the pinned modulus key \(key.fingerprint.hex) (\(verified.signature))")
            }
            text = verified.text
        } catch let error as OpenPGPError {
            throw SRPError.invalidModulus("it is not a cleartext-signed message from the pinned modulus key (\(error.description))")
        }
        guard let modulus = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw SRPError.invalidModulus("the signed text is not base64")
        }
        return try SRPGroup(modulus: [UInt8](modulus))
    }

    /// `POST /v1/account/password`: proves the old password on a fresh challenge and sends a new
    /// salt and verifier (the new password never leaves the device either). In one-password mode
    /// (the old login password opens the user key: bcrypt(old, key salt)) the same user key goes
    /// along re-locked under bcrypt(new, a fresh key salt), so the mailbox password follows.
    static func changePassword(api: APIClient, username: String, old: SecretBytes, new: SecretBytes,
                               endOtherSessions: Bool) async throws -> LoginPasswordChange {
        try await changePassword(api: api, username: username, old: old, new: new, endOtherSessions: endOtherSessions,
                                 userKey: try await relockedUserKey(api: api, old: old, new: new))
    }

    /// The change with `userKey` as given (nil: the locked key stays).
    static func changePassword(api: APIClient, username: String, old: SecretBytes, new: SecretBytes,
                               endOtherSessions: Bool, userKey: RelockedUserKey?) async throws -> LoginPasswordChange {
        let challenge = try await self.challenge(api: api, username: username)
        let client = try SRPClient(group: challenge.group, password: old, salt: challenge.salt,
                                   serverEphemeral: challenge.serverEphemeral, version: challenge.version)
        let salt = SRPPassword.newSalt()
        let verifier = try SRPPassword.verifier(password: new, salt: salt, group: challenge.group)
        let request = SRPChangePasswordRequest(clientEphemeral: Data(client.clientEphemeral).base64EncodedString(),
                                               clientProof: Data(client.clientProof).base64EncodedString(),
                                               srpSession: challenge.session, salt: Data(salt).base64EncodedString(),
                                               verifier: Data(verifier).base64EncodedString(), endOtherSessions: endOtherSessions,
                                               userKey: userKey)
        let answer: SRPChangePasswordResponse = try await proven(api: api, APIRoute.accountPassword, request, client: client,
                                                                 serverProof: \.serverProof)
        return LoginPasswordChange(endedSessions: answer.endedSessions, mailboxPasswordFollowed: userKey != nil)
    }

    /// The user key re-locked under `new` if `old` opens it (one-password mode); nil when it does
    /// not (two-password mode: the mailbox password stays). The key is checked against the
    /// account's public key before it is re-locked.
    static func relockedUserKey(api: APIClient, old: SecretBytes, new: SecretBytes) async throws -> RelockedUserKey? {
        let keys: UserKeys = try await api.json(.GET, APIRoute.accountKeys)
        guard let salt = Data(base64Encoded: keys.keySalt) else { throw ClientError.malformedResponse("the key salt is not base64") }
        let key: PGPPrivateKey
        do {
            key = try MailboxKey.unlock(locked: keys.privateKey, keySalt: [UInt8](salt), mailboxPassword: old)
        } catch MailboxCryptoError.wrongMailboxPassword {
            return nil
        }
        defer { key.wipe() }
        guard key.fingerprint == (try? PGPPublicKey(armored: keys.publicKey))?.fingerprint else {
            throw MailboxCryptoError.tampered("user key sent by the server (it does not match the account's public key)")
        }
        let relocked = try MailboxKey.lock(key, mailboxPassword: new)
        return RelockedUserKey(privateKey: relocked.locked, keySalt: Data(relocked.keySalt).base64EncodedString())
    }

    /// Posts a request that carries a password proof: a refused proof (422, or 429 after too many)
    /// is `loginRefused`, and the answer's server proof (at `serverProof`) is checked.
    private static func proven<Response: Decodable>(api: APIClient, _ route: String, _ request: some Encodable,
                                                    client: SRPClient, serverProof: KeyPath<Response, String>) async throws -> Response {
        let answer: Response
        do {
            answer = try await api.json(.POST, route, body: request)
        } catch ClientError.http(let status, let body) where status == 422 || status == 429 {
            throw ClientError.loginRefused(body?.error.message ?? "wrong password")
        }
        guard let proof = Data(base64Encoded: answer[keyPath: serverProof]) else { throw SRPError.serverProofMismatch }
        try client.verifyServerProof([UInt8](proof))
        return answer
    }
}

extension SRPLogin {
    /// `POST /v1/account/delete`: proves the password on a fresh challenge; the server erases the
    /// account, then proves it knew the verifier (checked here).
    static func deleteAccount(api: APIClient, username: String, password: SecretBytes) async throws {
        let challenge = try await self.challenge(api: api, username: username)
        let client = try SRPClient(group: challenge.group, password: password, salt: challenge.salt,
                                   serverEphemeral: challenge.serverEphemeral, version: challenge.version)
        let request = AccountDeleteRequest(clientEphemeral: Data(client.clientEphemeral).base64EncodedString(),
                                           clientProof: Data(client.clientProof).base64EncodedString(), srpSession: challenge.session)
        let _: AccountDeleteResponse = try await proven(api: api, APIRoute.accountDelete, request, client: client, serverProof: \.serverProof)
    }
}

/// The client's reading of the `/auth/info` answer, exposed for the fuzz target in `Fuzz/` (SPI
/// `Fuzzing`, not part of the public API).
///
/// Trust-model row **transport (network), low trust**: whatever the server answers must be
/// refused with a typed error unless its modulus is signed by the pinned modulus key.
@_spi(Fuzzing)
public enum SRPLoginFuzzing {
    /// What ``challenge(_:key:)`` accepted.
    public struct Challenge {
        public let group: SRPGroup
        public let salt: [UInt8]
        public let serverEphemeral: [UInt8]
        public let version: Int
        public let session: String
    }

    /// The group in a cleartext-signed modulus, if and only if it is signed by `key`.
    public static func verifiedGroup(_ signed: String, key: PGPPublicKey) throws -> SRPGroup {
        try SRPLogin.verifiedGroup(signed, key: key)
    }

    /// The checks the client runs on an `/auth/info` answer before it hashes the password.
    public static func challenge(_ info: SRPAuthInfoResponse, key: PGPPublicKey) throws -> Challenge {
        let c = try SRPLogin.checkedChallenge(info, key: key)
        return Challenge(group: c.group, salt: c.salt, serverEphemeral: c.serverEphemeral, version: c.version, session: c.session)
    }
}

/// What a login-password change did.
public struct LoginPasswordChange: Sendable {
    /// How many other sessions the server ended.
    public var endedSessions: Int
    /// Whether the user key was re-locked under the new password (one-password mode: the old
    /// login password opened it); false keeps a separate mailbox password as it was.
    public var mailboxPasswordFollowed: Bool
}
