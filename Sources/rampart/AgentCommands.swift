import ArgumentParser
import Foundation
import Keychain
import Keymaker
import RampartAgent
import RampartCLIKit
import RampartClient
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
                let location = try global.runtime.agentLocation()
                if foreground {
                    try AgentHost.serve(global.runtime, idleExit: idleExit)
                } else {
                    let client = AgentClient(location: location)
                    if client.isRunning() { throw AgentError.alreadyRunning(socketPath: location.socketURL.path) }
                    _ = try AgentHost.ensureRunning(global.runtime, idleExit: idleExit)
                    print("Agent started; socket \(location.socketURL.path).")
                }
            }
        }
    }

    struct Stop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop the agent; it zeroizes every MainKey first.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await withRunningAgent(global, otherwise: { _ in "No agent is running." }) { client in
                try client.stop()
                print("Agent stopped; every MainKey it held was zeroized.")
            }
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Whether the agent runs, and where.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await withRunningAgent(global, otherwise: { "agent:   not running (socket \($0.socketURL.path))" }) { client in
                let status = try client.status(user: try global.userID())
                print("agent:   running (pid \(status.agentProcessID), socket \(client.location.socketURL.path))")
                print("user:    \(status.userID) \(status.unlocked ? "unlocked" : "locked")")
            }
        }
    }
}

/// The client of the agent the options point at when it runs; otherwise prints what `notRunning`
/// says for the agent's location and returns `nil` (the command then ends successfully).
private func runningAgent(_ global: GlobalOptions, otherwise notRunning: (AgentLocation) -> String) throws -> AgentClient? {
    let client = AgentClient(location: try global.runtime.agentLocation())
    guard client.isRunning() else {
        print(notRunning(client.location))
        return nil
    }
    return client
}

/// ``runningAgent(_:otherwise:)`` inside ``reportingErrors(_:)``: runs `body` with the agent's
/// client when the agent runs.
private func withRunningAgent(_ global: GlobalOptions, otherwise notRunning: (AgentLocation) -> String,
                              _ body: (AgentClient) throws -> Void) async throws {
    try await reportingErrors {
        guard let client = try runningAgent(global, otherwise: notRunning) else { return }
        try body(client)
    }
}

/// `rampart unlock`: unwraps the MainKey into the agent (started on demand).
struct UnlockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Unlock the account: the agent keeps the MainKey in memory until lock or autolock.",
        discussion: "The PIN is read from the terminal (echo off) or, with --pin-stdin, from one line of standard input. A wrong PIN exits with status 4 and says how many attempts are left.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var pinInput: PINOptions
    @Option(name: .customLong("idle-exit"), help: "When the agent is started here: exit after this many idle seconds with every account locked.") var idleExit: Int?

    func run() async throws {
        try await reportingErrors {
            let user = try global.userID()
            let client = try AgentHost.ensureRunning(global.runtime, idleExit: idleExit)
            let before = try client.status(user: user)
            if before.unlocked {
                try client.touch(user: user)
                print("Already unlocked: MainKey \(before.keyFingerprint ?? "?") for \(user) (agent pid \(before.agentProcessID)).")
                return
            }
            guard before.hasMainKey else { throw AgentError.noMainKey(user) }
            // The Keymaker's rule, on the protectors the agent's Keymaker reports.
            let needsPIN = Keymaker.unlockNeedsPIN(activeProtectors: before.activeProtectors.compactMap(ProtectorKind.init(rawValue:)))
            let credential: UnlockCredential
            if needsPIN || pinInput.pinStdin {
                credential = .pin(pinInput.pinStdin ? try StandardInput.readSecretLine("the PIN") : try SecretPrompt.pinFromTerminal("PIN for \(user): "))
            } else {
                credential = .none
            }
            let status = try client.unlock(user: user, credential: credential)
            print("Unlocked MainKey \(status.keyFingerprint ?? "?") for \(user) in the agent (pid \(status.agentProcessID)); autolock: \(AgentHost.describe(autolock: status.autolock)).")
            if let warning = status.autolockWarning {
                FileHandle.standardError.write(Data("warning: \(warning)\n".utf8))
            }
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
            // No cleartext preview outlives the lock (those of killed processes included).
            defer { CleartextSweep.sweep(environment: RampartEnvironment(homeDirectory: global.runtime.homeDirectory), user: user, includingLive: true) }
            guard let client = try runningAgent(global, otherwise: { _ in "Locked: no agent is running, so no MainKey of \(user) is in memory." }) else { return }
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
        /// The agent's last key log self-audit (a failed one is an alarm until one passes).
        var keyLogAudit: AgentSelfAudit.Record?
    }

    func run() async throws {
        try await reportingErrors {
            let user = try global.userID()
            let client = AgentClient(location: try global.runtime.agentLocation())
            let running = client.isRunning()
            // No agent: no key is in memory anywhere; the rest comes from the keychain.
            let status = running ? try client.status(user: user) : AgentStatus(try AccountKeys(global.runtime).keymaker.status())
            let report = Report(agentRunning: running, agentProcessID: running ? status.agentProcessID : nil, user: user.rawValue,
                                hasMainKey: status.hasMainKey, unlocked: running && status.unlocked,
                                keyFingerprint: running ? status.keyFingerprint : nil, protectors: status.activeProtectors,
                                failedAttempts: status.failedAttempts, maxFailedAttempts: status.maxFailedAttempts,
                                autolock: status.autolock, secondsUntilAutolock: running ? status.secondsUntilAutolock : nil,
                                keyLogAudit: try AgentSelfAudit.record(client.location, user: user))
            if json { try printJSON(report); return }
            print("user:        \(report.user)")
            print("MainKey:     \(report.hasMainKey ? "present" : "none (log in first)")")
            print("state:       \(report.unlocked ? "unlocked" : "locked")")
            print("agent:       \(report.agentProcessID.map { "running (pid \($0))" } ?? "not running")")
            print("protectors:  \(report.protectors.isEmpty ? "-" : report.protectors.joined(separator: ", "))")
            print("failed PINs: \(report.failedAttempts) of \(report.maxFailedAttempts) before wipe")
            print("autolock:    \(AgentHost.describe(autolock: report.autolock))\(report.secondsUntilAutolock.map { String(format: " (%.0f s left)", $0) } ?? "")")
            print("key log:     \(TerminalTextLine.clean(AgentSelfAudit.describe(report.keyLogAudit)))")
        }
    }
}
