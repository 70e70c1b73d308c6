import Foundation

/// The seam between the IMAP protocol and a mail store: the session calls it for everything it
/// needs and computes the rest (sequence numbers, SEARCH, ENVELOPE, BODYSTRUCTURE, sections)
/// itself. `rampart bridge` implements it over the sealed store; ``InMemoryIMAPBackend`` is a
/// small complete store for the tests and the fuzz target.
///
/// Trust-model row **inbox (low)**: values reaching the backend come from a local client and are
/// already parsed and bounded by the session (``IMAPLimits``); the backend still checks what it
/// stores. Errors it throws should be ``IMAPBackendError`` (others become a generic `NO`).
public protocol IMAPBackend: Sendable {
    /// Checks a username and password and returns the user's mailboxes.
    /// - Throws: ``IMAPBackendError/authenticationFailed`` when they do not match.
    func authenticate(username: String, password: String) async throws -> any IMAPAccount
}

/// One logged-in user's mailboxes, as the session sees them.
public protocol IMAPAccount: Sendable {
    /// Every mailbox, with its attributes (SPECIAL-USE, `\Noselect`, …).
    func mailboxes() async throws -> [IMAPMailboxInfo]
    /// The current state of a mailbox: UIDVALIDITY, UIDNEXT and its messages in UID order.
    /// - Throws: ``IMAPBackendError/noSuchMailbox(_:)``.
    func snapshot(of mailbox: String) async throws -> IMAPMailboxSnapshot
    /// The raw RFC 5322 bytes of one message, read when a FETCH or SEARCH needs them.
    func messageBytes(in mailbox: String, uid: UInt32) async throws -> [UInt8]
    /// Changes the flags of the messages with these UIDs; returns each changed message's flags.
    func storeFlags(in mailbox: String, uids: [UInt32], operation: IMAPFlagOperation, flags: [String]) async throws -> [UInt32: [String]]
    /// Copies messages to another mailbox (UIDPLUS: the destination's UIDVALIDITY and the UID pairs).
    /// - Throws: ``IMAPBackendError/noSuchMailbox(_:)`` for a missing destination (`[TRYCREATE]`).
    func copy(uids: [UInt32], from source: String, to destination: String) async throws -> IMAPCopyResult
    /// Moves messages (RFC 6851): a copy and an expunge of the sources, as one step.
    func move(uids: [UInt32], from source: String, to destination: String) async throws -> IMAPCopyResult
    /// Removes the messages flagged `\Deleted` (only among `uids` when given); returns the removed UIDs.
    func expunge(in mailbox: String, uids: [UInt32]?) async throws -> [UInt32]
    /// Adds a message; returns the mailbox's UIDVALIDITY and the new UID (APPENDUID).
    func append(to mailbox: String, message: [UInt8], flags: [String], internalDate: Date?) async throws -> (uidValidity: UInt32, uid: UInt32)
    /// Creates a mailbox. - Throws: ``IMAPBackendError/mailboxExists(_:)``.
    func create(mailbox: String) async throws
    /// Deletes a mailbox and its messages.
    func delete(mailbox: String) async throws
    /// Renames a mailbox (renaming INBOX moves its messages, RFC 3501 §6.3.5).
    func rename(mailbox: String, to newName: String) async throws
    /// A stream that yields whenever something in `mailbox` changed (new, expunged or re-flagged
    /// messages, by this or another connection). The session then takes a fresh ``snapshot(of:)``
    /// and tells the client (IDLE, NOOP). Ends when the returned stream is no longer iterated.
    /// The watch is in place when this returns: a change made after it is never missed (the
    /// session asks for it before it tells the client it is idling).
    func changes(in mailbox: String) async -> AsyncStream<Void>
}

/// A mailbox as LIST shows it.
public struct IMAPMailboxInfo: Sendable, Equatable {
    /// The full name (`INBOX`, `Archive/2025`), hierarchy delimiter ``IMAPMailboxInfo/delimiter``.
    public var name: String
    /// Attributes, e.g. `\Sent`, `\Drafts`, `\Trash`, `\Archive`, `\Junk`, `\All` (RFC 6154),
    /// `\Noselect`, `\HasNoChildren`.
    public var attributes: [String]
    /// The hierarchy delimiter every mailbox name uses.
    public static let delimiter = "/"
    /// Creates a mailbox description.
    public init(name: String, attributes: [String] = []) { self.name = name; self.attributes = attributes }
}

/// One message as the session tracks it (no bytes).
public struct IMAPMessageSummary: Sendable, Equatable {
    /// The UID (strictly ascending within a mailbox, never reused under one UIDVALIDITY).
    public var uid: UInt32
    /// Its flags (system flags in canonical spelling, and keywords).
    public var flags: [String]
    /// INTERNALDATE: when the message arrived.
    public var internalDate: Date
    /// RFC822.SIZE: the size of the raw bytes.
    public var size: Int
    /// The mod-sequence of the message's last change (RFC 7162 CONDSTORE): it grows whenever its
    /// flags change. A backend without mod-sequences leaves 1.
    public var modSeq: UInt64
    /// Creates a summary.
    public init(uid: UInt32, flags: [String], internalDate: Date, size: Int, modSeq: UInt64 = 1) {
        self.uid = uid; self.flags = flags; self.internalDate = internalDate; self.size = size; self.modSeq = modSeq
    }
}

/// A mailbox's state at one moment.
public struct IMAPMailboxSnapshot: Sendable, Equatable {
    /// UIDVALIDITY: changes only if UIDs were reassigned.
    public var uidValidity: UInt32
    /// The UID the next message will get.
    public var uidNext: UInt32
    /// The messages, in ascending UID order.
    public var messages: [IMAPMessageSummary]
    /// HIGHESTMODSEQ (RFC 7162): at least every message's ``IMAPMessageSummary/modSeq``; expunges
    /// grow it too.
    public var highestModSeq: UInt64
    /// A number that changes whenever anything in the mailbox changes (optional): a session that
    /// saw the same revision last time skips comparing its view with the snapshot, so the check
    /// before each FETCH costs nothing while nothing changed. Nil: always compared.
    public var revision: UInt64?
    /// Creates a snapshot (`highestModSeq` nil: the largest message mod-sequence, at least 1).
    public init(uidValidity: UInt32, uidNext: UInt32, messages: [IMAPMessageSummary], highestModSeq: UInt64? = nil, revision: UInt64? = nil) {
        self.uidValidity = uidValidity; self.uidNext = uidNext; self.messages = messages
        self.highestModSeq = highestModSeq ?? max(1, messages.map(\.modSeq).max() ?? 1)
        self.revision = revision
    }
}

/// What COPY or MOVE did (UIDPLUS, RFC 4315 `COPYUID`).
public struct IMAPCopyResult: Sendable, Equatable {
    /// The destination's UIDVALIDITY.
    public var uidValidity: UInt32
    /// Source UID → new UID in the destination, in source order.
    public var uids: [(source: UInt32, destination: UInt32)]
    /// Creates a result.
    public init(uidValidity: UInt32, uids: [(source: UInt32, destination: UInt32)]) { self.uidValidity = uidValidity; self.uids = uids }
    /// Equal when the validity and every pair are.
    public static func == (a: Self, b: Self) -> Bool {
        a.uidValidity == b.uidValidity && a.uids.map(\.source) == b.uids.map(\.source) && a.uids.map(\.destination) == b.uids.map(\.destination)
    }
}

/// Failures a backend reports; the session turns each into a `NO` with the matching response code.
public enum IMAPBackendError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Wrong username or password (`[AUTHENTICATIONFAILED]`).
    case authenticationFailed
    /// No such mailbox (`[NONEXISTENT]`, or `[TRYCREATE]` for a COPY/MOVE/APPEND destination).
    case noSuchMailbox(String)
    /// The mailbox exists already (`[ALREADYEXISTS]`).
    case mailboxExists(String)
    /// The operation is not allowed on this mailbox (`[CANNOT]`), with a reason.
    case notPermitted(String)
    /// The message is larger than the store accepts (`[TOOBIG]`).
    case messageTooLarge(limit: Int)
    /// A bound of the server was reached (`[LIMIT]`, RFC 5530), with what to do instead.
    case limit(String)
    /// Anything else, with a sentence the user can act on (`[SERVERBUG]` is not used: the text says what).
    case failed(String)
    /// The store cannot be used now (the account is locked), with what to do: a login gets
    /// `NO [UNAVAILABLE]`, an authenticated session `* BYE [UNAVAILABLE]` and is closed.
    case unavailable(String)

    /// A sentence for the `NO` response.
    public var description: String {
        switch self {
        case .authenticationFailed: "Authentication failed: wrong username or password"
        case .noSuchMailbox(let name): "No mailbox named \(name)"
        case .mailboxExists(let name): "A mailbox named \(name) exists already"
        case .notPermitted(let reason): reason
        case .messageTooLarge(let limit): "Message larger than the limit of \(limit) bytes"
        case .failed(let reason): reason
        case .limit(let reason): reason
        case .unavailable(let reason): reason
        }
    }

    /// The response code (RFC 5530) for the `NO`.
    public var responseCode: String? {
        switch self {
        case .authenticationFailed: "AUTHENTICATIONFAILED"
        case .noSuchMailbox: "NONEXISTENT"
        case .mailboxExists: "ALREADYEXISTS"
        case .notPermitted: "CANNOT"
        case .messageTooLarge: "TOOBIG"
        case .failed: nil
        case .limit: "LIMIT"
        case .unavailable: "UNAVAILABLE"
        }
    }
}
