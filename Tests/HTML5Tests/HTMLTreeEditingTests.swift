// The arena tree's editing API (`HTMLTree`/`HTMLNode`: remove, unwrap, text and attribute edits)
// and its re-parse comparisons (`hasSameChildren`, `innerHTMLEquals`), against the class DOM's
// methods of the same name: the same edits run on both trees of the same markup, and the trees
// must dump, serialize and compare the same after every step.
//
// Trust-model row: inbox (incoming mail) — the mail sanitizer's cleaner rewrites the arena tree
// through these edits, and its re-parse check decides with these comparisons.

import Testing
@testable import HTML5
import RampartTestSupport

/// Markup with every kind of node the sanitizer meets: nested and adjacent texts, comments,
/// templates, foreign content, tables (foster parenting), `<pre>` line feeds, attributes in
/// namespaces.
private let editingInputs = [
    "<p class=a id=b>Hi <b>there</b>&nbsp;!</p><!-- c --><table><tr><td>1<td>2</table><template><i>in</i></template>",
    "<svg viewBox='0 0 1 1'><foreignObject><p>f</p></foreignObject><use xlink:href=#a /></svg><math><mi>m</mi></math><pre>\n\nx</pre>",
    "<p>a<b>b<i>c</b>d</i>e</p><ul><li>1<li>2</ul><select><option>o</select>text at the end",
    "<div><span>1</span>2<span>3<em>4</em></span><!--x-->5</div><style>p{color:red}</style><img src=x alt=y>",
    "x<b>y</b>z<i>w<b>v</b></i><a href=h target=t>l</a><font color=red size=2>f</font><textarea>\nt</textarea>",
]

/// Both trees of `html` parsed as the sanitizer parses mail (fragment in a `<div>`).
private func parseBoth(_ html: String) throws -> (classRoot: DocumentFragment, arena: HTMLNode) {
    let classRoot = try HTML5Parser.parseFragment(html, context: Element(localName: "div")).root
    let arena = try HTML5Parser.parseTreeFragment(html, context: Element(localName: "div")).root
    return (classRoot, arena)
}

/// The nodes below `root` in document order (template contents not entered), each tree.
private func nodes(_ root: Node) -> [Node] { Array(root.descendants) }
private func nodes(_ root: HTMLNode) -> [HTMLNode] { Array(root.descendants) }

/// One edit, chosen by `choice`, applied to the node at the same place in both trees.
private func edit(_ choice: Int, classNode: Node, arenaNode: HTMLNode, log: inout [String]) {
    switch choice % 7 {
    case 0:
        log.append("remove")
        classNode.remove()
        arenaNode.remove()
    case 1:
        log.append("unwrap")
        classNode.unwrap()
        arenaNode.unwrap()
    case 2:
        if let text = classNode as? CharacterData {
            let data = "\n\(text.data.count)é<"
            log.append("setData")
            text.data = data
            arenaNode.setData(data)
        }
    case 3:
        if let element = classNode as? Element {
            let name = element.attributes.first?.name ?? "data-x"
            log.append("setAttribute \(name)")
            element.setAttribute(name, "v&\"")
            arenaNode.setAttribute(name, "v&\"")
            element.setAttribute("new", "n")
            arenaNode.setAttribute("new", "n")
        }
    case 4:
        if let element = classNode as? Element {
            let name = element.attributes.last?.name ?? "absent"
            log.append("removeAttribute \(name)")
            let removed = element.removeAttribute(name)
            #expect(arenaNode.removeAttribute(name) == removed)
            #expect(arenaNode.removeAttribute(name, namespace: .xlink) == element.removeAttribute(name, namespace: .xlink))
        }
    case 5:
        if let element = classNode as? Element {
            log.append("filterAttributes")
            element.filterAttributes { $0.name.count % 2 == 0 }
            arenaNode.filterAttributes { $0.name.count % 2 == 0 }
        }
    default:
        if classNode is Element {
            log.append("replace content")
            classNode.removeAllChildren()
            classNode.appendChild(Text("p{}"))
            arenaNode.removeAllChildren()
            arenaNode.appendText("p{}")
        }
    }
}

@Suite struct HTMLTreeEditingTests {
    /// Random edit scripts on every input: after each edit both trees dump and serialize the
    /// same, their text contents agree, the arena's links are consistent, and the arena's
    /// comparisons answer as the class DOM's.
    @Test(arguments: 0..<editingInputs.count)
    func randomEditsMatchTheClassDOM(input: Int) throws {
        let html = editingInputs[input]
        for seed in 1...25 {
            var random = LinearCongruential64(seed: UInt64(seed * 7919 + input))
            let (classRoot, arena) = try parseBoth(html)
            let pristine = try parseBoth(html)
            var log: [String] = []
            for _ in 0..<12 {
                let classNodes = nodes(classRoot), arenaNodes = nodes(arena)
                try #require(classNodes.count == arenaNodes.count, "\(log)")
                guard !classNodes.isEmpty else { break }
                let at = random.next(classNodes.count)
                edit(random.next(), classNode: classNodes[at], arenaNode: arenaNodes[at], log: &log)
                #expect(arena.html5libTreeDump == classRoot.html5libTreeDump, "\(html) \(log)")
                #expect(arena.innerHTML == classRoot.innerHTML, "\(html) \(log)")
                #expect(arena.textContent == classRoot.textContent)
                #expect(arena.tree.textContent(of: arena.index) == classRoot.textContent)
                expectConsistentLinks(arena.tree)
                // The comparisons, against the untouched trees and the re-parsed serialization.
                let output = classRoot.innerHTML
                let reparsed = try parseBoth(output)
                #expect(arena.tree.hasSameChildren(arena.index, as: reparsed.arena.index, in: reparsed.arena.tree)
                    == classRoot.hasSameChildren(as: reparsed.classRoot), "\(output)")
                #expect(arena.tree.hasSameChildren(arena.index, as: pristine.arena.index, in: pristine.arena.tree)
                    == classRoot.hasSameChildren(as: pristine.classRoot), "\(log)")
                #expect(arena.tree.innerHTMLEquals(of: arena.index, output))
                #expect(reparsed.arena.tree.innerHTMLEquals(of: reparsed.arena.index, output) == reparsed.classRoot.innerHTMLEquals(output))
                #expect(!arena.tree.innerHTMLEquals(of: arena.index, output + " "))
            }
        }
    }

    /// Unwrap keeps the children in place and in order, between the node's siblings; a removed
    /// node's handle stays readable (its row is unlinked, never reused); unwrapping or removing a
    /// detached node does nothing.
    @Test func unwrapAndRemoveInPlace() throws {
        let (classRoot, arena) = try parseBoth("a<b>1<i>2</i>3</b>c")
        let b = try #require(arena.children.first { $0.tag == .b })
        b.unwrap()
        #expect(arena.innerHTML == "a1<i>2</i>3c")
        #expect(arena.children.map { $0.kind } == [.text, .text, .element, .text, .text])
        #expect(b.parent == nil && b.firstChild == nil && b.nextSibling == nil && b.localName == "b")
        b.unwrap()
        b.remove()
        let i = try #require(arena.children.first { $0.tag == .i })
        i.remove()
        #expect(arena.innerHTML == "a13c" && i.textContent == "2")
        i.remove()
        expectConsistentLinks(arena.tree)
        // The same on the class DOM.
        (classRoot.children.first { ($0 as? Element)?.tag == .b })?.unwrap()
        (classRoot.children.first { ($0 as? Element)?.tag == .i })?.remove()
        #expect(classRoot.innerHTML == arena.innerHTML && classRoot.html5libTreeDump == arena.html5libTreeDump)
    }

    /// A pooled text (its bytes in the tree's text pool) replaced by `setData` reads back the
    /// new data, and the other texts that share the pool keep theirs; a comment's data too.
    @Test func setDataOnPooledTextAndComment() throws {
        let result = try HTML5Parser.parseTree("<p>first</p><p>second</p><!--note-->")
        let texts = result.root.descendants.filter { $0.kind == .text }
        #expect(texts.map { $0.data } == ["first", "second"])
        texts[0].setData("1st")
        #expect(texts.map { $0.data } == ["1st", "second"])
        let comment = try #require(result.root.descendants.first { $0.kind == .comment })
        comment.setData("changed")
        #expect(comment.data == "changed")
        #expect(result.innerHTML == "<html><head></head><body><p>1st</p><p>second</p><!--changed--></body></html>")
        result.tree.withData(texts[1].index) { #expect(Array($0) == Array("second".utf8)) }
        result.tree.withData(result.root.index) { #expect($0.isEmpty) }
    }

    /// The comparison takes a run of adjacent texts as their concatenation, and says no to a
    /// template, a different attribute value, a different name, or a missing node.
    @Test func comparisonOfRowsAgreesWithTheSerialization() throws {
        func same(_ a: String, _ b: String, edit: (HTMLNode) -> Void = { _ in }) throws -> Bool {
            let x = try parseBoth(a).arena, y = try parseBoth(b).arena
            edit(x)
            let answer = x.tree.hasSameChildren(x.index, as: y.index, in: y.tree)
            if answer { #expect(x.innerHTML == y.innerHTML) }
            return answer
        }
        #expect(try same("<p a=1>x</p><!--c-->", "<p a=1>x</p><!--c-->"))
        #expect(try same("a<b>x</b>y", "axy") { root in root.children.first { $0.tag == .b }?.unwrap() })
        #expect(try !same("<p a=1>x</p>", "<p a=2>x</p>"))
        #expect(try !same("<p>x</p>", "<div>x</div>"))
        #expect(try !same("<p>x</p>y", "<p>x</p>"))
        #expect(try !same("<template>x</template>", "<template>x</template>"))
        #expect(try !same("<x-a>1</x-a>", "<x-b>1</x-b>"))
        #expect(try same("<x-a>1</x-a>", "<x-a>1</x-a>"))
        let tree = try parseBoth("<p>x</p>").arena
        #expect(tree.tree.hasSameChildren(tree.index, as: tree.index, in: tree.tree))
        #expect(!tree.tree.hasSameChildren(tree.index, as: tree.tree.document.index, in: tree.tree))
    }
}
