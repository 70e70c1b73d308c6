import Foundation
import NIOHTTP1

/// One HTTP request for the pinned client.
///
/// Trust-model row: **transport (network), low trust**: the body is written only after the
/// TLS handshake, chain validation and pin check have all succeeded.
public struct PinnedRequest: Sendable {
    /// The HTTP method.
    public var method: HTTPMethod
    /// An `https` URL.
    public var url: URL
    /// Request headers (`Host`, `Content-Length` and `Connection: close` are set by the client).
    public var headers: HTTPHeaders
    /// The body, written only after the connection is validated and pinned.
    public var body: Data?

    /// A request; `GET` without a body by default.
    public init(method: HTTPMethod = .GET, url: URL, headers: HTTPHeaders = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// The server's answer to a ``PinnedRequest``.
///
/// Trust-model row: **transport (network), low trust**: it only exists if it came over a
/// validated and pinned connection.
public struct PinnedResponse: Sendable {
    /// The status code.
    public var status: HTTPResponseStatus
    /// The response headers.
    public var headers: HTTPHeaders
    /// The whole body (at most `maxResponseBytes`).
    public var body: Data
    /// The URL that answered (after same-host redirects).
    public var url: URL
    /// What the pin step concluded for the connection that carried it.
    public var pinVerdict: PinVerdict
}

/// How a ``PinnedHTTPClient`` connects and what it accepts.
///
/// Trust-model row: **transport (network), low trust — a person in the middle**.
public struct PinnedHTTPClientConfiguration: Sendable {
    /// The pins of every backend domain.
    public var policy: PinningPolicy
    /// What chain validation anchors to.
    public var trustRoots: PinnedTrustRoots
    /// Hosts that no policy covers (default: refused).
    public var unpinnedHosts: UnpinnedHostHandling
    /// Where pin violation reports go (none by default; events are emitted either way).
    public var reportSink: (any PinViolationReportSink)?
    /// Connect here instead of resolving the host (host name → IP address), like curl's
    /// `--resolve`: TLS still sends and checks the host name. Used for a local backend and tests.
    public var connectAddressOverrides: [String: String]
    /// Time allowed for the TCP connection.
    public var connectTimeout: Duration
    /// Time allowed for one whole exchange (handshake, request, response).
    public var requestTimeout: Duration
    /// Largest response body accepted.
    public var maxResponseBytes: Int
    /// Same-host redirects followed; redirects to another host, port or scheme are always refused.
    public var maxRedirects: Int
    /// The clock for policy expiry and report times. (Certificate validity dates are checked
    /// against the system time: swift-certificates deprecated validating at a chosen time.)
    public var clock: any RampartClock

    /// A configuration; only the policy is required. Defaults: system roots, unpinned hosts
    /// refused, no report sink, 10 s connect, 30 s exchange, 16 MiB body, 5 redirects.
    public init(
        policy: PinningPolicy,
        trustRoots: PinnedTrustRoots = .system,
        unpinnedHosts: UnpinnedHostHandling = .refuse,
        reportSink: (any PinViolationReportSink)? = nil,
        connectAddressOverrides: [String: String] = [:],
        connectTimeout: Duration = .seconds(10),
        requestTimeout: Duration = .seconds(30),
        maxResponseBytes: Int = 16 * 1024 * 1024,
        maxRedirects: Int = 5,
        clock: any RampartClock = SystemClock()
    ) {
        self.policy = policy
        self.trustRoots = trustRoots
        self.unpinnedHosts = unpinnedHosts
        self.reportSink = reportSink
        self.connectAddressOverrides = connectAddressOverrides
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.maxResponseBytes = maxResponseBytes
        self.maxRedirects = maxRedirects
        self.clock = clock
    }
}

import RampartCore

/// An HTTP method named without SwiftNIO, so that a caller of the pinned client need not import
/// NIO: ``PinnedRequest/init(method:url:headerFields:body:)`` (RampartClient's API client uses
/// only these plain values; NIO stays behind PinnedTransport).
public enum PinnedMethod: String, Sendable, Hashable, CaseIterable {
    case GET, HEAD, POST, PUT, PATCH, DELETE
}

extension PinnedRequest {
    /// A request from plain values: the method, the header fields in order (a name may repeat),
    /// and the body. The same request as ``init(method:url:headers:body:)`` with NIO's types.
    public init(method: PinnedMethod, url: URL, headerFields: [(name: String, value: String)], body: Data? = nil) {
        var headers = HTTPHeaders()
        for field in headerFields { headers.add(name: field.name, value: field.value) }
        self.init(method: HTTPMethod(rawValue: method.rawValue), url: url, headers: headers, body: body)
    }
}

extension PinnedResponse {
    /// The status code as a number (``status``'s code), without NIO's type.
    public var statusCode: Int { Int(status.code) }
}
