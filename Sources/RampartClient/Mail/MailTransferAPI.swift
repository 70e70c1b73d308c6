import Foundation
import RampartAPI

extension APIClient {
    /// `POST /v1/mail/import`: stores one message sealed on this device to the user's own key.
    public func importMessage(_ request: ImportRequest) async throws -> ImportResponse {
        try await json(.POST, APIRoute.importMessage, body: request)
    }

    /// `POST /v1/mail/import/known`: which of `ids` the server already has for this user.
    public func knownMessages(_ ids: [String]) async throws -> Set<String> {
        var known: Set<String> = []
        var start = 0
        while start < ids.count {
            let batch = Array(ids[start..<min(ids.count, start + KnownMessagesRequest.maximumIDs)])
            let response: KnownMessagesResponse = try await json(.POST, APIRoute.importKnown, body: KnownMessagesRequest(ids: batch))
            known.formUnion(response.known)
            start += batch.count
        }
        return known
    }

    /// `GET /v1/messages/<id>/original`: the sealed original RFC 5322 bytes of a message.
    public func original(of messageID: String) async throws -> Data {
        try await send(.GET, APIRoute.messageOriginal(Self.escape(messageID))).body
    }

    /// `POST /v1/labels`: the label with this name, created if missing.
    public func label(named name: String) async throws -> APILabel {
        try await json(.POST, APIRoute.labels, body: LabelCreateRequest(name: name))
    }
}

extension APIClient {
    /// `GET /v1/messages?label=…`: one page of the user's messages, newest first.
    public func messages(label: String?, page: Int, pageSize: Int = 200) async throws -> MessageListResponse {
        var query = "?page=\(page)&pageSize=\(pageSize)"
        if let label { query += "&label=\(Self.escape(label))" }
        return try await json(.GET, APIRoute.messages + query)
    }
}

extension APIClient {
    /// `POST /v1/messages/<id>/labels`: adds and removes labels of one message.
    public func changeLabels(of messageID: String, add: [String], remove: [String] = []) async throws {
        _ = try await send(.POST, APIRoute.messageLabels(Self.escape(messageID)),
                           body: try Self.encoder.encode(LabelChangeRequest(add: add, remove: remove)))
    }
}
