import Foundation
import Hummingbird
import Logging
import NIOCore
import PushCrypto
import RampartAPI
import RampartCore

/// The parts a route handler works with.
struct Backend: Sendable {
    let accounts: Accounts
    let mailbox: Mailbox
    let drive: DriveStorage
    let push: PushDelivery
    let logger: Logger
}

/// Turns every error into an ``APIErrorBody`` with the right status, and logs one line per request
/// (method, route pattern, status, time) — never a header, a query, a body or a token.
///
/// Trust-model row **transport (network), low trust**: bad requests get a 4xx and nothing else;
/// logs hold no plaintext or secret.
struct APIErrorMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response: Response
        var code: String?
        do {
            response = try await next(request, context)
        } catch let error as ServerError {
            code = error.code
            response = APIRouter.errorResponse(error.status, error.body)
        } catch let error as HTTPError {
            let body: APIErrorBody
            switch error.status.code {
            case 404: body = APIErrorBody(code: "route.notFound", message: "No such API route: \(request.method.rawValue) \(request.uri.path.prefix(200))")
            case 413: body = ServerError.payloadTooLarge(limit: APIRouter.maximumJSONBody).body
            case 400: body = ServerError.badRequest("the request is malformed").body
            default: body = APIErrorBody(code: "http.\(error.status.code)", message: error.status.reasonPhrase)
            }
            code = body.error.code
            response = APIRouter.errorResponse(error.status, body)
        } catch {
            code = "server.internal"
            logger.error("internal error", metadata: ["type": "\(type(of: error))"])
            response = APIRouter.errorResponse(.internalServerError,
                                               APIErrorBody(code: "server.internal", message: "The server failed to answer this request."))
        }
        let elapsed = ContinuousClock.now - start
        var metadata: Logger.Metadata = [
            "method": "\(request.method.rawValue)",
            "route": "\(context.endpointPath ?? "-")",
            "status": "\(response.status.code)",
            "ms": "\(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)",
        ]
        if let code { metadata["error"] = "\(code)" }
        logger.info("request", metadata: metadata)
        return response
    }
}

/// The routes of the API (``APIRoute``), version 1.
///
/// Trust-model rows **access token (high)** and **database (critical)**: every route but login
/// and refresh requires a valid, unexpired access token, and a user reaches only their own
/// objects (every query is scoped by the session's user id; another user's id answers 404).
enum APIRouter {
    /// The largest JSON body accepted (a send with attachments included).
    static let maximumJSONBody = 16 * 1024 * 1024

    static func build(_ backend: Backend) -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: APIErrorMiddleware(logger: backend.logger))

        // MARK: Authentication
        router.post(RouterPath(APIRoute.login)) { request, _ in
            let login = try await decode(LoginRequest.self, from: request)
            guard !login.username.isEmpty, login.username.utf8.count <= 256, login.password.utf8.count <= 1024 else {
                throw ServerError.badRequest("username and password must be 1–256 and at most 1024 bytes")
            }
            let password = SecretBytes(copying: Array(login.password.utf8))
            defer { password.wipe() }
            do {
                let response = try backend.accounts.login(username: login.username, password: password)
                backend.logger.info("login succeeded", metadata: ["user": "\(response.userId)", "session": "\(response.sessionId)"])
                return try json(response)
            } catch let error as ServerError {
                backend.logger.notice("login refused", metadata: ["error": "\(error.code)"])
                throw error
            }
        }
        router.post(RouterPath(APIRoute.refresh)) { request, _ in
            let refresh = try await decode(RefreshRequest.self, from: request)
            return try json(try backend.accounts.refresh(refreshToken: refresh.refreshToken))
        }
        router.post(RouterPath(APIRoute.logout)) { request, _ in
            let session = try authenticate(request, backend)
            try backend.accounts.logout(session)
            backend.push.removeInbox(for: session.sessionID)
            backend.logger.info("logout", metadata: ["session": "\(session.sessionID)"])
            return try json(OKResponse())
        }

        // MARK: Sync
        router.get(RouterPath(APIRoute.events)) { request, _ in
            let session = try authenticate(request, backend)
            let since = try integer(request, "since", default: 0, range: 0...Int64.max)
            return try json(try backend.mailbox.events(userID: session.userID, since: since))
        }
        router.get(RouterPath(APIRoute.labels)) { request, _ in
            let session = try authenticate(request, backend)
            return try json(LabelListResponse(labels: try backend.mailbox.labels(userID: session.userID)))
        }

        // MARK: Messages
        router.get(RouterPath(APIRoute.messages)) { request, _ in
            let session = try authenticate(request, backend)
            let page = try integer(request, "page", default: 0, range: 0...1_000_000)
            let size = try integer(request, "pageSize", default: 50, range: 1...Int64(Mailbox.maximumPageSize))
            let label = request.uri.queryParameters.get("label")
            return try json(try backend.mailbox.list(userID: session.userID, label: label, page: Int(page), pageSize: Int(size)))
        }
        router.get(RouterPath(APIRoute.message(":id"))) { request, context in
            let session = try authenticate(request, backend)
            return try json(try backend.mailbox.message(userID: session.userID, id: try context.parameters.require("id")))
        }
        router.delete(RouterPath(APIRoute.message(":id"))) { request, context in
            let session = try authenticate(request, backend)
            try backend.mailbox.delete(userID: session.userID, id: try context.parameters.require("id"))
            return try json(OKResponse())
        }
        router.post(RouterPath(APIRoute.markRead(":id"))) { request, context in
            let session = try authenticate(request, backend)
            try backend.mailbox.markRead(userID: session.userID, id: try context.parameters.require("id"))
            return try json(OKResponse())
        }
        router.post(RouterPath(APIRoute.messageLabels(":id"))) { request, context in
            let session = try authenticate(request, backend)
            let change = try await decode(LabelChangeRequest.self, from: request)
            try backend.mailbox.changeLabels(userID: session.userID, id: try context.parameters.require("id"), change)
            return try json(OKResponse())
        }
        router.get(RouterPath(APIRoute.attachment(":id"))) { request, context in
            let session = try authenticate(request, backend)
            return binary(try backend.mailbox.attachment(userID: session.userID, id: try context.parameters.require("id")))
        }
        router.post(RouterPath(APIRoute.send)) { request, _ in
            let session = try authenticate(request, backend)
            let send = try await decode(SendRequest.self, from: request)
            let row = try backend.accounts.userRow(session.userID)
            let info = Accounts.userInfo(row)
            let sender = Correspondent(name: info.displayName, address: info.addresses.first ?? info.username)
            return try json(try backend.mailbox.send(send, from: session.userID, sender: sender))
        }

        // MARK: Push
        router.post(RouterPath(APIRoute.pushSubscriptions)) { request, _ in
            let session = try authenticate(request, backend)
            let registration = try await decode(PushRegistration.self, from: request)
            try backend.push.register(registration, for: session)
            return try json(OKResponse())
        }

        // MARK: Drive
        router.get(RouterPath(APIRoute.driveVolume)) { request, _ in
            let session = try authenticate(request, backend)
            return try json(try backend.drive.volume(userID: session.userID))
        }
        router.post(RouterPath(APIRoute.driveBlocks)) { request, _ in
            let session = try authenticate(request, backend)
            let data = try await body(request, limit: DriveStorage.maximumBlockSize)
            return try json(try backend.drive.storeBlock(userID: session.userID, data: data))
        }
        router.get(RouterPath(APIRoute.driveBlock(":id"))) { request, context in
            let session = try authenticate(request, backend)
            return binary(try backend.drive.block(userID: session.userID, id: try context.parameters.require("id")))
        }
        router.post(RouterPath(APIRoute.driveNodes)) { request, _ in
            let session = try authenticate(request, backend)
            let node = try await decode(DriveNodeRequest.self, from: request)
            return try json(try backend.drive.createNode(userID: session.userID, node))
        }
        router.get(RouterPath(APIRoute.driveNodes)) { request, _ in
            let session = try authenticate(request, backend)
            return try json(try backend.drive.list(userID: session.userID, parent: request.uri.queryParameters.get("parent")))
        }
        router.get(RouterPath(APIRoute.driveNode(":id"))) { request, context in
            let session = try authenticate(request, backend)
            return try json(try backend.drive.node(userID: session.userID, id: try context.parameters.require("id")))
        }
        router.put(RouterPath(APIRoute.driveNode(":id"))) { request, context in
            let session = try authenticate(request, backend)
            let node = try await decode(DriveNodeRequest.self, from: request)
            return try json(try backend.drive.updateNode(userID: session.userID, id: try context.parameters.require("id"), node))
        }
        router.delete(RouterPath(APIRoute.driveNode(":id"))) { request, context in
            let session = try authenticate(request, backend)
            try backend.drive.delete(userID: session.userID, id: try context.parameters.require("id"))
            return try json(OKResponse())
        }
        router.get(RouterPath(APIRoute.driveRevisions(":id"))) { request, context in
            let session = try authenticate(request, backend)
            return try json(try backend.drive.revisions(userID: session.userID, nodeID: try context.parameters.require("id")))
        }
        return router
    }

    // MARK: - Helpers

    static func authenticate(_ request: Request, _ backend: Backend) throws -> AuthenticatedSession {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else { throw ServerError.invalidToken }
        let token = String(header.dropFirst("Bearer ".count)).trimmingCharacters(in: .whitespaces)
        guard !token.isEmpty, token.utf8.count <= 256 else { throw ServerError.invalidToken }
        return try backend.accounts.authenticate(accessToken: token)
    }

    static func body(_ request: Request, limit: Int) async throws -> Data {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw ServerError.payloadTooLarge(limit: limit)
        }
        do {
            let buffer = try await request.body.collect(upTo: limit)
            return Data(buffer.readableBytesView)
        } catch is NIOTooManyBytesError {
            throw ServerError.payloadTooLarge(limit: limit)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw ServerError.payloadTooLarge(limit: limit)
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, from request: Request) async throws -> T {
        var data = try await body(request, limit: maximumJSONBody)
        defer { data.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
        guard !data.isEmpty else { throw ServerError.malformedJSON("the body is empty") }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch DecodingError.keyNotFound(let key, _) {
            throw ServerError.malformedJSON("the field \"\(key.stringValue)\" is missing")
        } catch DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context) {
            throw ServerError.malformedJSON("a field has the wrong type at \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\"")
        } catch DecodingError.dataCorrupted(let context) where !context.codingPath.isEmpty {
            throw ServerError.malformedJSON("the field \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\" is invalid")
        } catch {
            throw ServerError.malformedJSON("the body is not JSON")
        }
    }

    static func integer(_ request: Request, _ name: String, default value: Int64, range: ClosedRange<Int64>) throws -> Int64 {
        guard let text = request.uri.queryParameters.get(name) else { return value }
        guard let number = Int64(text), range.contains(number) else {
            throw ServerError.badRequest("the query parameter \"\(name)\" must be an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }

    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try encoder.encode(value)
        return Response(status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                        body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func binary(_ data: Data) -> Response {
        Response(status: .ok, headers: [.contentType: "application/octet-stream", .cacheControl: "no-store"],
                 body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func errorResponse(_ status: HTTPResponse.Status, _ body: APIErrorBody) -> Response {
        var headers: HTTPFields = [.contentType: "application/json", .cacheControl: "no-store"]
        if status == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        let data = (try? encoder.encode(body)) ?? Data()
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
