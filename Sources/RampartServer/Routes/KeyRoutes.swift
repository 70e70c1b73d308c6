import Hummingbird
import RampartAPI

/// The key directory: `GET /v1/keys?address=A` → the OpenPGP public key of the address's key
/// (``PublicKeyResponse``), 404 when no account has the address (or it was removed); and the
/// account's addresses: `GET /v1/addresses`, `POST /v1/addresses` (an ``AddressKey`` made on the
/// device), `DELETE /v1/addresses?address=A`.
///
/// Trust-model rows **access token (high)** (behind ``SessionMiddleware``) and **inbox (low)**:
/// senders encrypt to these keys and readers verify signatures with them; the client pins the
/// first key it sees for an address, so a later substitution by the server is reported, not used.
struct KeyRoutes: SessionRoutes {
    let backend: Backend

    func add(to routes: RouteCollection<APIRequestContext>) {
        let mailbox = backend.mailbox
        routes.get(RouterPath(APIRoute.publicKey)) { request, context in
            _ = try context.session
            guard let address = request.uri.queryParameters.get("address"), Mailbox.looksLikeAddress(address) else {
                throw ServerError.badRequest("give the address to look up as ?address=local@domain")
            }
            return try APIIO.json(try mailbox.publicKey(ofAddress: address))
        }
        let accounts = backend.accounts, domain = backend.signup.domain, logger = backend.logger
        routes.get(RouterPath(APIRoute.addresses)) { _, context in
            try APIIO.json(try accounts.addressList(userID: try context.session.userID))
        }
        routes.post(RouterPath(APIRoute.addresses)) { request, context in
            let session = try context.session
            let body = try await APIIO.decode(AddressKey.self, from: request, limit: SignupRoutes.maximumBody)
            do {
                let list = try accounts.addAddress(body, userID: session.userID, domain: domain)
                logger.info("address added", metadata: ["user": "\(session.userID)"])
                return try APIIO.json(list)
            } catch let refusal as SignupRefusal {
                throw ServerError.signupRefused(refusal)
            }
        }
        routes.delete(RouterPath(APIRoute.addresses)) { request, context in
            let session = try context.session
            guard let address = request.uri.queryParameters.get("address"), Mailbox.looksLikeAddress(address) else {
                throw ServerError.badRequest("give the address to remove as ?address=local@domain")
            }
            let list = try accounts.removeAddress(address, userID: session.userID)
            logger.info("address removed", metadata: ["user": "\(session.userID)"])
            return try APIIO.json(list)
        }
    }
}
