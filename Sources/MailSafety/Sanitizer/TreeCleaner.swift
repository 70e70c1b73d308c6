import Foundation
import HTML5

/// The tree walk: decides for each node whether it is kept, unwrapped or removed, and cleans the
/// attributes of what is kept. Iterative (no recursion), so deep trees cannot overflow the stack.
///
/// Trust-model row: inbox (incoming mail) — the allowlist with namespace checks.
///
/// One copy of the walk and of the allowlist's decisions serves both trees: the class DOM
/// (``clean(_:)``, the reference the arena path is checked against) and the arena tree
/// (``clean(_:root:)``, what ``MailSanitizer`` runs). The methods are generic over the tree
/// (``CleanableTree``) and the element (``CleanableElement``), specialised for each.
///
/// The walk visits every node and every attribute of every message, and a strong reference per
/// step (a retain and a release, each an atomic read-modify-write) cost more than the steps
/// themselves: it reads the class tree without them (see ``clean(_:)``) and reads the attributes
/// in place (see ``withAttribute(at:_:)``).
struct TreeCleaner {
    let gate: ResourceGate
    let css: CSSSanitizer
    let options: SanitizerOptions
    /// The allowlist tables the walk asks for every element and every attribute, read once per
    /// walk. (Trust-model row: inbox.) A `static let` is a lazy global: each read of
    /// ``Allowlist/attributeInfo`` or ``Allowlist/htmlElementRulesByTag`` is a `swift_once`
    /// call first, once per attribute or element; a stored property of the walk is a load.
    /// (The tables never change: the same values, the same answers.)
    let attributeInfo = Allowlist.attributeInfo
    let htmlElementRulesByTag = Allowlist.htmlElementRulesByTag

    private enum Action { case keep, keepWithoutChildren, remove, unwrap }

    /// What the allowlist says of an element (``decide(_:parentNamespace:)``); `.sheet`: a
    /// `<style>`, whose sheet is sanitized by the walk.
    private enum ElementAction { case keep, remove, unwrap, sheet }

    /// Cleans the class tree under `root`, which the caller holds.
    ///
    /// Unretained reads (trust-model row: inbox): the walk follows the links and tells the node
    /// classes apart through ``UnretainedLinks`` (no reference counting), keeps the way back up
    /// as a list of the elements the visited node is in (no parent link read, no retain), and
    /// uses a node through `_withUnsafeGuaranteedRef` (``ClassCleanableTree``). That is sound
    /// because:
    /// - the sanitizer holds the root, and every node still in the tree is held by the strong
    ///   link to it (its parent's first child, or its previous sibling's next sibling): every
    ///   node still in the tree is alive, the visited node's ancestors among them;
    /// - `decide` changes no link the walk follows (it rewrites attributes; a `<style>` gets a
    ///   new child, but is kept without its children, which the walk does not enter);
    /// - only a node the walk itself detaches can die: `remove()` drops the tree's last strong
    ///   reference to it and its subtree, `unwrap()` the one to it alone (its children move up
    ///   first). So the node visited next is found before the detaching and is never inside
    ///   what is detached (it follows the node or one of its ancestors, or, for an unwrap, it is
    ///   the node's first child, now in the parent, under the same ancestors); the detaching
    ///   call runs on a strong reference (``ClassCleanableTree/remove(_:)``), whose release
    ///   after the call may free the node; and a detached node is never read again (it is in no
    ///   list).
    mutating func clean(_ root: Node) {
        clean(Unmanaged.passUnretained(root), in: ClassCleanableTree())
    }

    /// Cleans the arena tree's nodes under the row `root` (a fragment parse's root element). The
    /// same walk as ``clean(_:)``; removed rows stay in the tree, unlinked.
    mutating func clean(_ tree: HTMLTree, root: Int32) {
        clean(root, in: ArenaCleanableTree(tree: tree))
    }

    /// The walk, over either tree.
    private mutating func clean<Tree: CleanableTree>(_ root: Tree.NodeRef, in tree: Tree) {
        // The elements the visited node is in, outermost first (the root not included): its
        // depth is their count + 1.
        var ancestors: [Tree.NodeRef] = []
        ancestors.reserveCapacity(32)
        var node = tree.firstChild(root)
        while let current = node {
            switch decide(current, depth: ancestors.count + 1, parent: ancestors.last ?? root, in: tree) {
            case .keep:
                if let child = tree.firstChild(current) {
                    ancestors.append(current)
                    node = child
                } else {
                    node = Self.next(after: current, ancestors: &ancestors, in: tree)
                }
            case .keepWithoutChildren:
                node = Self.next(after: current, ancestors: &ancestors, in: tree)
            case .remove:
                let following = Self.next(after: current, ancestors: &ancestors, in: tree)
                tree.remove(current)
                node = following
            case .unwrap:
                if let first = tree.firstChild(current) {
                    tree.unwrap(current)
                    node = first
                } else {
                    let following = Self.next(after: current, ancestors: &ancestors, in: tree)
                    tree.remove(current)
                    node = following
                }
            }
        }
    }

    /// The node after `node`'s subtree in document order, under the root; `ancestors` (those of
    /// `node`) become those of that node. (Reads sibling links only: the parents are the list.)
    private static func next<Tree: CleanableTree>(after node: Tree.NodeRef, ancestors: inout [Tree.NodeRef], in tree: Tree) -> Tree.NodeRef? {
        var x = node
        while true {
            if let sibling = tree.nextSibling(x) { return sibling }
            // No ancestor left: `x` is a child of the root, and the walk is done.
            guard let parent = ancestors.popLast() else { return nil }
            // `parent`'s subtree is done: its children are final.
            dropLeadingNewlines(parent, in: tree)
            x = parent
        }
    }

    /// For a kept `<pre>`, `<listing>` or `<textarea>` whose content now starts with a line feed
    /// (a comment or an element before it was removed: `<pre><!---->` LF `text`, common in mail
    /// written as text), drops the leading line feeds. The serialization does not double that
    /// line feed (the spec's serializer stopped doing so) and the parser drops a line feed right
    /// after the start tag, so the output would parse to a different tree: the re-parse check
    /// then cleaned the whole message again for each line feed (up to the pass limit, then the
    /// message became text). Dropping them gives the tree those passes ended at, in one pass.
    ///
    /// Trust-model row: inbox (incoming mail) — the output still goes through the re-parse check;
    /// this only makes it pass the first time.
    private static func dropLeadingNewlines<Tree: CleanableTree>(_ node: Tree.NodeRef, in tree: Tree) {
        guard tree.kind(node) == .element,
              tree.withElement(node, { $0.namespace == .html && ($0.tag == .pre || $0.tag == .listing || $0.tag == .textarea) })
        else { return }
        while let first = tree.firstChild(node), tree.kind(first) == .text {
            // The text after its leading line feeds; `nil`: it has none; `""`: nothing else.
            let rest: String? = tree.withTextBytes(first) { bytes in
                guard bytes.first == 0x0A else { return nil }
                let start = bytes.firstIndex { $0 != 0x0A } ?? bytes.count
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[start...]), as: UTF8.self)
            }
            guard let rest else { return }
            guard rest.isEmpty else {
                tree.setText(first, rest)
                return
            }
            tree.remove(first)
        }
    }

    /// What to do with `node` (in the tree, so alive while this runs; see ``clean(_:)``), whose
    /// parent is `parent`.
    private func decide<Tree: CleanableTree>(_ node: Tree.NodeRef, depth: Int, parent: Tree.NodeRef, in tree: Tree) -> Action {
        switch tree.kind(node) {
        case .element: break
        case .text: return .keep
        case .comment: gate.findings.note(.comment); return .remove
        case .other: return .remove
        }
        if depth > options.limits.maxDepth {
            gate.findings.truncated = true
            gate.findings.note(.truncated)
            return .remove
        }
        // The parent's namespace when the parent is an element; the root (a fragment, or the
        // arena fragment's `<html>` element) counts as HTML.
        let parentNamespace = tree.elementNamespace(parent) ?? .html
        switch tree.withElement(node, { decide($0, parentNamespace: parentNamespace) }) {
        case .keep: return .keep
        case .remove: return .remove
        case .unwrap: return .unwrap
        case .sheet:
            let sheet = css.sanitizeStyleSheet(tree.textContent(node))
            guard !sheet.isEmpty else { gate.findings.note(.cssRule, 0); return .remove }
            tree.replaceContent(of: node, withText: sheet)
            return .keepWithoutChildren
        }
    }

    private func decide<E: CleanableElement>(_ element: E, parentNamespace: Namespace) -> ElementAction {
        switch element.namespace {
        case .html:
            guard parentNamespace == .html else { gate.findings.note(.foreignElement); return .remove }
            switch Allowlist.htmlElementRule(element, byTag: htmlElementRulesByTag) {
            case .keep?:
                cleanAttributes(element)
                return .keep
            case .drop(let kind)?:
                gate.findings.note(kind)
                let name = element.localName
                if name == "link", let href = element.attribute("href", namespace: nil) { _ = gate.resource(href, kind: .stylesheet) }
                if name == "input", element.attribute("type", namespace: nil)?.lowercased() == "image",
                   let src = element.attribute("src", namespace: nil) {
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
                return .sheet
            }
        case .svg:
            let allowedHere = parentNamespace == .svg || (element.localName == "svg" && parentNamespace == .html)
            guard allowedHere else { gate.findings.note(.foreignElement); return .remove }
            guard Allowlist.svgElementTable.contains(element.localName) else {
                gate.findings.note(element.localName == "script" ? .scriptElement : .activeElement)
                return .remove
            }
            cleanAttributes(element)
            if element.localName == "use", element.attribute("href", namespace: nil) == nil, element.attribute("href", namespace: .xlink) == nil,
               element.attribute("data-rampart-href", namespace: nil) == nil, element.attribute("data-rampart-xlink-href", namespace: nil) == nil {
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

    /// `name.utf8.first`, from the contiguous bytes when the string has them (the generic
    /// `Collection.first` on the UTF-8 view is a call per attribute name, with a copy of the
    /// string: a retain and a release).
    @inline(__always)
    private static func firstByte(_ name: String) -> UInt8? {
        let fast: UInt8?? = name.utf8.withContiguousStorageIfAvailable { $0.first }
        if let fast { return fast }
        return name.utf8.first
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
        // The usual names answered by literals (constant strings): the general path below makes
        // a new string for every blocked image (a search for `:` and a concatenation, ~900
        // instructions). Byte-for-byte the same name (not `==`, which is canonical
        // equivalence), so the literal is exactly what the concatenation would write.
        if attribute.namespace == nil {
            let name = attribute.name
            if SameTree.sameBytes(name, "src") { return "data-rampart-src" }
            if SameTree.sameBytes(name, "srcset") { return "data-rampart-srcset" }
            if SameTree.sameBytes(name, "background") { return "data-rampart-background" }
        }
        let name = attribute.qualifiedName
        // `:` is ASCII: a name without the byte has nothing to replace.
        guard name.utf8.contains(0x3A) else { return placeholderPrefix + name }
        return placeholderPrefix + name.replacingOccurrences(of: ":", with: "-")
    }

    /// Calls `body` with the attribute at `slot`, read in place: moved out of the array for the
    /// call and back after it, with no copy.
    ///
    /// Unretained reads (trust-model row: inbox): every attribute of every kept element is read
    /// here, several times. Copied out of the array (`attributes[index]`, or even
    /// `attributes[index].name` passed to a function), an attribute costs a retain and a release
    /// of its name and of its value (the optimizer does not borrow a string in place from an
    /// array's memory), and those were most of the walk's reference counting. A value moved out
    /// is the function's own, passed on as it is. This is sound because `body` never reads
    /// `slot` and the gap is filled again, with the very same bits, before anything else reads
    /// the array: ``cleanAttributes(_:)`` holds the element's array in an exclusive access (any
    /// other read of the element's attributes in the meantime stops the program instead of seeing
    /// the gap), and nothing in the cleaning of one element reads another element's attributes.
    /// The array may be shared — the parser's attribute cache gives repeated attribute sections
    /// one array, and the copy into `<selectedcontent>` shares its option's — but only within the
    /// sanitizer's own tree, on this thread, so no other holder reads it during the call. Nothing
    /// is ever consumed from it: what is kept goes into a new array as a copy.
    @inline(__always)
    private static func withAttribute<Result>(at slot: UnsafeMutablePointer<Attribute>, _ body: (Attribute) -> Result) -> Result {
        let attribute = slot.move()
        let result = body(attribute)
        slot.initialize(to: attribute)
        return result
    }

    /// `element[attribute: name]` (no namespace, name equal), read from `attributes` in place.
    private static func value(of name: String, in attributes: UnsafeMutableBufferPointer<Attribute>) -> String? {
        for index in attributes.indices {
            let found: String? = withAttribute(at: attributes.baseAddress! + index) { attribute in
                attribute.namespace == nil && attribute.name == name ? attribute.value : nil
            }
            if let found { return found }
        }
        return nil
    }

    /// Cleans the attributes of a kept element.
    ///
    /// Trust-model row: inbox. The element's array is read in place, in one exclusive access
    /// (no retain; its attributes are moved out and back, see ``withAttribute(at:_:)``); the
    /// element gets a new array only when something changed. The access calls no mutating method
    /// of the array, so a shared array is not copied first: with a modifying access
    /// (`withUnsafeMutableBufferPointer`), the 16 000 of 21 000 elements per bench round whose
    /// array the parser's attribute cache shares were each copied (an allocation and a retain of
    /// every name and value) only to be read.
    private func cleanAttributes<E: CleanableElement>(_ element: E) {
        // (Empty: nothing to clean, and nothing to add: target/rel go only with a kept href.)
        // What runs during this access reads the element's name, namespace and parent, never its
        // attributes but through the buffer it is given.
        let changed = element.withAttributesInPlace { $0.isEmpty ? nil : cleanAttributes($0, of: element) }
        if let changed { element.setAttributes(changed) }
    }

    /// The element's new attributes, or `nil` when they are `attributes` (its own) unchanged.
    /// `attributes` must not be read but through ``withAttribute(at:_:)`` and ``KeptAttributes``.
    private func cleanAttributes<E: CleanableElement>(_ attributes: UnsafeMutableBufferPointer<Attribute>, of element: E) -> [Attribute]? {
        let base = attributes.baseAddress!
        // An image's style is sanitized first and the pixel check reads what is kept: a hiding
        // style the CSS sanitizer drops is not in the output, so a check of the raw style blocked
        // the image on the first pass and the second pass loaded it (found by the sanitizer fuzz
        // target's idempotence oracle).
        let isHTML = element.namespace == .html
        let isImage = isHTML && element.tag == .img  // (by interned tag: `element.isHTML("img")`)
        var styleIndex: Int?
        if isImage {
            for index in attributes.indices
            where Self.withAttribute(at: base + index, { $0.namespace == nil && Self.isStyleName($0.name) }) {
                styleIndex = index
                break
            }
        }
        let keptStyle = styleIndex.flatMap { index in Self.withAttribute(at: base + index) { css.sanitizeStyleAttribute($0.value) } }
        let isPixel = isImage && Self.looksLikePixel(attributes, style: keptStyle)
        // Placeholders are read back as the attribute they stand for; then a name may repeat.
        // (A name whose first byte is not `d` cannot start with "data-rampart-": `d` is ASCII.)
        var hasPlaceholders = false
        for index in attributes.indices
        where Self.withAttribute(at: base + index, { Self.firstByte($0.name) == 0x64 && $0.name.hasASCIIPrefix("data-rampart-") }) {
            hasPlaceholders = true
            break
        }
        var scan = AttributeScan(
            isHTML: isHTML, isPixel: isPixel, hasPlaceholders: hasPlaceholders, styleIndex: styleIndex, keptStyle: keptStyle)
        var kept = KeptAttributes(attributes)
        for index in attributes.indices {
            if hasPlaceholders {
                // (A restored placeholder is a new attribute; any other, a copy.)
                let restored = Self.withAttribute(at: base + index) { Self.restoredName($0) }
                switch cleanAttribute(restored, at: index, of: element, &scan) {
                case .dropped: break
                case .same: kept.append(restored)
                case .new(let attribute): kept.append(attribute)
                }
            } else {
                switch Self.withAttribute(at: base + index, { cleanAttribute($0, at: index, of: element, &scan) }) {
                case .dropped: break
                case .same: kept.appendOwn(at: index)
                case .new(let attribute): kept.append(attribute)
                }
            }
        }
        if isHTML && (element.tag == .a || element.tag == .area),
           kept.contains(where: { $0.name == "href" && $0.namespace == nil }) {
            kept.append(Attribute(name: "target", value: "_blank"))
            kept.append(Attribute(name: "rel", value: "noopener noreferrer"))
        }
        return kept.takeResult()
    }

    /// What ``cleanAttributes(_:of:)`` knows about the element while it goes through its
    /// attributes.
    private struct AttributeScan {
        let isHTML: Bool
        let isPixel: Bool
        let hasPlaceholders: Bool
        /// The index of an image's style attribute, and its value as kept (`nil`: dropped).
        let styleIndex: Int?
        let keptStyle: String?
        /// The qualified names seen so far (only with placeholders: a restored name may repeat).
        var seen = Set<String>()
    }

    /// What becomes of one attribute.
    private enum Outcome {
        case dropped
        /// Kept as it is.
        case same
        /// Replaced by this attribute (a cleaned URL, a placeholder, a cleaned style).
        case new(Attribute)
    }

    /// What becomes of `attribute`: the element's own at `index` (moved out of the array, see
    /// ``withAttribute(at:_:)``: this reads no attribute of the element), or, with placeholders,
    /// its restored form.
    private func cleanAttribute<E: CleanableElement>(_ attribute: Attribute, at index: Int, of element: E, _ scan: inout AttributeScan) -> Outcome {
        // The lowercased name is made only when the name has an upper-case letter; else it is
        // the name itself (no copy). A name of at most 16 ASCII bytes (nearly every one) is read
        // once, packed: its case, its `on` prefix and its table entry come from the packed
        // words, and are what the `String` questions below answer for it (see
        // ``PackedASCIIName``).
        if let packed = PackedASCIIName(attribute.name) {
            let lower = packed.lowercased
            let hasUppercase = lower != packed
            return cleanAttribute(attribute, lowerName: hasUppercase ? attribute.name.lowercased() : attribute.name, nameHasUppercase: hasUppercase,
                                  isEventHandler: lower.hasPrefix("on"), info: attributeInfo.value(lower), at: index, of: element, &scan)
        }
        let hasUppercase = attribute.name.containsASCIIUppercase
        let lowerName = hasUppercase ? attribute.name.lowercased() : attribute.name
        return cleanAttribute(attribute, lowerName: lowerName, nameHasUppercase: hasUppercase, isEventHandler: lowerName.hasASCIIPrefix("on"),
                              info: attributeInfo.value(lowerName), at: index, of: element, &scan)
    }

    /// ``cleanAttribute(_:at:of:_:)`` with what it read of the name: `isEventHandler` (the
    /// lowercased name starts with `on`) and `info` (its entry in ``attributeInfo``).
    private func cleanAttribute<E: CleanableElement>(
        _ attribute: Attribute, lowerName: String, nameHasUppercase: Bool, isEventHandler: Bool, info: Allowlist.AttributeInfo?,
        at index: Int, of element: E, _ scan: inout AttributeScan
    ) -> Outcome {
        if scan.hasPlaceholders { guard scan.seen.insert(attribute.qualifiedName).inserted else { return .dropped } }
        if isEventHandler { gate.findings.note(.eventHandler); return .dropped }
        if attribute.namespace == .xmlns || attribute.namespace == .xml { gate.findings.note(.attribute); return .dropped }
        // Placeholder names are in no table: only names the table does not know need the test.
        if attribute.namespace == nil && info == nil && lowerName.hasASCIIPrefix("data-rampart-") { gate.findings.note(.attribute); return .dropped }
        // An attribute without namespace on an HTML element whose name (already lowercase)
        // has an entry in the info table: the entry holds the URL table's answer for it.
        let urlUse: Allowlist.URLAttribute?
        if !nameHasUppercase, let info, attribute.namespace == nil, scan.isHTML {
            urlUse = info.urlName.map { Allowlist.htmlURLAttribute($0, element: element) }
        } else {
            urlUse = Allowlist.urlAttribute(element: element, attribute: attribute)
        }
        if let use = urlUse {
            switch use {
            case .link:
                guard let url = gate.link(attribute.value) else { return .dropped }
                return .new(Attribute(name: attribute.name, value: url, namespace: attribute.namespace))
            case .resource(let kind):
                switch gate.resource(attribute.value, kind: kind, isPixel: scan.isPixel) {
                case .load(let url): return .new(Attribute(name: attribute.name, value: url, namespace: attribute.namespace))
                case .block(let url): return .new(Attribute(name: Self.placeholder(for: attribute), value: url))
                case .drop: return .dropped
                }
            case .srcset:
                return cleanSrcset(attribute, isPixel: scan.isPixel).map { .new($0) } ?? .dropped
            case .drop:
                if lowerName == "ping" {
                    for url in attribute.value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }) {
                        gate.tracker(URLPolicy.clean(String(url)), .ping)
                        gate.block(URLPolicy.clean(String(url)), .ping)
                    }
                } else {
                    gate.findings.note(.unsafeURL)
                }
                return .dropped
            }
        }
        guard attribute.namespace == nil else { gate.findings.note(.attribute); return .dropped }
        let role = info?.role ?? .none
        if role == .style {
            // (The image's style was sanitized first: its answer is reused.)
            let outcome: CSSSanitizer.StyleAttribute
            if index == scan.styleIndex {
                outcome = scan.keptStyle.map { .kept($0) } ?? .dropped
            } else {
                // (Unchanged text is answered as `.same`, not returned: see
                // ``CSSSanitizer/styleAttribute(_:)``.)
                outcome = css.styleAttribute(attribute.value)
            }
            switch outcome {
            case .dropped: return .dropped
            case .same: break
            case .kept(let style):
                if !SameTree.sameBytes(style, attribute.value) { return .new(Attribute(name: "style", value: style)) }
            }
            // Unchanged (the usual case: the fast path keeps the very text), the element's own
            // attribute is kept as it is — when its name is `style` exactly, else the new
            // attribute is named `style` as before (with the same text).
            if !scan.hasPlaceholders && SameTree.sameBytes(attribute.name, "style") {
                return .same
            }
            return .new(Attribute(name: "style", value: attribute.value))
        }
        if role == .idOrName && isClobbering(attribute.value) {
            gate.findings.note(.clobberingName)
            return .dropped
        }
        switch element.namespace {
        case .html:
            if role == .targetOrRel { return .dropped }
            if info?.html == true || lowerName.hasASCIIPrefix("aria-")
                || (lowerName.hasASCIIPrefix("data-") && lowerName.count > 5) {
                return .same
            }
            gate.findings.note(.attribute)
            return .dropped
        case .svg:
            guard Allowlist.svgAttributeTable.contains(attribute.name) else { gate.findings.note(.attribute); return .dropped }
            if attribute.value.lowercased().contains("url(") || Allowlist.svgPaintAttributes.contains(attribute.name) {
                guard Self.isLocalPaint(attribute.value) else { gate.findings.note(.unsafeURL); return .dropped }
            }
            return .same
        case .mathml:
            if info?.mathML == true { return .same }
            gate.findings.note(.attribute)
            return .dropped
        }
    }

    /// The attributes kept so far, as the sequence they form; an array is made only once that
    /// sequence stops being a prefix of the element's own attributes. Most elements keep every
    /// attribute unchanged, and then their array is left as it is (no copy, no new array).
    ///
    /// `originals` is the element's own array, in the exclusive access of
    /// ``cleanAttributes(_:)``; its attributes are read in place (``withAttribute(at:_:)``), and
    /// copied only into a new array.
    private struct KeptAttributes {
        let originals: UnsafeMutableBufferPointer<Attribute>
        /// While `nil`: the kept sequence is `originals[0..<matched]`.
        private var copy: [Attribute]?
        private var matched = 0

        init(_ originals: UnsafeMutableBufferPointer<Attribute>) { self.originals = originals }

        /// (`consuming`: a new attribute moves into the new array, no copy.)
        mutating func append(_ attribute: consuming Attribute) {
            if copy == nil {
                if matched < originals.count
                    && TreeCleaner.withAttribute(at: originals.baseAddress! + matched, { Self.sameBytes($0, attribute) }) {
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

        /// Appends the element's own attribute at `index` (unchanged): while the kept sequence is
        /// `originals[0..<index]`, it grows by one without comparing (an attribute has the same
        /// bytes as itself); else as ``append(_:)``.
        mutating func appendOwn(at index: Int) {
            if copy == nil && matched == index {
                matched += 1
                return
            }
            append(originals[index])
        }

        /// Byte-for-byte the same attribute (`==` on `String` is canonical equivalence, which
        /// would let a rewrite to an equivalent but different text keep the original bytes).
        private static func sameBytes(_ a: Attribute, _ b: Attribute) -> Bool {
            a.namespace == b.namespace && SameTree.sameBytes(a.name, b.name) && SameTree.sameBytes(a.value, b.value)
        }

        /// Whether a kept attribute satisfies `predicate` (each read in place).
        mutating func contains(where predicate: (Attribute) -> Bool) -> Bool {
            if copy != nil {
                return copy!.withUnsafeMutableBufferPointer { kept in
                    kept.indices.contains { TreeCleaner.withAttribute(at: kept.baseAddress! + $0, predicate) }
                }
            }
            return (0..<matched).contains { TreeCleaner.withAttribute(at: originals.baseAddress! + $0, predicate) }
        }

        /// The new attribute list, or `nil` when it equals the element's own. (Taken: the array
        /// moves out, no copy.)
        mutating func takeResult() -> [Attribute]? {
            if let made = copy.take() { return made }
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

    /// The attribute a srcset becomes (`nil`: none of its URLs is kept).
    private func cleanSrcset(_ attribute: Attribute, isPixel: Bool) -> Attribute? {
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
        if blocked { return Attribute(name: Self.placeholder(for: attribute), value: all.joined(separator: ", ")) }
        if !loadable.isEmpty { return Attribute(name: "srcset", value: loadable.joined(separator: ", ")) }
        return nil
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
    /// `attributes` are the image's own (read in place, see ``withAttribute(at:_:)``), `style`
    /// its style as the sanitizer keeps it.
    private static func looksLikePixel(_ attributes: UnsafeMutableBufferPointer<Attribute>, style keptStyle: String?) -> Bool {
        if tiny(value(of: "width", in: attributes)) || tiny(value(of: "height", in: attributes)) { return true }
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
