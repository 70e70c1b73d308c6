import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one run of a command printed and how it ended.
public struct CLIResult: Sendable {
    /// The exit status, or the signal number when ``terminatedBySignal``.
    public let status: Int32
    /// Whether a signal ended the process.
    public let terminatedBySignal: Bool
    /// Standard output as bytes (for commands that print binary data).
    public let output: Data
    /// Standard error as text.
    public let stderr: String

    /// Standard output as text.
    public var stdout: String { String(decoding: output, as: UTF8.self) }
    /// The non-empty lines of standard output.
    public var lines: [String] { stdout.split(separator: "\n").map(String.init) }
}

/// A program a test runs as a user or a script would: a built executable of this package
/// (``rampart``, ``rampartDev``) or any other program, with environment entries every run gets.
///
/// Runs capture standard output and standard error (read at the same time, so a chatty stream
/// cannot block the child) and end with a time limit: a run that overstays is killed and
/// reported as ``TestSupportError/timedOut(command:seconds:stdout:stderr:)``. Only the child
/// itself is killed: on Linux, Foundation notices an exit only once the child's own children
/// (which inherit its descriptors) are gone too, so a script should `exec` its last command.
public struct CLITool: Sendable {
    private enum Program: Sendable {
        case built(BuiltExecutable)
        case path(URL)
    }

    private let program: Program
    /// Added to this process's environment for every run (a run's own entries win).
    public let environment: [String: String]

    /// How long a run may take unless the call says otherwise: generous, only there so that a
    /// hung child fails its test instead of the whole suite.
    public static let defaultTimeout: Duration = .seconds(300)

    /// The user's tool, `rampart`.
    public static let rampart = CLITool(.rampart)
    /// The developer's tool, `rampart-dev` (lab commands, benchmarks, `key …` on a throwaway home).
    public static let rampartDev = CLITool(.rampartDev)

    public init(_ executable: BuiltExecutable, environment: [String: String] = [:]) {
        program = .built(executable)
        self.environment = environment
    }

    public init(path: URL, environment: [String: String] = [:]) {
        program = .path(path)
        self.environment = environment
    }

    /// The same program with `entries` added to the environment of every run.
    public func with(environment entries: [String: String]) -> CLITool {
        CLITool(program: program, environment: environment.merging(entries) { $1 })
    }

    private init(program: Program, environment: [String: String]) {
        self.program = program
        self.environment = environment
    }

    /// The program's location (throws when a built executable cannot be found).
    public func url() throws -> URL {
        switch program {
        case .built(let executable): try executable.url()
        case .path(let url): url
        }
    }

    /// Runs the program to its end with `stdin` (text) on standard input.
    public func run(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:],
                    timeout: Duration = defaultTimeout) throws -> CLIResult {
        try run(arguments, input: stdin.map { Data($0.utf8) }, environment: environment, timeout: timeout)
    }

    /// Runs the program to its end with `input` (bytes) on standard input.
    public func run(_ arguments: [String], input: Data?, environment: [String: String] = [:],
                    timeout: Duration = defaultTimeout) throws -> CLIResult {
        let child = try spawn(arguments, input: input, environment: environment)
        return try child.result(timeout: timeout)
    }

    /// Runs the program to its end with `stdin` (text) on standard input, waiting on a thread of
    /// its own (`onThreadOfItsOwn(named:_:)`): the caller holds no cooperative thread meanwhile.
    public func run(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:],
                    timeout: Duration = defaultTimeout) async throws -> CLIResult {
        try await run(arguments, input: stdin.map { Data($0.utf8) }, environment: environment, timeout: timeout)
    }

    /// Runs the program to its end with `input` (bytes) on standard input, waiting on a thread of
    /// its own.
    public func run(_ arguments: [String], input: Data?, environment: [String: String] = [:],
                    timeout: Duration = defaultTimeout) async throws -> CLIResult {
        let child = try spawn(arguments, input: input, environment: environment)
        return try await child.result(timeout: timeout)
    }

    /// `run(_:stdin:environment:timeout:)` blocking the calling thread, for the one place an
    /// async test cannot await: a `defer` block's clean-up (stopping an agent, a service).
    @discardableResult
    public func runBlocking(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:],
                            timeout: Duration = defaultTimeout) throws -> CLIResult {
        try run(arguments, stdin: stdin, environment: environment, timeout: timeout)
    }

    /// The async `run(_:stdin:environment:timeout:)`, under the name it had before every async
    /// caller got it.
    public func runOnThread(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:],
                            timeout: Duration = defaultTimeout) async throws -> CLIResult {
        try await run(arguments, stdin: stdin, environment: environment, timeout: timeout)
    }

    /// Starts the program and returns while it runs: for tests that read its output as it comes,
    /// kill it mid-way, or run several at once. Standard input gets `stdin` and is then closed.
    public func spawn(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]) throws -> ChildProcess {
        try spawn(arguments, input: stdin.map { Data($0.utf8) }, environment: environment)
    }

    /// ``spawn(_:stdin:environment:)`` with bytes on standard input.
    public func spawn(_ arguments: [String], input: Data?, environment: [String: String] = [:]) throws -> ChildProcess {
        let merged = ProcessInfo.processInfo.environment.merging(self.environment) { $1 }.merging(environment) { $1 }
        return try ChildProcess(executable: try url(), arguments: arguments, environment: merged, input: input)
    }
}

/// A running child process whose standard output and standard error are collected while it
/// runs (read them at any time, also after a SIGKILL).
public final class ChildProcess: @unchecked Sendable {
    /// The Foundation process (for its pid, `isRunning`, termination reason).
    public let process = Process()
    /// The command line, for messages.
    public let commandLine: String
    private let stdoutCollector: PipeCollector
    private let stderrCollector: PipeCollector
    private let exited = DispatchSemaphore(value: 0)

    init(executable: URL, arguments: [String], environment: [String: String], input: Data?) throws {
        commandLine = ([executable.lastPathComponent] + arguments).joined(separator: " ")
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        let exited = self.exited
        process.terminationHandler = { _ in exited.signal() }
        stdoutCollector = PipeCollector(stdout.fileHandleForReading)
        stderrCollector = PipeCollector(stderr.fileHandleForReading)
        try process.run()
        stdoutCollector.start()
        stderrCollector.start()
        if let input, !input.isEmpty { stdin.fileHandleForWriting.write(input) }
        try stdin.fileHandleForWriting.close()
    }

    public var processIdentifier: pid_t { process.processIdentifier }
    public var isRunning: Bool { process.isRunning }

    /// What the child printed on standard output so far.
    public var output: Data { stdoutCollector.data }
    public var stdout: String { String(decoding: output, as: UTF8.self) }
    /// What the child printed on standard error so far.
    public var stderr: String { String(decoding: stderrCollector.data, as: UTF8.self) }
    /// The complete lines of standard output so far.
    public var lines: [String] {
        var text = stdout
        if let lastNewline = text.lastIndex(of: "\n") { text = String(text[..<lastNewline]) } else { return [] }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// Waits until the complete lines of standard output satisfy `condition`; false when the
    /// child ended (and its output was read) first, or `timeout` passed.
    public func waitForLines(timeout: Duration = .seconds(60), _ condition: ([String]) -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(lines) { return true }
            if stdoutCollector.finished { return condition(lines) }
            usleep(2_000)
        }
        return condition(lines)
    }

    /// `waitForLines(timeout:_:)` waiting on a thread of its own: the caller holds no cooperative
    /// thread meanwhile.
    public func waitForLines(timeout: Duration = .seconds(60), _ condition: @escaping @Sendable ([String]) -> Bool) async -> Bool {
        await onThreadOfItsOwn(named: "wait-lines") { self.waitForLines(timeout: timeout, condition) }
    }

    /// Waits until a line equal to `line` is printed.
    public func waitForLine(_ line: String, timeout: Duration = .seconds(60)) -> Bool {
        waitForLines(timeout: timeout) { $0.contains(line) }
    }

    /// `waitForLine(_:timeout:)` waiting on a thread of its own.
    public func waitForLine(_ line: String, timeout: Duration = .seconds(60)) async -> Bool {
        await waitForLines(timeout: timeout) { $0.contains(line) }
    }

    /// Like `waitForLine(_:timeout:)`, but throws with what the child printed when it does not come.
    public func requireLine(_ line: String, timeout: Duration = .seconds(60)) throws {
        guard waitForLine(line, timeout: timeout) else { throw stalled(waitingFor: line) }
    }

    /// `requireLine(_:timeout:)` waiting on a thread of its own.
    public func requireLine(_ line: String, timeout: Duration = .seconds(60)) async throws {
        guard await waitForLine(line, timeout: timeout) else { throw stalled(waitingFor: line) }
    }

    private func stalled(waitingFor line: String) -> TestSupportError {
        .childProcessStalled(command: commandLine, waitingFor: "the line \"\(line)\"", stdout: stdout, stderr: stderr)
    }

    /// Sends `signal` (SIGKILL: no clean-up runs in the child), waits for the exit and for the
    /// rest of its output. A child that outlives `timeout` after another signal gets SIGKILL.
    public func kill(_ signal: Int32 = SIGKILL, timeout: Duration = .seconds(30)) {
        if process.isRunning { deliver(signal, to: process.processIdentifier) }
        if !waitForExit(timeout: timeout), signal != SIGKILL {
            deliver(SIGKILL, to: process.processIdentifier)
            waitForExit()
        }
    }

    /// Waits for the child to exit and its output to be read to the end (at most `timeout`).
    @discardableResult
    public func waitForExit(timeout: Duration = CLITool.defaultTimeout) -> Bool {
        guard exited.wait(timeout: .now() + timeout.timeInterval) == .success else { return false }
        exited.signal()  // later waits see it too
        process.waitUntilExit()
        // The output ends when every holder of the pipe closed it; a grandchild that kept it open
        // (a daemon) must not hang the test, so this wait is bounded.
        let outputDeadline = ContinuousClock.now + .seconds(10)
        while !(stdoutCollector.finished && stderrCollector.finished), ContinuousClock.now < outputDeadline { usleep(1_000) }
        return true
    }

    /// `waitForExit(timeout:)` waiting on a thread of its own.
    @discardableResult
    public func waitForExit(timeout: Duration = CLITool.defaultTimeout) async -> Bool {
        await onThreadOfItsOwn(named: "wait-exit") { self.waitForExit(timeout: timeout) }
    }

    /// `result(timeout:)` waiting on a thread of its own.
    public func result(timeout: Duration = CLITool.defaultTimeout) async throws -> CLIResult {
        try await onThreadOfItsOwn(named: "wait-result") { try self.result(timeout: timeout) }
    }

    /// Waits for the end (killing the child with SIGKILL after `timeout`) and returns the result.
    public func result(timeout: Duration = CLITool.defaultTimeout) throws -> CLIResult {
        guard waitForExit(timeout: timeout) else {
            kill()
            throw TestSupportError.timedOut(command: commandLine, seconds: timeout.timeInterval, stdout: stdout, stderr: stderr)
        }
        return CLIResult(status: process.terminationStatus, terminatedBySignal: process.terminationReason == .uncaughtSignal,
                         output: output, stderr: stderr)
    }

    deinit {
        if process.isRunning { deliver(SIGKILL, to: process.processIdentifier) }
    }
}

private func deliver(_ signal: Int32, to pid: pid_t) {
    _ = kill(pid, signal)
}

/// Reads one pipe to its end on a thread of its own.
final class PipeCollector: @unchecked Sendable {
    private let handle: FileHandle
    private let lock = NSLock()
    private var buffer = Data()
    private var done = false

    init(_ handle: FileHandle) { self.handle = handle }

    func start() {
        Thread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                lock.withLock { buffer.append(chunk) }
            }
            lock.withLock { done = true }
        }.start()
    }

    var data: Data { lock.withLock { buffer } }
    var finished: Bool { lock.withLock { done } }
}

extension Duration {
    /// The duration in seconds.
    public var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
