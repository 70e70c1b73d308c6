import ArgumentParser
import Foundation
import Logging
import RampartCLIKit
import RampartCore
import RampartRuntime

/// `rampart web [--port N] [--no-browser]`: the local web app.
///
/// Trust-model row **local web access**: the first line on standard output is the one-time URL
/// and nothing else; the same URL is written, 0600, into `<home>/web/open-<port>.html`, a page
/// that opens it (for a browser started on that file, as Jupyter does). The server listens on
/// 127.0.0.1 only.
public struct WebCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "web",
        abstract: "Serve your mail and drive to a browser on this machine (127.0.0.1).",
        discussion: """
        Prints a one-time URL (first line of standard output) and writes it, 0600, to a file that opens it. \
        The URL's token is swapped for a session cookie at the first visit; the server answers only to 127.0.0.1, \
        localhost and [::1] at its port, and only to your own user. It is a client of the agent: a locked \
        account shows the unlock form, and `rampart lock` or autolock empties open pages within a second. \
        Stop it with Ctrl-C.
        """)
    @OptionGroup var global: GlobalOptions
    @Option(help: "The port on 127.0.0.1 (default: any free port).") var port = 0
    @Flag(name: .customLong("no-browser"), help: "Do not open a browser.") var noBrowser = false

    public init() {}

    public func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0...65535.") }
    }

    public func run() async throws {
        try await reportingErrors {
            ProcessHardening.disableCoreDumps()
            let signals = SignalWaiter([SIGINT, SIGTERM])
            let account = try WebAccount(options: global.runtime)
            var logger = Logger(label: "rampart.web")
            logger.logLevel = .error
            let (app, running) = try await WebApp.start(account: account, port: port, logger: logger)
            // The file first: whoever reads the URL line may look for the file at once.
            let file = try Self.writeOpenerFile(url: running.url, port: running.port, home: global.runtime.homeDirectory)
            print(running.url)
            fflush(nil)
            FileHandle.standardError.write(Data("rampart web: serving \(account.userID) on 127.0.0.1:\(running.port); the one-time URL is also in \(file.path). Ctrl-C stops it.\n".utf8))
            if !noBrowser { Self.openBrowser(file) }
            _ = await signals.next(orWhen: { await running.waitUntilStopped() })
            try? FileManager.default.removeItem(at: file)
            await running.stop()
            app.account.close()
        }
    }

    /// `<home>/web/open-<port>.html` (0600, folder 0700): a page that sends the browser to `url`.
    static func writeOpenerFile(url: String, port: Int, home: URL) throws -> URL {
        let folder = home.appendingPathComponent("web", isDirectory: true)
        try PrivateFiles.ensurePrivateDirectory(folder)
        let file = folder.appendingPathComponent("open-\(port).html")
        let page = """
        <!DOCTYPE html><html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">\
        <meta http-equiv="refresh" content="0;url=\(url)"><title>Rampart</title></head>\
        <body><p><a href="\(url)">Open Rampart</a></p></body></html>
        """
        try PrivateFiles.writeAtomically(Data(page.utf8), to: file)
        return file
    }

    static func openBrowser(_ file: URL) {
        let argv = Opener.command()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: argv[0])
        process.arguments = Array(argv.dropFirst()) + [file.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try? process.run()
    }
}
