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
