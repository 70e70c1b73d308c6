import Foundation
import RampartTestSupport
import Testing

/// proton-client's `proton.srp`, run through scripts/srp/srp_reference.py with `$RAMPART_PYTHON`
/// or the project's `.venv` (scripts/deps/srp.pip). Under CI a missing Python is a failure.
enum ProtonReference {
    static let packageRoot = BuiltExecutable.packageRoot

    static let python: String? = ProjectPython.executable

    struct Failure: Error, CustomStringConvertible { let description: String }

    /// Whether the reference is there; records an issue under CI when it is not.
    static func available() -> Bool {
        if python != nil { return true }
        #expect(ProcessInfo.processInfo.environment["CI"] == nil, "no Python with proton-client under CI (scripts/deps/srp.pip)")
        return false
    }

    /// Runs the requests (one JSON object each) and returns the answers in order.
    static func run(_ requests: [[String: String]]) throws -> [[String: String]] {
        guard let python else { throw Failure(description: "no Python: set RAMPART_PYTHON or create .venv with scripts/deps/srp.pip") }
        let input = try requests.map { String(decoding: try JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]), as: UTF8.self) }
            .joined(separator: "\n") + "\n"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [packageRoot.appendingPathComponent("scripts/srp/srp_reference.py").path]
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let writer = Thread {
            stdin.fileHandleForWriting.write(Data(input.utf8))
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        let err = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "srp_reference.py failed: \(String(decoding: err, as: UTF8.self))")
        }
        let answers = try String(decoding: out, as: UTF8.self).split(separator: "\n").map { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String] else {
                throw Failure(description: "srp_reference.py printed \(line)")
            }
            if let error = object["error"] { throw Failure(description: "srp_reference.py: \(error)") }
            return object
        }
        guard answers.count == requests.count else { throw Failure(description: "srp_reference.py answered \(answers.count) of \(requests.count)") }
        return answers
    }
}

func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }
func unbase64(_ text: String?) -> [UInt8] { text.flatMap { Data(base64Encoded: $0) }.map { [UInt8]($0) } ?? [] }
/// A little-endian number padded with high zero bytes to 256 bytes.
func padded(_ bytes: [UInt8]) -> [UInt8] { bytes + [UInt8](repeating: 0, count: max(0, 256 - bytes.count)) }
