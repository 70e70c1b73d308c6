import Foundation
@testable import HTML5

/// Locates the html5lib-tests suite: env `HTML5LIB_TESTS`, else `../shared/testdata/html5lib-tests`
/// relative to the package root.
enum Html5libSuite {
    static var root: URL? {
        let fm = FileManager.default
        if let env = ProcessInfo.processInfo.environment["HTML5LIB_TESTS"], fm.fileExists(atPath: env) {
            return URL(fileURLWithPath: env)
        }
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let candidate = packageRoot.appendingPathComponent("../shared/testdata/html5lib-tests").standardized
        return fm.fileExists(atPath: candidate.path) ? candidate : nil
    }

    static func files(_ folder: String, ext: String) -> [URL] {
        guard let root else { return [] }
        let dir = root.appendingPathComponent(folder)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.filter { $0.hasSuffix("." + ext) }.sorted().map { dir.appendingPathComponent($0) }
    }

    /// The suite's `folder` files, or nil (with a note printed) when the suite is not installed:
    /// a conformance test then has nothing to measure and returns.
    static func filesOrSkip(_ folder: String, ext: String) -> [URL]? {
        let found = files(folder, ext: ext)
        if found.isEmpty { print("html5lib \(folder) suite not found (set HTML5LIB_TESTS); skipped") }
        return found.isEmpty ? nil : found
    }

    /// The `"tests"` array of a JSON `.test` file (tokenizer, serializer), or nil when the file
    /// has none.
    static func jsonTests(_ file: URL) throws -> [[String: Any]]? {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
        return json?["tests"] as? [[String: Any]]
    }

    /// Appends failure lines to the file named by env `HTML5LIB_REPORT` (used to write
    /// docs/html5-conformance.md).
    static func report(_ lines: [String]) {
        guard let path = ProcessInfo.processInfo.environment["HTML5LIB_REPORT"], !lines.isEmpty else { return }
        let text = lines.joined(separator: "\n") + "\n"
        if let handle = FileHandle(forWritingAtPath: path) {
            handle.seekToEndOfFile()
            handle.write(text.data(using: .utf8)!)
            handle.closeFile()
        } else {
            _ = FileManager.default.createFile(atPath: path, contents: text.data(using: .utf8))
        }
    }
}

// MARK: Tree-construction .dat files

struct TreeTest {
    var data = ""
    var fragmentContext: String?
    var scripting: Bool?  // nil: no flag given
    var document = ""
    var index = 0
}

enum DatParser {
    static func parse(_ text: String) -> [TreeTest] {
        var tests: [TreeTest] = []
        var current: TreeTest?
        var section = ""
        var buffer: [Substring] = []
        func flush() {
            guard var test = current else { return }
            switch section {
            case "#data": test.data = buffer.joined(separator: "\n")
            case "#document-fragment": test.fragmentContext = buffer.first.map(String.init)
            case "#document":
                var lines = buffer
                while let last = lines.last, last.isEmpty { lines.removeLast() }
                test.document = lines.joined(separator: "\n")
            default: break
            }
            current = test
        }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var i = 0
        while i < lines.count {
            let line = lines[i]
            if line == "#data" && (section == "" || section == "#document" || i == 0 || lines[i - 1].isEmpty) {
                flush()
                if let test = current { tests.append(test) }
                current = TreeTest(index: tests.count)
                section = "#data"
                buffer = []
            } else if line.hasPrefix("#") && !line.hasPrefix("#data") && ["#errors", "#new-errors", "#document-fragment", "#script-off", "#script-on", "#document"].contains(String(line)) && section != "#document" {
                flush()
                section = String(line)
                buffer = []
                if line == "#script-on" { current?.scripting = true }
                if line == "#script-off" { current?.scripting = false }
            } else if line == "#document" && section == "#document" {
                buffer.append(line)
            } else {
                buffer.append(line)
            }
            i += 1
        }
        flush()
        if let test = current { tests.append(test) }
        return tests
    }
}
