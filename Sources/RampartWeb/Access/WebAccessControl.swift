import Crypto
import Foundation
import RampartCore

/// Who may use `rampart web`: the one-time token, the session cookie it is swapped for, the
/// CSRF token of that session, and the Host and Origin checks every request goes through.
///
/// Trust-model row **local web access (other local users, other sites in the browser)**, the way
/// Jupyter and Syncthing guard a server on loopback:
/// - the one-time token is printed once (and written to a 0600 file); the first request that
///   shows it gets a session cookie (`HttpOnly`, `SameSite=Strict`) and the token is used up;
/// - every request must name the server as `127.0.0.1`, `localhost` or `[::1]` at its own port
///   in `Host` (a DNS-rebinding page names its own host name and is refused);
/// - a request that changes state must come from the app's own origin (`Origin`) and carry the
///   session's CSRF token;
/// - tokens are compared in constant time.
public final class WebAccessControl: @unchecked Sendable {
    /// The cookie that carries the session.
    public static let cookieName = "rampart_web"
    /// The header (for the app's script) or form field (for forms) that carries the CSRF token.
    public static let csrfHeader = "X-Rampart-CSRF"
    public static let csrfField = "csrf"

    /// One browser session: the cookie's value and the CSRF token pages embed.
    public struct Session: Sendable, Equatable {
        public let id: String
        public let csrfToken: String
    }

    /// What the access check decided for a request.
    public enum Decision: Equatable, Sendable {
        case allowed(Session)
        /// 403: the Host header does not name this server (DNS rebinding), or a state-changing
        /// request came from another origin or without the CSRF token.
        case forbidden(String)
        /// 401: no session cookie, a wrong one, or a one-time token that is wrong or used.
        case unauthorized(String)
    }

    public let port: Int
    private let lock = NSLock()
    private var oneTimeToken: String?
    private var sessions: [Session] = []

    /// A fresh access control for a server on `port`, with a new one-time token.
    public init(port: Int) {
        self.port = port
        oneTimeToken = Self.randomToken()
    }

    /// The URL the person opens (once): `http://127.0.0.1:PORT/login?token=…`.
    public func oneTimeURL(token: String) -> String { "http://127.0.0.1:\(port)/login?token=\(token)" }

    /// The one-time token, for the URL printed at start (nil once used).
    public var pendingToken: String? { lock.withLock { oneTimeToken } }

    /// The host names a request may name in `Host`, each with this server's port.
    public var allowedHosts: Set<String> { ["127.0.0.1:\(port)", "localhost:\(port)", "[::1]:\(port)"] }

    /// The origins a state-changing request may come from.
    public var allowedOrigins: Set<String> { Set(allowedHosts.map { "http://" + $0 }) }

    /// Whether `host` (the `Host` header) names this server. Compared case-insensitively, exactly.
    public func hostIsAllowed(_ host: String?) -> Bool {
        guard let host else { return false }
        return allowedHosts.contains(host.lowercased())
    }

    /// Whether a request comes from this app's own pages: its `Origin` is the app's, or — for the
    /// app's own form posts, whose `Origin` the browser sends as `null` because the pages'
    /// referrer policy is `no-referrer` (Fetch, "append a request Origin header") — `Origin: null`
    /// together with `Sec-Fetch-Site: same-origin`, a header no page can set or forge (the
    /// sandboxed viewer's opaque origin is `cross-site`).
    public func originIsAllowed(_ origin: String?, fetchSite: String? = nil) -> Bool {
        guard let origin else { return false }
        if origin == "null" { return fetchSite == "same-origin" }
        return allowedOrigins.contains(origin.lowercased())
    }

    /// Swaps the one-time token for a session: succeeds once, for the right token.
    public func redeem(token: String?) -> Session? {
        lock.withLock {
            guard let token, let expected = oneTimeToken, Self.constantTimeEqual(token, expected) else { return nil }
            oneTimeToken = nil
            let session = Session(id: Self.randomToken(), csrfToken: Self.randomToken())
            sessions.append(session)
            return session
        }
    }

    /// The session whose id the cookie carries.
    public func session(cookie: String?) -> Session? {
        guard let cookie, !cookie.isEmpty else { return nil }
        return lock.withLock { sessions.first { Self.constantTimeEqual($0.id, cookie) } }
    }

    /// The decision for one request (login requests are decided by ``redeem(token:)``).
    /// - Parameters:
    ///   - host: the `Host` header.
    ///   - origin: the `Origin` header.
    ///   - cookie: the session cookie's value.
    ///   - fetchSite: the `Sec-Fetch-Site` header (see ``originIsAllowed(_:fetchSite:)``).
    ///   - changesState: any method but GET and HEAD.
    ///   - csrf: the CSRF token the request carried (header or form field), when it changes state.
    public func decide(host: String?, origin: String?, fetchSite: String? = nil, cookie: String?, changesState: Bool,
                       csrf: String?) -> Decision {
        guard hostIsAllowed(host) else {
            return .forbidden("This server answers only to 127.0.0.1, localhost or [::1] at port \(port).")
        }
        if changesState, !originIsAllowed(origin, fetchSite: fetchSite) {
            return .forbidden("A request that changes something must come from this app's own pages.")
        }
        guard let session = session(cookie: cookie) else {
            return .unauthorized("Not signed in: open the one-time URL `rampart web` printed (run it again for a new one).")
        }
        if changesState, !(csrf.map { Self.constantTimeEqual($0, session.csrfToken) } ?? false) {
            return .forbidden("The request lacks this session's CSRF token.")
        }
        return .allowed(session)
    }

    /// The `Set-Cookie` value for a session: `HttpOnly`, `SameSite=Strict`, whole site path, no
    /// expiry (it ends with the browser session and with the server, which forgets it).
    public static func setCookie(_ session: Session) -> String {
        "\(cookieName)=\(session.id); Path=/; HttpOnly; SameSite=Strict"
    }

    /// 256 random bits, URL-safe base64 without padding.
    static func randomToken() -> String {
        let key = SymmetricKey(size: .bits256)
        let data = key.withUnsafeBytes { Data($0) }
        return data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for i in 0..<x.count { difference |= x[i] ^ y[i] }
        return difference == 0
    }
}
