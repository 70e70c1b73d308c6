import ArgumentParser
import Foundation
import RampartCLIKit
import RampartCore

/// What the hidden crash-hook commands (`store stress-write`, `vault hold-lease`, `vault sweep`)
/// share: the global options, the folder holding the per-user stores or vaults, and the test
/// MainKey they read from standard input.
struct CrashHookOptions: ParsableArguments {
    @OptionGroup var global: GlobalOptions
    @Option(help: "Folder holding the per-user stores or vaults.") var root: String

    /// `--root` as a file URL.
    var rootURL: URL { URL(fileURLWithPath: root) }

    /// A key session of the user, unlocked with the MainKey read from standard input
    /// (``readMainKey()``).
    func unlockedSession() throws -> MainKeySession {
        let key = try Self.readMainKey()
        let session = MainKeySession(userID: try global.userID())
        session.unlock(with: key)
        return session
    }

    /// Reads a 64-hex-digit test MainKey from standard input (never from the command line, where
    /// other users could see it in the process list).
    static func readMainKey() throws -> MainKey {
        guard let line = readLine(strippingNewline: true) else {
            throw ValidationError("Expected a 64-hex-digit MainKey on standard input.")
        }
        let digits = Array(line.trimmingCharacters(in: .whitespaces))
        var bytes: [UInt8] = []
        for offset in stride(from: 0, to: digits.count, by: 2) {
            guard offset + 1 < digits.count, let high = hexDigit(digits[offset]), let low = hexDigit(digits[offset + 1]) else {
                throw ValidationError("The MainKey on standard input is not hexadecimal.")
            }
            bytes.append(high << 4 | low)
        }
        guard bytes.count == MainKey.byteCount else {
            throw ValidationError("The MainKey on standard input must be \(MainKey.byteCount) bytes (64 hex digits).")
        }
        return try MainKey(adopting: SecretBytes(consuming: &bytes))
    }

    /// The value of an ASCII hexadecimal digit (0-9, a-f, A-F).
    private static func hexDigit(_ character: Character) -> UInt8? {
        character.isASCII ? character.hexDigitValue.map(UInt8.init) : nil
    }
}
