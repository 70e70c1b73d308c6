import Hummingbird
import RampartAPI
import RampartCore

/// Login, token refresh and logout.
///
/// Trust-model rows **access token (high)** (login and refresh are the only public routes; logout
/// ends the session and its tokens at once) and **push payload key** (logout also removes the
/// session's push inbox).
struct AuthRoutes {
    let backend: Backend

    var collection: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        routes.post(RouterPath(APIRoute.login)) { request, _ in
            let login = try await APIIO.decode(LoginRequest.self, from: request)
            guard !login.username.isEmpty, login.username.utf8.count <= 256, login.password.utf8.count <= 1024 else {
                throw ServerError.badRequest("username and password must be 1–256 and at most 1024 bytes")
            }
            let password = SecretBytes(copying: Array(login.password.utf8))
            defer { password.wipe() }
            do {
                let response = try backend.accounts.login(username: login.username, password: password)
                backend.logger.info("login succeeded", metadata: ["user": "\(response.userId)", "session": "\(response.sessionId)"])
                return try APIIO.json(response)
            } catch let error as ServerError {
                backend.logger.notice("login refused", metadata: ["error": "\(error.code)"])
                throw error
            }
        }
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
