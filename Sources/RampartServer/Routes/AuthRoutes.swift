import Hummingbird
import RampartAPI
import RampartCore

/// Token refresh, logout and the account's sessions (login is SRP: ``SRPAuthRoutes``; no route
/// takes a password).
///
/// Trust-model rows **access token (high)** (SRP login and refresh are the only public routes; logout
/// ends the session and its tokens at once; a session can end another of the same user, never
/// one of another user) and **push payload key** (logout also removes the session's push inbox).
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
        // The account's sessions: listed, and one ended from another (as Proton's "sessions" list).
        routes.get(RouterPath(APIRoute.sessions)) { _, context in
            try APIIO.json(SessionListResponse(sessions: try backend.accounts.sessions(of: try context.session)))
        }
        routes.delete(RouterPath(APIRoute.session(":id"))) { _, context in
            let id = try context.parameters.require("id")
            try backend.accounts.endSession(id, of: try context.session)
            backend.push.removeInbox(for: id)
            return try APIIO.json(OKResponse())
        }
        return routes
    }
}
