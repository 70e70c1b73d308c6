import Foundation
import HTTPTypes
import Hummingbird
import MailSafety
import NIOCore
import RampartClient
import RampartCore

/// One rendering's permission to fetch remote content through the backend: bound to the user and
/// the message, to the URLs that rendering wrote, and to a short lifetime.
struct RemoteRender: Sendable {
    let userID: String
    let messageID: String
    let urls: Set<String>
    let expires: ContinuousClock.Instant
}

/// `GET /remote/TOKEN/RESOURCE`: the viewer frame's remote images and fonts, fetched by the backend.
///
/// Trust-model row **inbox (low) — IP disclosure by remote content**: once remote content is
/// allowed for a message, the viewer document's remote URLs are rewritten (MailSafety's
/// `RemoteProxy`) to this path with a token of that rendering. The sandboxed frame has an opaque
/// origin and sends no cookie, so the token is what authorizes: it was made for one user and one
/// message, names the URLs that rendering wrote (no other URL is fetched with it) and expires
/// after ``WebApp/remoteTokenLifetime``. The web app asks the backend (`POST /v1/remote/fetch`),
/// which fetches with its own address; the browser never connects to the sender's server.
struct RemoteRoutes {
    let app: WebApp

    func register(_ router: Router<WebContext>) {
        router.get("/remote/:token/:resource") { _, context in
            let token = try context.parameters.require("token")
            let resource = try context.parameters.require("resource")
            guard let url = RemoteProxy.decode(resource), app.remoteRenderAllows(token: token, url: url) else {
                return Self.refusal(.notFound, "This remote resource is not part of a current rendering (the link expired or was never made).")
            }
            guard app.account.state() == .unlocked else { return Self.refusal(.forbidden, "Locked.") }
            do {
                let answer = try await app.account.withSession { session in try await session.withAPI { try await $0.fetchRemote(url) } }
                let type = answer.contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
                guard type != "image/svg+xml", URLPolicy.imageMIMETypes.contains(type) || URLPolicy.fontMIMETypes.contains(type) else {
                    return Self.refusal(.badGateway, "The backend answered with \(type), not an image or font.")
                }
                return Response(status: .ok, headers: Self.headers(type), body: .init(byteBuffer: ByteBuffer(bytes: answer.body)))
            } catch {
                return Self.refusal(.badGateway, "\(error)")
            }
        }
    }

    /// Lockdown CSP (the answer is never a document), and a resource policy that lets the
    /// sandboxed frame (an opaque origin) use it.
    static func headers(_ type: String) -> HTTPFields {
        [.contentType: type, .contentSecurityPolicy: "default-src 'none'; sandbox",
         HTTPField.Name("Cross-Origin-Resource-Policy")!: "cross-origin"]
    }

    static func refusal(_ status: HTTPResponse.Status, _ message: String) -> Response {
        var headers = headers("text/plain; charset=utf-8")
        headers[HTTPField.Name("Cross-Origin-Resource-Policy")!] = "same-origin"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: message)))
    }
}
