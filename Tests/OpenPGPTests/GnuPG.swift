import Foundation
import RampartTestSupport
import Testing

/// A throw-away GnuPG home (temporary GNUPGHOME, batch mode, loopback pinentry) for checking
/// what gpg 2.2 writes and reads. Files only: no pipes, so large outputs cannot dead-lock.
final class GnuPG {
    let home: URL
    /// The home's parent, also holding each run's input and output files; removed (its gpg-agent
    /// stopped first) when this is released.
    private let folder: TemporaryHome
    private var scratch: URL { folder.url }

    init() throws {
        folder = try TemporaryHome("openpgp")
        home = try folder.folder("gnupg")
        folder.stopsGnuPGAgentAtEnd(gnupgHome: home)
        // A fixed S2K count: otherwise gpg-agent calibrates it (~100 ms of hashing, several times)
        // whenever it protects a key with a passphrase — seconds per test on a busy machine.
        try Data("s2k-count 65536\n".utf8).write(to: home.appendingPathComponent("gpg-agent.conf"))
    }

    struct Result {
        var status: Int32
        var output: Data
        var errors: String
        var text: String { String(decoding: output, as: UTF8.self) }
    }

    /// Runs `gpg --batch --pinentry-mode loopback …` (or another GnuPG tool when `gpg` is false).
    @discardableResult
    func run(_ arguments: [String], input: Data = Data(), gpg: Bool = true) throws -> Result {
        let id = UUID().uuidString
        let inputURL = scratch.appendingPathComponent("in-\(id)")
        let outputURL = scratch.appendingPathComponent("out-\(id)")
        let errorURL = scratch.appendingPathComponent("err-\(id)")
        try input.write(to: inputURL)
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        defer {
            for url in [inputURL, outputURL, errorURL] { try? FileManager.default.removeItem(at: url) }
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = gpg
            ? ["gpg", "--homedir", home.path, "--batch", "--no-tty", "--pinentry-mode", "loopback", "--quiet"] + arguments
            : arguments
        var environment = ProcessInfo.processInfo.environment
        environment["GNUPGHOME"] = home.path
        process.environment = environment
        process.standardInput = try FileHandle(forReadingFrom: inputURL)
        process.standardOutput = try FileHandle(forWritingTo: outputURL)
        process.standardError = try FileHandle(forWritingTo: errorURL)
        try process.run()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, output: try Data(contentsOf: outputURL),
                      errors: String(decoding: try Data(contentsOf: errorURL), as: UTF8.self))
    }

    /// Runs gpg and fails the test unless it exits 0.
    @discardableResult
    func ok(_ arguments: [String], input: Data = Data(), sourceLocation: SourceLocation = #_sourceLocation) throws -> Result {
        let result = try run(arguments, input: input)
        #expect(result.status == 0, "gpg \(arguments.joined(separator: " ")) failed: \(result.errors)",
                sourceLocation: sourceLocation)
        return result
    }

    /// Generates an Ed25519/Curve25519 key without a passphrase (gpg's "future-default") and returns its fingerprint.
    func generateKey(_ userID: String) throws -> String {
        try ok(["--passphrase", "", "--quick-gen-key", userID, "future-default", "default", "never"])
        let listing = try ok(["--with-colons", "--list-keys", userID]).text
        let line = listing.split(separator: "\n").first { $0.hasPrefix("fpr:") } ?? ""
        return line.split(separator: ":", omittingEmptySubsequences: false).dropFirst(9).first.map(String.init) ?? ""
    }
}
