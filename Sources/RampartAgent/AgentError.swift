import Foundation
import RampartCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why talking to the agent failed, or what the agent answered instead of a key.
///
/// Trust-model rows: **device memory (moderate)** — ``locked(_:)`` is how the rest of the client
/// learns that the agent zeroized the key; **keychain (low)** — ``wrongPIN(attemptsLeft:)`` and
/// ``wiped(_:)`` carry the Keymaker's failed-attempt count and wipe through the socket.
public enum AgentError: Error, Equatable, DescribedRampartError {
    /// No agent answers on the socket (it is not started, or it exited).
    case notRunning(socketPath: String)
    /// An agent already answers on this socket; a second one is not started.
    case alreadyRunning(socketPath: String)
    /// The agent could not be started, or did not answer in time.
    case startFailed(String)
    /// The socket folder is not private to this user (wrong owner, group/other bits, a symlink…).
    case socketFolderUnsafe(path: String, reason: String)
    /// The home folder's path is too long for a Unix socket address (`sun_path`).
    case socketPathTooLong(path: String, length: Int, limit: Int)
    /// The other end of the socket runs under another uid: refused (by the agent or the client).
    case peerRefused(peerUID: Int64, expectedUID: Int64)
    /// The user's MainKey is not in the agent's memory: unlock first.
    case locked(UserID)
    /// A wrong PIN; `attemptsLeft` more failures erase every local item of the account.
    case wrongPIN(attemptsLeft: Int)
    /// Too many wrong PINs: the agent's Keymaker erased every local item of the account.
    case wiped(UserID)
    /// The MainKey is protected by a PIN and none was given.
    case pinRequired
    /// The user has no MainKey (not logged in, or wiped).
    case noMainKey(UserID)
    /// The agent's Keymaker refused the request for another reason (its code, category and message).
    case keymakerRefused(code: String, kind: RampartErrorKind, message: String)
    /// A frame broke the wire protocol (bad length, bad JSON, unknown operation…).
    case protocolViolation(String)
    /// The peer speaks a protocol version this build does not know.
    case unsupportedVersion(UInt8)
    /// A frame is larger than the protocol allows.
    case frameTooLarge(Int)
    /// A system call on the socket failed.
    case socketFailure(operation: String, errno: Int32)

    /// The code, category (the CLI's exit status) and message of each case; a refusal of the
    /// agent's Keymaker keeps the category the agent sent on the wire.
    public var info: RampartErrorInfo {
        switch self {
        case .notRunning(let path): RampartErrorInfo(code: "agent.notRunning", kind: .agentUnavailable, message: "The Rampart agent is not running (no answer on \(path)). Start it with `rampart agent start` or `rampart unlock`.")
        case .alreadyRunning(let path): RampartErrorInfo(code: "agent.alreadyRunning", kind: .agentUnavailable, message: "A Rampart agent already answers on \(path); stop it first with `rampart agent stop`.")
        case .startFailed(let why): RampartErrorInfo(code: "agent.startFailed", kind: .agentUnavailable, message: "The Rampart agent could not be started: \(why)")
        case .socketFolderUnsafe(let path, let reason): RampartErrorInfo(code: "agent.socketFolderUnsafe", kind: .agentUnavailable, message: "Refusing the agent's socket folder \(path): \(reason). Remove it (it is recreated 0700) or fix it with `chmod 700`.")
        case .socketPathTooLong(let path, let length, let limit): RampartErrorInfo(code: "agent.socketPathTooLong", kind: .agentUnavailable, message: "The agent's socket path is \(length) bytes long (\(path)); Unix sockets allow at most \(limit). Use a shorter --home.")
        case .peerRefused(let peer, let expected): RampartErrorInfo(code: "agent.peerRefused", kind: .agentUnavailable, message: "The agent's socket peer runs as uid \(peer), not uid \(expected): refused. Only processes of the same user may talk to an agent.")
        case .locked(let user): RampartErrorInfo(code: "agent.locked", kind: .locked, message: "Rampart is locked for \(user): unlock with `rampart unlock`.")
        case .wrongPIN(let left): RampartErrorInfo(code: "agent.wrongPIN", kind: .wrongPIN, message: left == 1 ? "Wrong PIN. 1 attempt left before every local item of this account is erased."
                : "Wrong PIN. \(left) attempts left before every local item of this account is erased.")
        case .wiped: RampartErrorInfo(code: "agent.wiped", kind: .wiped, message: "Too many wrong PINs: every local item of this account was erased. Log in again.")
        case .pinRequired: RampartErrorInfo(code: "agent.pinRequired", kind: .wrongPIN, message: "The MainKey is protected by a PIN: give it (prompt or --pin-stdin).")
        case .noMainKey(let user): RampartErrorInfo(code: "agent.noMainKey", kind: .notFound, message: "No MainKey for \(user): log in (or, on a test home, run `rampart-dev key init`) first.")
        case .keymakerRefused(let code, let kind, let message): RampartErrorInfo(code: "agent.keymaker.\(code)", kind: kind, message: message)
        case .protocolViolation(let why): RampartErrorInfo(code: "agent.protocol", kind: .failure, message: "The agent and this client disagree on the protocol (\(why)). Restart the agent with `rampart agent stop`.")
        case .unsupportedVersion(let version): RampartErrorInfo(code: "agent.protocol.version", kind: .failure, message: "The agent speaks protocol version \(version), which this build does not know. Restart the agent with `rampart agent stop`.")
        case .frameTooLarge(let size): RampartErrorInfo(code: "agent.protocol.frameTooLarge", kind: .failure, message: "A message of \(size) bytes exceeds the agent protocol's limit of \(AgentWire.maxFrameLength) bytes.")
        case .socketFailure(let operation, let code): RampartErrorInfo(code: "agent.socket", kind: .failure, message: "\(operation) on the agent's socket failed: \(String(cString: strerror(code))) (errno \(code)).")
        }
    }

}
