import Foundation

/// What happens when the served chain matches none of a domain's pins.
public enum PinEnforcement: String, Sendable, Codable, Hashable {
    /// The connection is cut before any request byte is written, the UI is alerted, and a
    /// report is sent.
    case enforce
    /// The connection goes on; a report is sent and a notice event emitted (to roll out a new
    /// pin set safely before enforcing it).
    case reportOnly
}

/// The pins of one domain, in TrustKit's shape.
///
/// Trust-model row: **transport (network), low trust — a person in the middle**: "certificate
/// pinning on top of TLS; the alert is shown and the connection cut".
///
/// A policy is only built when it is usable: a non-empty, well-formed domain name and at least
/// two distinct, well-formed pins (one of them a backup key kept offline, so that losing or
/// rotating the live key does not lock every client out).
///
/// ```swift
/// let policy = try DomainPinningPolicy(
///     domain: "rampart.example",
///     pins: ["r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E=", "YLh1dUR9y6Kja30RrAn7JKnbQG/uEtLMkBgFF2Fuihg="],
///     includeSubdomains: true,
///     enforcement: .enforce,
///     expiration: Date(timeIntervalSinceNow: 180 * 86_400))
/// ```
public struct DomainPinningPolicy: Sendable, Hashable, Codable {
    /// The domain, lower-cased, without a trailing dot.
    public let domain: String
    /// The accepted pins (at least two, distinct).
    public let pins: Set<SPKIPin>
    /// Whether the policy also covers every name below ``domain``.
    public let includeSubdomains: Bool
    /// Enforce or only report.
    public let enforcement: PinEnforcement
    /// After this date the pins are not enforced any more (normal TLS validation still is), and
    /// every connection emits a warning: an app that is not updated must not lock itself out.
    public let expiration: Date?

    /// Builds a policy from base64 pins.
    ///
    /// - Throws: ``PinningPolicyError`` — `.emptyDomain`, `.invalidDomain`, `.malformedPin`,
    ///   `.tooFewPins` — with a message that says what to fix.
    public init(
        domain: String,
        pins: [String],
        includeSubdomains: Bool = false,
        enforcement: PinEnforcement = .enforce,
        expiration: Date? = nil
    ) throws {
        let normalized = try DomainPinningPolicy.normalize(domain: domain)
        var parsed = Set<SPKIPin>()
        for text in pins {
            let digest = try SPKIPin.parse(text, domain: normalized)
            parsed.insert(SPKIPin(digest: digest)!)
        }
        try self.init(normalizedDomain: normalized, pins: parsed, includeSubdomains: includeSubdomains,
                      enforcement: enforcement, expiration: expiration)
    }

    /// Builds a policy from pins already computed.
    ///
    /// - Throws: ``PinningPolicyError`` as ``init(domain:pins:includeSubdomains:enforcement:expiration:)-(String,[String],_,_,_)``.
    public init(
        domain: String,
        pins: Set<SPKIPin>,
        includeSubdomains: Bool = false,
        enforcement: PinEnforcement = .enforce,
        expiration: Date? = nil
    ) throws {
        try self.init(normalizedDomain: try DomainPinningPolicy.normalize(domain: domain), pins: pins,
                      includeSubdomains: includeSubdomains, enforcement: enforcement, expiration: expiration)
    }

    private init(normalizedDomain: String, pins: Set<SPKIPin>, includeSubdomains: Bool,
                 enforcement: PinEnforcement, expiration: Date?) throws {
        guard pins.count >= 2 else {
            throw PinningPolicyError.tooFewPins(domain: normalizedDomain, count: pins.count)
        }
        self.domain = normalizedDomain
        self.pins = pins
        self.includeSubdomains = includeSubdomains
        self.enforcement = enforcement
        self.expiration = expiration
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(
            domain: try container.decode(String.self, forKey: .domain),
            pins: try container.decode([String].self, forKey: .pins),
            includeSubdomains: try container.decodeIfPresent(Bool.self, forKey: .includeSubdomains) ?? false,
            enforcement: try container.decodeIfPresent(PinEnforcement.self, forKey: .enforcement) ?? .enforce,
            expiration: try container.decodeIfPresent(Date.self, forKey: .expiration))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(domain, forKey: .domain)
        try container.encode(pins.map(\.base64).sorted(), forKey: .pins)
        try container.encode(includeSubdomains, forKey: .includeSubdomains)
        try container.encode(enforcement, forKey: .enforcement)
        try container.encodeIfPresent(expiration, forKey: .expiration)
    }

    private enum CodingKeys: String, CodingKey {
        case domain, pins, includeSubdomains, enforcement, expiration
    }

    /// Whether the policy has expired at `date`.
    public func isExpired(at date: Date) -> Bool {
        guard let expiration else { return false }
        return date >= expiration
    }

    /// Whether this policy covers `host` (already normalized): the domain itself, or a name
    /// below it when ``includeSubdomains`` is set.
    public func covers(_ host: String) -> Bool {
        host == domain || (includeSubdomains && host.hasSuffix("." + domain))
    }

    static func normalize(domain: String) throws -> String {
        var name = domain.trimmingCharacters(in: .whitespaces).lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        guard !name.isEmpty else { throw PinningPolicyError.emptyDomain }
        if name.hasPrefix("*.") {
            throw PinningPolicyError.invalidDomain(
                domain, reason: "wildcards are not accepted; pin the parent domain with includeSubdomains instead")
        }
        guard name.utf8.count <= 253 else {
            throw PinningPolicyError.invalidDomain(domain, reason: "a domain name has at most 253 characters")
        }
        for label in name.split(separator: ".", omittingEmptySubsequences: false) {
            guard !label.isEmpty else {
                throw PinningPolicyError.invalidDomain(domain, reason: "it has an empty label (two dots in a row)")
            }
            guard label.utf8.count <= 63 else {
                throw PinningPolicyError.invalidDomain(domain, reason: "the label \"\(label)\" is longer than 63 characters")
            }
            guard label.unicodeScalars.allSatisfy({ ($0 >= "a" && $0 <= "z") || ($0 >= "0" && $0 <= "9") || $0 == "-" }) else {
                throw PinningPolicyError.invalidDomain(
                    domain, reason: "the label \"\(label)\" has characters other than a-z, 0-9 and '-' (write IDNs in punycode)")
            }
            guard !label.hasPrefix("-"), !label.hasSuffix("-") else {
                throw PinningPolicyError.invalidDomain(domain, reason: "the label \"\(label)\" starts or ends with '-'")
            }
        }
        return name
    }
}

/// The pinning policies of every backend domain. Looking a host up follows TrustKit: an exact
/// domain match wins; otherwise the most specific parent domain that includes subdomains.
///
/// Trust-model row: **transport (network), low trust — a person in the middle**.
public struct PinningPolicy: Sendable, Hashable, Codable {
    /// The domain policies, keyed by domain.
    public let domains: [String: DomainPinningPolicy]

    /// - Throws: ``PinningPolicyError/duplicateDomain(_:)`` when two policies name the same domain.
    public init(_ policies: [DomainPinningPolicy]) throws {
        var domains: [String: DomainPinningPolicy] = [:]
        for policy in policies {
            guard domains[policy.domain] == nil else { throw PinningPolicyError.duplicateDomain(policy.domain) }
            domains[policy.domain] = policy
        }
        self.domains = domains
    }

    public init(from decoder: any Decoder) throws {
        try self.init(try decoder.singleValueContainer().decode([DomainPinningPolicy].self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(domains.values.sorted { $0.domain < $1.domain })
    }

    /// The policy that applies to `host`, if any.
    public func policy(for host: String) -> DomainPinningPolicy? {
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        if let exact = domains[name] { return exact }
        // An IP address has no parent domains.
        if PinnedChainVerifier.isIPAddress(name) { return nil }
        var labels = name.split(separator: ".").map(String.init)
        while labels.count > 1 {
            labels.removeFirst()
            if let parent = domains[labels.joined(separator: ".")], parent.includeSubdomains {
                return parent
            }
        }
        return nil
    }
}
