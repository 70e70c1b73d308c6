import Foundation
import Hummingbird
import OpenPGP
import RampartAPI
import TransparencyLog

/// The key log's public routes (``KeyLogRoute``): the newest cosigned head, the newest signed head
/// (what a witness cosigns next), consistency proofs, and a witness's cosignature.
///
/// Trust-model row **the user's private and public keys (critical when modified: impersonation)**:
/// these are what witnesses and clients check the log with; they reveal sizes and hashes only (the
/// leaves name no address).
struct KeyLogRoutes {
    let backend: Backend

    var collection: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        // The newest witnessed head for clients, the newest signed one for witnesses.
        for (route, witnessed) in [(KeyLogRoute.head, true), (KeyLogRoute.checkpoint, false)] {
            routes.get(RouterPath(route.path)) { _, _ in
                let log = try log(backend)
                return try APIIO.json(KeyLogHeadNote(head: try (witnessed ? log.cosignedHead() : log.checkpoint()).serialized))
            }
        }
        routes.get(RouterPath(KeyLogRoute.consistency.path)) { request, _ in
            let from = try APIIO.integer(request, "from", default: 0, range: 0...Int64.max)
            let to = try APIIO.integer(request, "to", default: 0, range: 0...Int64.max)
            return try APIIO.json(try log(backend).consistency(from: UInt64(from), to: UInt64(to)))
        }
        routes.post(RouterPath(KeyLogRoute.cosignature.path)) { request, _ in
            // A head with a few cosignature lines.
            let body = try await APIIO.decode(KeyLogHeadNote.self, from: request, limit: 16 * 1024)
            try log(backend).addCosignature(body.head)
            return try APIIO.json(OKResponse())
        }
        return routes
    }
}

/// The key log's routes behind a session: a lookup (an address's keys with the proof that they
/// are its newest entry's, in the cosigned head) and the caller's own entries (the self-audit).
///
/// Trust-model rows **the user's private and public keys (critical when modified)** and **access
/// token (high)** (behind ``SessionMiddleware``, like the key directory).
struct KeyLogSessionRoutes: SessionRoutes {
    let backend: Backend

    func add(to routes: RouteCollection<APIRequestContext>) {
        routes.get(RouterPath(KeyLogRoute.lookup.path)) { request, context in
            _ = try context.session
            guard let address = request.uri.queryParameters.get("address"), Mailbox.looksLikeAddress(address) else {
                throw ServerError.badRequest("give the address to look up as ?address=local@domain")
            }
            let keys = try backend.accounts.store.read { db in try KeyLogEntries.currentKeys(db, address: address) }
            let armored = try keys.map { data -> String in
                do { return try PGPPublicKey(binary: data).armored() } catch { throw ServerError.storage("a directory key is unreadable") }
            }
            return try APIIO.json(try log(backend).lookup(address: address, publicKeys: armored))
        }
        routes.get(RouterPath(KeyLogRoute.own.path)) { _, context in
            let userID = try context.session.userID
            let log = try log(backend)
            let head = try log.cosignedHead()
            let size = try Checkpoint(text: head.text).size
            let addresses = try backend.accounts.store.read { db in try KeyLogEntries.addressesEverOwned(db, userID: userID) }
            var entries: [String: [KeyLogProvenEntry]] = [:]
            for address in addresses { entries[address] = try log.entries(of: address, size: size, newestOnly: false) }
            return try APIIO.json(KeyLogEntriesResponse(addresses: entries, head: head.serialized))
        }
    }
}

private func log(_ backend: Backend) throws -> KeyLog {
    guard let log = backend.keyLog else { throw ServerError.notFound("The key log") }
    return log
}
