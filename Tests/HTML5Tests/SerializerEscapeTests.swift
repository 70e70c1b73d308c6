import Testing
@testable import HTML5
import RampartTestSupport

/// `HTMLSerializer.escape(_:attributeMode:into:)` against the spec's escaping one scalar at a time
/// (`referenceHTMLEscape`, RampartTestSupport). The escaping scans 16-byte blocks (the last block of a run overlapping the one
/// before), 8- and 4-byte words and single bytes, so the strings are 0 to 40 bytes long and put
/// special bytes and their look-alikes (`©` is C2 A9, U+0080 is C2 80, `Â` is C3 82) at every
/// offset around those boundaries.
@Suite struct SerializerEscapeTests {
    /// Escapes `string` through the public entry point, through a text node and through an
    /// attribute value (the serializer's own calls), and checks all three against the reference.
    static func check(_ string: String) {
        for attributeMode in [false, true] {
            var out = "<"
            HTMLSerializer.escape(string, attributeMode: attributeMode, into: &out)
            #expect(out == "<" + referenceHTMLEscape(string, attributeMode: attributeMode),
                    "\(string.debugDescription) attributeMode: \(attributeMode)")
        }
        let element = Element(localName: "p", attributes: [Attribute(name: "title", value: string)])
        element.appendChild(Text(string))
        #expect(element.outerHTML == "<p title=\"\(referenceHTMLEscape(string, attributeMode: true))\">\(referenceHTMLEscape(string, attributeMode: false))</p>",
                "\(string.debugDescription)")
    }

    static let specials = ["&", "<", ">", "\"", "'", "\u{A0}", "©", "\u{80}", "\u{BF}", "Â", "\u{100}", "\u{0}", "\u{1F}", "\u{7F}", "="]

    @Test func everySpecialAtEveryOffsetOfEveryLengthUpTo40Bytes() {
        for length in 0...40 {
            Self.check(String(repeating: "a", count: length))
            for special in Self.specials {
                let width = special.utf8.count
                guard width <= length else { continue }
                for offset in 0...(length - width) {
                    let before = String(repeating: "a", count: offset)
                    let after = String(repeating: "b", count: length - width - offset)
                    Self.check(before + special + after)
                    // A second special after it: the scan restarts past the first one.
                    if length - width - offset >= 1 { Self.check(before + special + String(after.dropLast()) + "&") }
                }
            }
        }
    }

    @Test func randomStringsEscapeAsTheReference() {
        let pieces = ["a", "Z", "0", " ", "\t", "\n", "\r", "\u{0}", "\u{1}", "\u{1B}", "\u{7F}", "&", "<", ">", "\"", "'",
                      "\u{A0}", "\u{A0}\u{A0}", "&amp;", "©", "\u{80}", "\u{BF}", "Â", "é", "\u{100}", "日本", "😀", "bcdefgh",
                      "abcdefghijklmnop"]
        var random = SplitMix64(seed: 0xE5CA_9E00)
        for _ in 0..<30_000 {
            // Target lengths cluster around the 4-, 8- and 16-byte boundaries.
            let target = random.next(4) == 0 ? [3, 4, 7, 8, 9, 15, 16, 17, 23, 24, 31, 32, 33][random.next(13)] : random.next(41)
            var string = ""
            while string.utf8.count < target {
                let piece = pieces[random.next(pieces.count)]
                if string.utf8.count + piece.utf8.count > 40 { break }
                string += piece
            }
            Self.check(string)
        }
    }
}
