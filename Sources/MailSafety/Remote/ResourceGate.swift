import Foundation

/// The single place every URL of a message goes through, for HTML attributes and CSS alike: it
/// resolves `cid:`, keeps safe `data:` images, applies the remote-content policy and the tracker
/// list, and records what it did in the report.
///
/// Trust-model row: inbox (incoming mail) — remote content blocked unless allowed; trackers.
final class ResourceGate {
    enum Decision: Equatable {
        /// Keep, with this (possibly rewritten) URL.
        case load(String)
        /// Remote and not allowed (or a tracker): move to a placeholder with this URL.
        case block(String)
        /// Unsafe or unusable: remove.
        case drop
    }

    let options: SanitizerOptions
    /// What the report will say, as it is collected (see ``Findings``).
    var findings = Findings()

    /// The report: what ``findings`` collected so far.
    var report: SanitizationReport { findings.report }

    init(options: SanitizerOptions) { self.options = options }

    /// Lists a blocked resource in the report (once).
    func block(_ url: String, _ kind: RemoteResourceKind) {
        findings.block(BlockedResource(url: url, kind: kind))
    }

    /// Lists a tracker finding in the report (once).
    func tracker(_ url: String, _ reason: TrackerFinding.Reason, vendor: String? = nil) {
        findings.tracker(TrackerFinding(url: url, reason: reason, vendor: vendor))
    }

    /// Decides on a resource URL (something the viewer would load without a click).
    func resource(_ raw: String, kind: RemoteResourceKind, isPixel: Bool = false) -> Decision {
        if let decision = resourceFastPath(raw, kind: kind, isPixel: isPixel) { return decision }
        return resourceByParts(raw, kind: kind, isPixel: isPixel)
    }

    /// ``resource(_:kind:isPixel:)`` through ``URLPolicy`` and ``URLComponentsLite``: every URL
    /// the fast path leaves, and the reference it is tested against.
    func resourceByParts(_ raw: String, kind: RemoteResourceKind, isPixel: Bool = false) -> Decision {
        let url = URLPolicy.clean(raw)
        if options.embeddedImages.wrote(url, attachments: options.attachments), kind != .stylesheet, kind != .media {
            // Already resolved by an earlier pass: the app serves it, never the network.
            return .load(url)
        }
        let classification = URLPolicy.classify(cleaned: url)
        if kind == .svgUse {
            // <use> and gradient/pattern references may point inside the message only: a
            // `data:` or remote document could carry script or load more.
            switch classification {
            case .fragment: return .load(url)
            case .remote:
                block(url, kind)
                return .block(url)
            default:
                findings.note(.unsafeURL)
                return .drop
            }
        }
        switch classification {
        case .contentID(let id):
            // An embedded part may stand for an image or a font, never for a style sheet or
            // media: what it resolves to (`data:` or the app's scheme) is refused for those kinds
            // above and below, so resolving it here made a second pass drop what the first kept
            // (found by the sanitizer fuzz target's idempotence oracle: `<source src=cid:…>`
            // outside `<picture>`).
            guard kind != .stylesheet, kind != .media else {
                findings.note(.unsafeURL)
                return .drop
            }
            guard let (key, attachment) = attachment(for: id) else {
                findings.note(.missingAttachment)
                return .drop
            }
            switch options.embeddedImages {
            case .dataURI:
                let mime = attachment.mimeType.lowercased()
                guard URLPolicy.imageMIMETypes.contains(mime) || (kind == .font && URLPolicy.fontMIMETypes.contains(mime)) else {
                    findings.note(.unsafeURL)
                    return .drop
                }
                return .load("data:" + mime + ";base64," + attachment.bytes.base64EncodedString())
            case .appScheme(let scheme):
                let encoded = id.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                return .load(scheme + ":" + encoded)
            case .served(let prefix):
                guard kind != .font, EmbeddedImageStyle.servedImageTypes.contains(attachment.mimeType.lowercased()) else {
                    findings.note(.unsafeURL)
                    return .drop
                }
                return .load(prefix + RemoteProxy.encode(key))
            }
        case .data(let mime):
            let allowed = kind == .font ? URLPolicy.fontMIMETypes.contains(mime) : URLPolicy.imageMIMETypes.contains(mime)
            if allowed && kind != .stylesheet && kind != .media { return .load(url) }
            findings.note(.unsafeURL)
            return .drop
        case .remote(let parts):
            return remote(url, kind: kind, vendor: options.trackers.vendor(for: parts), isPixel: isPixel)
        case .fragment where kind == .svgUse:
            return .load(url)
        default:
            findings.note(.unsafeURL)
            return .drop
        }
    }

    /// A remote resource's decision: blocked as a tracker when `vendor` names a known one or it is
    /// a pixel, loaded when remote content is allowed (never a style sheet; through the remote
    /// proxy when the options name one), blocked otherwise.
    func remote(_ url: String, kind: RemoteResourceKind, vendor: String?, isPixel: Bool) -> Decision {
        if let vendor {
            tracker(url, .knownTracker, vendor: vendor)
        } else if isPixel {
            tracker(url, .pixel)
        } else if options.remote.allowsRemote && kind != .stylesheet {
            guard let proxy = options.remoteProxy else { return .load(url) }
            return .load(proxy.isProxied(url) ? url : proxy.url(for: url))
        }
        block(url, kind)
        return .block(url)
    }

    /// Decides on a link (`href` of `<a>`/`<area>`, `cite`): only `http(s)`, `mailto:`, `tel:`
    /// and `#fragment` survive; tracking parameters are stripped and reported.
    func link(_ raw: String) -> String? {
        if let url = linkFastPath(raw) { return url }
        return linkByParts(raw)
    }

    /// ``link(_:)`` through ``URLPolicy`` and ``URLComponentsLite``: every link the fast path
    /// leaves, and the reference it is tested against.
    func linkByParts(_ raw: String) -> String? {
        let url = URLPolicy.clean(raw)
        switch URLPolicy.classify(cleaned: url) {
        case .remote(let parts):
            if let vendor = options.trackers.vendor(for: parts) { tracker(url, .knownTracker, vendor: vendor) }
            guard options.stripTrackingParameters else { return url }
            let (stripped, removed) = TrackingParameters.strip(url)
            if !removed.isEmpty {
                findings.note(.trackingParameter, removed.count)
                tracker(url, .linkParameters)
            }
            // Removing the query can leave trailing spaces ("https://x.example/a ?utm_source=n"),
            // which the next pass would clean away: clean again so one pass is a fixed point
            // (found by the sanitizer fuzz target's idempotence oracle).
            return URLPolicy.clean(stripped)
        case .contact, .fragment:
            return url
        default:
            findings.note(.unsafeURL)
            return nil
        }
    }

    /// The attachment `id` names, and its key in the options.
    private func attachment(for id: String) -> (String, EmbeddedAttachment)? {
        // No attachments: nothing can match (and normalizing the id costs a Foundation trim).
        if options.attachments.isEmpty { return nil }
        func normalize(_ s: String) -> String {
            var t = s.trimmingCharacters(in: .whitespaces)
            if t.hasPrefix("<") && t.hasSuffix(">") && t.count >= 2 { t = String(t.dropFirst().dropLast()) }
            return t
        }
        let wanted = normalize(id)
        if let exact = options.attachments[wanted] { return (wanted, exact) }
        for (key, value) in options.attachments where normalize(key).lowercased() == wanted.lowercased() { return (key, value) }
        return nil
    }
}

extension ResourceGate {
    /// A ``SanitizationReport`` being collected: the removal counts are kept per kind in a small
    /// array (a `note` is an increment, not a `String`-keyed dictionary update that hashes the
    /// kind's name), and the first appearance order of the kinds is kept so ``report`` inserts
    /// them into the report's dictionary in the order the report's own `note` would have: the
    /// same keys inserted in the same order into an empty dictionary give the same dictionary,
    /// storage layout and iteration order included.
    ///
    /// Trust-model row: inbox — the report says exactly what it said before.
    struct Findings {
        /// Counts by ``RemovalKind/index``; empty until the first note.
        private var counts: [Int] = []
        /// The kinds noted so far, by index, four bits each, in the order of their first note.
        private var order: UInt64 = 0
        private var distinct = 0
        private(set) var blockedRemote: [BlockedResource] = []
        private(set) var trackers: [TrackerFinding] = []
        var truncated = false

        /// What ``blockedRemote`` and ``trackers`` already list, for constant-time
        /// de-duplication (the arrays keep the order; `contains` on them made a message with n
        /// blocked images cost n²). Kept here, with the arrays, so an addition is one access to
        /// the gate's property.
        private var blockedSeen = FindingIndex()
        private var trackersSeen = FindingIndex()

        /// How many blocked resources or tracker findings a message usually has (a capacity
        /// hint: growing from 1 copied the array at each doubling). At most 40 bytes each, the
        /// arrays stay under 1 KiB, glibc's threshold for a consolidation of its fast bins.
        private static let typicalFindings = 24

        /// Lists a blocked resource (once).
        mutating func block(_ item: BlockedResource) {
            if blockedRemote.isEmpty { blockedRemote.reserveCapacity(Self.typicalFindings) }
            blockedSeen.append(item, to: &blockedRemote)
        }

        /// Lists a tracker finding (once).
        mutating func tracker(_ item: TrackerFinding) {
            if trackers.isEmpty { trackers.reserveCapacity(Self.typicalFindings) }
            trackersSeen.append(item, to: &trackers)
        }

        /// ``SanitizationReport/note(_:_:)``.
        mutating func note(_ kind: RemovalKind, _ count: Int = 1) {
            guard count > 0 else { return }
            if counts.isEmpty { counts = Array(repeating: 0, count: RemovalKind.indexCount) }
            let index = kind.index
            if counts[index] == 0 {
                order |= UInt64(index) << UInt64(4 * distinct)
                distinct += 1
            }
            counts[index] += count
        }

        /// The report these findings make.
        var report: SanitizationReport {
            var report = SanitizationReport()
            for k in 0..<distinct {
                let index = Int((order >> UInt64(4 * k)) & 0xF)
                report.note(RemovalKind.byIndex[index], counts[index])
            }
            report.blockedRemote = blockedRemote
            report.trackers = trackers
            report.truncated = truncated
            return report
        }
    }
}

extension RemovalKind {
    /// The number of kinds (at most 16: ``ResourceGate/Findings`` keeps an index in four bits).
    static let indexCount = 16

    /// `allCases`, made once (the kind at each ``index``).
    static let byIndex = allCases

    /// The position of the kind in `allCases`.
    var index: Int {
        switch self {
        case .scriptElement: 0
        case .activeElement: 1
        case .formControl: 2
        case .unknownElement: 3
        case .foreignElement: 4
        case .eventHandler: 5
        case .attribute: 6
        case .unsafeURL: 7
        case .clobberingName: 8
        case .comment: 9
        case .cssDeclaration: 10
        case .cssRule: 11
        case .cssPositioning: 12
        case .missingAttachment: 13
        case .trackingParameter: 14
        case .truncated: 15
        }
    }
}

/// The de-duplication index of a findings array: open addressing over the array's positions,
/// hashed by the URL alone. An item is appended exactly when no listed item is `==` to it (the
/// finding's own `==`, canonical equivalence of the URL included), as `contains` then `append`
/// would. Equal findings have equal URLs, and equal `String`s hash alike (`String` hashes its
/// normalized form, as a `Set` of the findings would), so an equal listed item is always on the
/// probe path; the kind, reason and vendor, which rarely tell two findings of one URL apart, are
/// left to `==`. The hash is `Hasher`'s (seeded per process), so crafted URLs cannot make the
/// probes long.
///
/// Trust-model row: inbox — each blocked resource and tracker is reported once, as before. It
/// replaces a `Set` of the findings themselves: that set copied every finding (a retain of its
/// URL and of its vendor) and kept it in 24–40-byte buckets reserved 64 at a time, an allocation
/// over 1 KiB per message, each of which makes glibc's `malloc` consolidate its fast bins first.
/// A slot here is 8 bytes: 32 bits of the hash (which also place the slot) and the position + 1
/// (0: empty).
struct FindingIndex {
    private var slots: [UInt64] = []
    private var count = 0

    /// Appends `item` to `items` unless an item `==` to it is listed there. `items` must be the
    /// array this index has always been used with (every append to it made here).
    mutating func append<Item: Equatable & HasFindingURL>(_ item: Item, to items: inout [Item]) {
        var hasher = Hasher()
        hasher.combine(item.url)
        let hash = UInt64(UInt32(truncatingIfNeeded: hasher.finalize()))
        // Room for a message's usual findings (24 before the first growth), in 256 bytes.
        if slots.isEmpty { slots = Array(repeating: 0, count: 32) }
        var slot = Int(truncatingIfNeeded: hash) & (slots.count - 1)
        while slots[slot] != 0 {
            let entry = slots[slot]
            // (The hashes first: most slots on the way hold another URL.)
            if entry >> 32 == hash && items[Int(truncatingIfNeeded: entry & 0xFFFF_FFFF) - 1] == item { return }
            slot = (slot + 1) & (slots.count - 1)
        }
        items.append(item)
        slots[slot] = hash << 32 | UInt64(items.count)
        count += 1
        // At most three quarters full, so a probe always ends at an empty slot.
        if count * 4 > slots.count * 3 { grow() }
    }

    /// Doubles the slots; each entry is placed again by the hash it keeps.
    private mutating func grow() {
        var larger = [UInt64](repeating: 0, count: slots.count * 2)
        let mask = larger.count - 1
        for entry in slots where entry != 0 {
            var slot = Int(truncatingIfNeeded: entry >> 32) & mask
            while larger[slot] != 0 { slot = (slot + 1) & mask }
            larger[slot] = entry
        }
        slots = larger
    }
}

/// A report entry with a URL (see ``FindingIndex``).
protocol HasFindingURL { var url: String { get } }
extension BlockedResource: HasFindingURL {}
extension TrackerFinding: HasFindingURL {}
