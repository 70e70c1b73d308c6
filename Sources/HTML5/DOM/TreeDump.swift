// The html5lib-tests tree format (`| <html>` lines, two spaces per level).

extension Node {
    /// The subtree in html5lib-tests' `#document` format: one `| `-prefixed line per node,
    /// attributes sorted, two spaces of indentation per level. Used by the conformance tests and
    /// `rampart-dev html5 tree`.
    public var html5libTreeDump: String {
        var out = ""
        var stack: [(Node, Int)] = []
        var child = lastChild
        while let c = child { stack.append((c, 0)); child = c.previousSibling }
        while let (node, depth) = stack.popLast() {
            let indent = String(repeating: "  ", count: depth)
            out += "| " + indent
            if let element = node as? Element {
                switch element.namespace {
                case .html: out += "<\(element.localName)>\n"
                case .svg: out += "<svg \(element.localName)>\n"
                case .mathml: out += "<math \(element.localName)>\n"
                }
                let attributes = element.attributes.map { attribute -> (String, String) in
                    let name = attribute.namespace.map { "\($0.prefix) \(attribute.name)" } ?? attribute.name
                    return (name, attribute.value)
                }.sorted { $0.0 < $1.0 }
                for (name, value) in attributes { out += "| \(indent)  \(name)=\"\(value)\"\n" }
                if let content = element.templateContent {
                    out += "| \(indent)  content\n"
                    var c = element.lastChild
                    while let x = c { stack.append((x, depth + 1)); c = x.previousSibling }
                    var t = content.lastChild
                    while let x = t { stack.append((x, depth + 2)); t = x.previousSibling }
                    continue
                }
            } else if let text = node as? Text {
                out += "\"\(text.data)\"\n"
            } else if let comment = node as? Comment {
                out += "<!-- \(comment.data) -->\n"
            } else if let doctype = node as? DocumentType {
                if doctype.publicId.isEmpty && doctype.systemId.isEmpty {
                    out += "<!DOCTYPE \(doctype.name)>\n"
                } else {
                    out += "<!DOCTYPE \(doctype.name) \"\(doctype.publicId)\" \"\(doctype.systemId)\">\n"
                }
            }
            var c = node.lastChild
            while let x = c { stack.append((x, depth + 1)); c = x.previousSibling }
        }
        return out
    }
}
