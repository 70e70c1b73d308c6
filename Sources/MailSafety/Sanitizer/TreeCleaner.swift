import Foundation
import HTML5

/// The tree walk: decides for each node whether it is kept, unwrapped or removed, and cleans the
/// attributes of what is kept. Iterative (no recursion), so deep trees cannot overflow the stack.
///
/// Trust-model row: inbox (incoming mail) — the allowlist with namespace checks.
struct TreeCleaner {
    let gate: ResourceGate
    let css: CSSSanitizer
    let options: SanitizerOptions

    private enum Action { case keep, keepWithoutChildren, remove, unwrap }

    mutating func clean(_ root: Node) {
        var node = root.firstChild
        var depth = 1
        while let current = node {
            switch decide(current, depth: depth) {
            case .keep:
                if let child = current.firstChild {
                    node = child
                    depth += 1
                } else {
                    (node, depth) = Self.next(after: current, depth: depth, root: root)
                }
            case .keepWithoutChildren:
                (node, depth) = Self.next(after: current, depth: depth, root: root)
            case .remove:
                let following = Self.next(after: current, depth: depth, root: root)
                current.remove()
                (node, depth) = following
            case .unwrap:
                if let first = current.firstChild {
                    current.unwrap()
                    node = first
                } else {
                    let following = Self.next(after: current, depth: depth, root: root)
                    current.remove()
                    (node, depth) = following
                }
            }
        }
    }

    private static func next(after node: Node, depth: Int, root: Node) -> (Node?, Int) {
        var x = node
        var d = depth
        while x !== root {
            if let sibling = x.nextSibling { return (sibling, d) }
            guard let parent = x.parent else { return (nil, d) }
            x = parent
            d -= 1
        }
        return (nil, d)
    }

    private func decide(_ node: Node, depth: Int) -> Action {
        if node is Text { return .keep }
        if node is Comment { gate.findings.note(.comment); return .remove }
        guard let element = node as? Element else { return .remove }
        if depth > options.limits.maxDepth {
            gate.findings.truncated = true
            gate.findings.note(.truncated)
            return .remove
        }
        let parentNamespace = (element.parent as? Element)?.namespace ?? .html
        switch element.namespace {
        case .html:
            guard parentNamespace == .html else { gate.findings.note(.foreignElement); return .remove }
            let name = element.localName
            switch Allowlist.htmlElementRule(tag: element.tag, localName: name) {
            case .keep?:
                cleanAttributes(element)
                return .keep
            case .drop(let kind)?:
                gate.findings.note(kind)
                if name == "link", let href = element[attribute: "href"] { _ = gate.resource(href, kind: .stylesheet) }
                if name == "input", element[attribute: "type"]?.lowercased() == "image", let src = element[attribute: "src"] {
                    _ = gate.resource(src, kind: .inputImage)
                }
                return .remove
            case .unwrap(let kind)?:
                gate.findings.note(kind)
                return .unwrap
            case nil:
                gate.findings.note(.unknownElement)
                return .unwrap
            case .style?:
                let sheet = css.sanitizeStyleSheet(element.textContent)
                guard !sheet.isEmpty else { gate.findings.note(.cssRule, 0); return .remove }
                element.removeAllChildren()
                element.appendChild(Text(sheet))
                element.attributes = []
                return .keepWithoutChildren
            }
        case .svg:
            let allowedHere = parentNamespace == .svg || (element.localName == "svg" && parentNamespace == .html)
            guard allowedHere else { gate.findings.note(.foreignElement); return .remove }
            guard Allowlist.svgElementTable.contains(element.localName) else {
                gate.findings.note(element.localName == "script" ? .scriptElement : .activeElement)
                return .remove
            }
            cleanAttributes(element)
            if element.localName == "use", element.attribute("href") == nil, element.attribute("href", namespace: .xlink) == nil,
               element.attribute("data-rampart-href") == nil, element.attribute("data-rampart-xlink-href") == nil {
                return .remove
            }
            return .keep
        case .mathml:
            let allowedHere = parentNamespace == .mathml || (element.localName == "math" && parentNamespace == .html)
            guard allowedHere else { gate.findings.note(.foreignElement); return .remove }
            guard Allowlist.mathMLElementTable.contains(element.localName) else { gate.findings.note(.activeElement); return .remove }
            cleanAttributes(element)
            return .keep
        }
    }

    // MARK: Attributes

    private static let placeholderPrefix = "data-rampart-"

    /// `name.lowercased() == "style"`, on the bytes when `name` is ASCII (then `lowercased()` is
    /// ASCII lowercasing), else as that `String` comparison.
    private static func isStyleName(_ name: String) -> Bool {
        let answer: Bool?? = name.utf8.withContiguousStorageIfAvailable { bytes -> Bool? in
            var union: UInt8 = 0
            for byte in bytes { union |= byte }
            guard union < 0x80 else { return nil }
            guard bytes.count == 5 else { return false }
            // `b | 0x20` is a given lowercase letter exactly when `b` is that letter in either case.
            return bytes[0] | 0x20 == 0x73 && bytes[1] | 0x20 == 0x74 && bytes[2] | 0x20 == 0x79
                && bytes[3] | 0x20 == 0x6C && bytes[4] | 0x20 == 0x65
        }
        if let answer, let known = answer { return known }
        return name.lowercased() == "style"
    }

    /// Placeholder attributes (`data-rampart-src`) are read back as the attribute they stand
    /// for, so sanitizing sanitized output gives the same output.
    private static func restoredName(_ attribute: Attribute) -> Attribute {
        guard attribute.namespace == nil, attribute.name.hasPrefix(placeholderPrefix) else { return attribute }
        let original = String(attribute.name.dropFirst(placeholderPrefix.count))
        switch original {
        case "src", "srcset", "poster", "background", "href": return Attribute(name: original, value: attribute.value)
        case "xlink-href": return Attribute(name: "href", value: attribute.value, namespace: .xlink)
        default: return attribute
        }
    }

    private static func placeholder(for attribute: Attribute) -> String {
        let name = attribute.qualifiedName
        // `:` is ASCII: a name without the byte has nothing to replace.
        guard name.utf8.contains(0x3A) else { return placeholderPrefix + name }
        return placeholderPrefix + name.replacingOccurrences(of: ":", with: "-")
    }

    private func cleanAttributes(_ element: Element) {
        // Nothing to clean, and nothing to add (target/rel go only with a kept href).
        // The attributes are read once (each read of the element's property is an access check
        // and a retain); the element's own array is written only at the end.
        let originals = element.attributes
        if originals.isEmpty { return }
        var kept = KeptAttributes(originals)
        // An image's style is sanitized first and the pixel check reads what is kept: a hiding
        // style the CSS sanitizer drops is not in the output, so a check of the raw style blocked
        // the image on the first pass and the second pass loaded it (found by the sanitizer fuzz
        // target's idempotence oracle).
        let isHTML = element.namespace == .html
        let isImage = isHTML && element.tag == .img  // (by interned tag: `element.isHTML("img")`)
        let styleIndex = isImage ? originals.firstIndex(where: { $0.namespace == nil && Self.isStyleName($0.name) }) : nil
        let keptStyle = styleIndex.flatMap { css.sanitizeStyleAttribute(originals[$0].value) }
        let isPixel = isImage && Self.looksLikePixel(element, style: keptStyle)
        // Placeholders are read back as the attribute they stand for; then a name may repeat.
        // (A name whose first byte is not `d` cannot start with "data-rampart-": `d` is ASCII.)
        let hasPlaceholders = originals.contains { $0.name.utf8.first == 0x64 && $0.name.hasASCIIPrefix("data-rampart-") }
        var seen = Set<String>()
        for (index, original) in originals.enumerated() {
            let attribute = hasPlaceholders ? Self.restoredName(original) : original
            let nameHasUppercase = attribute.name.containsASCIIUppercase
            let lowerName = nameHasUppercase ? attribute.name.lowercased() : attribute.name
            if hasPlaceholders { guard seen.insert(attribute.qualifiedName).inserted else { continue } }
            if lowerName.hasASCIIPrefix("on") { gate.findings.note(.eventHandler); continue }
            if attribute.namespace == .xmlns || attribute.namespace == .xml { gate.findings.note(.attribute); continue }
            // Placeholder names are in no table: only names the table does not know need the test.
            let info = Allowlist.attributeInfo.value(lowerName)
            if attribute.namespace == nil && info == nil && lowerName.hasASCIIPrefix("data-rampart-") { gate.findings.note(.attribute); continue }
            // An attribute without namespace on an HTML element whose name (already lowercase)
            // has an entry in the info table: the entry holds the URL table's answer for it.
            let urlUse: Allowlist.URLAttribute?
            if !nameHasUppercase, let info, attribute.namespace == nil, isHTML {
                urlUse = info.urlName.map { Allowlist.htmlURLAttribute($0, element: element) }
            } else {
                urlUse = Allowlist.urlAttribute(element: element, attribute: attribute)
            }
            if let use = urlUse {
                switch use {
                case .link:
                    if let url = gate.link(attribute.value) {
                        kept.append(Attribute(name: attribute.name, value: url, namespace: attribute.namespace))
                    }
                case .resource(let kind):
                    switch gate.resource(attribute.value, kind: kind, isPixel: isPixel) {
                    case .load(let url): kept.append(Attribute(name: attribute.name, value: url, namespace: attribute.namespace))
                    case .block(let url): kept.append(Attribute(name: Self.placeholder(for: attribute), value: url))
                    case .drop: break
                    }
                case .srcset:
                    cleanSrcset(attribute, isPixel: isPixel, into: &kept)
                case .drop:
                    if lowerName == "ping" {
                        for url in attribute.value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }) {
                            gate.tracker(URLPolicy.clean(String(url)), .ping)
                            gate.block(URLPolicy.clean(String(url)), .ping)
                        }
                    } else {
                        gate.findings.note(.unsafeURL)
                    }
                }
                continue
            }
            guard attribute.namespace == nil else { gate.findings.note(.attribute); continue }
            let role = info?.role ?? .none
            if role == .style {
                let style = index == styleIndex ? keptStyle : css.sanitizeStyleAttribute(attribute.value)
                if let style {
                    // Unchanged (the usual case: the fast path returns the very text), the
                    // element's own attribute is kept as it is — when its name is `style` exactly,
                    // else the new attribute is named `style` as before.
                    if !hasPlaceholders && SameTree.sameBytes(attribute.name, "style") && SameTree.sameBytes(style, attribute.value) {
                        kept.append(attribute, at: index)
                    } else {
                        kept.append(Attribute(name: "style", value: style))
                    }
                }
                continue
            }
            if role == .idOrName && isClobbering(attribute.value) {
                gate.findings.note(.clobberingName)
                continue
            }
            switch element.namespace {
            case .html:
                if role == .targetOrRel { continue }
                if info?.html == true || lowerName.hasASCIIPrefix("aria-")
                    || (lowerName.hasASCIIPrefix("data-") && lowerName.count > 5) {
                    kept.append(attribute, at: hasPlaceholders ? nil : index)
                } else {
                    gate.findings.note(.attribute)
                }
            case .svg:
                guard Allowlist.svgAttributeTable.contains(attribute.name) else { gate.findings.note(.attribute); continue }
                if attribute.value.lowercased().contains("url(") || Allowlist.svgPaintAttributes.contains(attribute.name) {
                    guard Self.isLocalPaint(attribute.value) else { gate.findings.note(.unsafeURL); continue }
                }
                kept.append(attribute, at: hasPlaceholders ? nil : index)
            case .mathml:
                if info?.mathML == true { kept.append(attribute, at: hasPlaceholders ? nil : index) } else { gate.findings.note(.attribute) }
            }
        }
        if element.namespace == .html && (element.tag == .a || element.tag == .area),
           kept.contains(where: { $0.name == "href" && $0.namespace == nil }) {
            kept.append(Attribute(name: "target", value: "_blank"))
            kept.append(Attribute(name: "rel", value: "noopener noreferrer"))
        }
        if let changed = kept.result { element.attributes = changed }
    }

    /// The attributes kept so far, as the sequence they form; an array is made only once that
    /// sequence stops being a prefix of the element's own attributes. Most elements keep every
    /// attribute unchanged, and then their array is left as it is (no copy, no new array).
    private struct KeptAttributes {
        let originals: [Attribute]
        /// While `nil`: the kept sequence is `originals[0..<matched]`.
        private var copy: [Attribute]?
        private var matched = 0

        init(_ originals: [Attribute]) { self.originals = originals }

        mutating func append(_ attribute: Attribute) {
            if copy == nil {
                if matched < originals.count && Self.sameBytes(originals[matched], attribute) {
                    matched += 1
                    return
                }
                // (Room first, then the prefix: one allocation.)
                var made: [Attribute] = []
                made.reserveCapacity(originals.count + 2)
                made.append(contentsOf: originals[0..<matched])
                copy = made
            }
            copy!.append(attribute)
        }

        /// ``append(_:)``, told when `attribute` is the element's own at `index` (unchanged; `nil`
        /// when it may not be): while the kept sequence is `originals[0..<index]`, it then grows
        /// by one without comparing (an attribute has the same bytes as itself).
        @inline(__always)
        mutating func append(_ attribute: Attribute, at index: Int?) {
            if let index, copy == nil, matched == index {
                matched += 1
                return
            }
            append(attribute)
        }

        /// Byte-for-byte the same attribute (`==` on `String` is canonical equivalence, which
        /// would let a rewrite to an equivalent but different text keep the original bytes).
        private static func sameBytes(_ a: Attribute, _ b: Attribute) -> Bool {
            a.namespace == b.namespace && sameBytes(a.name, b.name) && sameBytes(a.value, b.value)
        }

        @inline(__always)
        private static func sameBytes(_ a: String, _ b: String) -> Bool { SameTree.sameBytes(a, b) }

        func contains(where predicate: (Attribute) -> Bool) -> Bool {
            if let copy { return copy.contains(where: predicate) }
            return originals[0..<matched].contains(where: predicate)
        }

        /// The new attribute list, or `nil` when it equals the element's own.
        var result: [Attribute]? {
            if let copy { return copy }
            return matched == originals.count ? nil : Array(originals[0..<matched])
        }
    }

    /// An `id`/`name` value that would clobber a DOM property, or that claims the `rampart`
    /// prefix or the wrapper's id (compared case-insensitively). ASCII values are judged on their
    /// bytes; others as the lowercased `String`, exactly as before.
    private func isClobbering(_ value: String) -> Bool {
        let ascii: Bool? = value.utf8.withContiguousStorageIfAvailable { bytes in
            for b in bytes where b >= 0x80 { return false }
            return true
        }
        guard ascii == true else {
            let lower = value.lowercased()
            return Allowlist.clobberingNames.contains(lower) || lower.hasPrefix("rampart") || lower == options.wrapperID.lowercased()
        }
        if Allowlist.clobberingNameTable.contains(value, lowercasing: true) { return true }
        if value.asciiCaseInsensitiveHasPrefix("rampart") { return true }
        return value.utf8.count == options.wrapperID.utf8.count && value.asciiCaseInsensitiveHasPrefix(options.wrapperID)
    }

    /// A paint/reference attribute may use `url(#local)` only (no external document).
    private static func isLocalPaint(_ value: String) -> Bool {
        let compact = value.lowercased().filter { !$0.isWhitespace && $0 != "\"" && $0 != "'" }
        var rest = compact[...]
        while let range = rest.range(of: "url(") {
            let after = rest[range.upperBound...]
            guard after.hasPrefix("#") else { return false }
            rest = after
        }
        return !compact.contains("\\") && !compact.contains("javascript:")
    }

    private func cleanSrcset(_ attribute: Attribute, isPixel: Bool, into kept: inout KeptAttributes) {
        var loadable: [String] = []
        var blocked = false
        var all: [String] = []
        for (first, descriptor) in Self.srcsetCandidates(attribute.value) {
            // A URL that starts or ends with a comma once cleaned (`x,\u{0B}` loses its trailing
            // control character) would be read as another URL by the next pass and by the
            // browser, which strip a srcset URL's trailing commas: dropped (found by the
            // sanitizer fuzz target's idempotence oracle).
            let cleaned = URLPolicy.clean(first)
            if cleaned.hasPrefix(",") || cleaned.hasSuffix(",") { gate.findings.note(.unsafeURL); continue }
            switch gate.resource(first, kind: .srcset, isPixel: isPixel) {
            case .load(let url):
                let item = descriptor.isEmpty ? url : url + " " + descriptor
                loadable.append(item); all.append(item)
            case .block(let url):
                blocked = true
                all.append(descriptor.isEmpty ? url : url + " " + descriptor)
            case .drop:
                continue
            }
        }
        if blocked {
            kept.append(Attribute(name: Self.placeholder(for: attribute), value: all.joined(separator: ", ")))
        } else if !loadable.isEmpty {
            kept.append(Attribute(name: "srcset", value: loadable.joined(separator: ", ")))
        }
    }

    /// The HTML spec's srcset parsing, simplified: a URL is a run of non-space characters (a
    /// trailing comma ends it), then descriptors up to the next comma. Only numeric `w`/`x`/`h`
    /// descriptors are kept.
    static func srcsetCandidates(_ value: String) -> [(String, String)] {
        var result: [(String, String)] = []
        var scalars = Substring(value).unicodeScalars[...]
        func isSpace(_ s: Unicode.Scalar) -> Bool { s == " " || s == "\t" || s == "\n" || s == "\r" || s == "\u{0C}" }
        while true {
            while let f = scalars.first, isSpace(f) || f == "," { scalars.removeFirst() }
            if scalars.isEmpty { break }
            var url = String.UnicodeScalarView()
            while let f = scalars.first, !isSpace(f) { url.append(f); scalars.removeFirst() }
            var descriptors: [String] = []
            if url.last == "," {
                while url.last == "," { url.removeLast() }
            } else {
                var current = ""
                var inParens = false
                while let f = scalars.first {
                    scalars.removeFirst()
                    if f == "(" { inParens = true } else if f == ")" { inParens = false }
                    if f == "," && !inParens { break }
                    if isSpace(f) { if !current.isEmpty { descriptors.append(current); current = "" } } else { current.unicodeScalars.append(f) }
                }
                if !current.isEmpty { descriptors.append(current) }
            }
            let kept = descriptors.filter { d in
                guard let unit = d.last, unit == "w" || unit == "x" || unit == "h" else { return false }
                return Double(d.dropLast()) != nil
            }
            if !url.isEmpty { result.append((String(url), kept.joined(separator: " "))) }
        }
        return result
    }

    /// 1×1 (or 0×0) images, and images hidden by style: the classic open-tracking pixel.
    /// `style` is the element's style as the sanitizer keeps it.
    private static func looksLikePixel(_ element: Element, style keptStyle: String?) -> Bool {
        if tiny(element[attribute: "width"]) || tiny(element[attribute: "height"]) { return true }
        guard let keptStyle else { return false }
        if let hidden = hidingStyleASCII(keptStyle) { return hidden }
        let style = keptStyle.lowercased().filter { !$0.isWhitespace }
        return pixelHints.contains(where: { style.contains($0) }) || style.hasSuffix(hiddenSuffix)
    }

    private static let pixelHints = [
        "display:none", "visibility:hidden", "opacity:0;", "width:1px", "height:1px", "width:0", "height:0", "max-width:0", "max-height:0",
    ]
    private static let pixelHintBytes: [[UInt8]] = pixelHints.map { Array($0.utf8) }
    /// A style ending in this (compacted, lowercased) hides the element.
    private static let hiddenSuffix = "opacity:0"
    private static let hiddenSuffixBytes = Array(hiddenSuffix.utf8)

    /// A `width`/`height` of 0 or 1 (leading digits after trimming spaces and tabs).
    private static func tiny(_ value: String?) -> Bool {
        guard let value else { return false }
        // ASCII: trim space and tab (the ASCII part of `.whitespaces`), then ASCII digits (the
        // ASCII part of `isNumber`), read as `Int` would (an overflow is no number).
        let ascii: Bool?? = value.utf8.withContiguousStorageIfAvailable { bytes -> Bool? in
            var start = 0
            var end = bytes.count
            for b in bytes where b >= 0x80 { return nil }
            while start < end && (bytes[start] == 0x20 || bytes[start] == 0x09) { start += 1 }
            while end > start && (bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09) { end -= 1 }
            var n = 0
            var digits = 0
            while start < end, bytes[start] >= 0x30 && bytes[start] <= 0x39 {
                let (times, o1) = n.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times.addingReportingOverflow(Int(bytes[start] - 0x30))
                if o1 || o2 { return false }
                n = sum
                digits += 1
                start += 1
            }
            return digits > 0 && n <= 1
        }
        if let ascii, let answer = ascii { return answer }
        let digits = value.trimmingCharacters(in: .whitespaces).prefix { $0.isNumber }
        guard let n = Int(digits), !digits.isEmpty else { return false }
        return n <= 1
    }

    /// The hiding-style test on the bytes of an ASCII style (lowercased, whitespace removed:
    /// for ASCII, `isWhitespace` is U+0009–U+000D and space); `nil` for non-ASCII.
    private static func hidingStyleASCII(_ style: String) -> Bool? {
        let result: Bool?? = style.utf8.withContiguousStorageIfAvailable { bytes -> Bool? in
            // The compacted text in a buffer on the stack (never longer than the style).
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(bytes.count, 1)) { buffer -> Bool? in
                var count = 0
                for b in bytes {
                    if b >= 0x80 { return nil }
                    if b == 0x20 || (b >= 0x09 && b <= 0x0D) { continue }
                    buffer.initializeElement(at: count, to: b >= 0x41 && b <= 0x5A ? b | 0x20 : b)
                    count += 1
                }
                let compact = UnsafeBufferPointer(rebasing: buffer[0..<count])
                for hint in pixelHintBytes where ByteSearch.contains(compact, hint) { return true }
                let suffix = hiddenSuffixBytes
                return count >= suffix.count && compact[(count - suffix.count)...].elementsEqual(suffix)
            }
        }
        return result ?? nil
    }
}
