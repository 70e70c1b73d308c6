import Foundation
import RampartAPI
import RampartServer
import RampartTestSupport

/// `rampart server start` in a child process, as a user runs it: the server is not starved by
/// other test suites sharing the test process's thread pool, and a test can kill it with SIGKILL.
///
/// The start waits for the `server.json` the server writes once it listens.
public final class ServerProcess: @unchecked Sendable {
    /// The running `rampart server start`.
    public let child: ChildProcess
    /// The server's data folder.
    public let dataDirectory: URL
    /// What the server published in `server.json`: port, pins, CA certificate, pid.
    public let info: ServerInfo

    /// Starts `rampart server start --data DATA --port 0` (plus `arguments`, with `environment`
    /// added to the test's) and waits until it serves.
    /// `infoFile` (default `<data>/server.json`) is where it writes its description: give each of
    /// several processes on one data folder its own.
    public init(data: URL, arguments: [String] = [], environment: [String: String] = [:], tool: CLITool = .rampart,
                startTimeout: Duration = .seconds(120), infoFile: URL? = nil) throws {
        dataDirectory = data
        let file = infoFile ?? data.appendingPathComponent(EmbeddedServer.infoFileName)
        self.infoFile = file
        child = try tool.spawn(["server", "start", "--data", data.path, "--port", "0", "--info-file", file.path] + arguments,
                               environment: environment)
        let deadline = ContinuousClock.now + startTimeout
        var found: ServerInfo?
        while found == nil, ContinuousClock.now < deadline, child.isRunning {
            found = try? EmbeddedServer.info(file: file)
            if found == nil { usleep(50_000) }
        }
        guard let found else {
            child.kill()
            throw TestSupportError.childProcessStalled(command: child.commandLine,
                                                       waitingFor: file.path,
                                                       stdout: child.stdout, stderr: child.stderr)
        }
        info = found
    }

    /// ``init(data:arguments:environment:tool:startTimeout:)`` waiting on a thread of its own, so
    /// an async test does not hold a cooperative thread while the server starts.
    public static func start(data: URL, arguments: [String] = [], environment: [String: String] = [:],
                             tool: CLITool = .rampart, startTimeout: Duration = .seconds(120),
                             infoFile: URL? = nil) async throws -> ServerProcess {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result {
                    try ServerProcess(data: data, arguments: arguments, environment: environment, tool: tool, startTimeout: startTimeout,
                                      infoFile: infoFile)
                })
            }.start()
        }
    }

    public var baseURL: URL { info.baseURL }
    public var pins: [String] { info.pins }
    /// The path of its description, `server.json` unless given (for `--server-info`).
    public let infoFile: URL

    /// Asks the server to stop (SIGTERM) and waits for its exit (SIGKILL after 30 s). In an
    /// async test, ``stopAndWait()`` waits without holding a cooperative thread, and a `defer`
    /// that only has to end the server uses ``stopInBackground()``.
    public func stop() {
        _ = stopping.swap()
        child.kill(SIGTERM)
    }

    /// Asks the server to stop (SIGTERM) and returns without waiting: the wait for its exit
    /// (SIGKILL after 30 s) is a ``BackgroundCleanup``, so a `defer` or `deinit` on the
    /// cooperative pool holds no thread while the server shuts down; the test process waits for
    /// it before it exits. For a test that goes on once the server is gone, not a replacement
    /// for ``stop()``.
    public func stopInBackground() {
        guard !stopping.swap() else { return }
        let child = self.child
        BackgroundCleanup.start(named: "server-stop") { child.kill(SIGTERM) }
    }

    /// Stops the server (SIGTERM, SIGKILL after 30 s) and awaits its exit on a thread of its own.
    public func stopAndWait() async {
        _ = stopping.swap()
        let child = self.child
        await onThreadOfItsOwn(named: "server-stop") { child.kill(SIGTERM) }
    }

    private let stopping = OnceFlag()

    deinit { stopInBackground() }
}

/// A flag that is set once: ``swap()`` sets it and says whether it was set already.
final class OnceFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var set = false

    func swap() -> Bool {
        lock.withLock {
            defer { set = true }
            return set
        }
    }
}
