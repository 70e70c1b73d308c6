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
public enum AgentError: Error, Equatable, RampartError {
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

    public var code: String {
        switch self {
        case .notRunning: "agent.notRunning"
        case .alreadyRunning: "agent.alreadyRunning"
        case .startFailed: "agent.startFailed"
        case .socketFolderUnsafe: "agent.socketFolderUnsafe"
        case .socketPathTooLong: "agent.socketPathTooLong"
        case .peerRefused: "agent.peerRefused"
        case .locked: "agent.locked"
        case .wrongPIN: "agent.wrongPIN"
        case .wiped: "agent.wiped"
        case .pinRequired: "agent.pinRequired"
        case .noMainKey: "agent.noMainKey"
        case .keymakerRefused(let code, _, _): "agent.keymaker.\(code)"
        case .protocolViolation: "agent.protocol"
        case .unsupportedVersion: "agent.protocol.version"
        case .frameTooLarge: "agent.protocol.frameTooLarge"
        case .socketFailure: "agent.socket"
        }
    }

    /// The category the CLI's exit status uses; a refusal of the agent's Keymaker keeps the
    /// category the agent sent on the wire.
    public var kind: RampartErrorKind {
        switch self {
        case .locked: .locked
        case .wrongPIN, .pinRequired: .wrongPIN
        case .wiped: .wiped
        case .noMainKey: .notFound
        case .notRunning, .alreadyRunning, .startFailed, .socketFolderUnsafe, .socketPathTooLong, .peerRefused:
            .agentUnavailable
        case .keymakerRefused(_, let kind, _): kind
        case .protocolViolation, .unsupportedVersion, .frameTooLarge, .socketFailure: .failure
        }
    }

    public var description: String {
        switch self {
        case .notRunning(let path):
            "The Rampart agent is not running (no answer on \(path)). Start it with `rampart agent start` or `rampart unlock`."
        case .alreadyRunning(let path):
            "A Rampart agent already answers on \(path); stop it first with `rampart agent stop`."
        case .startFailed(let why):
            "The Rampart agent could not be started: \(why)"
        case .socketFolderUnsafe(let path, let reason):
            "Refusing the agent's socket folder \(path): \(reason). Remove it (it is recreated 0700) or fix it with `chmod 700`."
        case .socketPathTooLong(let path, let length, let limit):
            "The agent's socket path is \(length) bytes long (\(path)); Unix sockets allow at most \(limit). Use a shorter --home."
        case .peerRefused(let peer, let expected):
            "The agent's socket peer runs as uid \(peer), not uid \(expected): refused. Only processes of the same user may talk to an agent."
        case .locked(let user):
            "Rampart is locked for \(user): unlock with `rampart unlock`."
        case .wrongPIN(let left):
            left == 1 ? "Wrong PIN. 1 attempt left before every local item of this account is erased."
                : "Wrong PIN. \(left) attempts left before every local item of this account is erased."
        case .wiped:
            "Too many wrong PINs: every local item of this account was erased. Log in again."
        case .pinRequired:
            "The MainKey is protected by a PIN: give it (prompt or --pin-stdin)."
        case .noMainKey(let user):
            "No MainKey for \(user): log in (or, on a test home, run `rampart-dev key init`) first."
        case .keymakerRefused(_, _, let message):
            message
        case .protocolViolation(let why):
            "The agent and this client disagree on the protocol (\(why)). Restart the agent with `rampart agent stop`."
        case .unsupportedVersion(let version):
            "The agent speaks protocol version \(version), which this build does not know. Restart the agent with `rampart agent stop`."
        case .frameTooLarge(let size):
            "A message of \(size) bytes exceeds the agent protocol's limit of \(AgentWire.maxFrameLength) bytes."
        case .socketFailure(let operation, let code):
            "\(operation) on the agent's socket failed: \(String(cString: strerror(code))) (errno \(code))."
        }
    }
}
