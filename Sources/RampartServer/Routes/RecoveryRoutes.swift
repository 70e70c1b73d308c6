import Foundation
import Hummingbird
import MailboxCrypto
import OpenPGP
import RampartAPI
import RampartCore
import SRP

/// Account recovery without a session, and the recovery copy behind one:
///
/// - `POST /v1/recovery/info` → the copy's scrypt salt and cost, and a nonce. An unknown name, or
///   an account without a copy, gets a made-up salt that is stable per name (derived from the
///   server's secret) and the same cost: the answer does not tell whether the account exists.
/// - `POST /v1/recovery/copy` → the locked copy, only for the access token derived from the
///   phrase (the server compares SHA-256 of it, in constant time); otherwise
///   ``RecoveryRefusal/wrongPhrase`` whatever the reason.
/// - `POST /v1/recovery/password` → a new SRP salt + verifier and the same key locked under the
///   new password, with a signature by that key over the nonce, name, salts, verifier and locked
///   key, verified with the stored public key. Every session of the account ends.
/// - `POST /v1/recovery/reset/info`, `POST /v1/recovery/reset` → with the operator's single-use
///   token: a new password and new keys (mail sealed to the old key stays unreadable).
/// - `PUT /v1/account/recovery` (session) → replaces the recovery copy.
///
/// Every public call counts against the recovery throttle per username and per client address
/// before anything is looked up (a success gives the name's count back).
///
/// Trust-model rows **the user's private and public keys (critical)**, **server (zero access)**
/// (no phrase, password or cleartext key arrives; the copy is fetched only with the phrase's
/// token) and **transport (network), low trust** (no enumeration of names, no free download of
/// copies, refusals change nothing).
struct RecoveryRoutes {
    let backend: Backend

    /// The largest body (two armored keys, a signature, salts and verifier).
    static let maximumBody = 96 * 1024

    var collection: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        publicPost(routes, APIRoute.recoveryInfo, RecoveryInfoRequest.self, info)
        publicPost(routes, APIRoute.recoveryCopy, RecoveryCopyRequest.self, copy)
        publicPost(routes, APIRoute.recoveryPassword, RecoveryPasswordRequest.self, newPassword)
        publicPost(routes, APIRoute.resetInfo, ResetInfoRequest.self, resetInfo)
        publicPost(routes, APIRoute.reset, AccountResetRequest.self, reset)
        let protected = RouteCollection(context: APIRequestContext.self)
        protected.add(middleware: SessionMiddleware(accounts: backend.accounts))
        protected.put(RouterPath(APIRoute.accountRecovery)) { request, context in
            let session = try context.session
            return try await refusing {
                let body = try await APIIO.decode(RecoveryCopyUpload.self, from: request, limit: Self.maximumBody)
                return try replaceCopy(body, session: session)
            }
        }
        routes.addRoutes(protected)
        return routes
    }

    /// A public `POST` route: its body decoded (at most ``maximumBody``) and answered by `handle`
    /// with the client's address (for the throttle), a refusal as ``refusing(_:)`` answers it.
    func publicPost<Body: Decodable>(_ routes: RouteCollection<APIRequestContext>, _ path: String, _: Body.Type,
                                     _ handle: @escaping @Sendable (Body, String) throws -> Response) {
        routes.post(RouterPath(path)) { request, context in
            try await refusing {
                try handle(try await APIIO.decode(Body.self, from: request, limit: Self.maximumBody), context.remoteAddress ?? "unknown")
            }
        }
    }

    /// Answers a ``RecoveryRefusal`` with its status and body; other errors go on to the error middleware.
    func refusing(_ body: () async throws -> Response) async throws -> Response {
        do {
            return try await body()
        } catch let refusal as RecoveryRefusal {
            backend.logger.notice("recovery refused", metadata: ["error": "\(refusal.code)"])
            return APIIO.errorResponse(HTTPResponse.Status(code: refusal.status), refusal.body)
        }
    }

    /// The lower-cased name after a throttle slot was counted for it and the address.
    func admit(_ username: String, address: String) throws -> String {
        guard !username.isEmpty, username.utf8.count <= 256 else { throw RecoveryRefusal.malformed(field: "Username", why: "it must be 1–256 bytes") }
        let name = username.lowercased()
        try backend.recoveryThrottle.reserve(username: name, address: address)
        return name
    }

    /// The account of a name and its copy, if both exist.
    func account(_ name: String) throws -> (userID: String, copy: (lockedKey: String, salt: [UInt8], logN: Int, accessHash: [UInt8]))? {
        try backend.accounts.store.read { db in
            guard let userID = try String.fetchOne(db, sql: "SELECT id FROM users WHERE username = ?", arguments: [name]),
                  let copy = try RecoveryCopies.fetch(db, userID: userID) else { return nil }
            return (userID, copy)
        }
    }

    func info(_ body: RecoveryInfoRequest, address: String) throws -> Response {
        let name = try admit(body.username, address: address)
        let found = try account(name)
        let salt = found?.copy.salt ?? backend.srp.fakeRecoverySalt(username: name)
        let logN = found?.copy.logN ?? Int(RecoveryKeyCopy.defaultLogN)
        let nonce = try backend.recoveryNonces.issue(username: name, userID: found?.userID)
        return try APIIO.json(RecoveryInfoResponse(salt: Data(salt).base64EncodedString(), logN: logN, nonce: nonce))
    }

    /// The account whose copy the token opens, for a live nonce.
    func proven(username: String, nonce: String, access: String, address: String, consume: Bool) throws
        -> (name: String, userID: String, copy: (lockedKey: String, salt: [UInt8], logN: Int, accessHash: [UInt8])) {
        let name = try admit(username, address: address)
        let entry = try backend.recoveryNonces.entry(nonce, username: name, consume: consume)
        guard let userID = entry.userID, let found = try account(name), found.userID == userID,
              RecoveryCopies.accessMatches(access, stored: found.copy.accessHash) else { throw RecoveryRefusal.wrongPhrase }
        return (name, userID, found.copy)
    }

    func copy(_ body: RecoveryCopyRequest, address: String) throws -> Response {
        let proven = try proven(username: body.username, nonce: body.nonce, access: body.access, address: address, consume: false)
        let publicKey = try Accounts.userKeys(try backend.accounts.userRow(proven.userID)).publicKey
        return try APIIO.json(RecoveryCopyResponse(lockedKey: proven.copy.lockedKey, publicKey: publicKey))
    }

    func newPassword(_ body: RecoveryPasswordRequest, address: String) throws -> Response {
        let proven = try proven(username: body.username, nonce: body.nonce, access: body.access, address: address, consume: true)
        let (salt, verifier, keySalt) = try checkedSRP(version: body.version, salt: body.salt, verifier: body.verifier, keySalt: body.keySalt)
        let row = try backend.accounts.userRow(proven.userID)
        guard (row["disabled"] as Int? ?? 0) == 0 else { throw RecoveryRefusal.disabled }
        let publicKey = try PGPPublicKey(binary: row.data("publicKey"))
        try RecoveryCopies.checkLocked(body.privateKey, publicKey: publicKey, refusal: RecoveryRefusal.keyInvalid)
        guard body.signature.utf8.count <= 16 * 1024,
              case .verified? = try? OpenPGP.verifyDetached(body.signedText, signature: Data(body.signature.utf8), against: [publicKey])
        else { throw RecoveryRefusal.signatureInvalid }
        let ended = try backend.accounts.store.write { db -> [String] in
            try SRPAuthority.store(db, userID: proven.userID, salt: salt, verifier: verifier)
            try db.execute(sql: "UPDATE users SET sealedPrivateKey = ?, keySalt = ? WHERE id = ?",
                           arguments: [Data(body.privateKey.utf8), Data(keySalt), proven.userID])
            return try Self.endSessions(db, userID: proven.userID)
        }
        for id in ended { backend.push.removeInbox(for: id) }
        try? backend.recoveryThrottle.succeeded(username: proven.name, address: address)
        backend.logger.info("account recovered with its phrase", metadata: ["user": "\(proven.userID)", "endedSessions": "\(ended.count)"])
        return try APIIO.json(AccountResetResponse(endedSessions: ended.count))
    }

    func resetInfo(_ body: ResetInfoRequest, address: String) throws -> Response {
        let name = try admit(body.username, address: address)
        let now = Int64(backend.accounts.clock.now.timeIntervalSince1970)
        let userID = try backend.accounts.store.read { db in try PasswordResets.userID(db, token: body.token, username: name, now: now) }
        let info = Accounts.userInfo(try backend.accounts.userRow(userID))
        return try APIIO.json(ResetInfoResponse(address: info.addresses.first ?? "", displayName: info.displayName, addresses: info.addresses))
    }

    func reset(_ body: AccountResetRequest, address: String) throws -> Response {
        let name = try admit(body.username, address: address)
        let now = Int64(backend.accounts.clock.now.timeIntervalSince1970)
        let (salt, verifier, keySalt) = try checkedSRP(version: body.version, salt: body.salt, verifier: body.verifier, keySalt: body.keySalt)
        guard body.publicKey.utf8.count <= Signups.maximumKeyCharacters, let publicKey = try? PGPPublicKey(armored: body.publicKey) else {
            throw RecoveryRefusal.malformed(field: "PublicKey", why: "it is not one armored OpenPGP public key")
        }
        try RecoveryCopies.checkLocked(body.privateKey, publicKey: publicKey, refusal: RecoveryRefusal.keyInvalid)
        guard publicKey.canEncrypt else { throw RecoveryRefusal.keyInvalid("it has no encryption subkey") }
        let copy = try body.recovery.map { try RecoveryCopies.check($0, publicKey: publicKey) }
        let addressKeys: [CheckedAddressKey]
        do {
            addressKeys = try (body.addressKeys ?? []).prefix(KeyList.maximumAddresses + 1).map {
                try KeyList.check($0, userKey: publicKey, domain: backend.signup.domain)
            }
        } catch let refusal as SignupRefusal {
            throw RecoveryRefusal.keyInvalid(refusal.message)
        }
        let (userID, ended) = try backend.accounts.store.write { db -> (String, [String]) in
            let userID = try PasswordResets.userID(db, token: body.token, username: name, now: now)
            let row = try backend.accounts.userRow(userID)
            guard (row["disabled"] as Int? ?? 0) == 0 else { throw RecoveryRefusal.disabled }
            let accountAddress = Accounts.userInfo(row).addresses.first ?? ""
            guard publicKey.addresses.map({ $0.lowercased() }) == [accountAddress] else {
                throw RecoveryRefusal.keyInvalid("its user id must name the account's address \(accountAddress)")
            }
            let addresses = try KeyList.activeAddresses(db, userID: userID)
            guard addressKeys.map(\.address) == addresses else {
                throw RecoveryRefusal.keyInvalid("a new address key is needed for each address of the account, in order: \(addresses.joined(separator: ", "))")
            }
            try db.execute(sql: "UPDATE passwordResets SET used = ? WHERE tokenHash = ?", arguments: [now, PasswordResets.hash(body.token)])
            try SRPAuthority.store(db, userID: userID, salt: salt, verifier: verifier)
            try db.execute(sql: "UPDATE users SET publicKey = ?, sealedPrivateKey = ?, keySalt = ? WHERE id = ?",
                           arguments: [publicKey.binary, Data(body.privateKey.utf8), Data(keySalt), userID])
            try KeyList.apply(db, .replaced(userID: userID, keys: addressKeys), now: now)
            try db.execute(sql: "DELETE FROM recoveryCopies WHERE userId = ?", arguments: [userID])
            if let copy { try RecoveryCopies.store(db, userID: userID, copy: copy, now: now) }
            return (userID, try Self.endSessions(db, userID: userID))
        }
        for id in ended { backend.push.removeInbox(for: id) }
        try? backend.recoveryThrottle.succeeded(username: name, address: address)
        backend.logger.info("account reset with an operator's token (new keys)", metadata: ["user": "\(userID)", "endedSessions": "\(ended.count)"])
        return try APIIO.json(AccountResetResponse(endedSessions: ended.count))
    }

    func replaceCopy(_ body: RecoveryCopyUpload, session: AuthenticatedSession) throws -> Response {
        let row = try backend.accounts.userRow(session.userID)
        let copy = try RecoveryCopies.check(body, publicKey: try PGPPublicKey(binary: row.data("publicKey")))
        let now = Int64(backend.accounts.clock.now.timeIntervalSince1970)
        try backend.accounts.store.write { db in try RecoveryCopies.store(db, userID: session.userID, copy: copy, now: now) }
        backend.logger.info("recovery copy replaced", metadata: ["user": "\(session.userID)"])
        return try APIIO.json(OKResponse())
    }

    /// The new SRP salt and verifier and key salt, checked.
    func checkedSRP(version: Int, salt: String, verifier: String, keySalt: String) throws -> ([UInt8], [UInt8], [UInt8]) {
        guard version == SRPPassword.version else { throw RecoveryRefusal.malformed(field: "Version", why: "this server takes SRP auth version \(SRPPassword.version)") }
        func bytes(_ text: String, _ field: String, _ count: Int) throws -> [UInt8] {
            guard text.utf8.count <= (count + 2) / 3 * 4, let data = Data(base64Encoded: text), data.count == count else {
                throw RecoveryRefusal.malformed(field: field, why: "it must be base64 of \(count) bytes")
            }
            return [UInt8](data)
        }
        let srpSalt = try bytes(salt, "Salt", SRPPassword.saltCount)
        let srpVerifier = try bytes(verifier, "Verifier", SRPGroup.byteCount)
        guard (try? SRPServer(group: backend.srp.group, verifier: srpVerifier)) != nil else {
            throw RecoveryRefusal.malformed(field: "Verifier", why: "it must be a number in 2..<N of the server's group")
        }
        return (srpSalt, srpVerifier, try bytes(keySalt, "KeySalt", MailboxKey.keySaltCount))
    }

    /// Deletes every session of the account (their push subscriptions go with them); returns
    /// their ids, whose push inboxes the caller removes after the commit.
    static func endSessions(_ db: any StorageConnection, userID: String) throws -> [String] {
        let ids = try String.fetchAll(db, sql: "SELECT id FROM sessions WHERE userId = ?", arguments: [userID])
        try db.execute(sql: "DELETE FROM sessions WHERE userId = ?", arguments: [userID])
        return ids
    }
}
