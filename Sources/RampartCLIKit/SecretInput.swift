import Foundation
import RampartCore
import RampartAgent
import RampartRuntime

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a PIN (or a password) comes from: a line of standard input, or the controlling
/// terminal with echo off.
///
/// Trust-model row **device memory (moderate)**: the secret goes straight into ``SecretBytes``
/// (zeroized when released), never into a `String`.
public struct SecretInput: PINSource, Sendable {
    /// Read from standard input (one line per secret) instead of the terminal.
    public var fromStandardInput: Bool

    public init(fromStandardInput: Bool) {
        self.fromStandardInput = fromStandardInput
    }

    /// Whether a secret can be read at all: standard input was chosen, or a terminal can be asked.
    public var canAsk: Bool { fromStandardInput || SecretPrompt.hasTerminal }

    /// One secret: a line of standard input (`what` names it in the error), or asked on the
    /// terminal with `prompt` (falling back to a line of standard input when there is none).
    public func read(_ what: String, prompt: String) throws -> SecretBytes {
        if !fromStandardInput, let secret = SecretPrompt.fromTerminal(prompt) { return secret }
        return try StandardInput.readSecretLine(what)
    }

    /// A new PIN: a line of standard input, or asked twice on the terminal.
    public func readNewPIN() throws -> SecretBytes {
        if fromStandardInput { return try StandardInput.readSecretLine("the new PIN") }
        let first = try SecretPrompt.secret("New PIN: ")
        let again = try SecretPrompt.secret("New PIN again: ")
        guard first == again else { throw RuntimeError.badInput("The two PINs differ; nothing changed.") }
        return first
    }
}

extension SecretPrompt {
    /// The PIN from the controlling terminal with echo off: the agent path never falls back to
    /// standard input (`--pin-stdin` says so explicitly). - Throws: `AgentError.pinRequired`.
    public static func pinFromTerminal(_ prompt: String) throws -> SecretBytes {
        guard let pin = fromTerminal(prompt) else { throw AgentError.pinRequired }
        return pin
    }
}

/// Reads lines from standard input (for `--pin-stdin` and friends), as secrets.
public enum StandardInput {
    /// Reads one line (without its newline) into a `SecretBytes`.
    public static func readSecretLine(_ what: String) throws -> SecretBytes {
        guard var line = readLine(strippingNewline: true) else { throw RuntimeError.missingStdin(what) }
        if line.hasSuffix("\r") { line.removeLast() }
        var bytes = Array(line.utf8)
        return SecretBytes(consuming: &bytes)
    }
}

/// Reads a secret from the terminal with echo off (or a line of standard input when it is not a terminal).
public enum SecretPrompt {
    /// Whether a controlling terminal can be asked.
    public static var hasTerminal: Bool {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return false }
        close(fd)
        return true
    }

    /// Asks on the terminal; without one, reads a line of standard input.
    public static func secret(_ prompt: String) throws -> SecretBytes {
        try fromTerminal(prompt) ?? StandardInput.readSecretLine(prompt.trimmingCharacters(in: .whitespaces))
    }

    /// Reads one line from the controlling terminal with echo off; `nil` when there is none.
    public static func fromTerminal(_ prompt: String) -> SecretBytes? {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        _ = prompt.withCString { write(fd, $0, strlen($0)) }
        var original = termios()
        tcgetattr(fd, &original)
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(fd, TCSAFLUSH, &silent)
        defer {
            tcsetattr(fd, TCSAFLUSH, &original)
            _ = "\n".withCString { write(fd, $0, 1) }
        }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while readByte(fd, &byte), byte != 0x0A {
            if byte != 0x0D { bytes.append(byte) }
        }
        return SecretBytes(consuming: &bytes)
    }

    private static func readByte(_ fd: Int32, _ byte: inout UInt8) -> Bool {
        #if canImport(Glibc)
        Glibc.read(fd, &byte, 1) == 1
        #else
        Darwin.read(fd, &byte, 1) == 1
        #endif
    }

    /// Asks for a line of (non-secret) text on standard error / standard input.
    public static func readLine(_ prompt: String) -> String? {
        FileHandle.standardError.write(Data(prompt.utf8))
        return Swift.readLine(strippingNewline: true)
    }
}
