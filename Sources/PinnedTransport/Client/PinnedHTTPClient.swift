import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOTLS
import RampartCore
import X509

/// A small HTTP/1.1 client whose every connection is TLS-validated and then pinned.
///
/// Trust-model row: **transport (network), low trust — a person in the middle**: "certificate
/// pinning on top of TLS; the alert is shown and the connection cut". For each connection:
///
/// 1. SwiftNIO SSL's custom verification callback (which replaces BoringSSL's own checks)
///    validates the served chain with swift-certificates' `Verifier` (RFC 5280 path to the
///    configured trust roots, validity dates, host name) — pinning never replaces TLS;
/// 2. the validated chain's SubjectPublicKeyInfo pins are compared with the host's policy;
/// 3. on an enforced mismatch the handshake is failed (the server gets a TLS alert), the
///    request fails with ``PinnedTransportError/pinMismatch(host:port:servedPins:)``, an alert
///    ``PinningEvent/pinMismatch(_:)`` is emitted on ``events`` and the report is delivered;
/// 4. the request (and its body) is written only after the handshake has completed.
///
/// One connection per request (`Connection: close`); redirects are followed only to the same
/// scheme, host and port; response bodies are capped.
///
/// ```swift
/// let client = try PinnedHTTPClient(configuration: .init(policy: policy, trustRoots: .pemFile("backend.pem")))
/// let response = try await client.send(PinnedRequest(method: .POST, url: url, body: body))
/// try await client.shutdown()
/// ```
public final class PinnedHTTPClient: Sendable {
    /// Pins, trust roots and limits this client was made with.
    public let configuration: PinnedHTTPClientConfiguration
    /// Pinning events (alerts for cut connections, report-only notices, expiry warnings).
    public let events: PinningEvents
    private let group: any EventLoopGroup
    private let ownsGroup: Bool
    private let sslContext: NIOSSLContext
    private let verifier: PinnedChainVerifier
    private let shutDown = NIOLockedValueBox(false)

    /// - Parameters:
    ///   - configuration: pins, trust roots, limits.
    ///   - eventLoopGroup: a group to run on; by default the client makes (and later shuts down)
    ///     its own single-threaded group.
    /// - Throws: ``PinnedTransportError/tlsFailed(host:reason:)`` if the TLS context cannot be made.
    public init(configuration: PinnedHTTPClientConfiguration, eventLoopGroup: (any EventLoopGroup)? = nil) throws {
        self.configuration = configuration
        self.events = PinningEvents()
        if let eventLoopGroup {
            self.group = eventLoopGroup
            self.ownsGroup = false
        } else {
            self.group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            self.ownsGroup = true
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        // Must stay on: with `.none` NIOSSL would skip the custom callback that validates and pins.
        tls.certificateVerification = .fullVerification
        // BoringSSL's own store is never consulted (the callback replaces its checks); keep it
        // empty rather than loading the system bundle for nothing.
        tls.trustRoots = .certificates([])
        tls.applicationProtocols = ["http/1.1"]
        do {
            self.sslContext = try NIOSSLContext(configuration: tls)
        } catch {
            throw PinnedTransportError.tlsFailed(host: "-", reason: "cannot create the TLS context: \(error)")
        }
        self.verifier = PinnedChainVerifier(
            policy: configuration.policy, trustRoots: configuration.trustRoots,
            unpinnedHosts: configuration.unpinnedHosts, clock: configuration.clock)
    }

    /// Sends `request` over a new pinned connection and returns the whole response.
    ///
    /// - Throws: ``PinnedTransportError``: `.pinMismatch` (interception), `.chainValidationFailed`,
    ///   `.noPinningPolicy`, `.invalidURL`, `.connectionFailed`, `.tlsFailed`, `.timedOut`,
    ///   `.redirectRefused`, `.tooManyRedirects`, `.responseTooLarge`, `.malformedResponse`,
    ///   `.clientShutDown`.
    public func send(_ request: PinnedRequest) async throws -> PinnedResponse {
        var current = request
        var redirects = 0
        while true {
            let response = try await exchange(current)
            guard [301, 302, 303, 307, 308].contains(response.status.code),
                  configuration.maxRedirects > 0,
                  let location = response.headers.first(name: "location")
            else { return response }
            guard let target = URL(string: location, relativeTo: current.url)?.absoluteURL else {
                throw PinnedTransportError.malformedResponse("the redirect location \"\(location)\" is not a URL")
            }
            let from = current.url
            guard target.scheme?.lowercased() == "https",
                  target.host?.lowercased() == from.host?.lowercased(),
                  (target.port ?? 443) == (from.port ?? 443)
            else {
                throw PinnedTransportError.redirectRefused(from: from.absoluteString, to: target.absoluteString)
            }
            redirects += 1
            guard redirects <= configuration.maxRedirects else {
                throw PinnedTransportError.tooManyRedirects(limit: configuration.maxRedirects)
            }
            current.url = target
            if response.status.code == 303 || ([301, 302].contains(response.status.code) && current.method == .POST) {
                if current.method != .HEAD { current.method = .GET }
                current.body = nil
                current.headers.remove(name: "content-type")
                current.headers.remove(name: "content-length")
            }
        }
    }

    /// Closes the client: its own event loop group is shut down and event streams end.
    public func shutdown() async throws {
        let wasShutDown = shutDown.withLockedValue { value in
            defer { value = true }
            return value
        }
        guard !wasShutDown else { return }
        events.finish()
        if ownsGroup { try await group.shutdownGracefully() }
    }

    // MARK: - One exchange

    private func exchange(_ request: PinnedRequest) async throws -> PinnedResponse {
        guard !shutDown.withLockedValue({ $0 }) else { throw PinnedTransportError.clientShutDown }
        let target = try RequestTarget(request.url)
        let record = NIOLockedValueBox<PinVerdict?>(nil)
        let loop = group.next()
        let responsePromise = loop.makePromise(of: ExchangeResult.self)
        let verifier = self.verifier
        let sslContext = self.sslContext
        let connectAddress = configuration.connectAddressOverrides.first { $0.key.lowercased() == target.host }?.value
            ?? target.host
        let limit = configuration.maxResponseBytes
        let head = target.requestHead(for: request)
        let body = request.body

        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(TimeAmount(configuration.connectTimeout))
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let tlsHandler = try NIOSSLClientHandler(
                        context: sslContext,
                        serverHostname: target.isIPAddress ? nil : target.host,
                        customVerificationCallbackWithMetadata: { certificates, promise in
                            let served = certificates.compactMap { try? $0.toDERBytes() }
                            let verify: @Sendable () async -> Void = {
                                let (verdict, chain) = await verifier.verify(
                                    servedChain: served, host: target.host, port: target.port)
                                record.withLockedValue { $0 = verdict }
                                guard verdict.allowsConnection, let chain else {
                                    promise.succeed(.failed)
                                    return
                                }
                                let validated = chain.compactMap { certificate in
                                    (try? SPKIPin.derBytes(of: certificate)).flatMap { try? NIOSSLCertificate(bytes: $0, format: .der) }
                                }
                                promise.succeed(.certificateVerified(VerificationMetadata(
                                    validated.count == chain.count ? NIOSSL.ValidatedCertificateChain(validated) : nil)))
                            }
                            // On the connection's own event loop, not the shared cooperative pool.
                            if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) {
                                Task(executorPreference: EventLoopTaskExecutor(channel.eventLoop), operation: verify)
                            } else {
                                Task(operation: verify)
                            }
                        })
                    try channel.pipeline.syncOperations.addHandler(tlsHandler)
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(
                        ExchangeHandler(head: head, body: body, maxResponseBytes: limit, promise: responsePromise))
                }
            }

        let timeout = configuration.requestTimeout
        let timeoutTask = loop.scheduleTask(in: TimeAmount(timeout)) {
            responsePromise.fail(PinnedTransportError.timedOut(host: target.host, seconds: timeout.seconds))
        }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: connectAddress, port: target.port).get()
        } catch {
            timeoutTask.cancel()
            responsePromise.fail(error)
            if error is PinnedTransportError { throw error }
            throw PinnedTransportError.connectionFailed(host: target.host, port: target.port, reason: "\(error)")
        }
        responsePromise.futureResult.whenComplete { _ in
            timeoutTask.cancel()
            channel.close(promise: nil)
        }

        let outcome: Result<ExchangeResult, any Error>
        do {
            outcome = .success(try await responsePromise.futureResult.get())
        } catch {
            outcome = .failure(error)
        }
        let verdict = record.withLockedValue { $0 }
        await announce(verdict, host: target.host)

        switch verdict {
        case .mismatch(let report)?:
            throw PinnedTransportError.pinMismatch(host: target.host, port: target.port, servedPins: report.servedChainPins)
        case .chainInvalid(let reason)?:
            throw PinnedTransportError.chainValidationFailed(host: target.host, reason: reason)
        case .noPolicy?:
            throw PinnedTransportError.noPinningPolicy(host: target.host)
        default:
            break
        }
        switch outcome {
        case .success(let result):
            guard let verdict else {
                // Cannot happen: the handshake completes only through the callback.
                throw PinnedTransportError.tlsFailed(host: target.host, reason: "the handshake completed without verification")
            }
            return PinnedResponse(status: result.head.status, headers: result.head.headers, body: result.body,
                                  url: request.url, pinVerdict: verdict)
        case .failure(let error as PinnedTransportError):
            throw error
        case .failure(let error as NIOSSLError):
            throw PinnedTransportError.tlsFailed(host: target.host, reason: "\(error)")
        case .failure(let error):
            if verdict == nil {
                throw PinnedTransportError.tlsFailed(host: target.host, reason: "\(error)")
            }
            throw PinnedTransportError.malformedResponse("\(error)")
        }
    }

    /// Emits the event and delivers the report a verdict calls for.
    private func announce(_ verdict: PinVerdict?, host: String) async {
        switch verdict {
        case .mismatch(let report)?:
            events.emit(.pinMismatch(report))
            await deliver(report)
        case .mismatchReportOnly(let report)?:
            events.emit(.pinMismatchReported(report))
            await deliver(report)
        case .policyExpired(let domain, let expiration)?:
            events.emit(.policyExpired(domain: domain, host: host, expiration: expiration))
        default:
            break
        }
    }

    private func deliver(_ report: PinViolationReport) async {
        guard let sink = configuration.reportSink else { return }
        do {
            try await sink.deliver(report)
        } catch {
            events.emit(.reportNotDelivered(report, reason: "\(error)"))
        }
    }
}

/// The parts of a URL one exchange needs.
struct RequestTarget: Sendable {
    let host: String
    let port: Int
    let pathAndQuery: String
    let isIPAddress: Bool

    init(_ url: URL) throws {
        guard url.scheme?.lowercased() == "https" else {
            throw PinnedTransportError.invalidURL(url.absoluteString, reason: "only https URLs are accepted")
        }
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
              var host = components.host?.lowercased(), !host.isEmpty
        else {
            throw PinnedTransportError.invalidURL(url.absoluteString, reason: "it has no host")
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.host = host
        self.port = components.port ?? 443
        guard (1...65_535).contains(port) else {
            throw PinnedTransportError.invalidURL(url.absoluteString, reason: "the port is out of range")
        }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        self.pathAndQuery = components.percentEncodedQuery.map { path + "?" + $0 } ?? path
        self.isIPAddress = PinnedChainVerifier.isIPAddress(host)
    }

    func requestHead(for request: PinnedRequest) -> HTTPRequestHead {
        var headers = request.headers
        if !headers.contains(name: "host") {
            let name = host.contains(":") ? "[\(host)]" : host
            headers.add(name: "Host", value: port == 443 ? name : "\(name):\(port)")
        }
        headers.replaceOrAdd(name: "Connection", value: "close")
        headers.remove(name: "transfer-encoding")
        if let body = request.body {
            headers.replaceOrAdd(name: "Content-Length", value: String(body.count))
        } else if [.POST, .PUT, .PATCH].contains(request.method) {
            headers.replaceOrAdd(name: "Content-Length", value: "0")
        }
        return HTTPRequestHead(version: .http1_1, method: request.method, uri: pathAndQuery, headers: headers)
    }
}

struct ExchangeResult: Sendable {
    var head: HTTPResponseHead
    var body: Data
}

/// Writes the request once the TLS handshake (validation and pins included) has completed,
/// then collects the response up to the size limit.
final class ExchangeHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = Never
    typealias OutboundOut = HTTPClientRequestPart

    private let head: HTTPRequestHead
    private let body: Data?
    private let maxResponseBytes: Int
    private let promise: EventLoopPromise<ExchangeResult>
    private var responseHead: HTTPResponseHead?
    private var responseBody = Data()
    private var requestWritten = false

    init(head: HTTPRequestHead, body: Data?, maxResponseBytes: Int, promise: EventLoopPromise<ExchangeResult>) {
        self.head = head
        self.body = body
        self.maxResponseBytes = maxResponseBytes
        self.promise = promise
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent, !requestWritten {
            requestWritten = true
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            if let body, !body.isEmpty {
                context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
            }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            responseHead = head
            if let length = head.headers.first(name: "content-length").flatMap(Int.init), length > maxResponseBytes {
                fail(context, PinnedTransportError.responseTooLarge(limit: maxResponseBytes))
            }
        case .body(let buffer):
            guard responseBody.count + buffer.readableBytes <= maxResponseBytes else {
                fail(context, PinnedTransportError.responseTooLarge(limit: maxResponseBytes))
                return
            }
            responseBody.append(contentsOf: buffer.readableBytesView)
        case .end:
            if let responseHead {
                promise.succeed(ExchangeResult(head: responseHead, body: responseBody))
            } else {
                promise.fail(PinnedTransportError.malformedResponse("the response ended before its head"))
            }
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(context, error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(PinnedTransportError.malformedResponse("the server closed the connection before the response ended"))
        context.fireChannelInactive()
    }

    private func fail(_ context: ChannelHandlerContext, _ error: any Error) {
        promise.fail(error)
        context.close(promise: nil)
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
