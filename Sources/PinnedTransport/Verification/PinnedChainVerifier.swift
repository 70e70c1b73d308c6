import Foundation
import RampartCore
import X509

/// What the pinning step concluded for one TLS handshake.
public enum PinVerdict: Sendable, Equatable {
    /// The validated chain holds a pinned key.
    case pinned(domain: String, matched: SPKIPin)
    /// Mismatch under an enforcing policy: the handshake is failed.
    case mismatch(PinViolationReport)
    /// Mismatch under a report-only policy: the connection goes on.
    case mismatchReportOnly(PinViolationReport)
    /// The policy expired: pins not enforced, TLS validation still done.
    case policyExpired(domain: String, expiration: Date)
    /// No policy covers the host and the client allows that (TLS validation only).
    case unpinnedHost
    /// No policy covers the host and the client refuses unpinned hosts.
    case noPolicy
    /// Normal chain validation failed (checked before pins).
    case chainInvalid(reason: String)

    /// Whether the handshake may complete.
    public var allowsConnection: Bool {
        switch self {
        case .pinned, .mismatchReportOnly, .policyExpired, .unpinnedHost: true
        case .mismatch, .noPolicy, .chainInvalid: false
        }
    }
}

/// What to do with a host that no policy covers.
public enum UnpinnedHostHandling: Sendable {
    /// Refuse the connection (default: every backend connection must be pinned).
    case refuse
    /// Connect after normal TLS validation only.
    case allowWithTLSValidationOnly
}

/// Validates a served certificate chain the way TLS would (RFC 5280 path building to the trust
/// roots, validity dates, host name), then checks the validated chain against the pins.
///
/// Trust-model row: **transport (network), low trust — a person in the middle**: pinning adds
/// to TLS and never replaces it; an untrusted or expired certificate fails before any pin is
/// looked at. This type has no network code, so the same rules serve NIO and URLSession.
public struct PinnedChainVerifier: Sendable {
    /// The pins of every domain.
    public let policy: PinningPolicy
    /// What chain validation anchors to.
    public let trustRoots: PinnedTrustRoots
    /// What to do with a host no policy covers.
    public let unpinnedHosts: UnpinnedHostHandling
    /// Policy expiry and report times.
    public let clock: any RampartClock
    private let store: CertificateStore

    /// A verifier for `policy`, anchored to `trustRoots`.
    public init(policy: PinningPolicy, trustRoots: PinnedTrustRoots,
                unpinnedHosts: UnpinnedHostHandling = .refuse, clock: any RampartClock = SystemClock()) {
        self.policy = policy
        self.trustRoots = trustRoots
        self.unpinnedHosts = unpinnedHosts
        self.clock = clock
        self.store = trustRoots.store
    }

    /// Validates `servedChain` (leaf first, as the peer sent it) for `host` and checks the pins.
    ///
    /// - Parameters:
    ///   - servedChain: DER certificates as served.
    ///   - host: the name the client asked for (DNS name or IP literal).
    ///   - port: for the report.
    public func verify(servedChain: [[UInt8]], host: String, port: Int) async -> (verdict: PinVerdict, validatedChain: ValidatedCertificateChain?) {
        let certificates: [Certificate]
        do {
            certificates = try servedChain.map { try Certificate(derEncoded: $0) }
        } catch {
            return (.chainInvalid(reason: "the server sent a certificate that does not parse (\(error))"), nil)
        }
        guard let leaf = certificates.first else {
            return (.chainInvalid(reason: "the server sent no certificate"), nil)
        }
        let now = clock.now
        let isIPAddress = PinnedChainVerifier.isIPAddress(host)
        var verifier = Verifier(rootCertificates: store) {
            RFC5280Policy()
            ServerIdentityPolicy(serverHostname: isIPAddress ? nil : host, serverIP: isIPAddress ? host : nil)
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore(certificates.dropFirst()))
        let chain: ValidatedCertificateChain
        switch result {
        case .validCertificate(let validated):
            chain = validated
        case .couldNotValidate(let failures):
            return (.chainInvalid(reason: PinnedChainVerifier.explain(failures, leaf: leaf, now: Date())), nil)
        }
        let verdict = evaluatePins(validatedChain: Array(chain), servedChain: certificates, host: host, port: port, now: now)
        return (verdict, chain)
    }

    /// The pin step alone, on a chain already validated.
    func evaluatePins(validatedChain: [Certificate], servedChain: [Certificate], host: String, port: Int, now: Date) -> PinVerdict {
        guard let domainPolicy = policy.policy(for: host) else {
            return unpinnedHosts == .refuse ? .noPolicy : .unpinnedHost
        }
        let validatedPins = validatedChain.compactMap { try? SPKIPin(certificate: $0) }
        if domainPolicy.isExpired(at: now) {
            return .policyExpired(domain: domainPolicy.domain, expiration: domainPolicy.expiration ?? now)
        }
        if let matched = validatedPins.first(where: domainPolicy.pins.contains) {
            return .pinned(domain: domainPolicy.domain, matched: matched)
        }
        let report = PinViolationReport(
            host: host, port: port,
            servedChainPins: servedChain.compactMap { try? SPKIPin(certificate: $0) },
            validatedChainPins: validatedPins,
            policy: domainPolicy, time: now)
        return domainPolicy.enforcement == .enforce ? .mismatch(report) : .mismatchReportOnly(report)
    }

    /// Whether `host` is an IPv4 or IPv6 literal (then it is checked against the certificate's IP
    /// addresses and sent without SNI).
    static func isIPAddress(_ host: String) -> Bool {
        if host.contains(":") {
            return host.unicodeScalars.allSatisfy { $0 == ":" || $0 == "." || $0.properties.isASCIIHexDigit }
        }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCII) && part.allSatisfy(\.isNumber)
                && (Int(part) ?? 256) <= 255
        }
    }

    static func explain(_ failures: [CertificateValidationResult.PolicyFailure], leaf: Certificate, now: Date) -> String {
        if leaf.notValidAfter < now {
            return "the certificate expired on \(ISO8601DateFormatter().string(from: leaf.notValidAfter))"
        }
        if leaf.notValidBefore > now {
            return "the certificate is not valid before \(ISO8601DateFormatter().string(from: leaf.notValidBefore))"
        }
        if failures.isEmpty {
            return "no chain from the served certificate to a trusted root (unknown or self-signed issuer)"
        }
        let reasons = Set(failures.map { String(describing: $0.policyFailureReason) })
        return reasons.sorted().joined(separator: "; ")
    }
}
