import Foundation
@testable import MIME

enum TestSupport {
    /// scripts/mime in the repository (the test file lives in Tests/MIMETests).
    static var scriptsDir: URL {
        let here = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        return here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/mime")
    }

    static var fixturesDir: URL {
        Bundle.module.resourceURL!.appendingPathComponent("Fixtures")
    }

    static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: fixturesDir.appendingPathComponent(name)))
    }

    /// `$RAMPART_PYTHON` if set and executable, else `python3` from PATH.
    static var python: String {
        if let p = ProcessInfo.processInfo.environment["RAMPART_PYTHON"], FileManager.default.isExecutableFile(atPath: p) { return p }
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let p = "\(dir)/python3"
            if FileManager.default.isExecutableFile(atPath: p) { return p }
        }
        return "/usr/bin/python3"
    }

    struct ProcessFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs a command, returns stdout; throws with stderr on a non-zero exit.
    static func run(_ exe: String, _ args: [String]) throws -> Data {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = args
        let out = Pipe(), err = Pipe()
        p.standardOutput = out; p.standardError = err
        try p.run()
        var data = Data()
        let errData = DispatchQueue.global().sync { () -> Data in Data() }
        _ = errData
        data = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        if p.terminationStatus != 0 {
            throw ProcessFailure(description: "\(exe) \(args.joined(separator: " ")) exited \(p.terminationStatus): \(String(decoding: e, as: UTF8.self))")
        }
        return data
    }

    static func tempDir(_ tag: String) throws -> URL {
        let u = FileManager.default.temporaryDirectory.appendingPathComponent("mime-\(tag)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: u, withIntermediateDirectories: true)
        return u
    }
}
