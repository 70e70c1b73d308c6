import Hummingbird
import RampartAPI

/// Imports, originals and labels by name: mail that crosses the edge of the system.
///
/// Trust-model rows **access token (high)** (behind ``SessionMiddleware``), **inbox (low)** and
/// **database (critical)**: imports arrive sealed by their owner; every query is scoped by the
/// session's user id.
struct MailTransferRoutes: SessionRoutes {
    let backend: Backend

    func add(to routes: RouteCollection<APIRequestContext>) {
        let mailbox = backend.mailbox

        routes.post(RouterPath(APIRoute.importMessage)) { request, context in
            let message = try await APIIO.decode(ImportRequest.self, from: request)
            return try APIIO.json(try mailbox.importMessage(message, userID: try context.session.userID))
        }
        routes.post(RouterPath(APIRoute.importKnown)) { request, context in
            let query = try await APIIO.decode(KnownMessagesRequest.self, from: request)
            return try APIIO.json(try mailbox.known(query, userID: try context.session.userID))
        }
        routes.get(RouterPath(APIRoute.messageOriginal(":id"))) { _, context in
            APIIO.binary(try mailbox.original(userID: try context.session.userID, id: try context.parameters.require("id")))
        }
        routes.post(RouterPath(APIRoute.labels)) { request, context in
            let create = try await APIIO.decode(LabelCreateRequest.self, from: request)
            return try APIIO.json(try mailbox.label(named: create.name, userID: try context.session.userID))
        }
    }
}
