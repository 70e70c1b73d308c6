import Foundation
import Hummingbird
import NIOCore
import RampartCore

/// The per-request context of the API: Hummingbird's core storage plus the caller's session,
/// resolved once by ``SessionMiddleware`` before any handler of a protected route runs.
///
/// Trust-model row **access token (high)**: a handler of a protected route reads
/// ``session`` and never looks at the `Authorization` header itself, so no route can forget the
/// check or do it differently.
struct APIRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The session the bearer token belongs to; set by ``SessionMiddleware``, `nil` on the public
    /// routes (login, refresh).
    var authenticated: AuthenticatedSession?
    /// The client's IP address (for the per-address login throttle); nil if the channel has none.
    var remoteAddress: String?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        authenticated = nil
        remoteAddress = source.channel.remoteAddress?.ipAddress
    }

    /// The caller's session.
    /// - Throws: ``ServerError/invalidToken`` if the route was not behind ``SessionMiddleware``
    ///   (a wiring mistake answers 401, never an unauthenticated success).
    var session: AuthenticatedSession {
        get throws {
            guard let authenticated else { throw ServerError.invalidToken }
            return authenticated
        }
    }
}

/// Resolves `Authorization: Bearer <access token>` to a session, once per request, and stores it
/// in the ``APIRequestContext``; answers 401 (``ServerError/invalidToken`` or
/// ``ServerError/tokenExpired``) before the handler runs when the token is missing, unknown,
/// ended or expired.
///
/// Trust-model row **access token (high)**: every route but login and refresh sits behind it.
struct SessionMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext
    let accounts: Accounts

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.authenticated = try accounts.authenticate(accessToken: try Self.bearerToken(request))
        return try await next(request, context)
    }

    /// The bearer token of the request (at most 256 bytes).
    /// - Throws: ``ServerError/invalidToken``.
    static func bearerToken(_ request: Request) throws -> String {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else { throw ServerError.invalidToken }
        let token = String(header.dropFirst("Bearer ".count)).trimmingCharacters(in: .whitespaces)
        guard !token.isEmpty, token.utf8.count <= 256 else { throw ServerError.invalidToken }
        return token
    }
}

/// One area's routes, every one behind ``SessionMiddleware``: the conforming type only adds its
/// routes, and ``collection`` puts the middleware in front of them.
///
/// Trust-model row **access token (high)**: an area cannot be added without the session check.
protocol SessionRoutes {
    var backend: Backend { get }
    /// Adds the area's routes; each handler finds the caller's session in `context.session`.
    func add(to routes: RouteCollection<APIRequestContext>)
}

extension SessionRoutes {
    /// The area's routes behind ``SessionMiddleware``, for ``APIRouter``.
    var collection: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        routes.add(middleware: SessionMiddleware(accounts: backend.accounts))
        routes.add(middleware: LimitsMiddleware(backend: backend))
        add(to: routes)
        return routes
    }
}
