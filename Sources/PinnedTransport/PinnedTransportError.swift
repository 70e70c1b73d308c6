import Foundation
import RampartCore

/// Why a pinning policy was refused when it was built.
///
/// Trust-model row: **transport (network), low trust**: a policy that cannot protect (no backup
/// pin, a pin that can never match, no domain) is refused up front instead of failing open or
/// locking users out later.
public enum PinningPolicyError: DescribedRampartError, Equatable {
    /// The domain is empty (or only whitespace and dots).
    case emptyDomain
    /// The domain is not a host name the policy can match.
    case invalidDomain(String, reason: String)
    /// A pin is not the base64 of a 32-byte SHA-256 digest.
    case malformedPin(domain: String, pin: String, reason: String)
    /// Fewer than two distinct pins: no backup pin.
    case tooFewPins(domain: String, count: Int)
    /// Two policies name the same domain.
    case duplicateDomain(String)

    /// The code, category (the CLI's exit status) and message of each case.
    public var info: RampartErrorInfo {
        switch self {
        case .emptyDomain: return RampartErrorInfo(code: "pinningPolicy.emptyDomain", kind: .failure, message: "The pinning policy has an empty domain: give the backend's host name, such as \"api.example.com\".")
        case .invalidDomain(let domain, let reason): return RampartErrorInfo(code: "pinningPolicy.invalidDomain", kind: .badInput, message: "The pinning policy's domain \"\(domain)\" is not usable: \(reason).")
        case .malformedPin(let domain, let pin, let reason):
            let place = domain.isEmpty ? "" : " for \(domain)"
            return RampartErrorInfo(code: "pinningPolicy.malformedPin", kind: .failure, message: "The pin \"\(pin)\"\(place) is malformed: \(reason). Compute pins with `rampart-dev pin <certificate.pem>`.")
        case .tooFewPins(let domain, let count): return RampartErrorInfo(code: "pinningPolicy.tooFewPins", kind: .failure, message: "The pinning policy for \(domain) has \(count) distinct pin\(count == 1 ? "" : "s"); at least two are "
                + "required: the live key's pin and a backup key's pin kept offline, so that a key change does not lock "
                + "every client out.")
        case .duplicateDomain(let domain): return RampartErrorInfo(code: "pinningPolicy.duplicateDomain", kind: .failure, message: "Two pinning policies name the domain \(domain); merge their pins into one policy.")
        }
    }

}

/// Every way a pinned connection or request can fail.
///
/// Trust-model row: **transport (network), low trust — a person in the middle**. `pinMismatch`
/// is the interception case: the connection is cut before any request byte is written.
public enum PinnedTransportError: DescribedRampartError, Equatable {
    /// The validated chain holds no certificate whose key is pinned for this host.
    case pinMismatch(host: String, port: Int, servedPins: [SPKIPin])
    /// Normal TLS validation failed (untrusted issuer, expired, wrong host name...): checked
    /// before any pin.
    case chainValidationFailed(host: String, reason: String)
    /// The host has no pinning policy and the client refuses unpinned hosts.
    case noPinningPolicy(host: String)
    /// The URL cannot be used (not https, no host...).
    case invalidURL(String, reason: String)
    /// TCP connection failed.
    case connectionFailed(host: String, port: Int, reason: String)
    /// The TLS handshake failed for a reason other than certificate validation.
    case tlsFailed(host: String, reason: String)
    /// The exchange took longer than the configured timeout.
    case timedOut(host: String, seconds: Double)
    /// A redirect to another host, port or scheme was refused.
    case redirectRefused(from: String, to: String)
    /// More redirects than allowed.
    case tooManyRedirects(limit: Int)
    /// The response body is larger than the configured limit.
    case responseTooLarge(limit: Int)
    /// The server's response is not usable HTTP/1.1, or the connection closed before it ended.
    case malformedResponse(String)
    /// The trust roots could not be loaded.
    case trustRootsUnavailable(String)
    /// A certificate file or text could not be read.
    case certificateUnreadable(String)
    /// A pin violation report could not be written or sent.
    case reportNotDelivered(String)
    /// The client was shut down.
    case clientShutDown

    /// The code, category (the CLI's exit status) and message of each case.
    public var info: RampartErrorInfo {
        switch self {
        case .pinMismatch(let host, let port, let servedPins): return RampartErrorInfo(code: "transport.pinMismatch", kind: .pinMismatch, message: "The certificate served by \(host):\(port) is valid but its keys match none of the pinned keys: "
                + "someone may be intercepting the connection (a proxy, a hostile network). The connection was cut and "
                + "nothing was sent. Served pins: \(servedPins.map(\.base64).joined(separator: ", ")).")
        case .chainValidationFailed(let host, let reason): return RampartErrorInfo(code: "transport.chainValidationFailed", kind: .failure, message: "The certificate of \(host) is not trusted: \(reason). The connection was cut.")
        case .noPinningPolicy(let host): return RampartErrorInfo(code: "transport.noPinningPolicy", kind: .failure, message: "No pinning policy covers \(host); the client only talks to pinned hosts. Add a policy for it.")
        case .invalidURL(let url, let reason): return RampartErrorInfo(code: "transport.invalidURL", kind: .badInput, message: "The URL \(url) cannot be used: \(reason).")
        case .connectionFailed(let host, let port, let reason): return RampartErrorInfo(code: "transport.connectionFailed", kind: .failure, message: "Could not connect to \(host):\(port): \(reason).")
        case .tlsFailed(let host, let reason): return RampartErrorInfo(code: "transport.tlsFailed", kind: .failure, message: "The TLS handshake with \(host) failed: \(reason).")
        case .timedOut(let host, let seconds): return RampartErrorInfo(code: "transport.timedOut", kind: .failure, message: "The exchange with \(host) took longer than \(seconds) s and was cut.")
        case .redirectRefused(let from, let to): return RampartErrorInfo(code: "transport.redirectRefused", kind: .failure, message: "The server at \(from) redirected to \(to), another host, port or scheme; the redirect was refused.")
        case .tooManyRedirects(let limit): return RampartErrorInfo(code: "transport.tooManyRedirects", kind: .failure, message: "More than \(limit) redirects; stopped.")
        case .responseTooLarge(let limit): return RampartErrorInfo(code: "transport.responseTooLarge", kind: .failure, message: "The response body is larger than the limit of \(limit) bytes; the connection was cut.")
        case .malformedResponse(let reason): return RampartErrorInfo(code: "transport.malformedResponse", kind: .failure, message: "The server's response is not usable: \(reason).")
        case .trustRootsUnavailable(let reason): return RampartErrorInfo(code: "transport.trustRootsUnavailable", kind: .failure, message: "The trust roots could not be loaded: \(reason).")
        case .certificateUnreadable(let reason): return RampartErrorInfo(code: "transport.certificateUnreadable", kind: .badInput, message: "The certificate could not be read: \(reason).")
        case .reportNotDelivered(let reason): return RampartErrorInfo(code: "transport.reportNotDelivered", kind: .failure, message: "The pin violation report could not be delivered: \(reason).")
        case .clientShutDown: return RampartErrorInfo(code: "transport.clientShutDown", kind: .failure, message: "The pinned HTTP client was shut down; create a new one.")
        }
    }

}
