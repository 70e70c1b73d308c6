import Foundation
import RampartAgent
import RampartClient
import RampartCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starting and running the agent process with the runtime's composition: the agent's
/// containers register every wipe of the user's data, like a command's.
///
/// Trust-model row **device memory (moderate)**: the agent keeps unlocked MainKeys in memory
/// and zeroizes them on lock, autolock, stop and the signals it handles.
public enum AgentHost {
    /// The executable running now (the agent is started as `<it> agent start --foreground`).
    public static var currentExecutable: URL {
        #if os(Linux)
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return URL(fileURLWithPath: path)
        }
        #endif
        return Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
    }

    /// A client of the agent of `options`' home, starting the agent (detached) when none answers.
    public static func ensureRunning(_ options: RuntimeOptions, idleExit: Int?,
                                     executable: URL = currentExecutable) throws -> AgentClient {
        var extra: [String] = []
        if let keychain = options.keychain { extra += ["--keychain", keychain] }
        if let idleExit { extra += ["--idle-exit", String(idleExit)] }
        return try AgentClient.ensureRunning(executable: executable, location: try options.agentLocation(),
                                             extraArguments: extra)
    }

    /// Runs the agent in this process until it stops (SIGTERM, SIGINT, SIGHUP or a `stop` request).
    public static func serve(_ options: RuntimeOptions, idleExit: Int?) throws {
        let location = try options.agentLocation()
        // The agent's users are assembled like every process's: every protector of this machine
        // (the hardware key included), every store's wipe (so the tenth wrong PIN erases the
        // account's data from here too).
        let global = try CompositionRoot.global(role: .agent, options: options)
        let environment = global.environment
        let server = AgentServer(location: location, global: global,
                                 options: .init(idleExit: idleExit.map { TimeInterval($0) }),
                                 makeUser: { [global] in CompositionRoot.user($0, in: global) },
                                 onLock: { user in
                                     // No cleartext preview outlives a lock or autolock.
                                     CleartextSweep.sweep(environment: environment, user: user, includingLive: true)
                                 },
                                 jobs: [AgentSelfAudit(environment: environment,
                                                       interval: AgentSelfAudit.interval(from: ProcessInfo.processInfo.environment))])
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
        withExtendedLifetime(global) {}
        print("Rampart agent \(getpid()) stopped; every MainKey was zeroized.")
    }

    /// An autolock policy as people read it (`after 5 min idle`, `never`, `background`).
    public static func describe(autolock: String) -> String {
        Int(autolock).map { "after \($0) min idle" } ?? autolock
    }
}
