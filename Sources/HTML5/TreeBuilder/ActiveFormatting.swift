// The list of active formatting elements (§13.2.4.3) and the adoption agency algorithm.

extension TreeBuilder {
    // MARK: Active formatting elements

    mutating func pushFormatting(_ element: Element) {
        // Noah's Ark: at most three equal entries after the last marker. The scan looks at the
        // last `noahsArkWindow` entries at most: a list of thousands of different formatting
        // elements (`<b class=c1>…<b class=c20000>`, all open) made every push scan all of them
        // (330 KB: 7 s). Past the window the parse is marked limited (a departure on hostile input
        // only: no sanitizer output comes near it, and a limited parse is never taken as stable).
        // Entries of the same name are compared by their attribute digests first: comparing the
        // attributes of 320 entries still cost 25-30 µs per push of such markup (100 000 of
        // them: 3 s).
        element.formattingDigest = 0  // (``formattingEntry(_:)`` without handing the element back: no retain)
        let tag = element.tag, namespace = element.namespace
        var digest: UInt32 = 0  // the element's, taken at the first entry of the same name
        var count = 0
        var earliest = -1
        let stop = max(activeFormatting.count - TreeBuilder.noahsArkWindow, 0)
        // The entries are read in place (`Element.borrowEntry(at:of:)`): binding each as `Element?` retained
        // and released it, most of the cost of a scan that finds nothing.
        let scanned = activeFormatting.withUnsafeBufferPointer { list -> Int in
            var i = list.count - 1
            while i >= stop {
                guard let entry = Element.borrowEntry(at: i, of: list) else { break }  // a marker
                let equal = Element.withBorrowed(entry) { e -> Bool in
                    guard e.tag == tag && e.namespace == namespace
                        && (tag != .unknown || UTF8Bytes.equal(e.localName, element.localName)) else { return false }
                    if digest == 0 { digest = Self.formattingDigest(of: element) }
                    return Self.formattingDigest(of: e) == digest && sameAttributes(e, element)
                }
                if equal {
                    count += 1
                    earliest = i
                }
                i -= 1
            }
            return i
        }
        if scanned >= 0 && scanned < stop && activeFormatting[scanned] != nil { markFormattingLimited() }
        if count >= 3 { activeFormatting.remove(at: earliest) }
        activeFormatting.append(element)
    }

    /// How many entries of the list Noah's Ark compares at most (see ``pushFormatting(_:)``):
    /// more than the sanitizer's output can hold open (it removes elements nested deeper than
    /// 256), so a cleaned message never reaches it.
    static var noahsArkWindow: Int { 320 }

    /// `element`, its ``Element/formattingDigest`` cleared: every element that enters the list of
    /// active formatting elements passes through here (the push above clears it in place, the
    /// same step; the re-created and replacing elements of reconstruction and the adoption agency
    /// through this), so a digest left from an
    /// earlier parse of the same node (the re-parse check puts the cleaned tree's own nodes in
    /// the list) is never used. The digest is taken when Noah's Ark first compares the entry
    /// (``formattingDigest(of:)``), from its attributes then, which are those it entered with:
    /// the parser changes attributes only by merging them into `<html>` and `<body>`, never
    /// formatting elements, and the re-parse check changes none.
    @discardableResult
    func formattingEntry(_ element: Element) -> Element {
        element.formattingDigest = 0
        return element
    }

    /// A digest of `element`'s attributes as a set, taken on first use while it is in the list
    /// (never 0 once taken). Equal attribute sets have equal digests (a sum over the attributes,
    /// so their order does not count), which makes it a safe first test; most pushes never need
    /// one (no entry of the same name in the window).
    @inline(__always)
    static func formattingDigest(of element: Element) -> UInt32 {
        let digest = element.formattingDigest
        return digest != 0 ? digest : takeFormattingDigest(of: element)
    }

    private static func takeFormattingDigest(of element: Element) -> UInt32 {
        let digest = element.withAttributeBuffer { attributes in
            var sum = UInt32(truncatingIfNeeded: attributes.count)
            for attribute in attributes {
                let namespace: UInt32 = switch attribute.namespace {
                case nil: 0
                case .xlink: 1
                case .xml: 2
                case .xmlns: 3
                }
                var h: UInt32 = 2_166_136_261 ^ namespace
                var name = attribute.name, value = attribute.value
                name.withUTF8 { for byte in $0 { h = (h ^ UInt32(byte)) &* 16_777_619 } }
                h = (h ^ 0x3D) &* 16_777_619  // "=" between name and value
                value.withUTF8 { for byte in $0 { h = (h ^ UInt32(byte)) &* 16_777_619 } }
                sum &+= h
            }
            return sum | 1
        }
        element.formattingDigest = digest
        return digest
    }

    /// The same attributes as a set (names and values compared as bytes, as the spec compares
    /// them; `==` on `String` would take canonically equivalent values for the same).
    func sameAttributes(_ a: Element, _ b: Element) -> Bool {
        a.withAttributeBuffer { ax in
            b.withAttributeBuffer { bx in
                guard ax.count == bx.count else { return false }
                for x in ax {
                    guard bx.contains(where: { y in
                        x.namespace == y.namespace && UTF8Bytes.equal(x.name, y.name) && UTF8Bytes.equal(x.value, y.value)
                    }) else { return false }
                }
                return true
            }
        }
    }

    /// A bound for hostile input was reached: the tree departs from the spec's from here on
    /// (``ParseResult/formattingLimited``), and a verification cannot vouch for it.
    mutating func markFormattingLimited() {
        if !formattingLimited { formattingLimited = true; error("formatting-elements-limit") }
        sink.failVerification()
    }

    /// "Reconstruct the active formatting elements": nothing to do when the list is empty, ends
    /// with a marker or with an element still open — nearly every call (one per character run
    /// and per most start tags). That test is inlined and reads the last entry's open count in
    /// place (no reference to the entry is taken); the work is out of line.
    @inline(__always) mutating func reconstructFormatting() {
        let count = activeFormatting.count
        if count > 0, let last = activeFormatting[count - 1], last.stackCount == 0 { reconstructFormattingSteps() }
    }

    private mutating func reconstructFormattingSteps() {
        guard let lastEntry = activeFormatting.last, let last = lastEntry, !stackContains(last) else { return }
        var index = activeFormatting.count - 1
        while index > 0 {
            guard let entry = activeFormatting[index - 1], !stackContains(entry) else { break }
            index -= 1
        }
        // Each reconstruction re-creates every closed entry: `<p><b class=cN>x</p>` repeated
        // makes the Nth paragraph hold N new elements (100 KB of it: 9 s and 900 MB). The
        // elements re-created in one parse are bounded by the input's size plus 4 096, and by the
        // caller's ``HTML5ParserOptions/maxReconstructedElements`` if lower; past that the closed
        // entries are dropped from the list instead (a departure on hostile input only, marked
        // as above).
        let needed = activeFormatting.count - index
        if reconstructedElements + needed > min(tokenizer.input.count + 4_096, maxReconstructedElements ?? .max) {
            markFormattingLimited()
            activeFormatting.removeSubrange(index...)
            return
        }
        reconstructedElements += needed
        while index < activeFormatting.count {
            let entry = activeFormatting[index]!
            let element = sink.makeElement(copying: entry)
            insertAtAppropriatePlace(element)
            push(element)
            activeFormatting[index] = formattingEntry(element)
            index += 1
        }
    }

    mutating func clearFormattingToMarker() {
        while let entry = activeFormatting.popLast() { if entry == nil { return } }
    }

    mutating func formattingIndex(_ element: Element) -> Int? {  // mutating: see `inScope`
        let id = element.identity
        return activeFormatting.lastIndex { $0?.identity == id }
    }

    // MARK: Adoption agency (§13.2.6.4.7)

    /// The index of the last element named `subject` in the list of active formatting elements
    /// after its last marker, read in place.
    ///
    /// Each entry is read in place (``TreeElement/borrowEntry(at:of:)``) and looked at through
    /// `Element.withBorrowed`: binding it as `Element?` retained and released each entry
    /// looked at.
    private func lastFormattingIndex(_ subject: HTMLTag) -> Int? {
        activeFormatting.withUnsafeBufferPointer { list in
            var i = list.count - 1
            while i >= 0 {
                guard let entry = Element.borrowEntry(at: i, of: list) else { return nil }  // a marker
                if Element.withBorrowed(entry, { $0.isHTML(subject) }) { return i }
                i -= 1
            }
            return nil
        }
    }

    /// Returns false when the caller must act as "any other end tag".
    mutating func adoptionAgency(_ subject: HTMLTag) -> Bool {
        if let current = currentNode, current.isHTML(subject), formattingIndex(current) == nil {
            pop()
            return true
        }
        for _ in 0..<8 {
            // The searches up to the furthest block read the lists in place and compare
            // identities: no element is retained and released per entry looked at (most end
            // tags of formatting elements end here, with no furthest block).
            guard let formattingAt = lastFormattingIndex(subject) else { return false }
            let formattingID = activeFormatting.withUnsafeBufferPointer { $0[formattingAt]!.identity }
            guard let stackIndex = openElements.withUnsafeBufferPointer({ stack in
                stack.lastIndex { $0.identity == formattingID }
            }) else {
                error("adoption-agency-1.2")
                activeFormatting.remove(at: formattingAt)  // (an element is in the list at most once)
                return true
            }
            if !inScope(stackIndex: stackIndex) { error("adoption-agency-4.4"); return true }
            // The element is on the stack once: it is the current node exactly when it is last.
            if stackIndex != openElements.count - 1 { error("adoption-agency-1.3") }
            let furthestIndex = openElements.withUnsafeBufferPointer { stack -> Int in
                var j = stackIndex + 1
                while j < stack.count {
                    if ElementSets.isSpecial(namespace: stack[j].namespace, tag: stack[j].tag) { return j }
                    j += 1
                }
                return -1
            }
            guard furthestIndex >= 0 else {
                while openElements.count > stackIndex { pop() }
                activeFormatting.remove(at: formattingAt)
                return true
            }
            let formatting = activeFormatting[formattingAt]!
            let furthest = openElements[furthestIndex]
            // The steps below move nodes already in the tree: not a verification's appends.
            if sink.isVerifying { sink.failVerification(); return true }
            let commonAncestor = openElements[stackIndex - 1]
            var bookmark = formattingIndex(formatting)!
            var node = furthest
            var nodeIndex = furthestIndex
            var lastNode = furthest
            var inner = 0
            while true {
                inner += 1
                nodeIndex -= 1
                node = openElements[nodeIndex]
                if node.isSame(formatting) { break }
                if inner > 3, let fi = formattingIndex(node) {
                    activeFormatting.remove(at: fi)
                    if fi < bookmark { bookmark -= 1 }
                }
                guard let fi = formattingIndex(node) else {
                    openElements.remove(at: nodeIndex)
                    node.stackCount -= 1
                    if node.namespace == .html { openCounts[Int(node.tag.rawValue)] -= 1 }
                    continue
                }
                let replacement = sink.newElement(copying: node)
                activeFormatting[fi] = formattingEntry(replacement)
                openElements[nodeIndex] = replacement
                node.stackCount -= 1
                replacement.stackCount += 1
                node = replacement
                if lastNode.isSame(furthest) { bookmark = fi + 1 }
                sink.appendChild(lastNode, to: node)
                lastNode = node
            }
            insert(lastNode, at: appropriatePlace(override: commonAncestor))
            let newElement = sink.newElement(copying: formatting)
            sink.moveChildren(of: furthest, to: newElement)
            sink.appendChild(newElement, to: furthest)
            let oldIndex = formattingIndex(formatting)!
            activeFormatting.remove(at: oldIndex)
            if oldIndex < bookmark { bookmark -= 1 }
            activeFormatting.insert(formattingEntry(newElement), at: min(bookmark, activeFormatting.count))
            removeFromStack(formatting)
            let fbIndex = openElements.lastIndex { $0.isSame(furthest) }!
            openElements.insert(newElement, at: fbIndex + 1)
            newElement.stackCount += 1
            openCounts[Int(newElement.tag.rawValue)] += 1
        }
        return true
    }
}
