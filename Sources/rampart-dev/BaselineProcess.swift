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

/// An outside program that times one round of its own work each time it is asked (a baseline
/// script started with `--serve`): it prints one line when it is ready, then, for each line
/// `round` written to it, one line with that round's seconds. A benchmark alternates these rounds
/// with its own, so each pair of rounds runs in the same seconds of the machine's time: on a
/// virtual machine whose speed drifts by up to 2× within a minute, a ratio of two medians taken
/// minutes apart measures the drift as much as the code.
final class ServedBaseline {
    private let process = Process()
    private let toProcess = Pipe()
    private let fromProcess = Pipe()
    private var pending = Data()
    /// What the program said when it was ready (its one JSON line: `{"ready": …, "version": …}`).
    private(set) var readyInfo: [String: Any] = [:]

    /// Starts the program; `nil` when it cannot be started or does not say it is ready.
    init?(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) {
        guard FileManager.default.isExecutableFile(atPath: executable) else { return nil }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardInput = toProcess
        process.standardOutput = fromProcess
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        guard let ready = readLine(), ready.hasPrefix("{") else { close(); return nil }
        readyInfo = (try? JSONSerialization.jsonObject(with: Data(ready.utf8))) as? [String: Any] ?? [:]
    }

    deinit { close() }

    /// Asks for one round; its seconds, or `nil` if the program stopped answering.
    func round() -> Double? {
        guard process.isRunning else { return nil }
        toProcess.fileHandleForWriting.write(Data("round\n".utf8))
        return readLine().flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// One turn of a benchmark that takes turns with served baselines: `ours` runs one timed
    /// round and each baseline one round, the baselines after `ours` on even turns and before it,
    /// in reverse order, on odd ones, so that no side always runs first. Returns the seconds of
    /// `ours` and of each baseline (`nil` for one that is absent or stopped answering).
    static func turn(_ turn: Int, with baselines: [ServedBaseline?], ours: () throws -> Double) rethrows -> (ours: Double, theirs: [Double?]) {
        let oursFirst = turn.isMultiple(of: 2)
        var theirs = [Double?](repeating: nil, count: baselines.count)
        if !oursFirst { for k in baselines.indices.reversed() { theirs[k] = baselines[k]?.round() } }
        let seconds = try ours()
        if oursFirst { for k in baselines.indices { theirs[k] = baselines[k]?.round() } }
        return (seconds, theirs)
    }

    /// Ends the program (idempotent).
    func close() {
        guard process.isRunning else { return }
        try? toProcess.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    private func readLine() -> String? {
        while true {
            if let newline = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending = Data(pending[(newline + 1)...])
                return line
            }
            let chunk = fromProcess.fileHandleForReading.availableData
            if chunk.isEmpty { return nil }  // end of output
            pending.append(chunk)
        }
    }
}
