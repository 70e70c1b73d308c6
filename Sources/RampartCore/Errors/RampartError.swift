/// Common shape of Rampart's errors: every failure is a typed value with a message a person can
/// act on (`description`), a stable machine-readable code for the CLI's JSON output, and a
/// category (``kind``) that decides the exit status — never the text of the code or message.
public protocol RampartError: Error, CustomStringConvertible {
    /// A stable identifier such as `keychain.notFound` or `keymaker.wrongPIN`.
    var code: String { get }
    /// What kind of failure this is, for callers that react by category (the CLI's exit status,
    /// the agent's wire). Defaults to ``RampartErrorKind/failure``.
    var kind: RampartErrorKind { get }
}

extension RampartError {
    public var kind: RampartErrorKind { .failure }
}

/// The category of a ``RampartError``: one per documented exit status of the command-line tools.
///
/// The raw values are stable: they travel on the agent's wire so a client maps an error the
/// agent raised without reading its text.
public enum RampartErrorKind: String, Codable, Sendable, CaseIterable {
    /// Any other failure (exit status 1).
    case failure
    /// Bad usage or bad input: the caller can fix the request (2).
    case badInput
    /// The MainKey is locked: unlock first (3).
    case locked
    /// A wrong PIN, or a PIN needed and not given (4).
    case wrongPIN
    /// The account's local data was wiped after too many wrong PINs (5).
    case wiped
    /// No such key, account or item (6).
    case notFound
    /// Tampered or corrupt data, refused (7).
    case tampered
    /// A server's certificate did not match its pins (8).
    case pinMismatch
    /// The server session expired: log in again (9).
    case sessionExpired
    /// The agent is unavailable: not running, cannot start, or refused the connection (10).
    case agentUnavailable
}

extension LockedError: RampartError {
    public var code: String { "locked" }
    public var kind: RampartErrorKind { .locked }
}

extension SecretError: RampartError {
    public var code: String { "secret.wiped" }
}

extension MainKeyError: RampartError {
    public var code: String { "mainKey.invalidLength" }
    public var kind: RampartErrorKind { .badInput }
}

extension InvalidUserID: RampartError {
    public var code: String { "userID.invalid" }
    public var kind: RampartErrorKind { .badInput }
}
