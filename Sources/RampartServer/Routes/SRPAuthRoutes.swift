import Foundation
import Hummingbird
import MailboxCrypto
import NIOCore
import OpenPGP
import RampartAPI
import RampartCore
import SRP

/// SRP login with Proton's routes and JSON field names: `POST /auth/info` and `POST /auth`, and
/// the login-password change behind a session (`POST /v1/account/password`).
///
/// Trust-model rows **server (zero access)** (no route takes a password; the server keeps salt +
/// verifier), **access token (high)** (failed proofs are throttled per username and per address,
/// reserved atomically before the proof is checked), **transport (network), low trust** (a bad
/// request gets a 4xx `{"Code", "Error"}` and never a session; an SRP session is single-use and
/// expires; an unknown username is answered exactly like a wrong password).
struct SRPAuthRoutes {
    let backend: Backend
    let srp: SRPAuthority

    /// The largest SRP request body (A and M1 in base64 are about 700 bytes).
    static let maximumBody = 8 * 1024

    var collection: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        routes.post(RouterPath(APIRoute.authInfo)) { request, _ in
            await Self.answering { try await info(request) }
        }
        routes.post(RouterPath(APIRoute.auth)) { request, context in
            await Self.answering { try await auth(request, address: context.remoteAddress ?? "unknown") }
        }
        let protected = RouteCollection(context: APIRequestContext.self)
        protected.add(middleware: SessionMiddleware(accounts: backend.accounts))
        protected.post(RouterPath(APIRoute.accountPassword)) { request, context in
            let session = try context.session
            return await Self.answering { try await changePassword(request, session: session, address: context.remoteAddress ?? "unknown") }
        }
        protected.get(RouterPath(APIRoute.accountKeys)) { _, context in
            let session = try context.session
            return await Self.answering { try APIIO.json(try backend.accounts.keys(userID: session.userID)) }
        }
        protected.post(RouterPath(APIRoute.accountDelete)) { request, context in
            let session = try context.session
            return await Self.answering { try await deleteAccount(request, session: session, address: context.remoteAddress ?? "unknown") }
        }
        routes.addRoutes(protected)
        return routes
    }

    // MARK: /v1/account/delete

    /// Erases the account after an SRP proof of its password on a fresh challenge
    /// (`Accounts.erase`, one transaction).
    func deleteAccount(_ request: Request, session: AuthenticatedSession, address: String) async throws -> Response {
        let body = try await Self.decode(AccountDeleteRequest.self, from: request)
        let clientEphemeral = try Self.bytes(body.clientEphemeral, field: "ClientEphemeral", maximum: SRPGroup.byteCount)
        let clientProof = try Self.bytes(body.clientProof, field: "ClientProof", maximum: SRPGroup.byteCount)
        let username: String = try backend.accounts.userRow(session.userID)["username"]
        let pending = try takeSession(body.srpSession, username: username)
        guard pending.userID == session.userID else { throw SRPRouteError.invalidSession }
        let proof = try checkProof(pending, clientEphemeral: clientEphemeral, clientProof: clientProof, address: address)
        let sessions = try backend.accounts.store.write { db -> [String] in
            let ids = try String.fetchAll(db, sql: "SELECT id FROM sessions WHERE userId = ?", arguments: [session.userID])
            try Accounts.erase(db, userID: session.userID, now: Int64(backend.accounts.clock.now.timeIntervalSince1970))
            return ids
        }
        for id in sessions { backend.push.removeInbox(for: id) }
        backend.logger.info("account deleted by its user", metadata: ["user": "\(session.userID)"])
        return try APIIO.json(AccountDeleteResponse(serverProof: Self.base64(proof)))
    }

    // MARK: /auth/info

    func info(_ request: Request) async throws -> Response {
        let body = try await Self.decode(SRPAuthInfoRequest.self, from: request)
        let username = try Self.normalized(body.username)
        let (userID, salt, verifier) = try lookUp(username)
        let (session, serverEphemeral) = try backend.srpSessions.add(username: username, userID: userID, verifier: verifier)
        return try APIIO.json(SRPAuthInfoResponse(modulus: srp.signedModulus, serverEphemeral: Self.base64(serverEphemeral),
                                                  version: SRPPassword.version, salt: Self.base64(salt), srpSession: session))
    }

    /// The account's salt and verifier, or stable fake ones for an unknown username (computed for
    /// every ask, so both paths do the same work).
    func lookUp(_ username: String) throws -> (userID: String?, salt: [UInt8], verifier: [UInt8]) {
        let fake = try srp.fakeCredentials(username: username)
        let found = try backend.accounts.store.read { db -> (String, [UInt8], [UInt8])? in
            guard let userID = try String.fetchOne(db, sql: "SELECT id FROM users WHERE username = ?", arguments: [username]),
                  let credentials = try SRPAuthority.credentials(db, userID: userID) else { return nil }
            return (userID, credentials.salt, credentials.verifier)
        }
        guard let found else { return (nil, fake.salt, fake.verifier) }
        return (found.0, found.1, found.2)
    }

    // MARK: /auth

    func auth(_ request: Request, address: String) async throws -> Response {
        let body = try await Self.decode(SRPAuthRequest.self, from: request)
        let username = try Self.normalized(body.username)
        let clientEphemeral = try Self.bytes(body.clientEphemeral, field: "ClientEphemeral", maximum: SRPGroup.byteCount)
        let clientProof = try Self.bytes(body.clientProof, field: "ClientProof", maximum: SRPGroup.byteCount)
        let pending = try takeSession(body.srpSession, username: username)
        let proof = try checkProof(pending, clientEphemeral: clientEphemeral, clientProof: clientProof, address: address)
        guard let userID = pending.userID else { throw ServerError.wrongCredentials }
        let login = try backend.accounts.srpLogin(userID: userID)
        backend.logger.info("login succeeded", metadata: ["user": "\(login.userId)", "session": "\(login.sessionId)"])
        return try APIIO.json(SRPAuthResponse(serverProof: Self.base64(proof), login: login))
    }

    func takeSession(_ id: String, username: String) throws -> SRPPendingLogin {
        guard id.utf8.count == 32, id.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw SRPRouteError.invalidSession
        }
        // Taken out whatever happens next: a session is tried once.
        guard let pending = try backend.srpSessions.take(id), pending.username == username else { throw SRPRouteError.invalidSession }
        return pending
    }

    /// Reserves a throttle slot, then checks M1; a wrong proof and an unknown user fail the same way.
    func checkProof(_ pending: SRPPendingLogin, clientEphemeral: [UInt8], clientProof: [UInt8], address: String) throws -> [UInt8] {
        try backend.srpThrottle.reserve(username: pending.username, address: address)
        let proof: [UInt8]
        do {
            proof = try pending.server.verify(clientEphemeral: clientEphemeral, clientProof: clientProof)
        } catch SRPError.wrongProof {
            backend.logger.notice("login refused", metadata: ["error": "auth.wrongCredentials"])
            throw ServerError.wrongCredentials
        }
        guard pending.userID != nil else { throw ServerError.wrongCredentials }
        // Best effort: a failure leaves the counts higher, never lower.
        try? backend.srpThrottle.succeeded(username: pending.username, address: address)
        return proof
    }

    // MARK: /v1/account/password

    func changePassword(_ request: Request, session: AuthenticatedSession, address: String) async throws -> Response {
        let body = try await Self.decode(SRPChangePasswordRequest.self, from: request)
        let clientEphemeral = try Self.bytes(body.clientEphemeral, field: "ClientEphemeral", maximum: SRPGroup.byteCount)
        let clientProof = try Self.bytes(body.clientProof, field: "ClientProof", maximum: SRPGroup.byteCount)
        let salt = try Self.bytes(body.salt, field: "Salt", maximum: 64)
        let verifier = try Self.bytes(body.verifier, field: "Verifier", maximum: SRPGroup.byteCount)
        guard salt.count >= SRPPassword.saltCount else { throw ServerError.badRequest("the field \"Salt\" must have 10 to 64 bytes") }
        guard verifier.count == SRPGroup.byteCount, (try? SRPServer(group: srp.group, verifier: verifier)) != nil else {
            throw ServerError.badRequest("the field \"Verifier\" must be 256 bytes, a number in 1..<N")
        }
        let row = try backend.accounts.userRow(session.userID)
        let publicKey = row.data("publicKey")
        let userKey = try body.userKey.map { try Self.checkedRelock($0, publicKey: try PGPPublicKey(binary: publicKey)) }
        let pending = try takeSession(body.srpSession, username: row["username"])
        guard pending.userID == session.userID else { throw SRPRouteError.invalidSession }
        let proof = try checkProof(pending, clientEphemeral: clientEphemeral, clientProof: clientProof, address: address)
        let ended = try backend.accounts.store.write { db -> Int in
            try SRPAuthority.store(db, userID: session.userID, salt: salt, verifier: verifier)
            if let userKey {
                // The key checked above must still be the account's (a reset in between rolls all back).
                try db.execute(sql: "UPDATE users SET sealedPrivateKey = ?, keySalt = ? WHERE id = ? AND publicKey = ?",
                               arguments: [Data(userKey.locked.utf8), Data(userKey.keySalt), session.userID, publicKey])
                guard db.changesCount == 1 else { throw ServerError.badRequest("the account's key changed meanwhile; nothing was changed") }
            }
            guard body.endOtherSessions else { return 0 }
            let others = try String.fetchAll(db, sql: "SELECT id FROM sessions WHERE userId = ? AND id != ?",
                                             arguments: [session.userID, session.sessionID])
            try db.execute(sql: "DELETE FROM sessions WHERE userId = ? AND id != ?", arguments: [session.userID, session.sessionID])
            return others.count
        }
        backend.logger.info("login password changed", metadata: ["user": "\(session.userID)", "endedSessions": "\(ended)",
                                                              "userKeyRelocked": "\(userKey != nil)"])
        return try APIIO.json(SRPChangePasswordResponse(serverProof: Self.base64(proof), endedSessions: ended))
    }

    /// A re-locked user key as sign-up and recovery take one: locked in every part, complete,
    /// the account's key (its fingerprint), with a 16-byte key salt; otherwise a 400 naming why.
    static func checkedRelock(_ key: RelockedUserKey, publicKey: PGPPublicKey) throws -> (locked: String, keySalt: [UInt8]) {
        guard key.keySalt.utf8.count <= (MailboxKey.keySaltCount + 2) / 3 * 4, let salt = Data(base64Encoded: key.keySalt),
              salt.count == MailboxKey.keySaltCount else {
            throw ServerError.badRequest("the field \"UserKey.KeySalt\" must be base64 of \(MailboxKey.keySaltCount) bytes")
        }
        do {
            try RecoveryCopies.checkLocked(key.privateKey, publicKey: publicKey, refusal: RecoveryRefusal.keyInvalid)
        } catch let refusal as RecoveryRefusal {
            throw ServerError.badRequest("the field \"UserKey.PrivateKey\" is refused (nothing was changed): \(refusal.message)")
        }
        return (key.privateKey, [UInt8](salt))
    }

    // MARK: Input and errors

    static func decode<T: Decodable>(_ type: T.Type, from request: Request) async throws -> T {
        try await APIIO.decode(type, from: request, limit: maximumBody)
    }

    /// Lower-cased, 1–256 bytes.
    static func normalized(_ username: String) throws -> String {
        guard !username.isEmpty, username.utf8.count <= 256 else { throw ServerError.badRequest("the field \"Username\" must be 1–256 bytes") }
        return username.lowercased()
    }

    /// Strict base64 of at most `maximum` bytes (and at least one).
    static func bytes(_ text: String, field: String, maximum: Int) throws -> [UInt8] {
        guard text.utf8.count <= (maximum + 2) / 3 * 4, let data = Data(base64Encoded: text), !data.isEmpty, data.count <= maximum else {
            throw ServerError.badRequest("the field \"\(field)\" must be base64 of 1 to \(maximum) bytes")
        }
        return [UInt8](data)
    }

    static func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    /// Runs a handler and answers its failure in Proton's shape (`{"Code", "Error"}` + `error`).
    static func answering(_ body: () async throws -> Response) async -> Response {
        do {
            return try await body()
        } catch {
            let (status, code, rampartCode, message) = describe(error)
            return errorResponse(status, SRPErrorBody(code: code, error: message, rampartCode: rampartCode))
        }
    }

    static func describe(_ error: any Error) -> (HTTPResponse.Status, Int, String, String) {
        switch error {
        case let error as SRPRouteError:
            return (.unprocessableContent, SRPAPICode.invalidSession, error.code, error.description)
        case let error as SRPError:
            switch error {
            case .wrongProof:
                let wrong = ServerError.wrongCredentials
                return (.unprocessableContent, SRPAPICode.wrongCredentials, wrong.code, wrong.description)
            case .library:
                return (.internalServerError, SRPAPICode.serverError, error.code, error.description)
            default:
                return (.badRequest, SRPAPICode.invalidInput, error.code, error.description)
            }
        case let error as ServerError:
            switch error {
            case .wrongCredentials: return (.unprocessableContent, SRPAPICode.wrongCredentials, error.code, error.description)
            case .accountDisabled: return (.forbidden, SRPAPICode.wrongCredentials, error.code, error.description)
            case .tooManyAttempts: return (.tooManyRequests, SRPAPICode.tooManyAttempts, error.code, error.description)
            case .badRequest, .malformedJSON, .payloadTooLarge: return (error.status, SRPAPICode.invalidInput, error.code, error.description)
            case .invalidToken, .tokenExpired: return (error.status, SRPAPICode.invalidInput, error.code, error.description)
            default: return (error.status, SRPAPICode.serverError, error.code, error.description)
            }
        default:
            return (.internalServerError, SRPAPICode.serverError, "server.internal", "The server failed to answer this request.")
        }
    }

    static func errorResponse(_ status: HTTPResponse.Status, _ body: SRPErrorBody) -> Response {
        let data = (try? APIIO.encoder.encode(body)) ?? Data()
        return Response(status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                        body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// An `SRPSession` that is unknown, expired, already used, or for another username.
enum SRPRouteError: Error, CustomStringConvertible {
    case invalidSession
    var code: String { "auth.invalidSRPSession" }
    var description: String {
        "The SRP session is unknown, expired or already used. Start the login again (POST /auth/info)."
    }
}

extension Accounts {
    /// Opens a session for an account whose SRP proof matched; the answer the password login gave.
    func srpLogin(userID: String) throws -> LoginResponse {
        let row = try userRow(userID)
        guard (row["disabled"] as Int? ?? 0) == 0 else { throw ServerError.accountDisabled }
        let tokens = try openSession(userID: userID)
        return LoginResponse(userId: userID, tokens: tokens, user: Self.userInfo(row), keys: try keys(userID: userID, row: row))
    }

    /// The keys a login hands out (`GET /v1/account/keys` answers them to a session too): the
    /// user key, locked, with its key salt, and the address keys.
    func keys(userID: String, row: StorageRow? = nil) throws -> UserKeys {
        var keys = try Self.userKeys(try row ?? userRow(userID))
        keys.addressKeys = try store.read { db in try KeyList.records(db, userID: userID) }
        return keys
    }
}
