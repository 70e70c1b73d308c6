import Foundation
import Keymaker
import MailSafety
import RampartCore
import SealedStore
import Testing

/// The README's library example (ReadmeExample.swift) is the code shown, and it works.
@Suite("README: use it as a library")
struct LibraryExampleTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The ```swift block under README's "## Use it as a library" heading.
    static func readmeBlock() throws -> String {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.range(of: "\n## Use it as a library\n"), "README has no 'Use it as a library' section")
        let rest = readme[section.upperBound...]
        let open = try #require(rest.range(of: "```swift\n"), "the section has no ```swift block")
        let close = try #require(rest[open.upperBound...].range(of: "\n```"), "the ```swift block is not closed")
        return String(rest[open.upperBound..<close.lowerBound])
    }

    /// ReadmeExample.swift from its first `import` line on.
    static func exampleSource() throws -> String {
        let url = packageRoot.appendingPathComponent("Tests/LibraryExampleTests/ReadmeExample.swift")
        let source = try String(contentsOf: url, encoding: .utf8)
        let start = try #require(source.range(of: "\nimport "), "ReadmeExample.swift has no import line")
        return source[source.index(after: start.lowerBound)...].trimmingCharacters(in: .newlines)
    }

    @Test func readmeShowsExactlyTheCompiledExample() throws {
        let readme = try Self.readmeBlock()
        let source = try Self.exampleSource()
        #expect(readme == source, "README's example and Tests/LibraryExampleTests/ReadmeExample.swift differ; edit both together")
    }

    @Test func theExampleStoresSealedReadsBackAndSanitizes() throws {
        let home = FileManager.default.temporaryDirectory
            .appendingPathComponent("rampart-readme-\(UUID().uuidString)", isDirectory: true)
        try PrivateFiles.ensurePrivateDirectory(home)
        defer { try? FileManager.default.removeItem(at: home) }
        let pin = SecretBytes(copying: Array("482913".utf8))

        let shown = try readMailSafely(home: home, pin: pin)
        #expect(shown.html.contains("Hi Alice"))
        #expect(!shown.html.contains("onclick") && !shown.html.contains("steal"), "the handler is removed: \(shown.html)")
        #expect(!shown.html.contains(#" src=""#), "the remote image must not load (no src attribute left): \(shown.html)")
        #expect(shown.report.blockedRemote.count == 1)

        // Nothing of the message is in clear on disk (database, WAL, keychain files).
        let files = FileManager.default.enumerator(at: home, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL } ?? []
        var scanned = 0
        for file in files where (try? file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
            let bytes = try Data(contentsOf: file)
            scanned += 1
            for marker in ["tracker.example", "steal()", "bob@example.org"] {
                #expect(bytes.range(of: Data(marker.utf8)) == nil, "\(marker) in clear in \(file.path)")
            }
        }
        #expect(scanned > 0)

        // Another process (fresh containers over the same home) needs the PIN, then reads the message.
        let global = GlobalContainer(environment: RampartEnvironment(homeDirectory: home, settings: ["keychain.backend": "file"]))
        let again = UserContainer(userID: "alice", global: global)
        let locked = #expect(throws: SealedStoreError.self) { try again.sealedStore }
        if case .locked = locked {} else { Issue.record("expected the store to be locked, got \(String(describing: locked))") }
        #expect(throws: KeymakerError.wrongPIN(attemptsLeft: 9)) {
            try again.keymaker.unlock(.pin(SecretBytes(copying: Array("000000".utf8))))
        }
        try again.keymaker.unlock(.pin(pin))
        #expect(try again.sealedStore.mail.message(id: "m1").subject == "Hello")
    }
}
