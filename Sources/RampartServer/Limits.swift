import Crypto
import Foundation
import Hummingbird
import HTTPTypes
import NIOCore
import RampartAPI
import RampartCore

/// The abuse limits of the embedded backend: recipients per message, size of a message and of
/// each attachment, storage per user, and requests per session.
///
/// Trust-model row **transport (network), low trust** / *server abuse*: a client (or a stolen
/// token) cannot make the server store unbounded data, fan one message out to thousands of
/// mailboxes, or hammer it with requests; each limit is a 4xx with a code and a sentence the
/// client shows (``ServerLimitViolation``).
///
/// Defaults (each can be changed by an environment variable of `rampart server start`, or by
/// ``EmbeddedServerConfiguration``'s process environment):
///
/// | limit | default | variable |
/// |---|---|---|
/// | recipients per message | 100 | `RAMPART_SERVER_MAX_RECIPIENTS` |
/// | bytes of one message request (body, attachments, original, base64 included) | 32 MiB | `RAMPART_SERVER_MAX_MESSAGE_BYTES` |
/// | bytes of one attachment (its declared size and its encrypted data) | 25 MiB | `RAMPART_SERVER_MAX_ATTACHMENT_BYTES` |
/// | stored bytes per user (messages, attachments, originals, drive blocks) | 2 GiB | `RAMPART_SERVER_QUOTA_BYTES` |
/// | requests per session per minute | 12,000 (200 a second: a mailbox import sends a request or two per message) | `RAMPART_SERVER_REQUESTS_PER_MINUTE` |
/// | sign-up attempts per client address per hour (refused ones count too) | 10 | `RAMPART_SERVER_SIGNUPS_PER_HOUR` |
/// | remote images and fonts the proxy fetches per user per minute (`POST /v1/remote/fetch`, all of the user's sessions together) | 300 | `RAMPART_SERVER_REMOTE_FETCHES_PER_MINUTE` |
public struct ServerLimits: Sendable, Equatable {
    public var maximumRecipientsPerMessage: Int
    public var maximumMessageBytes: Int
    public var maximumAttachmentBytes: Int
    public var storageQuotaBytes: Int64
    public var requestsPerMinutePerSession: Int
    /// Sign-up attempts per client address in an hour (`SignupThrottle`).
    public var signupsPerHourPerAddress: Int
    /// Remote resources the proxy fetches for one user in a minute (``RemoteFetcher``): the
    /// backend's own address is what the remote servers see, so one account must not make it a
    /// free fetcher.
    public var remoteFetchesPerMinutePerUser: Int

    public init(maximumRecipientsPerMessage: Int = 100, maximumMessageBytes: Int = 32 << 20,
                maximumAttachmentBytes: Int = 25 << 20, storageQuotaBytes: Int64 = 2 << 30,
                requestsPerMinutePerSession: Int = 12_000, signupsPerHourPerAddress: Int = 10, remoteFetchesPerMinutePerUser: Int = 300) {
        self.maximumRecipientsPerMessage = max(1, maximumRecipientsPerMessage)
        self.maximumMessageBytes = max(1024, maximumMessageBytes)
        self.maximumAttachmentBytes = max(1, maximumAttachmentBytes)
        self.storageQuotaBytes = max(0, storageQuotaBytes)
        self.requestsPerMinutePerSession = max(1, requestsPerMinutePerSession)
        self.signupsPerHourPerAddress = max(1, signupsPerHourPerAddress)
        self.remoteFetchesPerMinutePerUser = max(1, remoteFetchesPerMinutePerUser)
    }

    /// The defaults, each overridden by its environment variable when that holds a positive number.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> ServerLimits {
        func value(_ name: String) -> Int64? {
            environment[name].flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }.flatMap { $0 > 0 ? $0 : nil }
        }
        let base = ServerLimits()
        return ServerLimits(
            maximumRecipientsPerMessage: value("RAMPART_SERVER_MAX_RECIPIENTS").map { Int(clamping: $0) } ?? base.maximumRecipientsPerMessage,
            maximumMessageBytes: value("RAMPART_SERVER_MAX_MESSAGE_BYTES").map { Int(clamping: $0) } ?? base.maximumMessageBytes,
            maximumAttachmentBytes: value("RAMPART_SERVER_MAX_ATTACHMENT_BYTES").map { Int(clamping: $0) } ?? base.maximumAttachmentBytes,
            storageQuotaBytes: value("RAMPART_SERVER_QUOTA_BYTES") ?? base.storageQuotaBytes,
            requestsPerMinutePerSession: value("RAMPART_SERVER_REQUESTS_PER_MINUTE").map { Int(clamping: $0) } ?? base.requestsPerMinutePerSession,
            signupsPerHourPerAddress: value("RAMPART_SERVER_SIGNUPS_PER_HOUR").map { Int(clamping: $0) } ?? base.signupsPerHourPerAddress,
            remoteFetchesPerMinutePerUser: value("RAMPART_SERVER_REMOTE_FETCHES_PER_MINUTE").map { Int(clamping: $0) }
                ?? base.remoteFetchesPerMinutePerUser)
    }
}

/// Which limit a request broke: the code, the HTTP status and the sentence of its 4xx answer.
public enum ServerLimitViolation: Sendable, Equatable {
    case tooManyRecipients(count: Int, limit: Int)
    case messageTooLarge(limit: Int)
    case attachmentTooLarge(name: String, limit: Int)
    case quotaExceeded(limit: Int64)
    case recipientOverQuota(address: String)
    case tooManyRequests(retryAfterSeconds: Int)
    case tooManyRemoteFetches(retryAfterSeconds: Int)

    public var code: String {
        switch self {
        case .tooManyRecipients: "limit.recipients"
        case .messageTooLarge: "limit.messageSize"
        case .attachmentTooLarge: "limit.attachmentSize"
        case .quotaExceeded: "limit.quota"
        case .recipientOverQuota: "limit.recipientQuota"
        case .tooManyRequests: "limit.rate"
        case .tooManyRemoteFetches: "limit.remoteRate"
        }
    }

    public var status: HTTPResponse.Status {
        switch self {
        case .tooManyRecipients, .recipientOverQuota: .unprocessableContent
        case .messageTooLarge, .attachmentTooLarge, .quotaExceeded: .contentTooLarge
        case .tooManyRequests, .tooManyRemoteFetches: .tooManyRequests
        }
    }

    public var message: String {
        switch self {
        case .tooManyRecipients(let count, let limit): "The message has \(count) recipients; this server accepts at most \(limit) per message."
        case .messageTooLarge(let limit): "The message is larger than the \(limit) bytes this server accepts (body and attachments together)."
        case .attachmentTooLarge(let name, let limit): "The attachment \(name) is larger than the \(limit) bytes this server accepts."
        case .quotaExceeded(let limit): "Your storage is full (quota \(limit) bytes); delete mail or drive files first."
        case .recipientOverQuota(let address): "The mailbox of \(address) is full; nothing was sent."
        case .tooManyRequests(let seconds): "Too many requests from this session; wait \(seconds) seconds and try again."
        case .tooManyRemoteFetches(let seconds):
            "Too many remote images and fonts fetched for this account; wait \(seconds) seconds and try again."
        }
    }
}

/// The limits and their state for one running backend.
final class ServerLimitEnforcer: Sendable {
    let limits: ServerLimits
    let rate: SessionRateLimiter
    /// The proxy's fetches per user (all sessions), in one-minute windows in the database.
    let remoteFetches: WindowCounter

    init(_ limits: ServerLimits, store: BackendStore, nameKey: SymmetricKey) {
        self.limits = limits
        rate = SessionRateLimiter(store: store, perMinute: limits.requestsPerMinutePerSession, nameKey: nameKey)
        remoteFetches = WindowCounter(store: store, scope: "rate.remote", limit: limits.remoteFetchesPerMinutePerUser, window: 60, nameKey: nameKey)
    }

    /// Counts one remote fetch of `user`. - Throws: ``ServerError/limitExceeded(_:)``
    /// (`limit.remoteRate`, 429) past ``ServerLimits/remoteFetchesPerMinutePerUser`` in a minute.
    func admitRemoteFetch(user: String, now: Date = Date()) throws {
        if let wait = try remoteFetches.hit(user, now: now) { throw ServerError.limitExceeded(.tooManyRemoteFetches(retryAfterSeconds: wait)) }
    }

    /// What `user` stores: sealed bodies, attachments, originals and drive blocks, in bytes (one
    /// statement).
    static func storedBytes(of user: String, in db: any StorageConnection) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT \(storedBytesSum(of: "?"))",
                           arguments: StorageArguments(values: Array(repeating: .text(user), count: storedTables.count))) ?? 0
    }

    /// The columns that hold what a user stores, by table. Every ``BackendStore`` has run all its
    /// migrations (`v2-originals` included) before it serves, so every table is there.
    private static let storedTables = [("sealedBody", "messages"), ("sealedData", "attachments"), ("data", "driveBlocks"),
                                       ("sealedData", "messageOriginals")]

    /// The SQL sum of what the user named by `user` (a `?`, once per table of ``storedTables``, or
    /// a column) stores.
    static func storedBytesSum(of user: String) -> String {
        storedTables.map { "(SELECT COALESCE(SUM(LENGTH(\($0.0))), 0) FROM \($0.1) WHERE userId = \(user))" }.joined(separator: " + ")
    }

    /// In one read transaction: what `sender` stores, and the owner and stored bytes of every
    /// local address among `recipients` (lowercased; remote ones have no row), in one statement.
    static func sendUsage(sender: String, recipients: [String], store: BackendStore) throws
        -> (sender: Int64, owners: [(address: String, owner: String, used: Int64)]) {
        try store.read { db in
            let used = try storedBytes(of: sender, in: db)
            guard !recipients.isEmpty else { return (used, []) }
            let sum = storedBytesSum(of: "addresses.userId")
            let list = Array(repeating: "?", count: recipients.count).joined(separator: ", ")
            let rows = try db.fetchAll(sql: """
                SELECT address, userId, \(sum) AS used FROM addresses WHERE address COLLATE NOCASE IN (\(list))
                """, arguments: StorageArguments(values: recipients.map { .text($0) }))
            return (used, rows.map { row in
                let address: String = row["address"], owner: String = row["userId"], bytes: Int64 = row["used"]
                return (address.lowercased(), owner, bytes)
            })
        }
    }

    /// Throws when `adding` more bytes would put `user` over the quota.
    func checkQuota(user: String, adding: Int, store: BackendStore) throws {
        let used = try store.read { db in try Self.storedBytes(of: user, in: db) }
        if used + Int64(adding) > limits.storageQuotaBytes {
            throw ServerError.limitExceeded(.quotaExceeded(limit: limits.storageQuotaBytes))
        }
    }

    /// The part of a send request the limits look at (the rest is the send route's business).
    struct SendShape: Decodable {
        struct Attachment: Decodable {
            var name: String?
            var size: Int?
            var encryptedData: String?
        }
        var to: [String]?
        var attachments: [Attachment]?
    }

    /// Checks a send request: recipients, attachment sizes, the sender's and every local
    /// recipient's quota.
    func checkSend(_ body: ByteBuffer, sender: String, store: BackendStore) throws {
        guard let shape = try? JSONDecoder().decode(SendShape.self, from: Data(buffer: body)) else { return }
        let recipients = Set((shape.to ?? []).map { $0.lowercased() })
        if recipients.count > limits.maximumRecipientsPerMessage {
            throw ServerError.limitExceeded(.tooManyRecipients(count: recipients.count, limit: limits.maximumRecipientsPerMessage))
        }
        for attachment in shape.attachments ?? [] {
            // base64: 4 characters carry 3 bytes.
            let encrypted = (attachment.encryptedData?.utf8.count ?? 0) / 4 * 3
            if (attachment.size ?? 0) > limits.maximumAttachmentBytes || encrypted > limits.maximumAttachmentBytes + 4096 {
                throw ServerError.limitExceeded(.attachmentTooLarge(name: String((attachment.name ?? "?").prefix(80)),
                                                                    limit: limits.maximumAttachmentBytes))
            }
        }
        let usage = try Self.sendUsage(sender: sender, recipients: recipients.sorted(), store: store)
        if usage.sender + Int64(body.readableBytes) > limits.storageQuotaBytes {
            throw ServerError.limitExceeded(.quotaExceeded(limit: limits.storageQuotaBytes))
        }
        for (address, owner, used) in usage.owners where owner != sender {
            if used + Int64(body.readableBytes) > limits.storageQuotaBytes {
                throw ServerError.limitExceeded(.recipientOverQuota(address: address))
            }
        }
    }
}

/// Applies ``ServerLimits`` to every request behind ``SessionMiddleware``: the session's request
/// rate first, then for the routes that store data (send, import, drive blocks) the size of the
/// request, the recipients and attachments of a send, and the storage quotas — all before the
/// route's handler runs, so a refused request changes nothing.
struct LimitsMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext
    let backend: Backend

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let session = try context.session
        let enforcer = backend.limits
        try enforcer.rate.admit(session.sessionID)
        guard request.method == .post || request.method == .put else { return try await next(request, context) }
        let path = request.uri.path
        let stores = path == APIRoute.send || path == APIRoute.importMessage || path == APIRoute.driveBlocks
        guard stores else { return try await next(request, context) }
        let limit = enforcer.limits.maximumMessageBytes
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw ServerError.limitExceeded(.messageTooLarge(limit: limit))
        }
        var request = request
        let body: ByteBuffer
        do { body = try await request.collectBody(upTo: limit) } catch {
            throw ServerError.limitExceeded(.messageTooLarge(limit: limit))
        }
        if path == APIRoute.send {
            try enforcer.checkSend(body, sender: session.userID, store: backend.mailbox.store)
        } else {
            try enforcer.checkQuota(user: session.userID, adding: body.readableBytes, store: backend.mailbox.store)
        }
        return try await next(request, context)
    }
}
