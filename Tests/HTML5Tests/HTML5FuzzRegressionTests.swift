import Foundation
import Testing
@testable import HTML5

/// Inputs the HTML5 fuzz target found (`Fuzz/`, docs/fuzzing.md), with the oracle that failed:
/// serialize(parse(x)) parses to the same tree.
@Suite struct HTML5FuzzRegressionTests {
    static func fragment(_ html: String) throws -> DocumentFragment {
        var options = HTML5ParserOptions(scripting: false)
        options.recordParseErrors = false
        return try HTML5Parser.parseFragment(html, context: Element(localName: "div"), options: options).root
    }

    /// The fuzzer's input, byte for byte (base64).
    static let nonASCIIForeignNames = [
        "PCFET0NUWVBFIGh0bWw+CwAAAAAAAAA8Ym9keT48c3ZnPjxhbHRHbHlwaCAvPjxhbHRHbHlwaERlZiAvPgEIbHRHbHlwaEl0",
        "ZW0gLz48AQAAAAAAAANGbG9vZCAvPjxmZUZ1bmNBIC8+PGZlRnVuY0IgLz48ZmVGdW5jRyAvPjxmZUZ1bmNSIC8+PGZlR2F1",
        "c3NpYW5CbHVyIC8+PGZlSW1hZ2UgLz48ZmVNZXJnZAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAgLz48ZmVNZXJnZU5vZGUgxT48ZmVNb3JwaG9sb2d5IC8+PGZlT2Zmc2V0",
        "IC8+PGZlSG9pbnRhbkJsdXIgLz48ZmVJbWFnZSAvTGlnaHRpbmf/////AMP/////////bD48Ym9keT48c3ZnPjxhbHRHbHlw",
        "aCAvPjxhbHRHbHlwaERlZiAvPgEIbHRHbHlwaEl0ZW0gLz48AQAAAAAAAANGbG9vZCAvPjxmZUZ1bmNBIC8+PGZlRnVuY0Ig",
        "Lz48ZmVGdW5jRyAvPjxmZUZ1bmNSIC8+PGZlR2F1c3NpYW5CbHVyIC8+PGZlSW1hZ2UgLz48ZmVNZXJnZCAvPjxmZU1lcmdl",
        "Tm9kZSAvPjxmZU1vcnBob2xvZ3kgLz48ZmVPZmZzZXQgLz48ZmVQb2ludGFuQmx1ciAvPjxmZUltYWdlIC9MaWdodGluZ///",
        "//8Aw/////////////////////////8gPi88AAAAAGZlU3BvdExpZ2h0IC8+PGZlVGlsZSAvPjxmZVR1cmJ1bGVuY2UgLz48",
        "ZnNwZWN1bGFyQ29uc3RhbnRvcmVpZ25PYmplY3QgLz48Z2x5cGgvPjxmLz48bGluZWFyR3JhZGllbnQgLz48cmFkaWFsR3Jh",
        "ZGllbnQgLz48dGV4dP///////////////yA+LzwAAAAAZmVTcG90TGlnaHQgLz48ZmVUaWxlIC8+PGZlVHVyYnVsZW5jZSAv",
        "Pjxmc3BlY3VsYXJDb25zdGFudG9yZWlnbk9iamVjdCAvPjxnbHlwaC8+PGYvPjxsaW5lYXJHcmFkaWWSi9/QwcONnmRpYWxH",
        "cmFkaWVudCAvPjx0ZXh0UGF0aCAvPjwvc3ZnPg==",
    ].joined()

    /// An SVG element named with non-ASCII capitals (`<lineargradie…Í…dialgradient>` in the
    /// fuzzer's input) never matched its own end tag: foreign content compared the element's name
    /// lowercased with Unicode rules (`Í` → `í`) against the token's name, which the tokenizer
    /// lowercases in ASCII only, so the next sibling was parsed as its child.
    @Test func foreignEndTagMatchesNonASCIINamesInASCIILowercase() throws {
        let bytes = try #require(Data(base64Encoded: Self.nonASCIIForeignNames))
        let text = String(decoding: bytes, as: UTF8.self)
        let s1 = try Self.fragment(text).innerHTML
        #expect(try Self.fragment(s1).innerHTML == s1)

        let small = try Self.fragment("<svg><aÍ></aÍ><g></g></svg>")
        let svg = try #require(small.firstChild as? Element)
        #expect(svg.children.map { ($0 as? Element)?.localName } == ["aÍ", "g"])
        #expect(small.innerHTML == "<svg><aÍ></aÍ><g></g></svg>")
        // ASCII capitals still match (the tokenizer lowercases them); a Kelvin sign (U+212A,
        // which Unicode lowercases to "k") neither closes nor is closed by a "k".
        #expect(try Self.fragment("<svg><aÍ></AÍ><g></g></svg>").innerHTML == "<svg><aÍ></aÍ><g></g></svg>")
        let kelvinEnd = try Self.fragment("<svg><ak></a\u{212A}><g></g></svg>").innerHTML
        #expect(kelvinEnd == "<svg><ak><g></g></ak></svg>")
        let kelvinStart = try Self.fragment("<svg><a\u{212A}></ak><g></g></svg>").innerHTML
        #expect(kelvinStart == "<svg><a\u{212A}><g></g></a\u{212A}></svg>")
    }

    /// The long run's input (an idempotence "violation" that is the spec's own): an `<option>`
    /// start tag while a `<table>` hides the `<select>` from "has a select element in scope" is
    /// inserted into the foster-parented `<p>`; the serialized tree has an empty table, so on
    /// reparse the select is in scope and the option start tag generates implied end tags, which
    /// close the `<p>`. The parser must build the first tree (the spec's), and the fuzz oracle
    /// skips this shape (`Fuzz/Sources/fuzz-html5/SpecRoundTrip.swift`).
    @Test func optionInAFosterParentedParagraphWhileATableHidesTheSelect() throws {
        let first = try Self.fragment("<select><div><table><p>k<option>t")
        #expect(first.innerHTML == "<select><div><p>k<option>t</option></p><table></table></div></select>")
        let again = try Self.fragment(first.innerHTML)
        // ... and the serializer's `</p>` after it, with no <p> open, makes an empty one.
        #expect(again.innerHTML == "<select><div><p>k</p><option>t</option><p></p><table></table></div></select>")
    }

    /// The same shape with `<input>` (second long-run input): its start tag pops the `<select>`
    /// when one is in scope, so only a table hiding the select puts an input inside it.
    @Test func inputInsideASelectWhileATableHidesIt() throws {
        let first = try Self.fragment("<select><div><table><i><input>x")
        #expect(first.innerHTML == "<select><div><i><input>x</i><table></table></div></select>")
        let again = try Self.fragment(first.innerHTML)
        #expect(again.innerHTML == "<select><div><i></i></div></select><i><input>x</i><table></table>")
    }

    /// The same shape with `<optgroup>` and `<hr>` (an html5 fuzz run on the second-pass parser,
    /// input `<<table><ztr><td><select><table><ztr><!n><o…otpion><optgroup><hr>#`): both start
    /// tags generate every implied end tag when a `<select>` is in scope, so while a `<table>`
    /// hides it an `<hr>` goes into the foster-parented `<optgroup>` (and an `<optgroup>` into a
    /// `<p>`); reparsed, the table is empty and the start tags close them. The parser must build
    /// the spec's first tree; the fuzz oracle skips the shape (`SpecRoundTrip.swift`).
    @Test func optgroupAndHrWhileATableHidesTheSelect() throws {
        let hr = try Self.fragment("<select><table><optgroup><hr>#")
        #expect(hr.innerHTML == "<select><optgroup><hr>#</optgroup><table></table></select>")
        #expect(try Self.fragment(hr.innerHTML).innerHTML == "<select><optgroup></optgroup><hr>#<table></table></select>")
        let inOption = try Self.fragment("<select><table><option><hr>#")
        #expect(inOption.innerHTML == "<select><option><hr>#</option><table></table></select>")
        let optgroup = try Self.fragment("<select><div><table><p>k<optgroup>t")
        #expect(optgroup.innerHTML == "<select><div><p>k<optgroup>t</optgroup></p><table></table></div></select>")
        #expect(try Self.fragment(optgroup.innerHTML).innerHTML == "<select><div><p>k</p><optgroup>t</optgroup><p></p><table></table></div></select>")
        // With the select in scope, the same tags close the option, optgroup and p at once.
        #expect(try Self.fragment("<select><optgroup><hr>#").innerHTML == "<select><optgroup></optgroup><hr>#</select>")
    }
}
