/// The HTML serializer's escaping as the spec states it, one scalar at a time: `&` and U+00A0
/// always, `"` in attribute mode, `<` and `>` in text. The reference the tests hold the
/// serializer's block-at-a-time escaping (`HTMLSerializer.escape(_:attributeMode:into:)`) to.
public func referenceHTMLEscape(_ string: String, attributeMode: Bool) -> String {
    var out = ""
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
    return out
}
