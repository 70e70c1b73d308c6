import Hummingbird
import RampartAPI

/// The key directory: `GET /v1/keys?address=A` → the OpenPGP public key of the account that owns
/// the address (``PublicKeyResponse``), 404 when none does.
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
    }
}
