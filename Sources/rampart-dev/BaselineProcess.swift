import Foundation

/// Runs the outside program a benchmark compares Rampart with (a Python or Node script) and
/// returns what it printed on standard output, or `nil` when it cannot be started or exits with
/// a status other than 0; its standard error is discarded.
enum BaselineProcess {
    static func output(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) -> Data? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return process.terminationStatus == 0 ? output : nil
    }
}
