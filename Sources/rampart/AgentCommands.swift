import ArgumentParser
import Foundation
import Keychain
import Keymaker
import RampartAgent
import RampartCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `rampart agent start|stop|status`: the process that keeps unlocked MainKeys in memory.
struct AgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract: "The Rampart agent: holds unlocked MainKeys in memory and enforces autolock (like ssh-agent).",
        discussion: """
        The agent listens on <home>/agent/agent.sock (folder 0700) and answers only processes of \
        the same user (SO_PEERCRED). `rampart unlock` starts it on demand.
        """,
        subcommands: [Start.self, Stop.self, Status.self]
    )

    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Start the agent (detached unless --foreground).")
        @OptionGroup var global: GlobalOptions
        @Flag(name: .long, help: "Serve in this process until stopped (SIGTERM, SIGINT or `rampart agent stop`).") var foreground = false
        @Option(name: .customLong("idle-exit"), help: "Exit after this many seconds with every account locked and no request.") var idleExit: Int?

        func validate() throws {
            if let idleExit, idleExit < 1 { throw ValidationError("--idle-exit must be at least 1 second.") }
        }

        func run() async throws {
            try await reportingErrors {
                let location = try AgentSupport.location(global)
                if foreground {
                    try AgentSupport.serve(global, location: location, idleExit: idleExit)
                } else {
                    let client = AgentClient(location: location)
                    if client.isRunning() { throw AgentError.alreadyRunning(socketPath: location.socketURL.path) }
                    _ = try AgentSupport.ensureRunning(global, location: location, idleExit: idleExit)
                    print("Agent started; socket \(location.socketURL.path).")
                }
            }
        }
    }

    struct Stop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop the agent; it zeroizes every MainKey first.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await reportingErrors {
                let client = AgentClient(location: try AgentSupport.location(global))
                guard client.isRunning() else {
                    print("No agent is running.")
                    return
                }
                try client.stop()
                print("Agent stopped; every MainKey it held was zeroized.")
            }
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Whether the agent runs, and where.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await reportingErrors {
                let location = try AgentSupport.location(global)
                let client = AgentClient(location: location)
                guard client.isRunning() else {
                    print("agent:   not running (socket \(location.socketURL.path))")
                    return
                }
                let status = try client.status(user: try global.userID())
                print("agent:   running (pid \(status.agentProcessID), socket \(location.socketURL.path))")
                print("user:    \(status.userID) \(status.unlocked ? "unlocked" : "locked")")
            }
        }
    }
}

/// `rampart unlock`: unwraps the MainKey into the agent (started on demand).
struct UnlockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Unlock the account: the agent keeps the MainKey in memory until lock or autolock.",
        discussion: "The PIN is read from the terminal (echo off) or, with --pin-stdin, from one line of standard input. A wrong PIN exits with status 4 and says how many attempts are left.")
    @OptionGroup var global: GlobalOptions
    @Flag(name: .customLong("pin-stdin"), help: "Read the PIN from standard input.") var pinStdin = false
    @Option(name: .customLong("idle-exit"), help: "When the agent is started here: exit after this many idle seconds with every account locked.") var idleExit: Int?

    func run() async throws {
        try await reportingErrors {
            let user = try global.userID()
            let location = try AgentSupport.location(global)
            let client = try AgentSupport.ensureRunning(global, location: location, idleExit: idleExit)
            let before = try client.status(user: user)
            if before.unlocked {
                try client.touch(user: user)
                print("Already unlocked: MainKey \(before.keyFingerprint ?? "?") for \(user) (agent pid \(before.agentProcessID)).")
                return
            }
            guard before.hasMainKey else { throw AgentError.noMainKey(user) }
            let protectors = Set(before.activeProtectors)
            let needsPIN = protectors.isDisjoint(with: [ProtectorKind.none.rawValue, ProtectorKind.hardware.rawValue])
            let credential: UnlockCredential
            if needsPIN || pinStdin {
                credential = .pin(pinStdin ? try StandardInput.readSecretLine("the PIN") : try AgentPINPrompt.read("PIN for \(user): "))
            } else {
                credential = .none
            }
            let status = try client.unlock(user: user, credential: credential)
            print("Unlocked MainKey \(status.keyFingerprint ?? "?") for \(user) in the agent (pid \(status.agentProcessID)); autolock: \(AgentSupport.describe(autolock: status.autolock)).")
        }
    }
}

/// `rampart lock`: zeroizes the MainKey in the agent.
struct LockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "lock", abstract: "Lock the account: the agent zeroizes its MainKey.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await reportingErrors {
            let user = try global.userID()
            let client = AgentClient(location: try AgentSupport.location(global))
            guard client.isRunning() else {
                print("Locked: no agent is running, so no MainKey of \(user) is in memory.")
                return
            }
            try client.lock(user: user)
            print("Locked \(user): the agent zeroized the MainKey.")
        }
    }
}

/// `rampart status`: the account's key state, from the agent when it runs.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show whether the account is unlocked, and its protectors and autolock.")
    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Print JSON.") var json = false

    /// What `--json` prints.
    struct Report: Encodable {
        var agentRunning: Bool
        var agentProcessID: Int32?
        var user: String
        var hasMainKey: Bool
        var unlocked: Bool
        var keyFingerprint: String?
        var protectors: [String]
        var failedAttempts: Int
        var maxFailedAttempts: Int
        var autolock: String
        var secondsUntilAutolock: Double?
    }

    func run() async throws {
        try await reportingErrors {
            let user = try global.userID()
            let client = AgentClient(location: try AgentSupport.location(global))
            let report: Report
            if client.isRunning() {
                let status = try client.status(user: user)
                report = Report(agentRunning: true, agentProcessID: status.agentProcessID, user: user.rawValue,
                                hasMainKey: status.hasMainKey, unlocked: status.unlocked, keyFingerprint: status.keyFingerprint,
                                protectors: status.activeProtectors, failedAttempts: status.failedAttempts,
                                maxFailedAttempts: status.maxFailedAttempts, autolock: status.autolock,
                                secondsUntilAutolock: status.secondsUntilAutolock)
            } else {
                // No agent: no key is in memory anywhere; the rest comes from the keychain.
                let status = try KeyContext(global).keymaker.status()
                report = Report(agentRunning: false, agentProcessID: nil, user: user.rawValue,
                                hasMainKey: status.hasMainKey, unlocked: false, keyFingerprint: nil,
                                protectors: status.activeProtectors.map(\.rawValue), failedAttempts: status.failedAttempts,
                                maxFailedAttempts: status.maxFailedAttempts, autolock: status.autolock, secondsUntilAutolock: nil)
            }
            if json { try printJSON(report); return }
            print("user:        \(report.user)")
            print("MainKey:     \(report.hasMainKey ? "present" : "none (log in first)")")
            print("state:       \(report.unlocked ? "unlocked" : "locked")")
            print("agent:       \(report.agentProcessID.map { "running (pid \($0))" } ?? "not running")")
            print("protectors:  \(report.protectors.isEmpty ? "-" : report.protectors.joined(separator: ", "))")
            print("failed PINs: \(report.failedAttempts) of \(report.maxFailedAttempts) before wipe")
            print("autolock:    \(AgentSupport.describe(autolock: report.autolock))\(report.secondsUntilAutolock.map { String(format: " (%.0f s left)", $0) } ?? "")")
        }
    }
}

/// Shared plumbing of the agent commands.
enum AgentSupport {
    static func location(_ options: GlobalOptions) throws -> AgentLocation {
        let environment = try options.environment()
        return AgentLocation(homeDirectory: environment.homeDirectory)
    }

    static func describe(autolock: String) -> String {
        Int(autolock).map { "after \($0) min idle" } ?? autolock
    }

    /// This executable, to start the agent with.
    static var executable: URL {
        #if os(Linux)
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return URL(fileURLWithPath: path)
        }
        #endif
        return Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
    }

    static func ensureRunning(_ options: GlobalOptions, location: AgentLocation, idleExit: Int?) throws -> AgentClient {
        var extra: [String] = []
        if let keychain = options.keychain { extra += ["--keychain", keychain] }
        if let idleExit { extra += ["--idle-exit", String(idleExit)] }
        return try AgentClient.ensureRunning(executable: executable, location: location, extraArguments: extra)
    }

    /// Runs the agent in this process until it stops.
    static func serve(_ options: GlobalOptions, location: AgentLocation, idleExit: Int?) throws {
        let global = GlobalContainer(environment: try options.environment())
        // Every store's wipe, so the tenth wrong PIN erases the account's data from here too.
        let wipes = UserDataWipes.register(in: global)
        let server = AgentServer(location: location, global: global,
                                 options: .init(idleExit: idleExit.map { TimeInterval($0) }))
        try server.start()
        var sources: [any DispatchSourceSignal] = []
        for signalNumber in [SIGTERM, SIGINT, SIGHUP] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { server.stop() }
            source.resume()
            sources.append(source)
        }
        print("Rampart agent \(getpid()) listening on \(location.socketURL.path).")
        fflush(nil)
        server.waitUntilStopped()
        sources.forEach { $0.cancel() }
        withExtendedLifetime(wipes) {}
        print("Rampart agent \(getpid()) stopped; every MainKey was zeroized.")
    }
}

/// Reads the PIN from the controlling terminal with echo off (the agent never falls back to
/// standard input: `--pin-stdin` says so explicitly).
enum AgentPINPrompt {
    static func read(_ prompt: String) throws -> SecretBytes {
        guard let pin = SecretPrompt.fromTerminal(prompt) else { throw AgentError.pinRequired }
        return pin
    }
}
