import Foundation
import Testing
@testable import HTML5

/// Runs every html5lib tree-construction test (scripting-off, and the scripting-on variants with
/// the flag on) and fails if the pass rate drops below the level reached.
@Suite struct TreeConstructionConformanceTests {
    /// Pass rate reached when this threshold was set (every test passes); any regression fails.
    static let minimumPassRate = 1.0

    static func run(_ test: TreeTest) -> String {
        var options = HTML5ParserOptions(scripting: test.scripting ?? false)
        options.recordParseErrors = false
        do {
            if let context = test.fragmentContext {
                return try HTML5Parser.parseFragment(test.data, contextName: context, options: options).root.html5libTreeDump
            }
            return try HTML5Parser.parseDocument(test.data, options: options).root.html5libTreeDump
        } catch {
            return "error: \(error)"
        }
    }

    /// Every test of the suite, both scripting modes, parsed into the arena tree: its dump must be
    /// the expected tree wherever the class DOM's is, and equal to the class DOM's everywhere
    /// (docs/arena-tree.md, step 2); its serialization must be the class DOM's byte for byte
    /// (step 3); and the documents turned back into class nodes (``HTMLTree/materialize()``) must
    /// dump the same.
    @Test func arenaTreeGivesTheClassTreeOnEveryTest() throws {
        guard let files = Html5libSuite.filesOrSkip("tree-construction", ext: "dat") else { return }
        var compared = 0, expectedMatches = 0, classMatches = 0, serialized = 0, serializedEqual = 0, materializedDifferences = 0
        var differences: [String] = []
        for file in files {
            for test in DatParser.parse(try String(contentsOf: file, encoding: .utf8)) {
                var variants = [test]
                if test.scripting == nil { var on = test; on.scripting = true; variants.append(on) }
                for variant in variants {
                    compared += 1
                    // Each variant parsed once into each tree; the dumps, the serializations
                    // (docs/arena-tree.md, step 3) and, for documents, the tree turned back into
                    // class nodes are all compared on those two parses.
                    var options = HTML5ParserOptions(scripting: variant.scripting ?? false)
                    options.recordParseErrors = false
                    let classRoot: Node?, tree: HTMLTreeParseResult?
                    if let context = variant.fragmentContext {
                        classRoot = try? HTML5Parser.parseFragment(variant.data, contextName: context, options: options).root
                        tree = try? HTML5Parser.parseTreeFragment(variant.data, contextName: context, options: options)
                    } else {
                        classRoot = try? HTML5Parser.parseDocument(variant.data, options: options).root
                        tree = try? HTML5Parser.parseTree(variant.data, options: options)
                    }
                    guard let classRoot, let tree else {
                        if differences.count < 10 { differences.append("\(file.lastPathComponent) #\(variant.index): a parse failed") }
                        continue
                    }
                    let classDump = classRoot.html5libTreeDump, treeDump = tree.html5libTreeDump
                    if treeDump == classDump { classMatches += 1 } else if differences.count < 10 {
                        differences.append("\(file.lastPathComponent) #\(variant.index): class\n\(classDump)\narena\n\(treeDump)")
                    }
                    if treeDump.trimmingCharacters(in: .newlines) == variant.document { expectedMatches += 1 }
                    serialized += 1
                    let classHTML: String, treeHTML: String
                    if variant.fragmentContext != nil {
                        classHTML = classRoot.innerHTML
                        treeHTML = tree.innerHTML
                    } else {
                        classHTML = classRoot.serialized(scripting: options.scripting)
                        treeHTML = tree.tree.serialized(0, scripting: options.scripting)
                    }
                    if classHTML == treeHTML {
                        serializedEqual += 1
                    } else if differences.count < 10 {
                        differences.append("\(file.lastPathComponent) #\(variant.index): serialized\n\(classHTML)\narena\n\(treeHTML)")
                    }
                    if variant.fragmentContext == nil {
                        let materialized = tree.tree.materialize().html5libTreeDump
                        if materialized != treeDump {
                            materializedDifferences += 1
                            if differences.count < 10 {
                                differences.append("\(file.lastPathComponent) #\(variant.index): materialized\n\(materialized)\narena\n\(treeDump)")
                            }
                        }
                    }
                }
            }
        }
        print("arena tree: \(expectedMatches)/\(compared) as expected, \(classMatches)/\(compared) as the class DOM, \(serializedEqual)/\(serialized) serialized as the class DOM")
        #expect(compared > 3000)
        #expect(serialized == compared && serializedEqual == serialized, "\(differences.joined(separator: "\n\n"))")
        #expect(classMatches == compared, "\(differences.joined(separator: "\n\n"))")
        #expect(materializedDifferences == 0, "\(differences.joined(separator: "\n\n"))")
        #expect(Double(expectedMatches) / Double(max(compared, 1)) >= Self.minimumPassRate)
    }

    @Test func treeConstructionSuitePassesAboveThreshold() throws {
        guard let files = Html5libSuite.filesOrSkip("tree-construction", ext: "dat") else { return }
        var passed = 0, total = 0
        var failures: [String] = []
        for file in files {
            let tests = DatParser.parse(try String(contentsOf: file, encoding: .utf8))
            var filePassed = 0
            // Tests without a scripting flag must give the same tree in both modes: run both.
            var variants: [TreeTest] = []
            for test in tests {
                variants.append(test)
                if test.scripting == nil { var on = test; on.scripting = true; variants.append(on) }
            }
            for test in variants {
                total += 1
                let actual = Self.run(test).trimmingCharacters(in: .newlines)
                if actual == test.document {
                    filePassed += 1
                } else {
                    let flag = test.scripting == true ? " (scripting on)" : " (scripting off)"
                    failures.append("- `\(file.lastPathComponent)` #\(test.index)\(flag): input `\(test.data.debugDescription.prefix(120))`")
                    if ProcessInfo.processInfo.environment["HTML5LIB_VERBOSE"] != nil {
                        print("FAIL \(file.lastPathComponent) #\(test.index) ctx=\(test.fragmentContext ?? "-") scripting=\(String(describing: test.scripting))\n\(test.data)\n--- expected\n\(test.document)\n--- actual\n\(actual)\n")
                    }
                }
            }
            passed += filePassed
            print("tree-construction \(file.lastPathComponent): \(filePassed)/\(variants.count)")
        }
        print("tree-construction overall: \(passed)/\(total) (\(String(format: "%.2f", Double(passed) * 100 / Double(max(total, 1))))%)")
        Html5libSuite.report(["## tree-construction: \(passed)/\(total)"] + failures)
        let rate = Double(passed) / Double(max(total, 1))
        #expect(rate >= Self.minimumPassRate, "tree-construction pass rate \(passed)/\(total) fell below \(Self.minimumPassRate)")
    }
}
