// Foreign content (§13.2.6.5): MathML and SVG integration points, attribute adjustments and the
// rules for tokens inside <svg> and <math>.

extension TreeBuilder {
    // MARK: Attribute adjustments

    mutating func adjustMathMLAttributes(_ tag: inout TagToken) {
        for i in tag.attributes.indices where tag.attributes[i].name == "definitionurl" { tag.attributes[i].name = "definitionURL" }
    }

    mutating func adjustSVGAttributes(_ tag: inout TagToken) {
        for i in tag.attributes.indices {
            if let adjusted = ElementSets.svgAttributeNames[tag.attributes[i].name] { tag.attributes[i].name = adjusted }
        }
    }

    mutating func adjustForeignAttributes(_ attributes: [Attribute]) -> [Attribute] {
        var result = attributes
        for i in result.indices {
            if let (ns, local) = ElementSets.foreignAttributes[result[i].name] {
                result[i].namespace = ns
                result[i].name = local
            }
        }
        return result
    }

    // MARK: Integration points

    func isMathMLTextIntegrationPoint(_ e: Element) -> Bool {
        e.namespace == .mathml && TreeBuilderSets.set2.contains(e.tag)
    }

    func isHTMLIntegrationPoint(_ e: Element) -> Bool {
        if e.namespace == .mathml && e.tag == .annotationXml {
            guard let encoding = e.attributeValue("encoding")?.lowercased() else { return false }
            return encoding == "text/html" || encoding == "application/xhtml+xml"
        }
        return e.namespace == .svg && (e.tag == .foreignObject || e.tag == .desc || e.tag == .title)
    }

    // MARK: Tokens in foreign content

    mutating func processForeign(_ token: Token) {
        switch token {
        case .characterBytes: characterBytesNotDispatched()
        case .characters(let s):
            var text = s
            if runContainsNUL(text) { error("unexpected-null-character"); text = text.replacingNUL(with: "\u{FFFD}") }
            if s.utf8.contains(where: { !isWhitespaceByte($0) && $0 != 0 }) { framesetOK = false }
            insertText(text)
        case .comment(let data): insertComment(data)
        case .doctype: error("unexpected-doctype")
        case .startTag(var tag):
            let breakout = ElementSets.breakoutTags.contains(tag.tag)
                || (tag.tag == .font && tag.attributes.contains { $0.name == "color" || $0.name == "face" || $0.name == "size" })
            if breakout {
                error("unexpected-html-element-in-foreign-content")
                while let current = currentNode, current.namespace != .html, !isMathMLTextIntegrationPoint(current), !isHTMLIntegrationPoint(current) {
                    pop()
                }
                process(token, mode)
                return
            }
            let namespace = adjustedCurrentNode!.namespace
            if namespace == .svg, let adjusted = ElementSets.svgTagNames[tag.name] { tag.rename(adjusted) }
            insertForeign(tag, namespace)
        case .endTag(let tag):
            if tag.tag == .br || tag.tag == .p {
                error("unexpected-html-element-in-foreign-content")
                while let current = currentNode, current.namespace != .html, !isMathMLTextIntegrationPoint(current), !isHTMLIntegrationPoint(current) {
                    pop()
                }
                process(token, mode)
                return
            }
            if tag.tag == .script, let current = currentNode, current.namespace == .svg, current.tag == .script {
                pop()
                return
            }
            var index = openElements.count - 1
            var node = openElements[index]
            // "Converted to ASCII lowercase" (the tokenizer lowercases only ASCII in tag names):
            // Unicode lowercasing made an element named with non-ASCII capitals (`<aÍ>`) never
            // match its own end tag, so its serialization reparsed to another tree (found by the
            // HTML5 fuzz target's idempotence oracle).
            if node.localName.asciiLowercased != tag.name { error("unexpected-end-tag") }
            while index > 0 {
                if node.localName.asciiLowercased == tag.name {
                    popUntil(node)
                    return
                }
                index -= 1
                node = openElements[index]
                if node.namespace == .html { process(token, mode); return }
            }
        case .eof: process(token, mode)
        }
    }
}

extension String {
    /// The string with ASCII upper-case letters lowercased and everything else unchanged (the
    /// spec's "converted to ASCII lowercase"; `lowercased()` would also change `Í` or `K`).
    var asciiLowercased: String {
        guard utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return self }
        return String(decoding: utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}
