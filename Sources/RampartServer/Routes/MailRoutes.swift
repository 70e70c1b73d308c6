import Hummingbird
import RampartAPI

/// Sync (events, labels), messages, attachments and sending.
///
/// Trust-model rows **access token (high)** (behind ``SessionMiddleware``) and **database
/// (critical)**: every query is scoped by the session's user id; bodies and attachments leave
/// the server as the OpenPGP messages (`MailPart`) they were stored as.
struct MailRoutes: SessionRoutes {
    let backend: Backend

    func add(to routes: RouteCollection<APIRequestContext>) {
        let mailbox = backend.mailbox

        // MARK: Sync
        routes.get(RouterPath(APIRoute.events)) { request, context in
            let since = try APIIO.integer(request, "since", default: 0, range: 0...Int64.max)
            return try APIIO.json(try mailbox.events(userID: try context.session.userID, since: since))
        }
        routes.get(RouterPath(APIRoute.labels)) { _, context in
            try APIIO.json(LabelListResponse(labels: try mailbox.labels(userID: try context.session.userID)))
        }

        // MARK: Messages
        routes.get(RouterPath(APIRoute.messages)) { request, context in
            let page = try APIIO.integer(request, "page", default: 0, range: 0...1_000_000)
            let size = try APIIO.integer(request, "pageSize", default: 50, range: 1...Int64(Mailbox.maximumPageSize))
            let label = request.uri.queryParameters.get("label")
            return try APIIO.json(try mailbox.list(userID: try context.session.userID, label: label, page: Int(page), pageSize: Int(size)))
        }
        routes.get(RouterPath(APIRoute.message(":id"))) { _, context in
            try APIIO.json(try mailbox.message(userID: try context.session.userID, id: try context.parameters.require("id")))
        }
        routes.delete(RouterPath(APIRoute.message(":id"))) { _, context in
            try mailbox.delete(userID: try context.session.userID, id: try context.parameters.require("id"))
            return try APIIO.json(OKResponse())
        }
        routes.post(RouterPath(APIRoute.markRead(":id"))) { request, context in
            // `?unread=1` marks it unread again (a mail program clearing \Seen through the bridge).
            let unread = try APIIO.integer(request, "unread", default: 0, range: 0...1) == 1
            try mailbox.markRead(userID: try context.session.userID, id: try context.parameters.require("id"), unread: unread)
            return try APIIO.json(OKResponse())
        }
        routes.post(RouterPath(APIRoute.messageLabels(":id"))) { request, context in
            let change = try await APIIO.decode(LabelChangeRequest.self, from: request)
            try mailbox.changeLabels(userID: try context.session.userID, id: try context.parameters.require("id"), change)
            return try APIIO.json(OKResponse())
        }
        routes.get(RouterPath(APIRoute.attachment(":id"))) { _, context in
            APIIO.binary(try mailbox.attachment(userID: try context.session.userID, id: try context.parameters.require("id")))
        }
        routes.post(RouterPath(APIRoute.send)) { request, context in
            let session = try context.session
            let send = try await APIIO.decode(SendRequest.self, from: request)
            let info = Accounts.userInfo(try backend.accounts.userRow(session.userID))
            let sender = Correspondent(name: info.displayName, address: info.addresses.first ?? info.username)
            return try APIIO.json(try mailbox.send(send, from: session.userID, sender: sender, senderAddresses: info.addresses))
        }

        // MARK: Remote content (the proxy: RemoteFetcher)
        routes.post(RouterPath(APIRoute.remoteFetch)) { request, context in
            try backend.limits.admitRemoteFetch(user: try context.session.userID)  // per user, before any fetch
            return try await backend.remoteFetcher.answer(request)
        }
    }
}
