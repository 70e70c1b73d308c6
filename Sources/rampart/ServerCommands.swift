import ArgumentParser
import RampartCLIKit
import Foundation
import RampartAPI
import RampartCore
import RampartServer

/// `rampart server …`: the embedded local backend (module RampartServer).
struct ServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "server",
        abstract: "The embedded local backend (TLS on 127.0.0.1, zero-access storage, demo mailboxes).",
        subcommands: [ServerStart.self, ServerInfoCommand.self, ServerDeliver.self]
    )
}

/// Where the server keeps its data.
struct ServerDataOptions: ParsableArguments {
    @OptionGroup var global: GlobalOptions

    @Option(name: .customLong("data"), help: "The server's data folder (default: <home>/server).")
    var data: String?

    var dataDirectory: URL {
        if let data { return URL(fileURLWithPath: (data as NSString).expandingTildeInPath, isDirectory: true) }
        return global.homeDirectory.appendingPathComponent("server", isDirectory: true)
    }
}

/// `rampart server start`: runs the backend in the foreground until SIGINT or SIGTERM.
struct ServerStart: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Start the backend on 127.0.0.1 and print its port and certificate pins.",
        discussion: """
        The first start creates the data folder (0700) with a self-signed CA and server certificate, \
        the SQLite database and the demo accounts:
          demo  / login password "\(DemoAccounts.demo.loginPassword)" / mailbox password "\(DemoAccounts.demo.mailboxPassword)"
          alice / login password "\(DemoAccounts.alice.loginPassword)" / mailbox password "\(DemoAccounts.alice.mailboxPassword)"
        The port and pins are written to <data>/server.json (see `rampart server info`).
        The server runs in the foreground; stop it with Ctrl-C or SIGTERM.
        """)

    @OptionGroup var options: ServerDataOptions

    @Option(help: "TCP port on 127.0.0.1 (0 = any free port).") var port: Int = 0

    @Flag(help: "Run in the foreground (the only mode; accepted for scripts).") var foreground = false

    @Flag(name: .customLong("no-demo"), help: "Do not create the demo accounts in a new data folder.") var noDemo = false

    @Flag(help: "Print the server log on standard error too.") var verbose = false

    func run() async throws {
        try await reportingErrors {
            ProcessHardening.disableCoreDumps()
            let signals = SignalWaiter([SIGINT, SIGTERM])
            let server = try await EmbeddedServer.start(configuration: EmbeddedServerConfiguration(
                dataDirectory: options.dataDirectory, port: port, seedDemo: !noDemo, logToStandardError: verbose))
            print("Rampart server listening on \(server.baseURL.absoluteString) (127.0.0.1:\(server.port))")
            print("Data folder: \(server.dataDirectory.path)")
            print("Pins (SPKI SHA-256): \(server.pins.joined(separator: " "))")
            print("Server description: \(server.dataDirectory.appendingPathComponent(EmbeddedServer.infoFileName).path)")
            if !noDemo {
                print("Demo accounts: demo (login \"\(DemoAccounts.demo.loginPassword)\", mailbox \"\(DemoAccounts.demo.mailboxPassword)\"), "
                      + "alice (login \"\(DemoAccounts.alice.loginPassword)\", mailbox \"\(DemoAccounts.alice.mailboxPassword)\")")
            }
            fflush(nil)
            let signal = await signals.next(or: server)
            if let signal { print("Signal \(signal): stopping.") }
            await server.stop()
        }
    }
}

/// `rampart server info`: prints the running server's `server.json`.
struct ServerInfoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Print the running server's port, pins and CA certificate (JSON).")

    @OptionGroup var options: ServerDataOptions

    func run() async throws {
        try await reportingErrors {
            try printJSON(try EmbeddedServer.info(dataDirectory: options.dataDirectory))
        }
    }
}

/// Waits for one of some signals (or for the server to stop on its own).
final class SignalWaiter: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]
    private let stream: AsyncStream<Int32>
    private let continuation: AsyncStream<Int32>.Continuation

    init(_ numbers: [Int32]) {
        (stream, continuation) = AsyncStream<Int32>.makeStream()
        var sources: [any DispatchSourceSignal] = []
        for number in numbers {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            let continuation = self.continuation
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    /// The first signal received, or nil when the server stopped by itself.
    func next(or server: RunningServer) async -> Int32? {
        let continuation = self.continuation
        let watcher = Task {
            _ = await server.waitUntilStopped()
            continuation.finish()
        }
        defer { watcher.cancel() }
        var iterator = stream.makeAsyncIterator()
        return await iterator.next()
    }

    deinit { sources.forEach { $0.cancel() } }
}
