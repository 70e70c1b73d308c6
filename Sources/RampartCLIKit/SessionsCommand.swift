import ArgumentParser
import Foundation
import RampartClient
import RampartRuntime

/// `rampart account sessions [--end ID]`: the account's sessions on the server, and ending one
/// (a lost or old device) from this one.
///
/// Trust-model row **access token (high)**: an ended session's tokens stop working at once; the
/// server lists only the caller's own user's sessions and ends no other user's.
public struct SessionsCommand: UnlockedAccountCommand {
    public static let configuration = CommandConfiguration(commandName: "sessions",
                                                           abstract: "List the account's sessions, or end one with --end ID.")
    @OptionGroup public var global: GlobalOptions
    @Option(help: "End this session (an id from the list).") var end: String?
    @OptionGroup public var pinInput: PINOptions

    public init() {}

    public func run(with context: AccountSession) async throws {
        if let end {
            try await context.withAPI { try await $0.endSession(end) }
            print("Ended session \(end).")
            return
        }
        let sessions = try await context.withAPI { try await $0.sessions() }
        for session in sessions {
            let created = Date(timeIntervalSince1970: TimeInterval(session.created))
            let refreshed = Date(timeIntervalSince1970: TimeInterval(session.lastRefreshed))
            print("\(session.id)  logged in \(created)  token issued \(refreshed)\(session.current ? "  (this device)" : "")")
        }
    }
}
