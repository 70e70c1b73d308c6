// The WHATWG "HTML fragment serialization algorithm": serialize -> parse gives the same tree.

extension Node {
    /// The serialized children of this node (the spec's fragment serialization, like
    /// `innerHTML`). Template contents are serialized for `<template>`.
    public var innerHTML: String {
        var out = ""
        out.reserveCapacity(256)
        HTMLSerializer.serializeChildren(of: self, into: &out)
        return out
    }

    /// This node and its subtree serialized (like `outerHTML`; for a document, the children).
    public var outerHTML: String { serialized(scripting: false) }

    /// The serialization; with `scripting`, `<noscript>` text is written raw (as it was parsed
    /// with the scripting flag on).
    public func serialized(scripting: Bool) -> String {
        var out = ""
        if self is Document || self is DocumentFragment {
            HTMLSerializer.serializeChildren(of: self, into: &out, scripting: scripting)
        } else {
            HTMLSerializer.serialize(self, into: &out, scripting: scripting)
        }
        return out
    }
}

/// The spec's HTML serialization of a tree.
///
/// Trust-model row: inbox — the sanitized tree goes to the web view as this text; it re-parses to
/// the same tree.
public enum HTMLSerializer {
    static let voidElements: Set<String> = [
        "area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr", "img", "input",
        "keygen", "link", "meta", "param", "source", "track", "wbr",
    ]
    static let rawTextParents: Set<String> = ["style", "script", "xmp", "iframe", "noembed", "noframes", "plaintext"]

    /// Serializes the children of `node` (template contents for a template element).
    public static func serializeChildren(of node: Node, into out: inout String, scripting: Bool = false) {
        let parent: Node = (node as? Element)?.templateContent ?? node
        // Iterative walk: a stack of (node, closing) pairs, so deep trees cannot overflow.
        var stack: [(Node, Bool)] = []
        var child = parent.lastChild
        while let c = child { stack.append((c, false)); child = c.previousSibling }
        while let (current, closing) = stack.popLast() {
            if closing {
                out += "</"; out += (current as! Element).localName; out += ">"
                continue
            }
            if let element = current as? Element {
                openTag(element, into: &out)
                if element.namespace == .html && voidElements.contains(element.localName) { continue }
                stack.append((element, true))
                let content: Node = element.templateContent ?? element
                var c = content.lastChild
                while let x = c { stack.append((x, false)); c = x.previousSibling }
            } else {
                leaf(current, into: &out, scripting: scripting)
            }
        }
    }

    /// Serializes one node (with its subtree).
    public static func serialize(_ node: Node, into out: inout String, scripting: Bool = false) {
        if let element = node as? Element {
            openTag(element, into: &out)
            if element.namespace == .html && voidElements.contains(element.localName) { return }
            serializeChildren(of: element, into: &out, scripting: scripting)
            out += "</"; out += element.localName; out += ">"
        } else {
            leaf(node, into: &out, scripting: scripting)
        }
    }

    static func openTag(_ element: Element, into out: inout String) {
        out += "<"; out += element.localName
        for attribute in element.attributes {
            out += " "; out += attribute.qualifiedName; out += "=\""
            escape(attribute.value, attributeMode: true, into: &out)
            out += "\""
        }
        out += ">"
    }

    static func leaf(_ node: Node, into out: inout String, scripting: Bool) {
        if let text = node as? Text {
            if let parent = text.parent as? Element, parent.namespace == .html,
               rawTextParents.contains(parent.localName) || (parent.localName == "noscript" && scripting) {
                out += text.data
            } else {
                escape(text.data, attributeMode: false, into: &out)
            }
        } else if let comment = node as? Comment {
            out += "<!--"; out += comment.data; out += "-->"
        } else if let doctype = node as? DocumentType {
            out += "<!DOCTYPE "; out += doctype.name; out += ">"
        }
    }

    /// Escapes text (`&`, NBSP, `<`, `>`) or an attribute value (`&`, NBSP, `"`), as the spec says.
    public static func escape(_ string: String, attributeMode: Bool, into out: inout String) {
        var needs = false
        for byte in string.utf8 where byte == 0x26 || byte == 0xC2 || (attributeMode ? byte == 0x22 : (byte == 0x3C || byte == 0x3E)) {
            needs = true; break
        }
        guard needs else { out += string; return }
        for scalar in string.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "\u{A0}": out += "&nbsp;"
            case "\"" where attributeMode: out += "&quot;"
            case "<" where !attributeMode: out += "&lt;"
            case ">" where !attributeMode: out += "&gt;"
            default: out.unicodeScalars.append(scalar)
            }
        }
    }
}
