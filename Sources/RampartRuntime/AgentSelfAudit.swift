import Foundation
import RampartAgent
import RampartClient
import RampartCore

/// The key log self-audit the agent runs for each unlocked user: the same check as
/// `rampart account audit` (RampartClient's `KeyTransparency.audit(api:ownKeys:)`), at most once per
/// ``interval`` (24 h), its time and result kept in ``Record`` files of the agent's folder, so a
/// restarted agent neither runs it again early nor skips it; `rampart status` shows a failed one
/// as an alarm until a later audit passes.
///
/// Trust-model row **the user's private and public keys (critical when modified)**: a key the
/// server published for the user's addresses that the user never made is found within a day of
/// use, without the user asking.
public final class AgentSelfAudit: AgentServer.UnlockedJob, @unchecked Sendable {
    /// What the last audit of a user found (`<home>/agent/keylog-audit.<user>.json`).
    public struct Record: Codable, Sendable, Equatable {
        /// When it ran (seconds since 1970).
        public var time: Double
        /// Whether every entry of the user's addresses held only the user's keys, with proofs that checked.
        public var passed: Bool
        /// Log entries checked.
        public var entries: Int
        /// What failed: a foreign key (entry, address, key digests) or the log's check that failed.
        public var alarms: [String]
    }

    /// Time between two audits of one user.
    public let interval: TimeInterval
    /// After an audit that could not run (no network, server down): when to try again.
    public let retry: TimeInterval
    private let environment: RampartEnvironment
    private let location: AgentLocation
    private let lock = NSLock()
    private var running: Set<UserID> = []
    private var lastAttempt: [UserID: Date] = [:]

    public init(environment: RampartEnvironment, interval: TimeInterval = 24 * 3600, retry: TimeInterval? = nil) {
        self.environment = environment
        location = AgentLocation(homeDirectory: environment.homeDirectory)
        self.interval = interval
        self.retry = retry ?? min(interval, 3600)
    }

    /// The interval `RAMPART_KEYLOG_AUDIT_INTERVAL` (seconds) sets, for tests; otherwise 24 h.
    public static func interval(from environment: [String: String]) -> TimeInterval {
        environment["RAMPART_KEYLOG_AUDIT_INTERVAL"].flatMap(TimeInterval.init).map { max(1, $0) } ?? 24 * 3600
    }

    /// Where a user's record lives.
    public static func recordURL(_ location: AgentLocation, user: UserID) -> URL {
        location.directoryURL.appendingPathComponent("keylog-audit.\(user.rawValue).json", isDirectory: false)
    }

    /// The last audit of `user`, if one ran. - Throws: RampartClient's `ClientError.tampered` for a record that does not parse.
    public static func record(_ location: AgentLocation, user: UserID) throws -> Record? {
        guard let data = try? Data(contentsOf: recordURL(location, user: user)) else { return nil }
        do { return try JSONDecoder().decode(Record.self, from: data) } catch { throw ClientError.tampered("The key log audit record") }
    }

    /// One line for `rampart status`: the last audit's time and result, an ALARM when it failed.
    public static func describe(_ record: Record?) -> String {
        guard let record else { return "not audited yet (the agent audits it daily while the account is unlocked)" }
        let when = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: record.time))
        guard record.passed else {
            return "ALARM (audit of \(when)): \(record.alarms.joined(separator: "; ")). "
                + "Someone may read mail sent to you: `rampart account audit` shows it again"
        }
        return "audited \(when): \(record.entries) entries, every key is yours"
    }

    /// Starts the audit of `user` on a task of its own when it is due (no record, or the last one
    /// is ``interval`` old; one that could not run is tried again after ``retry``), and returns.
    public func userIsUnlocked(_ user: UserContainer) {
        let id = user.userID
        let now = Date()
        let last = (try? Self.record(location, user: id)) ?? nil
        if let last, now.timeIntervalSince1970 - last.time < interval, now.timeIntervalSince1970 >= last.time { return }
        let start = lock.withLock { () -> Bool in
            if running.contains(id) { return false }
            if let attempt = lastAttempt[id], now.timeIntervalSince(attempt) < retry { return false }
            running.insert(id)
            lastAttempt[id] = now
            return true
        }
        guard start else { return }
        let environment = environment
        Task.detached { [self] in
            defer { _ = lock.withLock { running.remove(id) } }
            // The store is opened for the audit and closed after it, as a command does.
            let account = ClientAccount(dependencies: user, environment: environment)
            defer { account.close() }
            guard let record = await Self.audit(account) else { return }
            try? save(record, user: id)
        }
    }

    /// One audit, as `rampart account audit` runs it; `nil` when it could not run (locked, logged
    /// out, no key log pinned, the server unreachable): not a result, tried again later.
    static func audit(_ account: ClientAccount) async -> Record? {
        let now = Date().timeIntervalSince1970
        do {
            guard let pins = try account.session().endpoint.keyLog else { return nil }
            let keys = try account.mailboxKeys()
            defer { keys.forEach { $0.wipe() } }
            let result = try await account.api().closing { api in
                try await KeyTransparency(account: account, pins: pins).audit(api: api, ownKeys: keys.map(\.publicKey))
            }
            let alarms = result.alarms.map { "entry \($0.leafIndex) of \($0.address) holds a key you did not make: \($0.foreignKeys.joined(separator: ", "))" }
            return Record(time: now, passed: alarms.isEmpty, entries: result.entries, alarms: alarms)
        } catch let failure as KeyTransparencyFailure {
            return Record(time: now, passed: false, entries: 0, alarms: ["the key log's checks failed for \(failure.address): \(failure.reason)"])
        } catch {
            return nil
        }
    }

    private func save(_ record: Record, user: UserID) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let url = Self.recordURL(location, user: user)
        try encoder.encode(record).write(to: url, options: .atomic)
        _ = chmod(url.path, 0o600)
    }
}
