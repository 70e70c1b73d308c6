import Hummingbird
import RampartAPI
import RampartCore

/// Token refresh and logout (login is SRP: ``SRPAuthRoutes``; no route takes a password).
///
/// Trust-model rows **access token (high)** (SRP login and refresh are the only public routes; logout
/// ends the session and its tokens at once) and **push payload key** (logout also removes the
/// session's push inbox).
struct AuthRoutes {
    let backend: Backend

    var collection: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        routes.post(RouterPath(APIRoute.refresh)) { request, _ in
            let refresh = try await APIIO.decode(RefreshRequest.self, from: request)
            return try APIIO.json(try backend.accounts.refresh(refreshToken: refresh.refreshToken))
        }
        // Only the routes added after this line need a session.
        routes.add(middleware: SessionMiddleware(accounts: backend.accounts))
        routes.post(RouterPath(APIRoute.logout)) { _, context in
            let session = try context.session
            try backend.accounts.logout(session)
            backend.push.removeInbox(for: session.sessionID)
            backend.logger.info("logout", metadata: ["session": "\(session.sessionID)"])
            return try APIIO.json(OKResponse())
        }
        return routes
    }
}
