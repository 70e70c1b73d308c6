/// The shape of a common URL read straight from its bytes, for the link and resource fast paths
/// of ``ResourceGate``: what ``URLPolicy/clean(_:)``, ``URLPolicy/classify(cleaned:)`` and
/// ``URLComponentsLite`` would find, without making their `String`s. Anything unusual is
/// `nil`, and the caller takes the full path (which stays the reference; `FastPathTests`
/// compares both on generated URLs).
///
/// Trust-model row: inbox (incoming mail) — the same URL decisions, read from bytes.
enum URLFastPath {
    enum Shape {
        /// `#fragment`.
        case fragment
        /// `mailto:` or `tel:`.
        case contact
        /// `cid:` (a part of the message).
        case contentID
        /// `http:` or `https:` with a plain host: `host` is the range of the host's bytes (any
        /// case, no trailing dots), `pathAndQuery` that of what follows it up to the first `#`.
        case remote(host: Range<Int>, pathAndQuery: Range<Int>)
    }

    /// The shape of `bytes`, or `nil` when the fast paths leave the URL to the full path.
    ///
    /// Handled only when every byte is printable ASCII (0x21–0x7F): then ``URLPolicy/clean(_:)``
    /// returns the URL unchanged (it removes bytes ≤ 0x20 only) and the `Character` and byte
    /// views agree. A `\` anywhere (read as `/`), a leading `/` (scheme-relative), a host with
    /// `%` (percent-decoded by the full path), an IP literal `[…]` or an empty host go to the
    /// full path.
    static func shape(_ bytes: UnsafeBufferPointer<UInt8>) -> Shape? {
        let n = bytes.count
        guard n > 0 else { return nil }
        // Printable ASCII without `\`: eight bytes at a time, then the rest.
        var k = 0
        while k + 8 <= n {
            let w = ASCIIWords.word(bytes, at: k)
            if w & ASCIIWords.highBits != 0 || ASCIIWords.hasByte(w, below: 0x21) || ASCIIWords.hasByte(w, equalTo: 0x5C) { return nil }
            k += 8
        }
        while k < n {
            let byte = bytes[k]
            if byte <= 0x20 || byte >= 0x80 || byte == 0x5C { return nil }
            k += 1
        }
        // `classify` tests the scheme-relative prefixes (`//`, `/\`) first: none starts with `#`.
        if bytes[0] == 0x23 { return .fragment }
        // ASCII case folding: `b | 0x20` equals a lowercase letter exactly when `b` is that
        // letter in either case. The scheme is everything before the first `:`, and these
        // prefixes are all letters, so `scheme(of:)` returns exactly them lowercased.
        func letters(_ word: StaticString, at offset: Int) -> Bool {
            let count = word.utf8CodeUnitCount
            guard offset + count <= n else { return false }
            for k in 0..<count where bytes[offset + k] | 0x20 != word.utf8Start[k] { return false }
            return true
        }
        let colon: Int
        if letters("http", at: 0) {
            if n > 4 && bytes[4] == 0x3A {
                colon = 4
            } else if n > 5 && bytes[4] | 0x20 == 0x73 && bytes[5] == 0x3A {
                colon = 5
            } else {
                return nil
            }
        } else if (letters("mailto", at: 0) && n > 6 && bytes[6] == 0x3A) || (letters("tel", at: 0) && n > 3 && bytes[3] == 0x3A) {
            return .contact
        } else if letters("cid", at: 0) && n > 3 && bytes[3] == 0x3A {
            return .contentID
        } else {
            return nil
        }
        // As `URLComponentsLite.parseAfterScheme`: slashes after the scheme are skipped; the
        // authority ends at `/`, `?` or `#`; the host follows the last `@` and ends before the
        // last `:` (the port); trailing dots are dropped.
        var start = colon + 1
        while start < n && bytes[start] == 0x2F { start += 1 }
        // The authority's end, noting on the way whether it holds `@`, `:` or `%` at all: most
        // do not, and then the host is the whole authority and the three scans below, each over
        // the authority again, would find nothing. (One bit test per byte below 0x40: bit `b`
        // of `stops` is set for `#`, `%`, `/`, `:`, `?`.)
        let stops: UInt64 = 1 << 0x23 | 1 << 0x25 | 1 << 0x2F | 1 << 0x3A | 1 << 0x3F
        var hostEnd = start
        var special = false
        while hostEnd < n {
            let byte = bytes[hostEnd]
            if byte < 0x40 {
                if stops >> UInt64(byte) & 1 != 0 {
                    if byte == 0x2F || byte == 0x3F || byte == 0x23 { break }
                    special = true
                }
            } else if byte == 0x40 {
                special = true
            }
            hostEnd += 1
        }
        var hostStart = start
        if special { for k in start..<hostEnd where bytes[k] == 0x40 { hostStart = k + 1 } }
        if hostStart < hostEnd && bytes[hostStart] == 0x5B { return nil }
        var end = hostEnd
        if special {
            for k in hostStart..<hostEnd where bytes[k] == 0x3A { end = k }
            for k in hostStart..<end where bytes[k] == 0x25 { return nil }
        }
        while end > hostStart && bytes[end - 1] == 0x2E { end -= 1 }
        guard end > hostStart else { return nil }
        let hash = ByteSearch.firstIndex(of: 0x23, in: bytes, from: hostEnd)
        return .remote(host: hostStart..<end, pathAndQuery: hostEnd..<hash)
    }
}

extension ResourceGate {
    /// ``link(_:)`` for the common links, on the URL's bytes: `nil` when not handled (see
    /// ``URLFastPath/shape(_:)``), else what the full path returns, with the same report entries
    /// in the same order. Every handled link is kept, as by the full path: fragments and
    /// contacts unchanged, `http(s)` with tracking parameters stripped.
    func linkFastPath(_ raw: String) -> String? {
        let answer: String?? = raw.utf8.withContiguousStorageIfAvailable { bytes -> String? in
            guard let shape = URLFastPath.shape(bytes) else { return nil }
            let host: Range<Int>
            let pathAndQuery: Range<Int>
            switch shape {
            case .fragment, .contact: return raw
            case .contentID: return nil  // (not a link: the full path reports it)
            case .remote(let h, let p): (host, pathAndQuery) = (h, p)
            }
            // (The bytes are ASCII, so `vendor` always answers; were it not to, the full path.)
            guard let vendor = options.trackers.vendor(host: UnsafeBufferPointer(rebasing: bytes[host]),
                                                       pathAndQuery: UnsafeBufferPointer(rebasing: bytes[pathAndQuery]))
            else { return nil }
            if let vendor { tracker(raw, .knownTracker, vendor: vendor) }
            guard options.stripTrackingParameters else { return raw }
            let stripped = TrackingParameters.stripASCII(bytes, names: false)
            if stripped.removedCount > 0 {
                findings.note(.trackingParameter, stripped.removedCount)
                tracker(raw, .linkParameters)
            }
            // The stripped URL is made of the URL's own bytes, all above 0x20: `clean` would
            // return it unchanged.
            return stripped.url ?? raw
        }
        return answer ?? nil
    }
}

extension ResourceGate {
    /// ``resource(_:kind:isPixel:)`` for common URLs, on the URL's bytes: `nil` when not handled
    /// (see ``URLFastPath/shape(_:)``; also `<use>` references, and an app scheme for embedded
    /// images that could equal the URL's own scheme), else what the full path decides, with the
    /// same report entries in the same order.
    func resourceFastPath(_ raw: String, kind: RemoteResourceKind, isPixel: Bool) -> Decision? {
        guard kind != .svgUse else { return nil }
        // A URL the app serves embedded images at is left to the full path (which keeps it).
        if case .served(let prefix) = options.embeddedImages, raw.hasPrefix(prefix) { return nil }
        if case .appScheme(let scheme) = options.embeddedImages {
            // The full path loads a URL of the app's scheme as it is; the shapes handled here
            // have the schemes below, so any other app scheme cannot match.
            switch scheme.lowercased() {
            case "http", "https", "mailto", "tel", "cid": return nil
            default: break
            }
        }
        let answer: Decision?? = raw.utf8.withContiguousStorageIfAvailable { bytes -> Decision? in
            guard let shape = URLFastPath.shape(bytes) else { return nil }
            let host: Range<Int>
            let pathAndQuery: Range<Int>
            switch shape {
            case .fragment, .contact:
                // A fragment (not for `<use>`) or a contact link is no resource.
                findings.note(.unsafeURL)
                return .drop
            case .contentID:
                // As the full path: never a style sheet or media; with no attachments at all,
                // nothing to resolve (the lookup and the embedding are left to the full path).
                guard kind != .stylesheet, kind != .media else {
                    findings.note(.unsafeURL)
                    return .drop
                }
                guard options.attachments.isEmpty else { return nil }
                findings.note(.missingAttachment)
                return .drop
            case .remote(let h, let p): (host, pathAndQuery) = (h, p)
            }
            guard let vendor = options.trackers.vendor(host: UnsafeBufferPointer(rebasing: bytes[host]),
                                                       pathAndQuery: UnsafeBufferPointer(rebasing: bytes[pathAndQuery]))
            else { return nil }
            // From here as the `.remote` case of the full path (`clean` returned `raw`).
            return remote(raw, kind: kind, vendor: vendor, isPixel: isPixel)
        }
        return answer ?? nil
    }
}
