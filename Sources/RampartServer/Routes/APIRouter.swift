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
    /// SRP login: signed modulus, verifiers, the key pending logins are sealed with.
    let srp: SRPAuthority
    /// The abuse limits and their state in the database (``ServerLimits``; defaults and environment variables).
    let limits: ServerLimitEnforcer
    /// Pending SRP logins, in the database, single-use across processes (``SRPSessionStore``).
    let srpSessions: SRPSessionStore
    /// Failed SRP proofs per username and per client address, in the database.
    let srpThrottle: SRPThrottle
    /// Who may sign up and the domain of new addresses (``SignupPolicy``).
    var signup = SignupPolicy()
    /// Sign-up attempts per client address (``ServerLimits/signupsPerHourPerAddress``), in the database.
    let signupThrottle: SignupThrottle
    /// Recovery and reset attempts, per username and per client address (``RecoveryRoutes``), in the database.
    let recoveryThrottle: SRPThrottle
    /// Recoveries in progress (``RecoveryNonces``).
    let recoveryNonces: RecoveryNonces
    /// The key log (key transparency): its tree, signed heads and cosignatures (``KeyLog``).
    var keyLog: KeyLog?
    /// The remote-content proxy's fetcher (``RemoteFetcher``): public destinations only, unless
    /// the operator allowed a local one for tests (`--proxy-allow-local`).
    var remoteFetcher = RemoteFetcher()

    /// The parts, with the login state and the limits' counters kept in `mailbox`'s database.
    init(accounts: Accounts, mailbox: Mailbox, drive: DriveStorage, push: PushDelivery, logger: Logger, srp: SRPAuthority,
         limits: ServerLimits, clock: any RampartClock) {
        self.accounts = accounts; self.mailbox = mailbox; self.drive = drive; self.push = push; self.logger = logger; self.srp = srp
        let store = mailbox.store
        self.limits = ServerLimitEnforcer(limits, store: store, nameKey: srp.counterKey)
        srpSessions = SRPSessionStore(store: store, group: srp.group, key: srp.pendingLoginKey, clock: clock)
        srpThrottle = SRPThrottle(store: store, scope: "srp", nameKey: srp.counterKey, clock: clock)
        signupThrottle = SignupThrottle(store: store, limit: limits.signupsPerHourPerAddress, nameKey: srp.counterKey, clock: clock)
        // Recovery attempts follow the real time, as before (its nonces do too).
        recoveryThrottle = SRPThrottle(store: store, scope: "recovery", nameKey: srp.counterKey, clock: SystemClock())
        recoveryNonces = RecoveryNonces(store: store, clock: SystemClock())
    }
}

/// Turns every error into an ``APIErrorBody`` with the right status, and logs one line per request
/// (method, route pattern, status, time) — never a header, a query, a body or a token.
///
/// Trust-model row **transport (network), low trust**: bad requests get a 4xx and nothing else;
/// logs hold no plaintext or secret.
struct APIErrorMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response: Response
        var code: String?
        do {
            response = try await next(request, context)
        } catch let error as ServerError {
            code = error.code
            response = APIIO.errorResponse(error.status, error.body)
        } catch StorageError.connectionLost {
            // The database went away mid-request (a PostgreSQL restart): the transaction was rolled
            // back, nothing of it is stored, and the same request can be sent again.
            code = "server.unavailable"
            var unavailable = APIIO.errorResponse(.serviceUnavailable, APIErrorBody(
                code: "server.unavailable", message: "The server's database is unavailable for a moment; nothing was changed. Try again."))
            unavailable.headers[.retryAfter] = "1"
            response = unavailable
        } catch let error as HTTPError {
            let body: APIErrorBody
            switch error.status.code {
            case 404: body = APIErrorBody(code: "route.notFound", message: "No such API route: \(request.method.rawValue) \(request.uri.path.prefix(200))")
            case 413: body = ServerError.payloadTooLarge(limit: APIIO.maximumJSONBody).body
            case 400: body = ServerError.badRequest("the request is malformed").body
            default: body = APIErrorBody(code: "http.\(error.status.code)", message: error.status.reasonPhrase)
            }
            code = body.error.code
            response = APIIO.errorResponse(error.status, body)
        } catch {
            code = "server.internal"
            logger.error("internal error", metadata: ["type": "\(type(of: error))"])
            response = APIIO.errorResponse(.internalServerError,
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

/// The routes of the API (``APIRoute``), version 1: one ``RouteCollection`` per area (auth, mail,
/// drive, push) on one router, behind the error and request-log middleware.
///
/// Trust-model rows **access token (high)** and **database (critical)**: every route but login
/// and refresh sits behind ``SessionMiddleware`` (a valid, unexpired access token, resolved once
/// per request into the ``APIRequestContext``), and a user reaches only their own objects (every
/// query is scoped by the session's user id; another user's id answers 404).
enum APIRouter {
    static func build(_ backend: Backend) -> Router<APIRequestContext> {
        let router = Router(context: APIRequestContext.self)
        router.add(middleware: APIErrorMiddleware(logger: backend.logger))
        router.addRoutes(AuthRoutes(backend: backend).collection)
        router.addRoutes(SRPAuthRoutes(backend: backend, srp: backend.srp).collection)
        router.addRoutes(SignupRoutes(backend: backend).collection)
        router.addRoutes(RecoveryRoutes(backend: backend).collection)
        router.addRoutes(MailRoutes(backend: backend).collection)
        router.addRoutes(MailTransferRoutes(backend: backend).collection)
        router.addRoutes(KeyRoutes(backend: backend).collection)
        router.addRoutes(KeyLogRoutes(backend: backend).collection)
        router.addRoutes(KeyLogSessionRoutes(backend: backend).collection)
        router.addRoutes(PushRoutes(backend: backend).collection)
        router.addRoutes(DriveRoutes(backend: backend).collection)
        return router
    }
}
