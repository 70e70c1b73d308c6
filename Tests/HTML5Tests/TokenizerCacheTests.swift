import Testing
@testable import HTML5
import RampartTestSupport

/// The tokenizer's caches are made lazily and keep their entries in arrays that grow with use (so
/// a small message pays for no table it does not fill). They must still hit after that first
/// allocation, answer exactly what they would compute without the cache, and never carry an
/// entry from one input to another.
@Suite struct TokenizerCacheTests {
    /// The start tags of `html`, in order.
    static func startTags(_ html: String) -> [TagToken] {
        var tokenizer = Tokenizer(input: InputStream.preprocess(Array(html.utf8)))
        var out: [TagToken] = []
        while true {
            switch tokenizer.nextToken() {
            case .startTag(let tag): out.append(tag)
            case .eof: return out
            default: continue
            }
        }
    }

    static func storage(_ attributes: [Attribute]) -> UnsafeRawPointer? {
        attributes.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
    }

    static func storage(_ string: String) -> UnsafeRawPointer? {
        var string = string
        return string.withUTF8 { UnsafeRawPointer($0.baseAddress) }
    }

    @Test func shortStringCacheAnswersAsDecoding() {
        // More distinct strings than slots (refilled slots), repeats (hits), the empty string
        // (whose key is the never-filled slots' key) and invalid UTF-8 (repaired with U+FFFD).
        var g = SplitMix64(seed: 7)
        var pool: [[UInt8]] = [[], [0x61], [0xFF], [0xC3], [0xE2, 0x82], Array("style".utf8), Array("123456789012345".utf8)]
        for _ in 0..<400 {
            let count = g.next(ShortStringCache.maxLength + 1)
            pool.append((0..<count).map { _ in g.next(4) == 0 ? UInt8(truncatingIfNeeded: g.next()) : UInt8(0x61 + g.next(6)) })
        }
        var cache = ShortStringCache()
        for _ in 0..<5000 {
            let bytes = pool[g.next(pool.count)]
            let string = bytes.withUnsafeBufferPointer { cache.string(for: $0) }
            #expect(string == String(decoding: bytes, as: UTF8.self), "\(bytes)")
        }
    }

    @Test func repeatedAttributeSectionIsReplayed() {
        let tag = #"<td class="col" style="padding:10px 20px;font-family:Arial">x</td>"#
        let tags = Self.startTags("<table><tr>" + String(repeating: tag, count: 3))
        let cells = tags.filter { $0.name == "td" }
        #expect(cells.count == 3)
        // A replayed section hands out the array the first tag produced (shared storage).
        #expect(Self.storage(cells[1].attributes) == Self.storage(cells[0].attributes))
        #expect(Self.storage(cells[2].attributes) == Self.storage(cells[0].attributes))
        #expect(cells[2].attributes.map(\.value) == ["col", "padding:10px 20px;font-family:Arial"])
    }

    @Test func repeatedLongValueIsShared() {
        // Different sections (no replay), the same long value: the value cache hands out the
        // first string.
        let tags = Self.startTags(#"<p style="margin:0 0 10px 0;color:#333">a<p id=x style="margin:0 0 10px 0;color:#333">b"#)
        #expect(tags.count == 2)
        let first = tags[0].attributes[0].value, second = tags[1].attributes[1].value
        #expect(first == "margin:0 0 10px 0;color:#333" && second == first)
        #expect(Self.storage(second) == Self.storage(first))
    }

    @Test func noEntryOutlivesItsInput() {
        // The same offsets in two inputs with different bytes: each parse answers for its own
        // input (a fresh tokenizer per parse, so a fresh cache).
        let a = #"<p title="aaaaaaaaaaaaaaaaaaaa" class="one">x"#
        let b = #"<p title="bbbbbbbbbbbbbbbbbbbb" class="two">x"#
        for _ in 0..<2 {
            for (html, title, cls) in [(a, "aaaaaaaaaaaaaaaaaaaa", "one"), (b, "bbbbbbbbbbbbbbbbbbbb", "two")] {
                let tags = Self.startTags(html + html)
                #expect(tags.count == 2)
                for tag in tags { #expect(tag.attributes.map(\.value) == [title, cls]) }
                let fragment = try? HTML5Parser.parseFragment(html, contextName: "div")
                #expect(fragment?.root.childElements.first?[attribute: "class"] == cls)
            }
        }
    }
}
