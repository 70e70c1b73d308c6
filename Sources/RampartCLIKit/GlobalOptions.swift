import ArgumentParser
import Foundation
import RampartCore
@_exported import RampartRuntime

/// Options every command of `rampart` and `rampart-dev` shares: where Rampart keeps its files,
/// and which account. Accepted before the subcommand too (`rampart --home DIR status`).
public struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "Rampart's home folder (default: $RAMPART_HOME or ~/.rampart).")
    public var home: String?

    @Option(name: .long, help: "The account (user id) to act on (default: $RAMPART_USER or 'local').")
    public var user: String?

    @Option(name: .long, help: "Keychain backend: file, secret-service or memory (default: file). The file keychain binds its items to /etc/machine-id, which is not a secret: a copy of the home folder together with that file opens them anywhere; only a PIN or the hardware protector keeps the MainKey from such a copy.")
    public var keychain: String?

    public init() {}

    /// The runtime's view of these options.
    public var runtime: RuntimeOptions { RuntimeOptions(home: home, user: user, keychain: keychain) }

    public var homeDirectory: URL { runtime.homeDirectory }
    public func userID() throws -> UserID { try runtime.userID() }
    public func environment() throws -> RampartEnvironment { try runtime.environment() }
}

/// The one `--pin-stdin` flag of every command that may need the PIN.
public struct PINOptions: ParsableArguments {
    @Flag(name: .customLong("pin-stdin"),
          help: "Read the PIN from standard input, one line per PIN asked (current, then new).")
    public var pinStdin = false

    public init() {}

    /// Where the PIN comes from.
    public var input: SecretInput { SecretInput(fromStandardInput: pinStdin) }
}

/// Runs `body`; a thrown error is printed on stderr as a sentence and turned into its exit
/// status (``ExitStatus``; a usage error found while running is a bad input).
public func reportingErrors<R>(_ body: () async throws -> R) async throws -> R {
    do {
        return try await body()
    } catch {
        throw report(error, withCode: false)
    }
}

/// ``reportingErrors(_:)`` for synchronous commands; `withCode` adds the error's stable code
/// (`rampart: <sentence> [keychain.notFound]`), as the lab tools print it.
public func reportingErrors<R>(withCode: Bool = false, _ body: () throws -> R) throws -> R {
    do {
        return try body()
    } catch {
        throw report(error, withCode: withCode)
    }
}

/// Prints `error` on stderr and returns the exit to throw (an `ExitCode` passes through as is).
public func report(_ error: any Error, withCode: Bool = false) -> ExitCode {
    if let exit = error as? ExitCode { return exit }
    var message = String(describing: error)
    if withCode, let typed = error as? any RampartError { message = "\(typed.description) [\(typed.code)]" }
    FileHandle.standardError.write(Data("rampart: \(message)\n".utf8))
    return ExitCode(exitStatus(for: error))
}

/// A command that runs with the unlocked account the options name: it implements
/// ``run(with:)``, which ``withUnlockedAccount(_:_:_:)`` calls.
public protocol UnlockedAccountCommand: AsyncParsableCommand {
    /// The account and home options.
    var global: GlobalOptions { get }
    /// How the PIN is read when the key is not in the agent.
    var pinInput: PINOptions { get }
    /// The command's work, with the unlocked account.
    func run(with context: AccountSession) async throws
}

extension UnlockedAccountCommand {
    /// Runs ``run(with:)`` inside ``withUnlockedAccount(_:_:_:)``.
    public func run() async throws {
        try await withUnlockedAccount(global, pinInput) { try await run(with: $0) }
    }
}

/// Runs `body` with the keys of the account the options name (its Keymaker and keychain; no store,
/// no server), inside ``reportingErrors(_:)``.
public func withAccountKeys<R>(_ global: GlobalOptions, _ body: (AccountKeys) async throws -> R) async throws -> R {
    try await reportingErrors { try await body(try AccountKeys(global.runtime)) }
}

/// Runs `body` with the account the options name, locked or not, inside ``reportingErrors(_:)``;
/// the account is finished (closed, key dropped) afterwards.
public func withAccountSession<R>(_ global: GlobalOptions, _ body: (AccountSession) async throws -> R) async throws -> R {
    try await reportingErrors {
        let session = try AccountSession(global.runtime)
        defer { session.finish() }
        return try await body(session)
    }
}

/// Runs `body` with the account the options name, its key made available (the agent's, or
/// unwrapped here with the PIN from `pin`), inside ``reportingErrors(_:)``; the account is
/// finished (closed, key dropped) afterwards.
public func withUnlockedAccount<R>(_ global: GlobalOptions, _ pin: PINOptions,
                                   _ body: (AccountSession) async throws -> R) async throws -> R {
    try await reportingErrors {
        let session = try AccountSession.unlocked(global.runtime, pin: pin.input)
        defer { session.finish() }
        return try await body(session)
    }
}

/// The exit status of an error thrown by a command.
public func exitStatus(for error: any Error) -> Int32 {
    error is ValidationError ? ExitStatus.badInput : ExitStatus.code(for: error)
}

/// Prints an `Encodable` as pretty, sorted JSON.
public func printJSON(_ value: some Encodable) throws {
    try JSONOutput.print(value)
}
