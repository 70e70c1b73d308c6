import ArgumentParser
import Foundation
import Keychain
import Keymaker
import RampartClient
import RampartAgent
import RampartCore

/// Options every command shares: where Rampart keeps its files, and which account.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "Rampart's home folder (default: $RAMPART_HOME or ~/.rampart).")
    var home: String?

    @Option(name: .long, help: "The account (user id) to act on (default: $RAMPART_USER or 'local').")
    var user: String?

    @Option(name: .long, help: "Keychain backend: file, secret-service or memory (default: file).")
    var keychain: String?

    var homeDirectory: URL {
        if let home { return URL(fileURLWithPath: (home as NSString).expandingTildeInPath, isDirectory: true) }
        if let env = ProcessInfo.processInfo.environment["RAMPART_HOME"], !env.isEmpty {
            return URL(fileURLWithPath: env, isDirectory: true)
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".rampart", isDirectory: true)
    }

    func userID() throws -> UserID {
        let raw = user ?? ProcessInfo.processInfo.environment["RAMPART_USER"] ?? "local"
        do { return try UserID(validating: raw) } catch { throw CLIError.badInput(String(describing: error)) }
    }

    func environment() throws -> RampartEnvironment {
        var settings: [String: String] = [:]
        if let keychain { settings["keychain.backend"] = keychain }
        if let logN = ProcessInfo.processInfo.environment["RAMPART_PIN_KDF_LOGN"], !logN.isEmpty {
            settings["pin.kdf.logN"] = logN
        }
        let home = homeDirectory
        try PrivateFiles.ensurePrivateDirectory(home)
        return RampartEnvironment(homeDirectory: home, settings: settings)
    }
}

/// Errors of the command-line layer itself.
enum CLIError: Error, RampartError {
    case badInput(String)
    case missingStdin(String)

    var code: String {
        switch self {
        case .badInput: "cli.badInput"
        case .missingStdin: "cli.missingStdin"
        }
    }

    var kind: RampartErrorKind { .badInput }

    var description: String {
        switch self {
        case .badInput(let why): why
        case .missingStdin(let what): "Expected \(what) on standard input, got nothing."
        }
    }
}

/// The documented exit codes (see `rampart --help`).
enum ExitStatus {
    static let failure: Int32 = 1
    static let badInput: Int32 = 2
    static let locked: Int32 = 3
    static let wrongPIN: Int32 = 4
    static let wiped: Int32 = 5
    static let notFound: Int32 = 6
    static let tampered: Int32 = 7
    static let pinMismatch: Int32 = 8
    static let sessionExpired: Int32 = 9
    static let agentUnavailable: Int32 = 10

    /// The exit status of a thrown error, from its typed category (``RampartErrorKind``).
    static func code(for error: any Error) -> Int32 {
        if error is ValidationError { return badInput }
        guard let typed = error as? any RampartError else { return failure }
        return code(for: typed.kind)
    }

    static func code(for kind: RampartErrorKind) -> Int32 {
        switch kind {
        case .failure: failure
        case .badInput: badInput
        case .locked: locked
        case .wrongPIN: wrongPIN
        case .wiped: wiped
        case .notFound: notFound
        case .tampered: tampered
        case .pinMismatch: pinMismatch
        case .sessionExpired: sessionExpired
        case .agentUnavailable: agentUnavailable
        }
    }
}

/// Runs `body`; a thrown error is printed on stderr as a sentence and turned into its exit code.
func reportingErrors<R>(_ body: () async throws -> R) async throws -> R {
    do {
        return try await body()
    } catch let exit as ExitCode {
        throw exit
    } catch {
        let message = String(describing: error)
        FileHandle.standardError.write(Data("rampart: \(message)\n".utf8))
        throw ExitCode(ExitStatus.code(for: error))
    }
}

/// Reads lines from standard input (for `--pin-stdin` and friends), as secrets.
enum StandardInput {
    /// Reads one line (without its newline) into a `SecretBytes`.
    static func readSecretLine(_ what: String) throws -> SecretBytes {
        guard var line = readLine(strippingNewline: true) else { throw CLIError.missingStdin(what) }
        if line.hasSuffix("\r") { line.removeLast() }
        var bytes = Array(line.utf8)
        return SecretBytes(consuming: &bytes)
    }
}

/// Prints an `Encodable` as pretty, sorted JSON.
func printJSON(_ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    encoder.dateEncodingStrategy = .iso8601
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}
