import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The request context of the web app: Hummingbird's storage, the connection's ports (for the
/// peer check), the session the guard found, and a form body the guard already read.
public struct WebContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The client's port and the server's, of this connection.
    var clientPort: Int?
    var serverPort: Int?
    /// Set by ``WebGuard`` before any handler of a signed-in page runs.
    var session: WebAccessControl.Session?
    /// The fields of an `application/x-www-form-urlencoded` body (read by the guard for its CSRF field).
    var form: [String: [String]] = [:]

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        clientPort = source.channel.remoteAddress?.port
        serverPort = source.channel.localAddress?.port
    }

    /// The first value of form field `name`.
    func field(_ name: String) -> String? { form[name]?.first }
}

/// Every request passes here first: Host (DNS rebinding), the peer's uid (other local users),
/// the session cookie, and for requests that change state Origin and the CSRF token; every
/// answer, refusals included, gets the app's security headers.
///
/// Trust-model row **local web access**: one place decides, so no route can forget a check.
/// Answers: 403 for a foreign Host, another uid, a foreign Origin or a missing CSRF token; 401
/// without a valid session (the login route, which takes the one-time token, and the static
/// assets are the only ones reachable before it).
struct WebGuard: RouterMiddleware {
    typealias Context = WebContext
    let access: WebAccessControl
    /// The largest form body read here (larger bodies are uploads, which carry the header token).
    static let maximumFormBody = 24 * 1024 * 1024

    /// `/viewer/TOKEN/cid/KEY`: a rendering's embedded image.
    static func isEmbeddedImage(_ path: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        return parts.count == 5 && parts[0].isEmpty && parts[1] == "viewer" && parts[3] == "cid" && !parts[2].isEmpty && !parts[4].isEmpty
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await decide(request, context: context, next: next)
        WebHeaders.apply(to: &response, path: request.uri.path)
        return response
    }

    private func decide(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        var request = request
        guard access.hostIsAllowed(request.head.authority) else {
            return WebHeaders.refusal(.forbidden, "This server answers only to 127.0.0.1, localhost or [::1] at port \(access.port).")
        }
        if let client = context.clientPort, let server = context.serverPort,
           !LoopbackPeer.isSameUser(clientPort: client, serverPort: server) {
            return WebHeaders.refusal(.forbidden, "This app serves only the user who started it.")
        }
        let path = request.uri.path
        // The viewer frame's remote resources and embedded images: the sandboxed frame sends no
        // cookie; a token of one rendering authorizes them (RemoteRoutes).
        if path == "/login" || path.hasPrefix("/static/") || path.hasPrefix("/remote/") || Self.isEmbeddedImage(path) {
            return try await next(request, context)
        }
        let changesState = request.method != .get && request.method != .head
        var csrf = request.headers[HTTPField.Name(WebAccessControl.csrfHeader)!]
        let fetchSite = request.headers[HTTPField.Name("Sec-Fetch-Site")!]
        if changesState, access.originIsAllowed(request.headers[.origin], fetchSite: fetchSite),
           request.headers[.contentType]?.hasPrefix("application/x-www-form-urlencoded") == true {
            let buffer = try await request.body.collect(upTo: Self.maximumFormBody)
            context.form = FormFields.parse(String(buffer: buffer))
            csrf = csrf ?? context.field(WebAccessControl.csrfField)
            request.body = .init(buffer: buffer)
        }
        let cookie = request.cookies[WebAccessControl.cookieName]?.value
        switch access.decide(host: request.head.authority, origin: request.headers[.origin], fetchSite: fetchSite, cookie: cookie,
                             changesState: changesState, csrf: csrf) {
        case .forbidden(let why):
            return WebHeaders.refusal(.forbidden, why)
        case .unauthorized(let why):
            return WebHeaders.refusal(.unauthorized, why)
        case .allowed(let session):
            context.session = session
            do {
                return try await next(request, context)
            } catch let error as HTTPError {
                return WebHeaders.refusal(error.status, error.body ?? "\(error.status.reasonPhrase)")
            }
        }
    }
}

/// `application/x-www-form-urlencoded` fields.
enum FormFields {
    static func parse(_ body: String) -> [String: [String]] {
        var fields: [String: [String]] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            let name = decode(parts[0])
            fields[name, default: []].append(parts.count > 1 ? decode(parts[1]) : "")
        }
        return fields
    }
}

/// The headers of the app's answers.
///
/// Trust-model row **local web access**: a strict CSP on the app's own pages (its scripts and
/// styles from its own files only, no inline script, no framing by anyone: `frame-ancestors
/// 'none'`), `nosniff`, `no-referrer`, `no-store`, and no CORS header ever. The sanitized mail
/// documents under `/viewer/` keep the viewer's CSP (MailSafety's stages), set by their route.
enum WebHeaders {
    /// The CSP of the app's pages.
    static let appPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-src 'self'; "
        + "connect-src 'self'; form-action 'self'; base-uri 'none'; object-src 'none'; frame-ancestors 'none'"

    static func apply(to response: inout Response, path: String) {
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        response.headers[.cacheControl] = "no-store"
        response.headers[HTTPField.Name("Cross-Origin-Opener-Policy")!] = "same-origin"
        if response.headers[HTTPField.Name("Cross-Origin-Resource-Policy")!] == nil {
            response.headers[HTTPField.Name("Cross-Origin-Resource-Policy")!] = "same-origin"
        }
        if response.headers[.contentSecurityPolicy] == nil {
            response.headers[.contentSecurityPolicy] = appPolicy
            response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        }
    }

    /// A refusal page (401 or 403) that says what to do.
    static func refusal(_ status: HTTPResponse.Status, _ message: String) -> Response {
        let page = WebPage.document(title: "\(status.code) \(status.reasonPhrase)", csrf: nil, nav: false,
                                    body: "<h1>\(status.code) \(WebPage.escape(status.reasonPhrase))</h1><p role=\"alert\">\(WebPage.escape(message))</p>")
        return html(page, status: status)
    }

    static func html(_ text: String, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "text/html; charset=utf-8"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    static func redirect(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location])
    }

    static func json(_ text: String) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
