import Foundation
import RampartClient
import RampartRuntime

// Moved from the rampart executable (Sources/rampart stays under 1,500 lines): the cleaning of
// mail text for the terminal and the opener of previews.

/// One-line cleaning of text from mail for the terminal (no control characters).
public enum TerminalTextLine {
    public static func clean(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter {
            !($0.value < 0x20 || (0x7F...0x9F).contains($0.value) || (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value))
        }))
    }
}

/// Opens files with the desktop's opener (`$RAMPART_OPENER`, else `xdg-open` / `open`) and waits.
public enum Opener {
    public static func command() -> [String] {
        if let custom = ProcessInfo.processInfo.environment["RAMPART_OPENER"], !custom.isEmpty { return [custom] }
        #if os(macOS)
        return ["/usr/bin/open", "-W"]
        #else
        return ["/usr/bin/env", "xdg-open"]
        #endif
    }

    /// Runs the opener on `url` and waits for it to exit. - Returns: its exit status.
    @discardableResult
    public static func open(_ url: URL) throws -> Int32 {
        let process = Process()
        let argv = command()
        process.executableURL = URL(fileURLWithPath: argv[0])
        process.arguments = Array(argv.dropFirst()) + [url.path]
        do { try process.run() } catch { throw RuntimeError.badInput("Cannot start the opener \(argv[0]): \(error.localizedDescription)") }
        process.waitUntilExit()
        waitForPreviewToClose()
        return process.terminationStatus
    }

    /// `xdg-open` and `open` return as soon as the viewer starts, while the viewer still needs the
    /// file: with the default opener, the lease lasts until the user says the preview is closed
    /// (Enter on the terminal), or 20 s without a terminal. A `$RAMPART_OPENER` is expected to
    /// return when the preview closes.
    public static func waitForPreviewToClose() {
        if let custom = ProcessInfo.processInfo.environment["RAMPART_OPENER"], !custom.isEmpty { return }
        if SecretPrompt.hasTerminal, let tty = FileHandle(forUpdatingAtPath: "/dev/tty") {
            tty.write(Data("Press Enter when you have closed the preview (the cleartext is then erased)… ".utf8))
            _ = tty.availableData
            try? tty.close()
        } else {
            Thread.sleep(forTimeInterval: 20)
        }
    }

    /// Writes the sanitized document into a cleartext lease, opens it, and ends the lease once the
    /// preview is closed (see ``waitForPreviewToClose()``).
    public static func openDocument(_ document: String, account: ClientAccount) throws {
        let lease = try account.leaseDocument(document)
        defer { lease.end() }
        try open(try lease.url())
    }
}
