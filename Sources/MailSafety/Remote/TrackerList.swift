import Foundation
import RampartCore

/// A list of known mail-tracker vendors and the URL patterns that identify them. Pluggable: load
/// Rampart's own line format (``init(rampartList:)``), the MailTrackerBlocker JSON format
/// (``init(mailTrackerBlockerJSON:)``), or merge several with ``merging(_:)``.
///
/// Trust-model row: inbox (incoming mail) — "mail can carry trackers". Known tracker URLs are
/// blocked and reported even when the user allows remote content.
///
/// ## Rampart's list format (version 1)
/// UTF-8 text, one directive per line; `#` starts a comment line; blank lines are ignored.
/// ```
/// rampart-trackers 1
/// vendor Mailchimp
/// host list-manage.com
/// regex /track/open\.php
/// ```
/// - `rampart-trackers 1` must be the first non-comment line.
/// - `vendor NAME` starts a vendor; the following rules belong to it.
/// - `host DOMAIN` matches that host and every subdomain of it.
/// - `regex PATTERN` is an ICU regular expression matched case-insensitively against
///   `host + path + query` of the URL (no scheme).
public struct TrackerList: Sendable {
    /// One vendor's rules.
    public struct Vendor: Sendable {
        public var name: String
        public var hosts: [String]
        public var patterns: [String]
    }

    public private(set) var vendors: [Vendor]
    private var compiled: [(vendor: Int, regex: TrackerPattern, literal: [UInt8]?)]
    private var hostIndex: [String: Int]
    /// The UTF-8 lengths of the keys of `hostIndex` (an ASCII host suffix of another length
    /// cannot be a key, so most URLs need no dictionary lookup at all); `nil` when a key is not
    /// ASCII (it could be canonically equal to an ASCII text of another length).
    private var hostLengths: Set<Int>? = []
    /// `hostLengths` for lengths below 64, as bits (bit `n` set: a key of `n` bytes), so the
    /// common test needs no hashing; all ones when `hostLengths` is `nil`.
    private var shortHostLengths: UInt64 = 0
    /// The required literals of `compiled`, in its order, in one array: the pre-filter reads
    /// them without touching the entries (and their reference counts). `nil`: no literal.
    private var literalRanges: [Range<Int>?] = []
    private var literalBytes: [UInt8] = []
    /// The keys of `hostIndex` as bytes with their vendor index, while every key is ASCII (then
    /// `hostLengths` is not `nil`): an ASCII host suffix equals a key exactly when the bytes are
    /// the same, so a short list is searched by comparing bytes, without making a `String` of
    /// the suffix and hashing it.
    private var asciiHostKeys: [(key: [UInt8], index: Int)] = []
    /// Up to this many keys, ``asciiHostKeys`` is searched instead of the dictionary.
    private static let byteSearchedHosts = 8

    /// A list with no entries.
    public static let empty = TrackerList(vendors: [])

    /// A small built-in list (documented in <doc:RemoteContentAndTrackers>), used when the caller
    /// gives none.
    ///
    /// Its patterns are compiled when a URL first needs one (most messages never do: the
    /// required-literal pre-filter answers first), not when the list is made: compiling them
    /// started ICU's regular-expression engine in every process that sanitizes, ~9 M
    /// instructions of a `rampart-dev sanitize` start-up of ~12 M. They are constants, checked
    /// by the tests (a list read from a user is checked, and compiled, when it is read).
    public static let builtIn = makeBuiltIn()

    /// A new copy of ``builtIn``, its patterns not compiled yet (for tests).
    static func makeBuiltIn() -> TrackerList {
        (try? TrackerList(rampartList: builtInText, compiling: false)) ?? .empty
    }

    /// ``builtIn`` in Rampart's list format.
    static let builtInText: String = {
        // Entries chosen from widely documented open-tracking endpoints.
        """
        rampart-trackers 1
        vendor Mailchimp
        host list-manage.com
        regex list-manage\\.com/track/open\\.php
        vendor SendGrid
        regex /wf/open\\?upn=
        vendor HubSpot
        host t.hubspotemail.net
        host track.hubspot.com
        vendor Mailgun
        regex /o/[A-Za-z0-9]+/?$
        vendor Google Analytics
        host google-analytics.com
        vendor Facebook pixel
        regex facebook\\.com/tr[/?]
        """
    }()

    /// How many of the list's patterns are compiled (for tests of the lazy built-in list).
    var compiledPatternCount: Int { compiled.filter { $0.regex.isCompiled }.count }

    public init(vendors: [Vendor]) {
        self.vendors = []
        self.compiled = []
        self.hostIndex = [:]
        for vendor in vendors { try? add(vendor) }
    }

    /// Adds `vendor`, its patterns compiled now (a bad one throws, and the vendor's later
    /// patterns are left out), or, with `compiling` off, when first used (known-good patterns).
    private mutating func add(_ vendor: Vendor, compiling: Bool = true) throws {
        let index = vendors.count
        vendors.append(vendor)
        addHosts(of: vendor, index: index)
        for pattern in vendor.patterns {
            let regex: TrackerPattern
            if compiling {
                guard let compiled = try? NSRegularExpression(pattern: pattern, options: [.caseInsensitive]) else {
                    throw TrackerListError.badPattern(vendor: vendor.name, pattern: pattern)
                }
                regex = TrackerPattern(pattern, compiled: compiled)
            } else {
                regex = TrackerPattern(pattern, compiled: nil)
            }
            addPattern(regex, literal: Self.requiredLiteral(pattern).map { Array($0.utf8) }, index: index)
        }
    }

    private mutating func addPattern(_ regex: TrackerPattern, literal: [UInt8]?, index: Int) {
        compiled.append((index, regex, literal))
        if let literal {
            literalRanges.append(literalBytes.count..<(literalBytes.count + literal.count))
            literalBytes.append(contentsOf: literal)
        } else {
            literalRanges.append(nil)
        }
    }

    private mutating func addHosts(of vendor: Vendor, index: Int) {
        for host in vendor.hosts {
            let key = host.lowercased()
            hostIndex[key] = index
            let keyBytes = Array(key.utf8)
            if let known = asciiHostKeys.firstIndex(where: { $0.key == keyBytes }) {
                asciiHostKeys[known].index = index
            } else {
                asciiHostKeys.append((keyBytes, index))
            }
            if key.utf8.allSatisfy({ $0 < 0x80 }) { hostLengths?.insert(key.utf8.count) } else { hostLengths = nil }
            if hostLengths == nil {
                shortHostLengths = ~0
            } else if key.utf8.count < 64 {
                shortHostLengths |= 1 << UInt64(key.utf8.count)
            }
        }
    }

    /// Parses Rampart's line format. - Throws: ``TrackerListError``.
    public init(rampartList text: String) throws {
        try self.init(rampartList: text, compiling: true)
    }

    /// ``init(rampartList:)``, with the patterns compiled now or (`compiling` off, for the
    /// built-in list's constants) when first used.
    private init(rampartList text: String, compiling: Bool) throws {
        self.init(vendors: [])
        var sawHeader = false
        var current: Vendor?
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            let keyword = parts[0]
            let argument = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
            if !sawHeader {
                guard keyword == "rampart-trackers", argument == "1" else { throw TrackerListError.badHeader }
                sawHeader = true
                continue
            }
            guard !argument.isEmpty else { throw TrackerListError.badLine(number + 1) }
            switch keyword {
            case "vendor":
                if let current { try add(current, compiling: compiling) }
                current = Vendor(name: argument, hosts: [], patterns: [])
            case "host":
                guard current != nil else { throw TrackerListError.badLine(number + 1) }
                current?.hosts.append(argument)
            case "regex":
                guard current != nil else { throw TrackerListError.badLine(number + 1) }
                current?.patterns.append(argument)
            default:
                throw TrackerListError.badLine(number + 1)
            }
        }
        guard sawHeader else { throw TrackerListError.badHeader }
        if let current { try add(current, compiling: compiling) }
    }

    /// Parses the MailTrackerBlocker JSON (`{"trackers": {vendor: [regex, ...]}}`). Its patterns
    /// are matched against the URL's `host + path + query` (upstream matches the whole `<img>`
    /// tag text; URL-only matching is what applies to CSS and links too).
    /// - Throws: ``TrackerListError``.
    public init(mailTrackerBlockerJSON data: Data) throws {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let trackers = object["trackers"] as? [String: [String]]
        else { throw TrackerListError.badJSON }
        self.init(vendors: [])
        for name in trackers.keys.sorted() {
            try add(Vendor(name: name, hosts: [], patterns: trackers[name] ?? []))
        }
    }

    /// This list followed by `other`'s entries (their patterns as they are: compiled already,
    /// or when first used).
    public func merging(_ other: TrackerList) -> TrackerList {
        var merged = self
        let offset = vendors.count
        for vendor in other.vendors {
            merged.addHosts(of: vendor, index: merged.vendors.count)
            merged.vendors.append(vendor)
        }
        for (k, entry) in other.compiled.enumerated() {
            let literal = other.literalRanges[k].map { Array(other.literalBytes[$0]) }
            merged.addPattern(entry.regex, literal: literal, index: entry.vendor + offset)
        }
        return merged
    }

    /// The number of patterns and hosts.
    public var ruleCount: Int { compiled.count + hostIndex.count }

    /// The vendor whose rule matches this URL, if any.
    public func vendor(for url: URLComponentsLite) -> String? {
        if let answer = vendorASCII(for: url) { return answer }
        return vendorByCharacters(for: url)
    }

    /// ``vendor(for:)`` for a URL whose host and path are ASCII, on their bytes: host suffixes
    /// are looked up only when their length is that of a listed host, and the required-literal
    /// pre-filter reads the ASCII-lowercased bytes (what `lowercased()` gives for ASCII). The
    /// regular expressions still decide. `nil` when the text is not ASCII (the caller then uses
    /// the `Character` code); `.some(nil)` when no vendor matches.
    private func vendorASCII(for url: URLComponentsLite) -> String?? {
        let answer: String???? = url.host.utf8.withContiguousStorageIfAvailable { host -> String??? in
            url.pathAndQuery.utf8.withContiguousStorageIfAvailable { path -> String?? in vendor(host: host, pathAndQuery: path) }
        }
        // (Native strings are contiguous; were one not, the `Character` code answers.)
        guard let inner = answer, let result = inner else { return nil }
        return result
    }

    /// ``vendorASCII(for:)`` on bytes: the host (ASCII-lowercased here, as
    /// ``URLComponentsLite`` lowercases it) and the path and query of an `http(s)` URL, as the
    /// link and resource fast paths find them in the URL's own bytes without building a
    /// ``URLComponentsLite``. `nil` when a byte is not ASCII; `.some(nil)` when no vendor matches.
    func vendor(host: UnsafeBufferPointer<UInt8>, pathAndQuery: UnsafeBufferPointer<UInt8>) -> String?? {
        let hostCount = host.count
        let total = hostCount + pathAndQuery.count
        // host + path + query, ASCII-lowercased, in one buffer (on the stack when small).
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(total, 1)) { buffer -> String?? in
            var union: UInt64 = 0
            // Eight bytes at a time, then the rest (a word with a non-ASCII byte is lowered
            // wrongly, but then the answer is `nil` and the buffer is not read).
            func lowerCopy(_ source: UnsafeBufferPointer<UInt8>, to offset: Int) {
                var k = 0
                while k + 8 <= source.count {
                    let w = ASCIIWords.word(source, at: k)
                    union |= w
                    UnsafeMutableRawPointer(buffer.baseAddress! + offset + k).storeBytes(of: ASCIIWords.lowercased(w), as: UInt64.self)
                    k += 8
                }
                while k < source.count {
                    let byte = source[k]
                    union |= UInt64(byte)
                    buffer.initializeElement(at: offset + k, to: byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte)
                    k += 1
                }
            }
            lowerCopy(host, to: 0)
            lowerCopy(pathAndQuery, to: hostCount)
            guard union & ASCIIWords.highBits == 0 else { return nil }
            let lower = UnsafeBufferPointer(rebasing: buffer[0..<total])
            /// The vendor whose host is the suffix of the host from `start`.
            func hostVendor(from start: Int) -> String? {
                let length = hostCount - start
                if hostLengths != nil && asciiHostKeys.count <= Self.byteSearchedHosts {
                    // Every key is ASCII, and so is the suffix: `==` is byte equality.
                    let suffix = UnsafeBufferPointer(rebasing: lower[start..<hostCount])
                    for entry in asciiHostKeys where entry.key.count == length {
                        let same = length == 0 || entry.key.withUnsafeBufferPointer { key in
                            memcmp(key.baseAddress!, suffix.baseAddress!, length) == 0
                        }
                        if same { return vendors[entry.index].name }
                    }
                    return nil
                }
                let suffix = String(decoding: UnsafeBufferPointer(rebasing: lower[start..<hostCount]), as: UTF8.self)
                return hostIndex[suffix].map { vendors[$0].name }
            }
            // The host and each suffix after a `.`, as the loop in vendorByCharacters, looked up
            // only when a key has its length.
            if hostCount < 64 && hostLengths != nil {
                // The listed lengths up to the host's (`shortHostLengths` holds every key length
                // then), longest first: the suffix of such a length is one the loop below looks
                // up when it is the whole host or follows a `.` — the same suffixes in the same
                // order, without reading the host for its dots.
                var lengths = shortHostLengths & (hostCount == 63 ? ~0 : (1 << UInt64(hostCount + 1)) - 1)
                while lengths != 0 {
                    let length = 63 - lengths.leadingZeroBitCount
                    lengths &= ~(1 << UInt64(length))
                    let start = hostCount - length
                    guard start == 0 || lower[start - 1] == 0x2E else { continue }
                    if let vendor = hostVendor(from: start) { return .some(vendor) }
                }
            } else {
                var start = 0
                while true {
                    let length = hostCount - start
                    // (`hostLengths?.contains(length) ?? true`, from the bits when the length is short.)
                    let listed = length < 64 ? shortHostLengths & (1 << UInt64(length)) != 0 : hostLengths?.contains(length) ?? true
                    if listed, let vendor = hostVendor(from: start) { return .some(vendor) }
                    var dot = start
                    while dot < hostCount && lower[dot] != 0x2E { dot += 1 }
                    guard dot < hostCount else { break }
                    start = dot + 1
                }
            }
            var text: String?
            for k in 0..<literalRanges.count {
                if let literal = literalRanges[k] {
                    let found = literalBytes.withUnsafeBufferPointer { ByteSearch.contains(lower, UnsafeBufferPointer(rebasing: $0[literal])) }
                    if !found { continue }
                }
                let (index, box, _) = compiled[k]
                // `matchText`: the lowercased host, then path and query as they are.
                let matchText = text ?? String(decoding: UnsafeBufferPointer(rebasing: lower[0..<hostCount]), as: UTF8.self)
                    + String(decoding: pathAndQuery, as: UTF8.self)
                text = matchText
                let range = NSRange(matchText.startIndex..., in: matchText)
                if box.regex.firstMatch(in: matchText, options: [], range: range) != nil { return .some(vendors[index].name) }
            }
            return .some(nil)
        }
    }

    /// ``vendor(for:)`` by `Character`s (hosts or paths with non-ASCII text).
    func vendorByCharacters(for url: URLComponentsLite) -> String? {
        var host = url.host
        while true {
            if let index = hostIndex[host] { return vendors[index].name }
            guard let dot = host.firstIndex(of: ".") else { break }
            host = String(host[host.index(after: dot)...])
        }
        let text = url.matchText
        let lower = Array(text.lowercased().utf8)
        let range = NSRange(text.startIndex..., in: text)
        for (index, box, literal) in compiled {
            // A regex can only match if its required literal occurs (see requiredLiteral).
            if let literal, !ByteSearch.contains(lower, literal) { continue }
            if box.regex.firstMatch(in: text, options: [], range: range) != nil { return vendors[index].name }
        }
        return nil
    }

    /// The vendor by running every regex (no literal pre-filter); for tests of the pre-filter.
    func vendorWithoutPrefilter(for url: URLComponentsLite) -> String? {
        let text = url.matchText
        let range = NSRange(text.startIndex..., in: text)
        for (index, box, _) in compiled where box.regex.firstMatch(in: text, options: [], range: range) != nil {
            return vendors[index].name
        }
        return hostVendor(url.host)
    }

    private func hostVendor(_ start: String) -> String? {
        var host = start
        while true {
            if let index = hostIndex[host] { return vendors[index].name }
            guard let dot = host.firstIndex(of: ".") else { return nil }
            host = String(host[host.index(after: dot)...])
        }
    }

    /// A lowercase literal that every match of `pattern` must contain, or `nil` when the
    /// pattern is too complex to tell (alternation). Conservative: characters inside groups,
    /// classes, or followed by `?`, `*` or `{` are not counted; `.` and escapes like `\d` end a
    /// run. The longest run of 3 or more characters is returned.
    static func requiredLiteral(_ pattern: String) -> String? {
        let chars = Array(pattern)
        if chars.contains("|") { return nil }
        var runs: [String] = []
        var current = ""
        var depth = 0
        var i = 0
        func endRun() { if !current.isEmpty { runs.append(current); current = "" } }
        while i < chars.count {
            let c = chars[i]
            var literal: Character?
            switch c {
            case "\\":
                guard i + 1 < chars.count else { return nil }
                let n = chars[i + 1]
                i += 2
                if n.isLetter || n.isNumber { endRun(); continue }
                literal = n
            case "[":
                endRun()
                i += 1
                while i < chars.count && chars[i] != "]" { i += chars[i] == "\\" ? 2 : 1 }
                i += 1
                continue
            case "(":
                endRun(); depth += 1; i += 1; continue
            case ")":
                endRun(); depth -= 1; i += 1; continue
            case "?", "*", "{":
                if !current.isEmpty { current.removeLast() }
                endRun()
                if c == "{" { while i < chars.count && chars[i] != "}" { i += 1 } }
                i += 1
                continue
            case "^", "$", ".", "+":
                endRun(); i += 1; continue
            default:
                literal = c
                i += 1
            }
            guard let literal else { continue }
            if i < chars.count, chars[i] == "?" || chars[i] == "*" || chars[i] == "{" {
                endRun()
                continue
            }
            if depth == 0 { current.append(literal) } else { endRun() }
        }
        endRun()
        guard let best = runs.max(by: { $0.count < $1.count }), best.count >= 3 else { return nil }
        return best.lowercased()
    }
}

/// One pattern of a ``TrackerList``: its `NSRegularExpression` (case-insensitive), compiled
/// when the list was read or, for the built-in list's known-good patterns, on first use (once,
/// under a lock; every copy of the list shares it). `NSRegularExpression` is immutable and
/// thread-safe once made, which the `@unchecked Sendable` states.
///
/// Trust-model row: inbox (incoming mail) — the same tracker verdicts, without starting ICU's
/// regular-expression engine in processes whose URLs never reach a pattern.
final class TrackerPattern: @unchecked Sendable {
    let pattern: String
    private let lock = NSLock()
    private var compiled: NSRegularExpression?

    init(_ pattern: String, compiled: NSRegularExpression?) {
        self.pattern = pattern
        self.compiled = compiled
    }

    /// The compiled expression. A pattern given without one is a constant the tests compile,
    /// so compiling it cannot fail.
    var regex: NSRegularExpression {
        lock.withLock {
            if let compiled { return compiled }
            let made = try! NSRegularExpression(pattern: pattern, options: [.caseInsensitive])
            compiled = made
            return made
        }
    }

    /// Whether the expression has been compiled (for tests of the lazy built-in list).
    var isCompiled: Bool { lock.withLock { compiled != nil } }
}

/// A tracker list that cannot be read.
///
/// Trust-model row: inbox — a broken list is reported, never silently ignored.
public enum TrackerListError: RampartError, Equatable {
    case badHeader
    case badLine(Int)
    case badPattern(vendor: String, pattern: String)
    case badJSON

    public var code: String {
        switch self {
        case .badHeader: "mailSafety.trackerList.badHeader"
        case .badLine: "mailSafety.trackerList.badLine"
        case .badPattern: "mailSafety.trackerList.badPattern"
        case .badJSON: "mailSafety.trackerList.badJSON"
        }
    }

    public var description: String {
        switch self {
        case .badHeader: "The tracker list does not start with the line 'rampart-trackers 1'."
        case .badLine(let n): "Line \(n) of the tracker list is not 'vendor NAME', 'host DOMAIN' or 'regex PATTERN' (or comes before any vendor)."
        case .badPattern(let vendor, let pattern): "The tracker pattern '\(pattern)' of vendor '\(vendor)' is not a valid regular expression."
        case .badJSON: "The tracker list is not JSON of the form {\"trackers\": {vendor: [pattern, ...]}}."
        }
    }
}

/// Query parameters that identify the recipient or the campaign in links (`utm_*`, `mc_eid`, ...),
/// stripped from links by the sanitizer.
///
/// Trust-model row: inbox — links in mail can carry trackers.
public enum TrackingParameters {
    /// Exact names (lowercased).
    public static let names: Set<String> = [
        "mc_eid", "mc_cid", "fbclid", "gclid", "dclid", "msclkid", "yclid", "_hsenc", "_hsmi", "mkt_tok",
        "oly_enc_id", "oly_anon_id", "vero_id", "vero_conv", "__s", "ss_email_id", "_ke", "trk_contact",
        "trk_msg", "trk_module", "trk_sid", "rb_clickid", "s_cid", "ml_subscriber", "ml_subscriber_hash",
        "wickedid", "igshid", "sc_cid", "ncid", "icid", "mkwid", "pcrid", "epik",
    ]
    /// Prefixes (lowercased): `utm_source`, `utm_medium`, ...
    public static let prefixes: [String] = ["utm_", "pk_", "mtm_", "hsa_"]

    public static func isTracking(_ name: String) -> Bool {
        let lower = URLPolicy.percentDecode(name).lowercased()
        return names.contains(lower) || prefixes.contains { lower.hasPrefix($0) }
    }

    static let nameTable = ASCIINameTable(names)

    /// ``isTracking(_:)`` of the ASCII name `bytes[range]` without `%` (so percent-decoding is
    /// the identity and lowercasing is ASCII lowercasing).
    private static func isTrackingASCII(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        // The prefixes `utm_`, `pk_`, `mtm_`, `hsa_`, compared with the ASCII-lowercased bytes
        // (first: they are the usual case, and cheaper than the table), then the names.
        guard range.count >= 3 else { return nameTable.value(bytes, range, lowercasing: true) != nil }
        @inline(__always) func lower(_ k: Int) -> UInt8 {
            let b = bytes[range.lowerBound + k]
            return b >= 0x41 && b <= 0x5A ? b | 0x20 : b
        }
        let (a, b, c) = (lower(0), lower(1), lower(2))
        if a == 0x70 && b == 0x6B && c == 0x5F { return true }  // pk_
        if range.count >= 4 && bytes[range.lowerBound + 3] == 0x5F
            && ((a == 0x75 && b == 0x74 && c == 0x6D)  // utm_
                || (a == 0x6D && b == 0x74 && c == 0x6D)  // mtm_
                || (a == 0x68 && b == 0x73 && c == 0x61)) {  // hsa_
            return true
        }
        return nameTable.value(bytes, range, lowercasing: true) != nil
    }

    private enum ASCIIStrip { case result(url: String, removed: [String]), notASCII }

    /// ``strip(_:)`` on the bytes of an all-ASCII URL (every `Character` is one byte; a cleaned
    /// URL holds no CR LF pair). Names with `%` go through ``isTracking(_:)`` as before.
    private static func stripASCII(_ url: String) -> ASCIIStrip {
        let result: ASCIIStrip? = url.utf8.withContiguousStorageIfAvailable { bytes -> ASCIIStrip in
            var union: UInt8 = 0
            for index in 0..<bytes.count { union |= bytes[index] }
            if union >= 0x80 { return .notASCII }
            let stripped = stripASCII(bytes, names: true)
            return .result(url: stripped.url ?? url, removed: stripped.names)
        }
        return result ?? .notASCII
    }

    /// The stripping of ``stripASCII(_:)`` on the bytes of an all-ASCII URL: the stripped URL
    /// (`nil` when no parameter is removed, i.e. the URL stays as it is), how many parameters
    /// were removed, and their names when `names` is set (the link fast path needs only the
    /// count, and skips making a `String` per name).
    static func stripASCII(_ bytes: UnsafeBufferPointer<UInt8>, names: Bool) -> (url: String?, removedCount: Int, names: [String]) {
        let n = bytes.count
        // The first `?` before the first `#`, then that `#` (or the end).
        let question = ByteSearch.firstIndex(of: 0x3F, in: bytes, from: 0)
        let hash = ByteSearch.firstIndex(of: 0x23, in: bytes, from: 0)
        guard question < hash else { return (nil, 0, []) }
        // An upper bound on the query's items: one more than its `&`s, each of them a byte of it.
        let items = hash - question
        // The query is what lies between the first `?` and the first `#` (see strip). The kept
        // items' ranges go to a buffer on the stack (`items` bounds their number).
        return withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: items) { kept -> (url: String?, removedCount: Int, names: [String]) in
            var keptCount = 0
            var removed: [String] = []
            var removedCount = 0
            var itemStart = question + 1
            while true {
                let itemEnd = ByteSearch.firstIndex(of: 0x26, in: bytes, from: itemStart, to: hash)
                // The name runs to the first `=`; `percent`: it holds a `%`.
                var nameEnd = ASCIIWords.firstIndex(of: 0x3D, or: 0x25, in: bytes, from: itemStart, to: itemEnd)
                let percent = nameEnd < itemEnd && bytes[nameEnd] == 0x25
                if percent { nameEnd = ByteSearch.firstIndex(of: 0x3D, in: bytes, from: nameEnd, to: itemEnd) }
                let name = itemStart..<nameEnd
                let tracking = percent
                    ? isTracking(String(decoding: UnsafeBufferPointer(rebasing: bytes[name]), as: UTF8.self))
                    : isTrackingASCII(bytes, name)
                if tracking {
                    removedCount += 1
                    if names {
                        if removed.isEmpty { removed.reserveCapacity(min(items, 8)) }
                        removed.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[name]), as: UTF8.self))
                    }
                } else {
                    kept.initializeElement(at: keptCount, to: itemStart..<itemEnd)
                    keptCount += 1
                }
                if itemEnd >= hash { break }
                itemStart = itemEnd + 1
            }
            guard removedCount > 0 else { return (nil, 0, []) }
            // Base, `?` and the kept items joined by `&`, the fragment: never longer than the URL.
            let stripped = String(unsafeUninitializedCapacity: n) { out in
                guard let source = bytes.baseAddress, let target = out.baseAddress else { return 0 }
                var count = 0
                func copy(_ range: Range<Int>) {
                    (target + count).initialize(from: source + range.lowerBound, count: range.count)
                    count += range.count
                }
                copy(0..<question)
                // `a?&` keeps one empty item: the query is "" and no `?` is written, as before.
                if !(keptCount == 1 && kept[0].isEmpty) {
                    for index in 0..<keptCount {
                        target[count] = index == 0 ? 0x3F : 0x26
                        count += 1
                        copy(kept[index])
                    }
                }
                copy(hash..<n)
                return count
            }
            return (stripped, removedCount, removed)
        }
    }

    /// The URL with tracking parameters removed, and the names removed (empty if none).
    public static func strip(_ url: String) -> (url: String, removed: [String]) {
        if case .result(let stripped, let removed) = stripASCII(url) { return (stripped, removed) }
        return stripByCharacters(url)
    }

    /// ``strip(_:)`` by `Character`s, for URLs with non-ASCII text (and the reference the byte
    /// version is tested against).
    static func stripByCharacters(_ url: String) -> (url: String, removed: [String]) {
        // The query is what lies between the first `?` and the first `#`; a `?` in the fragment
        // starts no query (read as one, a second pass stripped parameters from the fragment that
        // the first pass kept: found by the sanitizer fuzz target's idempotence oracle).
        let hash = url.firstIndex(of: "#") ?? url.endIndex
        guard let q = url[..<hash].firstIndex(of: "?") else { return (url, []) }
        let base = url[..<q]
        let query = url[url.index(after: q)..<hash]
        let fragment = url[hash...]
        var kept: [Substring] = []
        var removed: [String] = []
        for item in query.split(separator: "&", omittingEmptySubsequences: false) {
            let name = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            if isTracking(name) { removed.append(name) } else { kept.append(item) }
        }
        guard !removed.isEmpty else { return (url, []) }
        let newQuery = kept.joined(separator: "&")
        return (String(base) + (newQuery.isEmpty ? "" : "?" + newQuery) + String(fragment), removed)
    }
}
