import Testing
@testable import HTML5
import RampartTestSupport

/// The input stage's fast paths (the word-at-a-time UTF-8 validator, the memchr-based CR LF
/// normalization) against the standard library and the spec's byte-at-a-time definition.
@Suite struct InputStageTests {
    /// Bytes that are mostly UTF-8-shaped (ASCII runs, lead bytes followed by continuation
    /// bytes), with boundary values and random corruption, so both verdicts are frequent.
    static func sample(_ g: inout SplitMix64) -> [UInt8] {
        let interesting: [UInt8] = [0x00, 0x0D, 0x0A, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF,
                                    0xE0, 0xED, 0xEE, 0xEF, 0xF0, 0xF3, 0xF4, 0xF5, 0xFF]
        var bytes: [UInt8] = []
        let clean = g.next(2) == 0  // half the samples are built from whole scalars only
        for _ in 0..<g.next(40) {
            switch clean ? [0, 1, 4, 5][g.next(4)] : g.next(6) {
            case 0, 1: for _ in 0..<g.next(20) { bytes.append(UInt8(0x20 + g.next(0x5F))) }
            case 2: bytes.append(interesting[g.next(interesting.count)])
            case 3: bytes.append(0x80 | UInt8(g.next(0x40)))
            default:
                let scalar = [0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x10FFFF, 0x20AC, 0x1F600][g.next(11)]
                bytes.append(contentsOf: String(Character(Unicode.Scalar(UInt32(scalar))!)).utf8)
            }
        }
        if !clean && !bytes.isEmpty && g.next(3) == 0 { bytes[g.next(bytes.count)] = UInt8(g.next(256)) }
        return bytes
    }

    @Test func validatorAgreesWithTheStandardLibrary() {
        var g = SplitMix64(seed: 42)
        var valid = 0, invalid = 0
        for _ in 0..<20_000 {
            let bytes = Self.sample(&g)
            let expected = String(validating: bytes, as: UTF8.self) != nil
            #expect(EncodingSniffer.isValidUTF8(bytes) == expected, "\(bytes)")
            if expected { valid += 1 } else { invalid += 1 }
        }
        // The sample exercises both verdicts (a generator producing only one would test nothing).
        #expect(valid > 2_000 && invalid > 2_000, "valid \(valid) invalid \(invalid)")
    }

    @Test func validatorEdgeCases() {
        let cases: [([UInt8], Bool)] = [
            ([], true), (Array("plain ascii, longer than eight bytes".utf8), true),
            ([0xC2, 0x80], true), ([0xC1, 0xBF], false), ([0xC2], false), ([0xC2, 0x41], false),
            ([0xE0, 0xA0, 0x80], true), ([0xE0, 0x9F, 0xBF], false), ([0xED, 0x9F, 0xBF], true), ([0xED, 0xA0, 0x80], false),
            ([0xEF, 0xBF, 0xBF], true), ([0xEF, 0xBF], false),
            ([0xF0, 0x90, 0x80, 0x80], true), ([0xF0, 0x8F, 0xBF, 0xBF], false), ([0xF4, 0x8F, 0xBF, 0xBF], true),
            ([0xF4, 0x90, 0x80, 0x80], false), ([0xF5, 0x80, 0x80, 0x80], false), ([0xFF], false),
            (Array("12345678".utf8) + [0xE2, 0x82, 0xAC] + Array("abcdefgh".utf8), true),
            (Array("1234567".utf8) + [0x80], false),
        ]
        for (bytes, expected) in cases {
            #expect(EncodingSniffer.isValidUTF8(bytes) == expected, "\(bytes)")
            #expect((String(validating: bytes, as: UTF8.self) != nil) == expected, "reference disagrees on \(bytes)")
        }
    }

    /// §13.2.3.5, byte at a time: CR LF and lone CR become LF.
    static func referencePreprocess(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if bytes[i] == 0x0D {
                out.append(0x0A)
                if i + 1 < bytes.count && bytes[i + 1] == 0x0A { i += 1 }
            } else {
                out.append(bytes[i])
            }
            i += 1
        }
        return out
    }

    @Test func newlineNormalizationMatchesTheSpec() {
        var g = SplitMix64(seed: 7)
        for _ in 0..<5_000 {
            var bytes: [UInt8] = []
            for _ in 0..<g.next(60) { bytes.append([0x0D, 0x0A, 0x41, 0x20, 0x0D][g.next(5)]) }
            #expect(InputStream.preprocess(bytes) == Self.referencePreprocess(bytes), "\(bytes)")
            // The string path reads the string's own bytes (small and large strings alike).
            let string = String(decoding: bytes, as: UTF8.self) + (g.next(2) == 0 ? "" : String(repeating: "x\r\n", count: 8))
            #expect(InputStream.preprocess(string) == Self.referencePreprocess(Array(string.utf8)), "\(bytes)")
        }
        #expect(InputStream.preprocess(Array("a\r\nb\rc\n\r\r\nd\r".utf8)) == Array("a\nb\nc\n\n\nd\n".utf8))
        #expect(InputStream.preprocess("a\r\nb\rc\n\r\r\nd\r") == Array("a\nb\nc\n\n\nd\n".utf8))
    }
}

/// Repeated long attribute values share one string (the tokenizer's value cache); values that
/// collide in the cache (same length, same first and last eight bytes) must still come out as
/// their own bytes.
@Suite struct AttributeValueCacheTests {
    @Test func collidingValuesKeepTheirOwnBytes() throws {
        var html = "<!doctype html><body>"
        var expected: [String] = []
        for i in 0..<300 {
            // Same length, same 8-byte prefix and suffix: only the middle differs.
            let value = "color:#00000;x:\(String(format: "%05d", i % 37));font-size:14px;"
            expected.append(value)
            html += "<p style=\"\(value)\" class=\"\(i % 2 == 0 ? "even-row-class-name" : "odd-row-class-name!")\">\(i)</p>"
            if i % 50 == 0 { html += "<p style=\"\(value)&amp;\">entity</p>" }  // not a pure input slice
        }
        let body = try HTML5Parser.parseDocument(html).root.documentElement!.childElements.last!
        var index = 0
        for p in body.childElements {
            if p.textContent == "entity" {
                #expect(p[attribute: "style"] == expected[index - 1] + "&")
                continue
            }
            #expect(p[attribute: "style"] == expected[index], "element \(index)")
            #expect(p[attribute: "class"] == (index % 2 == 0 ? "even-row-class-name" : "odd-row-class-name!"))
            index += 1
        }
        #expect(index == 300)
    }
}

/// The named character reference index is parsed from the generated table text; the html5lib
/// tokenizer suite (namedEntities.test) checks every entry through the tokenizer, this checks the
/// index itself.
@Suite struct NamedCharacterReferenceIndexTests {
    func lookup(_ name: String) -> String? {
        let index = NamedCharacterReferences.index
        let bytes = Array(name.utf8)
        guard let range = bytes.withUnsafeBufferPointer({ index.lookup($0) }) else { return nil }
        return String(decoding: index.values[range], as: UTF8.self)
    }

    @Test func holdsTheWholeTable() {
        #expect(NamedCharacterReferences.index.count == 2231)
        #expect(lookup("amp;") == "&")
        #expect(lookup("amp") == "&")  // legacy, without semicolon
        #expect(lookup("AElig") == "\u{C6}")
        #expect(lookup("nbsp;") == "\u{A0}")
        #expect(lookup("NotNestedGreaterGreater;") == "\u{2AA2}\u{338}")
        #expect(lookup("CounterClockwiseContourIntegral;") == "\u{2233}")
        #expect(lookup("fjlig;") == "fj")
        #expect(lookup("ampx;") == nil)
        #expect(lookup("nbs") == nil)
        #expect(lookup("") == nil)
    }
}
