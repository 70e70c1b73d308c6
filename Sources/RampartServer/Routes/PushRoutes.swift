import Hummingbird
import PushCrypto
import RampartAPI

/// Web Push subscriptions.
///
/// Trust-model row **push payload key**: a session registers its own public key and auth secret
/// (behind ``SessionMiddleware``; ``PushDelivery`` checks the registration names the caller's
/// session and that the key is new).
struct PushRoutes: SessionRoutes {
    let backend: Backend

    func add(to routes: RouteCollection<APIRequestContext>) {
        routes.post(RouterPath(APIRoute.pushSubscriptions)) { request, context in
            let session = try context.session
            let registration = try await APIIO.decode(PushRegistration.self, from: request)
            try backend.push.register(registration, for: session)
            return try APIIO.json(OKResponse())
        }
    }
}
