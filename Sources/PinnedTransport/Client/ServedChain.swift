import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import X509

/// Reads the certificate chain a live server serves, to compute its pins (`rampart-dev pin --host`).
///
/// Trust-model row: **transport (network), low trust**. The chain is captured inside the
/// verification callback and the handshake is then *failed* on purpose: this tool never
/// completes a TLS session with a server it has not validated, and sends it no data. What it
/// prints is what the server (or whoever is in the middle) served: compare it over a trusted
/// network before putting the pins in a policy.
public enum ServedChain {
    /// The certificates `host:port` serves, leaf first.
    ///
    /// - Parameters:
    ///   - serverName: the SNI name to send (default: `host` unless it is an IP address).
    ///   - host: the server's host name or IP address.
    ///   - port: the TLS port.
    ///   - timeout: how long to wait for the connection and the handshake.
    /// - Throws: ``PinnedTransportError/connectionFailed(host:port:reason:)``,
    ///   ``PinnedTransportError/tlsFailed(host:reason:)``, ``PinnedTransportError/timedOut(host:seconds:)``.
    public static func fetch(host: String, port: Int, serverName: String? = nil,
                             timeout: Duration = .seconds(10)) async throws -> [Certificate] {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { group.shutdownGracefully { _ in } }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .fullVerification
        tls.trustRoots = .certificates([])
        let context = try NIOSSLContext(configuration: tls)
        let captured = NIOLockedValueBox<[[UInt8]]?>(nil)
        let sni = serverName ?? (PinnedChainVerifier.isIPAddress(host) ? nil : host)
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(TimeAmount(timeout))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        NIOSSLClientHandler(context: context, serverHostname: sni,
                                            customVerificationCallbackWithMetadata: { certificates, promise in
                                                captured.withLockedValue { $0 = certificates.compactMap { try? $0.toDERBytes() } }
                                                promise.succeed(.failed)
                                            }))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: host, port: port).get()
        } catch {
            throw PinnedTransportError.connectionFailed(host: host, port: port, reason: "\(error)")
        }
        let closer = channel.eventLoop.scheduleTask(in: TimeAmount(timeout)) { channel.close(promise: nil) }
        try? await channel.closeFuture.get()
        closer.cancel()
        guard let der = captured.withLockedValue({ $0 }), !der.isEmpty else {
            throw PinnedTransportError.tlsFailed(host: host, reason: "the server sent no certificate before the connection ended")
        }
        do {
            return try der.map { try Certificate(derEncoded: $0) }
        } catch {
            throw PinnedTransportError.certificateUnreadable("the server sent a certificate that does not parse: \(error)")
        }
    }
}
