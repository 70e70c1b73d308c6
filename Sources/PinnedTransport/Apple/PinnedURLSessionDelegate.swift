#if canImport(Security)
import Foundation
import Security
import X509

/// URLSession pinning for Apple platforms: the same rules as ``PinnedHTTPClient``, on `SecTrust`.
///
/// Trust-model row: **transport (network), low trust — a person in the middle**.
///
/// 1. `SecTrustEvaluateWithError` with an SSL policy for the host (normal validation, not replaced);
/// 2. the evaluated chain (`SecTrustCopyCertificateChain`) is parsed with swift-certificates and its
///    SPKI pins compared by ``PinnedChainVerifier``'s rules;
/// 3. on an enforced mismatch the challenge is cancelled (the connection is cut, no request is sent),
///    an alert event is emitted and the report delivered.
///
/// - Important: this file cannot be built or run on the Linux machine where Rampart is developed;
///   it is kept small and reviewed, not tested. Custom trust roots are applied with
///   `SecTrustSetAnchorCertificates` + `SecTrustSetAnchorCertificatesOnly`.
public final class PinnedURLSessionDelegate: NSObject, URLSessionDelegate, Sendable {
    /// Pins, trust roots and report sink.
    public let configuration: PinnedHTTPClientConfiguration
    /// Alerts for cut connections, as with ``PinnedHTTPClient/events``.
    public let events = PinningEvents()

    /// A delegate applying `configuration` to every server-trust challenge.
    public init(configuration: PinnedHTTPClientConfiguration) {
        self.configuration = configuration
    }

    /// Validates, pins, and cancels the challenge (cutting the connection) on a refusal.
    public func urlSession(
        _ session: URLSession,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let space = challenge.protectionSpace
        guard space.authenticationMethod == NSURLAuthenticationMethodServerTrust, let trust = space.serverTrust else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        let host = space.host.lowercased()
        SecTrustSetPolicies(trust, SecPolicyCreateSSL(true, host as CFString))
        if case .certificates(let roots) = configuration.trustRoots {
            let anchors = roots.compactMap { root -> SecCertificate? in
                guard let der = try? SPKIPin.derBytes(of: root) else { return nil }
                return SecCertificateCreateWithData(nil, Data(der) as CFData)
            }
            SecTrustSetAnchorCertificates(trust, anchors as CFArray)
            SecTrustSetAnchorCertificatesOnly(trust, true)
        }
        var error: CFError?
        guard SecTrustEvaluateWithError(trust, &error),
              let secChain = SecTrustCopyCertificateChain(trust) as? [SecCertificate]
        else {
            completionHandler(.cancelAuthenticationChallenge, nil)
            return
        }
        let chain = secChain.compactMap { try? Certificate(derEncoded: Array(SecCertificateCopyData($0) as Data)) }
        let verifier = PinnedChainVerifier(policy: configuration.policy, trustRoots: configuration.trustRoots,
                                           unpinnedHosts: configuration.unpinnedHosts, clock: configuration.clock)
        // The chain was validated by SecTrust above: only the pin step runs here.
        let verdict = verifier.evaluatePins(validatedChain: chain, servedChain: chain, host: host,
                                            port: space.port, now: configuration.clock.now)
        switch verdict {
        case .mismatch(let report):
            events.emit(.pinMismatch(report))
            deliver(report)
        case .mismatchReportOnly(let report):
            events.emit(.pinMismatchReported(report))
            deliver(report)
        case .policyExpired(let domain, let expiration):
            events.emit(.policyExpired(domain: domain, host: host, expiration: expiration))
        default:
            break
        }
        if verdict.allowsConnection {
            completionHandler(.useCredential, URLCredential(trust: trust))
        } else {
            completionHandler(.cancelAuthenticationChallenge, nil)
        }
    }

    private func deliver(_ report: PinViolationReport) {
        guard let sink = configuration.reportSink else { return }
        let events = self.events
        Task {
            do { try await sink.deliver(report) } catch { events.emit(.reportNotDelivered(report, reason: "\(error)")) }
        }
    }
}
#endif
