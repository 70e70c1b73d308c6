import Foundation
import Testing

/// Drives the real `rampart` executable as a script would: `--home`, `--pin-stdin`, exit codes.
struct CLIRun {
    let status: Int32
    let stdout: String
    let stderr: String
}

enum RampartBinary {
    /// The `rampart` executable built next to this test bundle (or `$RAMPART_BIN`).
    static var url: URL {
        if let path = ProcessInfo.processInfo.environment["RAMPART_BIN"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("rampart")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        return Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("rampart")
    }

    static func run(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]) throws -> CLIRun {
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { $1 }
        process.environment = env
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CLIRun(status: process.terminationStatus,
                      stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errData, as: UTF8.self))
    }
}

func temporaryHome() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-cli-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    return url
}

@Suite("rampart key (CLI)")
struct KeyCLITests {
    @Test func keyLifecycleWorksFromScriptsWithDocumentedExitCodes() throws {
        let home = try temporaryHome().path
        defer { try? FileManager.default.removeItem(atPath: home) }
        let fast = ["RAMPART_PIN_KDF_LOGN": "15"]
        var run = try RampartBinary.run(["--home", home, "key", "init"])
        #expect(run.status == 0, "\(run.stderr)")
        run = try RampartBinary.run(["--home", home, "key", "init"])
        #expect(run.status == 2, "a second init is refused as bad usage")
        run = try RampartBinary.run(["--home", home, "key", "protect", "--pin-stdin"], stdin: "12\n", environment: fast)
        #expect(run.status == 2)
        #expect(run.stderr.contains("too short"))
        run = try RampartBinary.run(["--home", home, "key", "protect", "--pin-stdin"], stdin: "482913\n", environment: fast)
        #expect(run.status == 0, "\(run.stderr)")
        run = try RampartBinary.run(["--home", home, "key", "unlock", "--pin-stdin"], stdin: "000000\n")
        #expect(run.status == 4)
        #expect(run.stderr.contains("9 attempts left"))
        run = try RampartBinary.run(["--home", home, "key", "unlock", "--pin-stdin"], stdin: "482913\n")
        #expect(run.status == 0, "\(run.stderr)")
        run = try RampartBinary.run(["--home", home, "key", "status", "--json"])
        #expect(run.status == 0)
        let status = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        #expect(status?["activeProtectors"] as? [String] == ["pin"])
        #expect(status?["failedAttempts"] as? Int == 0)
        #expect(status?["keychainBackend"] as? String == "file")
        run = try RampartBinary.run(["--home", home, "key", "protect", "--none"], stdin: "482913\n")
        #expect(run.status == 0, "\(run.stderr)")
        run = try RampartBinary.run(["--home", home, "key", "unlock"])
        #expect(run.status == 0, "\(run.stderr)")
        run = try RampartBinary.run(["--home", home, "key", "wipe", "--yes"])
        #expect(run.status == 0)
        run = try RampartBinary.run(["--home", home, "key", "unlock"])
        #expect(run.status == 6)
    }

    @Test func aHomeFolderOthersCanReadIsRefused() throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home) }
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: home.path)
        let run = try RampartBinary.run(["--home", home.path, "key", "init"])
        #expect(run.status != 0)
        #expect(run.stderr.contains("chmod go-rwx"))
    }
}
