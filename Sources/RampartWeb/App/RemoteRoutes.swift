import Foundation
import HTTPTypes
import Hummingbird
import MailSafety
import NIOCore
import RampartClient
import RampartCore

/// One rendering's permission to load from the app: remote content through the backend and its
/// embedded images from the file vault, bound to the user and the message, to the URLs and images
/// that rendering wrote, and to a short lifetime.
struct ViewerRendering: Sendable {
    /// Where an embedded image comes from.
    enum Embedded: Sendable, Equatable {
        /// A stored attachment: opened through the attachment cache's lease.
        case attachment(id: String)
        /// A part inside PGP-protected mail from outside: opened again from its original.
        case protected(contentID: String)
    }

    let userID: String
    let messageID: String
    let urls: Set<String>
    /// By the last component of its served URL (the Content-ID in base64url).
    let embedded: [String: Embedded]
    let expires: ContinuousClock.Instant
}

/// `GET /remote/TOKEN/RESOURCE`: the viewer frame's remote images and fonts, fetched by the
/// backend; and `GET /viewer/TOKEN/cid/KEY`, its embedded images (``embedded(token:key:)``).
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
        // `:id` as in the viewer's own route `/viewer/:id` (the router allows one name per position): here the token.
        router.get("/viewer/:id/cid/:key") { _, context in
            try await embedded(token: try context.parameters.require("id"), key: try context.parameters.require("key"))
        }
    }

    /// `GET /viewer/TOKEN/cid/KEY`: an embedded (`cid:`) image of one rendering.
    ///
    /// Trust-model rows **inbox (low)** — the CSP's embedded stage names this rendering's path
    /// (and `data:`, for images the body carries inline), and the answer is a raster image (no SVG) with `nosniff` and a
    /// sandbox CSP — and **cleartext files (critical)**: a stored attachment is opened through
    /// the FileVault attachment cache's `CleartextLease`, whose file exists only while it is read
    /// for this answer. Like the remote route, the sandboxed frame sends no cookie: the token,
    /// made for one user and one message and naming the images that rendering wrote, authorizes.
    func embedded(token: String, key: String) async throws -> Response {
        guard let rendering = app.rendering(token), let source = rendering.embedded[key] else {
            return Self.refusal(.notFound, "This image is not part of a current rendering (the link expired or was never made).")
        }
        guard app.account.state() == .unlocked else { return Self.refusal(.forbidden, "Locked.") }
        do {
            var (type, data) = try await app.account.withSession { session in
                try await session.withAPI { api -> (String, Data) in
                    switch source {
                    case .attachment(let id):
                        let vault = try AttachmentVault(account: session.account)
                        let attachment = try vault.metadata(id)
                        guard attachment.messageID == rendering.messageID else { throw ClientError.notFound(kind: "attachment", id: id) }
                        let lease = try await vault.lease(attachment, api: api)
                        return (attachment.mimeType, try lease.use { try Data(contentsOf: $0) })
                    case .protected(let contentID):
                        let reader = MessageReader(account: session.account)
                        guard let part = try await reader.protectedPart(of: rendering.messageID, contentID: contentID, api: api) else {
                            throw ClientError.notFound(kind: "embedded image", id: contentID)
                        }
                        return (part.mimeType, part.bytes)
                    }
                }
            }
            defer { data.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
            type = type.lowercased()
            guard EmbeddedImageStyle.servedImageTypes.contains(type) else {
                return Self.refusal(.unsupportedMediaType, "The embedded part is \(type), not a raster image.")
            }
            return Response(status: .ok, headers: Self.headers(type), body: .init(byteBuffer: ByteBuffer(bytes: data)))
        } catch {
            return Self.refusal(.notFound, "\(error)")
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
