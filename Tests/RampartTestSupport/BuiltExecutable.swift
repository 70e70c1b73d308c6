import Foundation
import RampartCore

/// An executable this package builds (`rampart`, `rampart-dev`), found the way a test needs it:
/// the path in its environment variable, else next to the test bundle (SwiftPM puts the test
/// bundle and the executables in the same products folder), else in the folder
/// `swift build --show-bin-path` names.
public struct BuiltExecutable: Sendable, Hashable {
    /// The product's name, e.g. `rampart`.
    public let name: String
    /// The variable that overrides the search, e.g. `RAMPART_BIN`.
    public let environmentVariable: String

    public init(_ name: String, overriddenBy variable: String) { (self.name, environmentVariable) = (name, variable) }

    /// The user's tool (`RAMPART_BIN` overrides).
    public static let rampart = BuiltExecutable("rampart", overriddenBy: "RAMPART_BIN")
    /// The developer's tool with the lab commands and benchmarks (`RAMPART_DEV_BIN` overrides).
    public static let rampartDev = BuiltExecutable("rampart-dev", overriddenBy: "RAMPART_DEV_BIN")

    /// The executable's location; found once per process.
    public func url() throws -> URL {
        try Self.cache.lookup(self) { try locate() }
    }

    /// Whether the executable can be found (for `.enabled(if:)` traits).
    public var isAvailable: Bool { (try? url()) != nil }

    private func locate() throws -> URL {
        let fileManager = FileManager.default
        if let path = ProcessInfo.processInfo.environment[environmentVariable], !path.isEmpty {
            guard fileManager.isExecutableFile(atPath: path) else {
                throw TestSupportError.executableNotFound(self, searched: [path])
            }
            return URL(fileURLWithPath: path)
        }
        var candidates: [URL] = []
        // The test runner and the bundle: on Linux the runner is the bundle; on Apple platforms the
        // runner sits inside it. Walk up a few folders from each.
        var starts = [URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath(), Bundle.main.bundleURL]
        starts += Bundle.allBundles.map(\.bundleURL).filter { $0.pathExtension == "xctest" }
        for start in starts {
            var folder = start.deletingLastPathComponent()
            for _ in 0..<4 {
                candidates.append(folder.appendingPathComponent(name))
                folder.deleteLastPathComponent()
            }
        }
        if let found = candidates.first(where: { fileManager.isExecutableFile(atPath: $0.path) }) { return found }
        if let binPath = Self.swiftBuildBinPath {
            let candidate = binPath.appendingPathComponent(name)
            candidates.append(candidate)
            if fileManager.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        var searched: [String] = []
        for path in candidates.map(\.standardizedFileURL.path) where !searched.contains(path) { searched.append(path) }
        throw TestSupportError.executableNotFound(self, searched: searched)
    }

    /// The package's root folder (this file is `Tests/RampartTestSupport/BuiltExecutable.swift`).
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `swift build --show-bin-path` run in the package root (once), or nil when that fails.
    private static let swiftBuildBinPath: URL? = {
        let environment = ProcessInfo.processInfo.environment
        let path = (environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/opt/swift/usr/bin", "/usr/bin"]
        guard let swift = path.map({ URL(fileURLWithPath: $0).appendingPathComponent("swift") })
            .first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else { return nil }
        let tool = CLITool(path: swift)
        guard let result = try? tool.run(["build", "--show-bin-path", "--package-path", packageRoot.path], timeout: .seconds(120)),
              result.status == 0 else { return nil }
        let printed = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return printed.isEmpty ? nil : URL(fileURLWithPath: printed)
    }()

    private static let cache = LocationCache()
}

/// Where each executable was found (so the search, and `swift build --show-bin-path`, runs once).
private final class LocationCache: @unchecked Sendable {
    private let lock = NSLock()
    private var found: [BuiltExecutable: URL] = [:]

    func lookup(_ executable: BuiltExecutable, _ locate: () throws -> URL) throws -> URL {
        if let url = lock.withLock({ found[executable] }) { return url }
        let url = try locate()
        lock.withLock { found[executable] = url }
        return url
    }
}

/// Why a test's helper could not do what it was asked.
public enum TestSupportError: RampartError, Equatable {
    /// The executable was not built, or its override variable names nothing runnable.
    case executableNotFound(BuiltExecutable, searched: [String])
    /// A command did not end within its time limit (it was killed with SIGKILL).
    case timedOut(command: String, seconds: Double, stdout: String, stderr: String)
    /// A child process did not print what the test waited for.
    case childProcessStalled(command: String, waitingFor: String, stdout: String, stderr: String)
    /// A folder or file a test needs could not be created.
    case cannotCreate(path: String, reason: String)
    /// A private software TPM (swtpm) could not be started.
    case softwareTPMUnavailable(String)
    /// A Go reference peer could not be built (Go or a source package missing, `go build` failed).
    case goProgramUnavailable(String)

    public var code: String {
        switch self {
        case .executableNotFound: "testSupport.executableNotFound"
        case .timedOut: "testSupport.timedOut"
        case .childProcessStalled: "testSupport.childProcessStalled"
        case .cannotCreate: "testSupport.cannotCreate"
        case .softwareTPMUnavailable: "testSupport.softwareTPMUnavailable"
        case .goProgramUnavailable: "testSupport.goProgramUnavailable"
        }
    }

    public var description: String {
        switch self {
        case .executableNotFound(let executable, let searched):
            "The \(executable.name) executable was not found (build it with `swift build --product \(executable.name)`, "
                + "or set \(executable.environmentVariable) to its path). Searched: \(searched.joined(separator: ", "))"
        case .timedOut(let command, let seconds, let stdout, let stderr):
            "`\(command)` did not end within \(seconds) s and was killed. stdout: \(stdout.suffix(2000)) stderr: \(stderr.suffix(2000))"
        case .childProcessStalled(let command, let waitingFor, let stdout, let stderr):
            "`\(command)` ended or stalled before printing \(waitingFor). stdout: \(stdout.suffix(2000)) stderr: \(stderr.suffix(2000))"
        case .cannotCreate(let path, let reason):
            "Could not create \(path): \(reason)"
        case .softwareTPMUnavailable(let reason), .goProgramUnavailable(let reason):
            reason
        }
    }
}

/// The Python the tests run reference peers with (proton-client, Python's `bcrypt` and `email`;
/// `scripts/deps/*.pip`): `$RAMPART_PYTHON` when it names an executable, else the project's
/// `.venv`, else none.
public enum ProjectPython {
    public static let executable: String? = {
        if let path = ProcessInfo.processInfo.environment["RAMPART_PYTHON"], FileManager.default.isExecutableFile(atPath: path) { return path }
        let venv = BuiltExecutable.packageRoot.appendingPathComponent(".venv/bin/python3").path
        return FileManager.default.isExecutableFile(atPath: venv) ? venv : nil
    }()

    /// Runs a real-client script (`scripts/bridge/imap_clients.py`, `smtp_clients.py`: `MODE PORT
    /// [CAFILE]`, ending stderr with a `timing …` line) with `python` on a thread of its own, with
    /// ``CLITool/defaultTimeout`` as the hang guard, and prints the run's time as the test saw it
    /// beside the script's own time and slowest steps: a slow run inside the whole suite then shows
    /// whether the time went to the server's answers or around the script.
    public static func runClientScript(_ python: String, _ script: String, _ arguments: [String], label: String) async throws -> CLIResult {
        let started = ContinuousClock.now
        let result = try await CLITool(path: URL(fileURLWithPath: python)).runOnThread([script] + arguments)
        let timing = result.stderr.split(separator: "\n").last { $0.hasPrefix("timing ") } ?? "no timing line"
        print("\(label) real client \(arguments.first ?? ""): \(ContinuousClock.now - started) in the test; \(timing)")
        return result
    }
}
