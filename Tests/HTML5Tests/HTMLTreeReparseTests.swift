// The re-parse check without a second tree on the arena (`HTML5Parser.parsesBack(_:to:root:...)`,
// `ReparseVerifier` over `ArenaExpectedTree`) against what it stands for and against the class
// DOM's check: whenever it says yes, the markup really parses to a tree that serializes as the
// expected arena tree does, the class check says yes too, and the tree's bookkeeping is clear.
//
// Trust-model row: inbox (incoming mail) — the mail sanitizer's mutation-XSS guard.

import Testing
@testable import HTML5
import RampartTestSupport

@Suite struct HTMLTreeReparseTests {
    private static let pieces = [
        "<p>", "</p>", "<div>", "</div>", "<b>", "</b>", "<i>", "</i>", "<a href=x>", "</a>", "<table>", "<tr>", "<td>", "</table>",
        "<select>", "<option>", "<selectedcontent>", "<template>", "</template>", "<svg>", "</svg>", "<math>", "<mi>", "<pre>",
        "\n", "text", " ", "&amp;", "é", "<!--c-->", "<br>", "<img src=y alt=z>", "<ul>", "<li>", "<textarea>", "x<y", "<style>",
        "</style>", "<font color=red>", "<h1>", "<span class=s>", "</span>", "<form>", "<button>", "\u{0}", "<noscript>",
    ]

    private static func div() -> Element { Element(localName: "div") }

    /// Every element row of the tree has the parser's stack count at 0.
    private static func bookkeepingIsClear(_ tree: HTMLTree) -> Bool {
        (0..<Int32(tree.count)).allSatisfy { tree.kind($0) != .element || tree.row($0).pointee.stackCount == 0 }
    }

    /// Random markup, parsed and edited (as the sanitizer edits), then checked against its own
    /// serialization and against mutated serializations.
    @Test func yesOnlyWhenTheReparseSerializesTheSameAndTheClassCheckAgrees() throws {
        var random = LinearCongruential64(seed: 0xA7E4A)
        var arenaYes = 0, classYes = 0, checked = 0
        for round in 0..<1_500 {
            var html = ""
            for _ in 0..<random.next(25) { html += Self.pieces[random.next(Self.pieces.count)] }
            let arena = try HTML5Parser.parseTreeFragment(html, context: Self.div()).root
            let classRoot = try HTML5Parser.parseFragment(html, context: Self.div()).root
            // Edits on both trees: remove or unwrap a node, as the cleaner does.
            for _ in 0..<random.next(3) {
                let arenaNodes = Array(arena.descendants), classNodes = Array(classRoot.descendants)
                guard !arenaNodes.isEmpty, arenaNodes.count == classNodes.count else { break }
                let at = random.next(arenaNodes.count)
                if random.next(2) == 0 { arenaNodes[at].remove(); classNodes[at].remove() } else { arenaNodes[at].unwrap(); classNodes[at].unwrap() }
            }
            let output = arena.innerHTML
            #expect(output == classRoot.innerHTML)
            var candidates = [output]
            if !output.isEmpty {
                let scalars = Array(output.unicodeScalars)
                let cut = random.next(scalars.count)
                var mutated = String.UnicodeScalarView()
                mutated.append(contentsOf: scalars[..<cut])
                mutated.append(contentsOf: ["<", "/", "p", ">", "x", "\n"][random.next(6)].unicodeScalars)
                mutated.append(contentsOf: scalars[cut...])
                candidates.append(String(mutated))
            }
            for candidate in candidates {
                checked += 1
                let answer = HTML5Parser.parsesBack(candidate, to: arena.tree, root: arena.index, context: Self.div())
                let classAnswer = HTML5Parser.parsesBack(candidate, to: classRoot, context: Self.div())
                #expect(Self.bookkeepingIsClear(arena.tree), "round \(round)")
                if classAnswer { classYes += 1 }
                guard answer.matched else { continue }
                arenaYes += 1
                #expect(classAnswer, "class check said no: \(candidate.debugDescription)")
                let reparsed = try HTML5Parser.parseTreeFragment(candidate, context: Self.div())
                #expect(Array(reparsed.innerHTML.utf8) == Array(output.utf8), "\(candidate.debugDescription)")
                #expect(answer.limited == (reparsed.formattingLimited || reparsed.selectedContentLimited))
            }
            // The tree is unchanged by the checks.
            #expect(arena.innerHTML == output)
        }
        // It must say yes where the trees simply match, nearly as often as the class check.
        #expect(arenaYes > checked / 3, "\(arenaYes) of \(checked)")
        #expect(Double(arenaYes) >= Double(classYes) * 0.9, "\(arenaYes) vs class \(classYes)")
    }

    /// A message's own serialization matches; a different text, attribute or element does not;
    /// foster parenting, a template and a nested `<a>` (steps other than appends) do not.
    @Test func simpleCases() throws {
        func check(_ html: String, against expected: String) throws -> Bool {
            let tree = try HTML5Parser.parseTreeFragment(expected, context: Self.div()).root
            return HTML5Parser.parsesBack(html, to: tree.tree, root: tree.index, context: Self.div()).matched
        }
        #expect(try check("<p class=\"a\">Hi <b>there</b></p>x", against: "<p class=a>Hi <b>there</b></p>x"))
        #expect(try !check("<p class=\"b\">Hi <b>there</b></p>x", against: "<p class=a>Hi <b>there</b></p>x"))
        #expect(try !check("<p>Hi <b>there</b></p>y", against: "<p>Hi <b>there</b></p>x"))
        #expect(try !check("<p>Hi <i>there</i></p>", against: "<p>Hi <b>there</b></p>"))
        #expect(try !check("<p>Hi</p>", against: "<p>Hi</p><p>more</p>"))
        #expect(try !check("<p>Hi</p><p>more</p>", against: "<p>Hi</p>"))
        #expect(try !check("<table><b>x</b><tr><td>1</td></tr></table>", against: "<table><b>x</b><tr><td>1</td></tr></table>"))
        #expect(try !check("<template><p>x</p></template>", against: "<template><p>x</p></template>"))
        #expect(try check("<svg viewBox=\"0 0 1 1\"><path d=\"M0\"></path></svg><!--c-->", against: "<svg viewBox='0 0 1 1'><path d=M0 /></svg><!--c-->"))
        #expect(try !check("<!--d-->", against: "<!--c-->"))
    }
}
