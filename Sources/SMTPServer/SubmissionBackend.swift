import Foundation

/// The seam between SMTP submission and whatever sends the mail: `rampart bridge` implements it
/// by encrypting and sending through the user's account; ``InMemorySubmissionBackend`` records
/// messages for the tests.
///
/// Trust-model row **inbox (low)**: the envelope and message come from a local client and are
/// bounded by ``SMTPLimits``, not trusted: the backend checks that the sender is the user's own
/// address (``SubmissionAccount/checkSender(_:)``) before anything is sent.
public protocol SubmissionBackend: Sendable {
    /// Checks a username and password (AUTH PLAIN or LOGIN).
    /// - Throws: ``SubmissionError/authenticationFailed`` when they do not match.
    func authenticate(username: String, password: String) async throws -> any SubmissionAccount
}

/// One authenticated user's sending rights.
public protocol SubmissionAccount: Sendable {
    /// Whether the user may send as `address` (MAIL FROM).
    /// - Throws: ``SubmissionError/senderRefused(_:)`` (answered `550 5.7.1`).
    func checkSender(_ address: String) async throws
    /// Sends (or queues) the message; the receipt's text ends up in the final `250` reply.
    /// - Throws: ``SubmissionError``.
    func submit(_ envelope: SMTPEnvelope, message: [UInt8]) async throws -> SubmissionReceipt
}

/// The envelope of one submission (RFC 5321 §2.3.1).
public struct SMTPEnvelope: Sendable, Equatable {
    /// MAIL FROM's reverse path (empty for `<>`).
    public var from: String
    /// RCPT TO's forward paths, in order.
    public var recipients: [String]
    /// Whether the client declared `BODY=8BITMIME`.
    public var eightBit: Bool
    /// Creates an envelope.
    public init(from: String, recipients: [String], eightBit: Bool = false) { self.from = from; self.recipients = recipients; self.eightBit = eightBit }
}

/// What the backend did with a message.
public struct SubmissionReceipt: Sendable, Equatable {
    /// A sentence for the final reply, e.g. "queued as 42 for bob@example.org, carol@example.org".
    public var text: String
    /// Creates a receipt.
    public init(text: String) { self.text = text }
}

/// Failures a submission backend reports; each becomes an SMTP reply with an enhanced status code
/// (RFC 3463).
public enum SubmissionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Wrong username or password: `535 5.7.8`.
    case authenticationFailed
    /// The user may not send as this address: `550 5.7.1`.
    case senderRefused(String)
    /// Recipients the backend cannot send to (with a reason): `550 5.1.1`, naming them.
    case recipientsRefused([String], reason: String)
    /// The message was refused (e.g. not parseable as mail): `554 5.6.0`.
    case messageRefused(String)
    /// Try again later (the account is locked, the network is down): `451 4.3.0`.
    case temporaryFailure(String)

    /// A sentence for the reply.
    public var description: String {
        switch self {
        case .authenticationFailed: "Authentication failed: wrong username or password"
        case .senderRefused(let a): "You may not send as \(a)"
        case .recipientsRefused(let list, let reason): "Cannot send to \(list.joined(separator: ", ")): \(reason)"
        case .messageRefused(let reason): "Message refused: \(reason)"
        case .temporaryFailure(let reason): "Temporary failure, try again later: \(reason)"
        }
    }

    var reply: SMTPReply {
        switch self {
        case .authenticationFailed: SMTPReply(535, "5.7.8", description)
        case .senderRefused: SMTPReply(550, "5.7.1", description)
        case .recipientsRefused: SMTPReply(550, "5.1.1", description)
        case .messageRefused: SMTPReply(554, "5.6.0", description)
        case .temporaryFailure: SMTPReply(451, "4.3.0", description)
        }
    }
}

/// A submission store in memory: users with passwords and the addresses each may send from; every
/// accepted message is kept in ``submissions``. Recipients in the reserved `.invalid` top-level
/// domain (RFC 2606) are refused, so that the refusal path can be tested. A real backend for the
/// tests and the fuzz target, not a mock. Trust-model row **inbox (low)**.
public actor InMemorySubmissionBackend: SubmissionBackend {
    struct User { var password: String; var addresses: Set<String> }
    private var users: [String: User] = [:]
    /// Every accepted message, in order.
    public private(set) var submissions: [(user: String, envelope: SMTPEnvelope, message: [UInt8])] = []

    /// An empty store.
    public init() {}

    /// Adds a user who may send from `addresses` (compared case-insensitively).
    public func addUser(_ username: String, password: String, addresses: [String]) {
        users[username] = User(password: password, addresses: Set(addresses.map { $0.lowercased() }))
    }

    /// Checks the password. - Throws: ``SubmissionError/authenticationFailed``.
    public func authenticate(username: String, password: String) async throws -> any SubmissionAccount {
        guard let user = users[username], user.password.utf8.elementsEqual(password.utf8) else { throw SubmissionError.authenticationFailed }
        return Account(backend: self, username: username, addresses: user.addresses)
    }

    func record(_ user: String, _ envelope: SMTPEnvelope, _ message: [UInt8]) -> Int {
        submissions.append((user, envelope, message))
        return submissions.count
    }

    struct Account: SubmissionAccount {
        let backend: InMemorySubmissionBackend
        let username: String
        let addresses: Set<String>
        func checkSender(_ address: String) async throws {
            guard addresses.contains(address.lowercased()) else { throw SubmissionError.senderRefused(address) }
        }
        func submit(_ envelope: SMTPEnvelope, message: [UInt8]) async throws -> SubmissionReceipt {
            let refused = envelope.recipients.filter { $0.lowercased().hasSuffix(".invalid") }
            if !refused.isEmpty { throw SubmissionError.recipientsRefused(refused, reason: "the .invalid domain does not exist") }
            let id = await backend.record(username, envelope, message)
            return SubmissionReceipt(text: "queued as \(id) for \(envelope.recipients.joined(separator: ", "))")
        }
    }
}
