import Hummingbird
import RampartAPI
import RampartCore

/// Sign-up made on the device: `GET /v1/signup` (the signed modulus, the domain, whether an
/// invitation is needed) and `POST /v1/signup/accounts` (``SignupRequest`` → ``SignupResponse``).
/// Public routes; every attempt counts against the client address's sign-up throttle before
/// anything is checked.
///
/// Trust-model rows **server (zero access)** (the body holds an SRP verifier, salts, a public key
/// and a passphrase-locked private key; no password) and **transport (network), low trust** (a
/// refused sign-up is a 4xx with a ``SignupRefusal`` code and sentence, and creates nothing).
struct SignupRoutes {
    let backend: Backend

    /// The largest sign-up body (two armored keys of about 1 KiB, base64 salts and verifier).
    static let maximumBody = 96 * 1024

    var collection: RouteCollection<APIRequestContext> {
        let routes = RouteCollection(context: APIRequestContext.self)
        routes.get(RouterPath(APIRoute.signupInfo)) { _, _ in
            try APIIO.json(SignupInfoResponse(modulus: backend.srp.signedModulus, domains: [backend.signup.domain],
                                              invitationRequired: !backend.signup.open))
        }
        routes.post(RouterPath(APIRoute.signup)) { request, context in
            do {
                try backend.signupThrottle.admit(context.remoteAddress ?? "unknown")
                let body = try await APIIO.decode(SignupRequest.self, from: request, limit: Self.maximumBody)
                let created = try backend.accounts.signUp(body, group: backend.srp.group, policy: backend.signup)
                backend.logger.info("account created", metadata: ["user": "\(created.userId)"])
                return try APIIO.json(created)
            } catch let refusal as SignupRefusal {
                backend.logger.notice("sign-up refused", metadata: ["error": "\(refusal.code)"])
                throw ServerError.signupRefused(refusal)
            }
        }
        return routes
    }
}
