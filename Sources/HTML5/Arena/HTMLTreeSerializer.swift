// The WHATWG fragment serialization over the arena tree (docs/arena-tree.md, step 3): the same
// bytes as `HTMLSerializer` writes for the class DOM, from the rows.
//
// Trust-model row: inbox (incoming mail) — this is the text a sanitized tree will reach the web
// view as; it must re-parse to the same tree, so it follows the class serializer byte for byte
// (the same escaping functions, the same void and raw-text name sets), and the conformance tests
// and the `html5` fuzz target compare the two serializations.

extension HTMLTree {
    /// The serialized children of `node` (as ``Node/innerHTML``: template contents for a
    /// `<template>`).
    package func innerHTML(of node: Int32) -> String {
        var buffer = UTF8Buffer(capacity: 4096)
        serializeChildren(of: node, into: &buffer, scripting: false)
        return buffer.string()
    }

    /// The serialization of `node` and its subtree (as ``Node/serialized(scripting:)``: for the
    /// document or a fragment, its children).
    package func serialized(_ node: Int32, scripting: Bool = false) -> String {
        withSerialization(node, scripting: scripting, capacity: 1024) { $0.string() }
    }

    /// Serializes `node` (as ``serialized(_:scripting:)``) into a buffer and hands `body` the
    /// buffer (valid only during the call): a caller that writes the bytes out makes no `String`.
    func withSerialization<R>(_ node: Int32, scripting: Bool, capacity: Int, drain: ((UnsafeBufferPointer<UInt8>) -> Void)? = nil,
                              _ body: (borrowing UTF8Buffer) throws -> R) rethrows -> R {
        var buffer = UTF8Buffer(capacity: capacity, drain: drain)
        switch kind(node) {
        case .document, .fragment:
            serializeChildren(of: node, into: &buffer, scripting: scripting)
        case .element:
            let pointer = row(node)
            openTag(pointer, into: &buffer)
            if !isVoid(pointer) {
                serializeChildren(of: node, into: &buffer, scripting: scripting)
                endTag(pointer, into: &buffer)
            }
        case .text, .comment, .doctype:
            let raw = parent(node).map { rawTextChildren(row($0), scripting: scripting) } ?? false
            leaf(row(node), raw: raw, into: &buffer)
        }
        return try body(buffer)
    }

    /// Serializes the children of `node` as UTF-8 (the children of its template contents for a
    /// `<template>`). Iterative, like the class serializer: a stack of the open elements whose
    /// end tags are pending, so no depth overflows the stack.
    func serializeChildren(of node: Int32, into out: inout UTF8Buffer, scripting: Bool) {
        let root = row(node)
        var parent = root
        var rawAtRoot = false
        if root.pointee.kind == .element {
            if root.pointee.templateContents >= 0 {
                parent = row(root.pointee.templateContents)
            } else {
                rawAtRoot = rawTextChildren(root, scripting: scripting)
            }
        }
        var open: [(element: UnsafeMutablePointer<Row>, raw: Bool)] = []
        var next = parent.pointee.firstChild
        while true {
            guard next >= 0 else {
                guard let (element, _) = open.popLast() else { return }
                endTag(element, into: &out)
                next = element.pointee.nextSibling
                continue
            }
            let current = row(next)
            if current.pointee.kind == .element {
                openTag(current, into: &out)
                if isVoid(current) {
                    next = current.pointee.nextSibling
                    continue
                }
                open.append((current, rawTextChildren(current, scripting: scripting)))
                let contents = current.pointee.templateContents
                next = contents >= 0 ? row(contents).pointee.firstChild : current.pointee.firstChild
                continue
            }
            leaf(current, raw: open.last?.raw ?? rawAtRoot, into: &out)
            next = current.pointee.nextSibling
        }
    }

    /// Whether the text children of the element are written raw (``HTMLSerializer``'s rule).
    @inline(__always) private func rawTextChildren(_ element: UnsafeMutablePointer<Row>, scripting: Bool) -> Bool {
        guard element.pointee.kind == .element else { return false }
        return HTMLSerializer.rawTextChildren(namespace: element.pointee.namespace, tag: element.pointee.tag, scripting: scripting)
    }

    @inline(__always) private func isVoid(_ element: UnsafeMutablePointer<Row>) -> Bool {
        HTMLSerializer.isVoid(namespace: element.pointee.namespace, tag: element.pointee.tag)
    }

    /// `<name attr="value"...>`, the strings read in place in the row.
    private func openTag(_ element: UnsafeMutablePointer<Row>, into out: inout UTF8Buffer) {
        out.append(0x3C)
        withUTF8Bytes(inPlace: &element.pointee.payload) { out.append($0) }
        let count = element.pointee.attributes.count
        if count > 0 {
            element.pointee.attributes.withUnsafeMutableBufferPointer { attributes in
                for index in 0..<count {
                    out.append(0x20)
                    if attributes[index].namespace == nil {
                        withUTF8Bytes(inPlace: &attributes[index].name) { out.append($0) }
                    } else {
                        out.append(attributes[index].qualifiedName)
                    }
                    out.append(0x3D); out.append(0x22)  // ="
                    withUTF8Bytes(inPlace: &attributes[index].value) { HTMLSerializer.escapeAttributeValue($0, into: &out) }
                    out.append(0x22)
                }
            }
        }
        out.append(0x3E)
    }

    /// `</name>`.
    @inline(__always) private func endTag(_ element: UnsafeMutablePointer<Row>, into out: inout UTF8Buffer) {
        out.append(0x3C); out.append(0x2F)  // </
        withUTF8Bytes(inPlace: &element.pointee.payload) { out.append($0) }
        out.append(0x3E)
    }

    /// A text (escaped, or raw under a raw-text element), comment or doctype.
    private func leaf(_ node: UnsafeMutablePointer<Row>, raw: Bool, into out: inout UTF8Buffer) {
        switch node.pointee.kind {
        case .text:
            if raw {
                withTextBytes(node) { out.append($0) }
            } else {
                withTextBytes(node) { HTMLSerializer.escapeText($0, into: &out) }
            }
        case .comment:
            out.append("<!--" as StaticString)
            withUTF8Bytes(inPlace: &node.pointee.payload) { out.append($0) }
            out.append("-->" as StaticString)
        case .doctype:
            out.append("<!DOCTYPE " as StaticString)
            withUTF8Bytes(inPlace: &node.pointee.payload) { out.append($0) }
            out.append(0x3E)
        case .document, .fragment, .element:
            break
        }
    }
}
