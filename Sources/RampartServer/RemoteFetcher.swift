import Foundation
import MailSafety
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import RampartCore

/// The backend's fetcher of remote images and fonts for readers (the remote-content proxy).
///
/// Trust-model row **inbox (low) — IP disclosure by remote content**: once a reader allowed
/// remote content, the app asks the backend for each resource, so the sender's server sees the
/// backend's address, not the reader's, and no cookie, `Referer` or client header of the
/// reader's. What it fetches is bounded:
/// - only `http` and `https` URLs, tracking parameters (`utm_*`, …) stripped, known tracker hosts
///   refused (MailSafety's tracker list);
/// - the destination rule of ``RemoteFetchDestinations`` for the first URL and for every
///   redirect's target (at most ``Limits/maximumRedirects``), connecting to the addresses it
///   checked, never to the name again;
/// - images and fonts only (by the answer's `Content-Type`: no HTML, script or style sheet), at
///   most ``Limits/maximumBytes`` (refused by `Content-Length` before the body, or as soon as
///   more arrives), within ``Limits/timeout`` in all.
public struct RemoteFetcher: Sendable {
    /// The fetcher's bounds.
    public struct Limits: Sendable, Equatable {
        public var maximumBytes: Int
        public var maximumRedirects: Int
        public var timeout: Duration
        public init(maximumBytes: Int = 5 * 1024 * 1024, maximumRedirects: Int = 4, timeout: Duration = .seconds(10)) {
            self.maximumBytes = maximumBytes; self.maximumRedirects = maximumRedirects; self.timeout = timeout
        }
    }

    /// A fetched resource: its media type (one of ``allowedTypes``) and bytes.
    public struct Fetched: Sendable, Equatable {
        public var contentType: String
        public var body: Data
    }

    /// The media types the fetcher passes on: MailSafety's image and font types, without SVG
    /// (a document format that can carry script when opened on its own).
    public static let allowedTypes: Set<String> = URLPolicy.imageMIMETypes.union(URLPolicy.fontMIMETypes).subtracting(["image/svg+xml"])

    /// The `User-Agent` of every request: the same for every reader.
    public static let userAgent = "Rampart-RemoteContentProxy/1"

    public let destinations: RemoteFetchDestinations
    public let limits: Limits

    public init(destinations: RemoteFetchDestinations = try! RemoteFetchDestinations(), limits: Limits = Limits()) {
        self.destinations = destinations
        self.limits = limits
    }

    /// Fetches `url` within the limits (redirects followed and checked again).
    /// - Throws: ``RemoteFetchRefusal``.
    public func fetch(_ url: String) async throws(RemoteFetchRefusal) -> Fetched {
        let deadline = ContinuousClock.now + limits.timeout
        var current = try Self.target(url)
        for _ in 0...limits.maximumRedirects {
            let addresses = try destinations.resolve(host: current.host, port: current.port)
            let answer = try await exchange(current, addresses: addresses, deadline: deadline)
            switch answer {
            case .redirect(let location):
                guard let next = URL(string: location, relativeTo: current.url)?.absoluteURL else { throw .badURL(location) }
                current = try Self.target(next.absoluteString)
            case .done(let fetched):
                return fetched
            }
        }
        throw .tooManyRedirects(limits.maximumRedirects)
    }

    /// A URL the fetcher may ask: `http(s)`, a host, tracking parameters stripped, no known tracker.
    struct Target {
        var url: URL
        var host: String
        var port: Int
        var tls: Bool
        var pathAndQuery: String
    }

    static func target(_ text: String) throws(RemoteFetchRefusal) -> Target {
        let stripped = TrackingParameters.strip(text).url
        guard let url = URL(string: stripped), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty, url.user == nil else { throw .badURL(text) }
        if case .remote(let parts) = URLPolicy.classify(stripped), let vendor = TrackerList.builtIn.vendor(for: parts) {
            throw .tracker(vendor: vendor)
        }
        let tls = scheme == "https"
        var path = url.path(percentEncoded: true)
        if path.isEmpty { path = "/" }
        if let query = url.query(percentEncoded: true) { path += "?" + query }
        return Target(url: url, host: host, port: url.port ?? (tls ? 443 : 80), tls: tls, pathAndQuery: path)
    }

    enum Answer: Sendable { case redirect(String), done(Fetched) }

    private func exchange(_ target: Target, addresses: [[UInt8]], deadline: ContinuousClock.Instant) async throws(RemoteFetchRefusal) -> Answer {
        var lastError = RemoteFetchRefusal.unreachable(host: target.host, reason: "no address")
        for address in addresses {
            guard ContinuousClock.now < deadline else { throw .timedOut(limits.timeout) }
            do {
                return try await exchange(target, address: address, deadline: deadline)
            } catch let refusal as RemoteFetchRefusal {
                guard case .unreachable = refusal else { throw refusal }
                lastError = refusal
            } catch {
                lastError = .unreachable(host: target.host, reason: "\(error)")
            }
        }
        throw lastError
    }

    /// Whole milliseconds from now to `deadline`, 0 once it has passed.
    static func millisecondsLeft(until deadline: ContinuousClock.Instant) -> Int64 {
        let left = deadline - ContinuousClock.now
        return max(0, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
    }

    /// One request to one address. The connection attempt gets what is left of the time, and the
    /// answer only what is left after connecting: ``Limits/timeout`` bounds the whole fetch. (The
    /// answer's timer used to start at the full limit once the connect had returned, so the time
    /// to connect, and to resume after it on a busy machine, came on top: a CI run took 8.6 s for
    /// a 1 s limit.)
    private func exchange(_ target: Target, address: [UInt8], deadline: ContinuousClock.Instant) async throws -> Answer {
        let socketAddress = try SocketAddress(ipAddress: RemoteFetchDestinations.text(address), port: target.port)
        let group = MultiThreadedEventLoopGroup.singleton
        let promise = group.next().makePromise(of: Answer.self)
        let collector = ResponseCollector(promise: promise, limit: limits.maximumBytes)
        let sslContext: NIOSSLContext? = target.tls ? try NIOSSLContext(configuration: .makeClientConfiguration()) : nil
        let isLiteral = (try? SocketAddress(ipAddress: target.host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port: 0)) != nil
        let millis = Self.millisecondsLeft(until: deadline)
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: group)
                .connectTimeout(.milliseconds(max(1, min(millis, 5000))))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let sslContext {
                            let handler = try NIOSSLClientHandler(context: sslContext, serverHostname: isLiteral ? nil : target.host)
                            try channel.pipeline.syncOperations.addHandler(handler)
                        }
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(collector)
                    }
                }
                .connect(to: socketAddress).get()
        } catch {
            throw RemoteFetchRefusal.unreachable(host: target.host, reason: "\(error)")
        }
        let timeout = channel.eventLoop.scheduleTask(in: .milliseconds(Self.millisecondsLeft(until: deadline))) {
            promise.fail(RemoteFetchRefusal.timedOut(limits.timeout))
            channel.close(promise: nil)
        }
        defer { timeout.cancel() }
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target.pathAndQuery)
        let defaultPort = target.tls ? 443 : 80
        let hostPart = target.host.contains(":") ? "[\(target.host)]" : target.host
        head.headers.add(name: "Host", value: target.port == defaultPort ? hostPart : "\(hostPart):\(target.port)")
        head.headers.add(name: "User-Agent", value: Self.userAgent)
        head.headers.add(name: "Accept", value: "image/*, font/*;q=0.8")
        head.headers.add(name: "Accept-Encoding", value: "identity")
        head.headers.add(name: "Connection", value: "close")
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        defer { channel.close(promise: nil) }
        return try await promise.futureResult.get()
    }
}

/// Reads one HTTP answer: a redirect's `Location`, or a body of an allowed type within the limit.
private final class ResponseCollector: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPClientResponsePart
    let promise: EventLoopPromise<RemoteFetcher.Answer>
    let limit: Int
    var contentType = ""
    var body = Data()
    var done = false

    init(promise: EventLoopPromise<RemoteFetcher.Answer>, limit: Int) {
        self.promise = promise
        self.limit = limit
    }

    func fail(_ context: ChannelHandlerContext, _ refusal: RemoteFetchRefusal) {
        guard !done else { return }
        done = true
        promise.fail(refusal)
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            let status = Int(head.status.code)
            if [301, 302, 303, 307, 308].contains(status) {
                guard let location = head.headers.first(name: "Location") else { return fail(context, .status(status)) }
                done = true
                promise.succeed(.redirect(location))
                context.close(promise: nil)
                return
            }
            guard status == 200 else { return fail(context, .status(status)) }
            let type = (head.headers.first(name: "Content-Type") ?? "").split(separator: ";").first
                .map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
            guard RemoteFetcher.allowedTypes.contains(type) else { return fail(context, .wrongType(type.isEmpty ? "none" : type)) }
            if let length = head.headers.first(name: "Content-Length").flatMap(Int.init), length > limit {
                return fail(context, .tooLarge(limit: limit))
            }
            contentType = type
        case .body(let buffer):
            guard body.count + buffer.readableBytes <= limit else { return fail(context, .tooLarge(limit: limit)) }
            body.append(contentsOf: buffer.readableBytesView)
        case .end:
            done = true
            promise.succeed(.done(.init(contentType: contentType, body: body)))
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !done {
            done = true
            promise.fail(RemoteFetchRefusal.unreachable(host: "?", reason: "the connection closed before the answer was complete"))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(context, .unreachable(host: "?", reason: "\(error)"))
    }
}
