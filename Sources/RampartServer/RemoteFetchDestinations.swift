import Foundation
import RampartCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the backend may connect when it fetches a remote image or style sheet for a reader:
/// only to public addresses, so the fetch cannot be aimed at services of the server's own machine
/// or network (loopback, private, link-local — the cloud metadata address 169.254.169.254 —,
/// carrier-grade NAT, unique-local, multicast, documentation and reserved ranges, and IPv4 inside
/// IPv6 mapped, NAT64 or 6to4 addresses).
///
/// Trust-model row **inbox (low) — IP disclosure by remote content**: the reader's address stays
/// hidden because the backend fetches, and this check keeps that fetcher from becoming a way into
/// the server's network (server-side request forgery). A host name is resolved once and every
/// address it names must be public; the caller connects to those addresses only, so a name that
/// answers differently a moment later (DNS rebinding) does not reach a local service. Each
/// redirect's target is checked again the same way.
///
/// `allowingLocal` is an operator's test and lab option (`HOST:PORT` entries, exactly as a URL
/// names them), for a probe server on this machine; it is empty unless given.
public struct RemoteFetchDestinations: Sendable, Equatable {
    /// `host:port` entries (lower-case) that may be fetched although they are local.
    public let allowedLocal: Set<String>

    /// - Throws: ``RemoteFetchRefusal/badAllowEntry(_:)`` for an entry that is not `HOST:PORT`.
    public init(allowingLocal entries: [String] = []) throws(RemoteFetchRefusal) {
        var allowed: Set<String> = []
        for entry in entries {
            let lowered = entry.trimmingCharacters(in: .whitespaces).lowercased()
            guard let colon = lowered.lastIndex(of: ":"), colon != lowered.startIndex,
                  let port = Int(lowered[lowered.index(after: colon)...]), (1...65535).contains(port),
                  !lowered[..<colon].contains("/") else {
                throw .badAllowEntry(entry)
            }
            allowed.insert(lowered)
        }
        allowedLocal = allowed
    }

    /// The addresses `host` names, each one checked: every one must be public unless
    /// `host:port` is an allowed local destination. Connect to these, not to the name again.
    /// - Throws: ``RemoteFetchRefusal/unresolvable(host:)``, ``RemoteFetchRefusal/localAddress(host:port:address:)``.
    public func resolve(host: String, port: Int) throws(RemoteFetchRefusal) -> [[UInt8]] {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard !bare.isEmpty, getaddrinfo(bare, nil, &hints, &list) == 0, let first = list else { throw .unresolvable(host: host) }
        defer { freeaddrinfo(first) }
        var addresses: [[UInt8]] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            if let address = current.pointee.ai_addr {
                switch Int32(address.pointee.sa_family) {
                case AF_INET:
                    address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
                        withUnsafeBytes(of: inet.pointee.sin_addr) { addresses.append(Array($0)) }
                    }
                case AF_INET6:
                    address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { inet in
                        withUnsafeBytes(of: inet.pointee.sin6_addr) { addresses.append(Array($0)) }
                    }
                default: break
                }
            }
            entry = current.pointee.ai_next
        }
        var unique: [[UInt8]] = []
        for address in addresses where !unique.contains(address) { unique.append(address) }
        guard !unique.isEmpty else { throw .unresolvable(host: host) }
        try check(host: host, port: port, addresses: unique)
        return unique
    }

    /// Refuses when any of `addresses` (4 or 16 bytes each) is not public, unless `host:port`
    /// is an allowed local destination.
    public func check(host: String, port: Int, addresses: [[UInt8]]) throws(RemoteFetchRefusal) {
        if allowedLocal.contains("\(host.lowercased()):\(port)") { return }
        if let local = addresses.first(where: { !Self.isPublic($0) }) {
            throw .localAddress(host: host, port: port, address: Self.text(local))
        }
    }

    /// Whether an IPv4 (4 bytes) or IPv6 (16 bytes) address is a public unicast address.
    public static func isPublic(_ address: [UInt8]) -> Bool {
        switch address.count {
        case 4: return isPublicIPv4(address)
        case 16: return isPublicIPv6(address)
        default: return false
        }
    }

    /// IPv4 ranges that are not the public internet (RFC 6890 and its successors).
    static let refusedIPv4: [(UInt32, Int)] = [
        (0x0000_0000, 8), (0x0A00_0000, 8), (0x6440_0000, 10), (0x7F00_0000, 8), (0xA9FE_0000, 16), (0xAC10_0000, 12),
        (0xC000_0000, 24), (0xC000_0200, 24), (0xC058_6300, 24), (0xC0A8_0000, 16), (0xC612_0000, 15), (0xC633_6400, 24),
        (0xCB00_7100, 24), (0xE000_0000, 4), (0xF000_0000, 4),
    ]

    static func isPublicIPv4(_ bytes: [UInt8]) -> Bool {
        let value = bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return !refusedIPv4.contains { network, length in value >> (32 - length) == network >> (32 - length) }
    }

    static func isPublicIPv6(_ bytes: [UInt8]) -> Bool {
        let embeddedIPv4 = Array(bytes[12...])
        if bytes[0..<10].allSatisfy({ $0 == 0 }) {
            // ::, ::1, IPv4-compatible and (with ffff) IPv4-mapped addresses.
            if bytes[10] == 0xFF && bytes[11] == 0xFF { return isPublicIPv4(embeddedIPv4) }
            return false
        }
        if bytes[0..<12] == [0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0] { return isPublicIPv4(embeddedIPv4) }  // NAT64
        if bytes[0] == 0x20 && bytes[1] == 0x02 { return isPublicIPv4(Array(bytes[2..<6])) }  // 6to4
        if bytes[0] & 0xFE == 0xFC { return false }  // unique local fc00::/7
        if bytes[0] == 0xFE && bytes[1] & 0x80 == 0x80 { return false }  // link-local fe80::/10 and site-local fec0::/10
        if bytes[0] == 0xFF { return false }  // multicast
        if bytes[0..<4] == [0x20, 0x01, 0x0D, 0xB8] { return false }  // documentation
        if bytes[0..<8] == [0x01, 0x00, 0, 0, 0, 0, 0, 0] { return false }  // discard-only 100::/64
        return true
    }

    /// The address as text (`inet_ntop`).
    static func text(_ address: [UInt8]) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = address.count == 4 ? AF_INET : AF_INET6
        let done = address.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) != nil }
        return done ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
    }
}

/// Why the backend will not fetch a remote resource.
///
/// Trust-model row **inbox (low) — IP disclosure by remote content** (see ``RemoteFetchDestinations``).
public enum RemoteFetchRefusal: DescribedRampartError, Equatable {
    /// The name resolves (also) to a loopback, private, link-local or otherwise non-public address.
    case localAddress(host: String, port: Int, address: String)
    /// The name does not resolve.
    case unresolvable(host: String)
    /// An operator's allow entry is not `HOST:PORT`.
    case badAllowEntry(String)
    /// Not an absolute `http` or `https` URL with a host (and no user name).
    case badURL(String)
    /// The host is a known tracker (MailSafety's tracker list).
    case tracker(vendor: String)
    /// More redirects than the fetcher follows.
    case tooManyRedirects(Int)
    /// The answer's `Content-Type` is not an image or font type the fetcher passes on.
    case wrongType(String)
    /// The answer is larger than the fetcher's limit.
    case tooLarge(limit: Int)
    /// The remote server answered with a status other than 200 or a redirect.
    case status(Int)
    /// No connection or no complete answer.
    case unreachable(host: String, reason: String)
    /// The whole fetch took longer than the limit.
    case timedOut(Duration)

    /// The code, category and message of each case.
    public var info: RampartErrorInfo {
        switch self {
        case .localAddress(let host, let port, let address):
            RampartErrorInfo(code: "proxy.localAddress", kind: .badInput, message: "\(host):\(port) is \(address), not a public address: "
                + "the backend fetches remote content only from the internet, never from its own machine or network.")
        case .unresolvable(let host):
            RampartErrorInfo(code: "proxy.unresolvable", kind: .badInput, message: "The host name \(host) does not resolve.")
        case .badAllowEntry(let entry):
            RampartErrorInfo(code: "proxy.badAllowEntry", kind: .badInput, message: "\"\(entry)\" is not HOST:PORT (for example 127.0.0.1:8080).")
        default:
            fetchInfo
        }
    }
    /// The fetch's own refusals, one line each: (code, kind, message).
    private var fetchInfo: RampartErrorInfo {
        let (name, kind, message): (String, RampartErrorKind, String) = switch self {
        case .badURL(let url): ("badURL", .badInput, "\"\(url.prefix(200))\" is not an http or https URL the proxy fetches.")
        case .tracker(let vendor): ("tracker", .badInput, "The host is a known tracker (\(vendor)); it is never fetched.")
        case .tooManyRedirects(let count): ("tooManyRedirects", .failure, "More than \(count) redirects; the proxy stopped.")
        case .wrongType(let type): ("wrongType", .failure, "The answer is \(type), not an image or font; the proxy passes on images and fonts only.")
        case .tooLarge(let limit): ("tooLarge", .failure, "The answer is larger than the proxy's limit of \(limit) bytes.")
        case .status(let status): ("status", .failure, "The remote server answered with status \(status).")
        case .unreachable(let host, let reason): ("unreachable", .failure, "\(host) could not be fetched: \(reason).")
        case .timedOut(let limit): ("timedOut", .failure, "The remote server did not answer within \(limit).")
        case .localAddress, .unresolvable, .badAllowEntry: ("destination", .badInput, "")
        }
        return RampartErrorInfo(code: "proxy." + name, kind: kind, message: message)
    }
}
