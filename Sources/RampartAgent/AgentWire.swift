import Foundation
import Keymaker
import RampartCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The agent's wire protocol, version 1: one request frame, one response frame, per exchange.
///
/// ```
/// frame  = length:u32be  body                     (length = byte count of body, ≤ 64 KiB)
/// body   = version:u8 (= 1)  headerLength:u32be  header  secret
/// header = UTF-8 JSON (AgentRequest or AgentResponse): never holds a secret
/// secret = the remaining bytes (≤ 1 KiB): the PIN of an `unlock`, the MainKey of a `mainKey`
///          answer, or nothing
/// ```
///
/// Trust-model row: **device memory (moderate)** — secrets travel *next to* the JSON, never
/// inside it, so they are never turned into `String`, `Data` or a JSON value: the whole frame is
/// read into a `SecretBytes` buffer (zeroized when released), and the secret part is copied
/// from there into its own `SecretBytes`. Nothing of a frame is ever logged.
public enum AgentWire {
    /// The protocol version this build speaks.
    public static let version: UInt8 = 1
    /// The largest body accepted.
    public static let maxFrameLength = 64 * 1024
    /// The largest secret accepted.
    public static let maxSecretLength = 1024

    /// A received frame: the JSON header and the secret, if any.
    struct Frame {
        let header: Data
        let secret: SecretBytes?
    }

    /// Writes one frame.
    static func write(_ fd: Int32, header: some Encodable, secret: SecretBytes? = nil) throws {
        let json = try JSONEncoder().encode(header)
        let secretLength = secret?.count ?? 0
        guard secretLength <= maxSecretLength else { throw AgentError.frameTooLarge(secretLength) }
        let bodyLength = 1 + 4 + json.count + secretLength
        guard bodyLength <= maxFrameLength else { throw AgentError.frameTooLarge(bodyLength) }
        let frame = try SecretBytes(count: 4 + bodyLength) { buffer in
            var offset = 0
            func put32(_ value: Int) {
                let big = UInt32(value).bigEndian
                withUnsafeBytes(of: big) { bytes in
                    for byte in bytes { buffer[offset] = byte; offset += 1 }
                }
            }
            put32(bodyLength)
            buffer[offset] = version; offset += 1
            put32(json.count)
            json.withUnsafeBytes { bytes in
                for byte in bytes { buffer[offset] = byte; offset += 1 }
            }
            if let secret {
                try secret.withUnsafeBytes { bytes in
                    for byte in bytes { buffer[offset] = byte; offset += 1 }
                }
            }
        }
        try frame.withUnsafeBytes { try UnixSocket.writeAll(fd, $0) }
    }

    /// Reads one frame; nil on a clean end of stream.
    static func read(_ fd: Int32) throws -> Frame? {
        var lengthBytes: UInt32 = 0
        let gotLength = try withUnsafeMutableBytes(of: &lengthBytes) { try UnixSocket.readExactly(fd, $0) }
        guard gotLength else { return nil }
        let bodyLength = Int(UInt32(bigEndian: lengthBytes))
        guard bodyLength <= maxFrameLength else { throw AgentError.frameTooLarge(bodyLength) }
        guard bodyLength >= 5 else { throw AgentError.protocolViolation("a frame of \(bodyLength) bytes is too short") }
        let body = try SecretBytes(count: bodyLength) { buffer in
            guard try UnixSocket.readExactly(fd, buffer) else {
                throw AgentError.protocolViolation("the connection closed in the middle of a message")
            }
        }
        return try body.withUnsafeBytes { bytes -> Frame in
            guard bytes[0] == version else { throw AgentError.unsupportedVersion(bytes[0]) }
            let headerLength = Int(bytes[1]) << 24 | Int(bytes[2]) << 16 | Int(bytes[3]) << 8 | Int(bytes[4])
            guard headerLength <= bodyLength - 5 else {
                throw AgentError.protocolViolation("the header length \(headerLength) exceeds the frame")
            }
            let header = Data(bytes[5..<(5 + headerLength)])
            let secretLength = bodyLength - 5 - headerLength
            guard secretLength <= maxSecretLength else { throw AgentError.frameTooLarge(secretLength) }
            let secret = secretLength > 0
                ? SecretBytes(copying: UnsafeRawBufferPointer(rebasing: bytes[(5 + headerLength)...])) : nil
            return Frame(header: header, secret: secret)
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, _ frame: Frame) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: frame.header)
        } catch {
            throw AgentError.protocolViolation("unreadable \(type) header")
        }
    }
}

/// What a client asks (the JSON header of a request frame).
struct AgentRequest: Codable, Sendable {
    enum Operation: String, Codable, Sendable {
        case ping, unlock, lock, status, mainKey, touch, stop
    }
    var op: Operation
    var user: UserID?
}

/// What the agent answers (the JSON header of a response frame).
struct AgentResponse: Codable, Sendable {
    var ok: Bool
    var status: AgentStatus?
    var error: WireError?
    var agentProcessID: Int32?

    static func success(_ status: AgentStatus? = nil) -> AgentResponse {
        AgentResponse(ok: true, status: status, error: nil, agentProcessID: getpid())
    }

    static func failure(_ error: WireError) -> AgentResponse {
        AgentResponse(ok: false, status: nil, error: error, agentProcessID: getpid())
    }
}

/// An error as it travels: its code, category, message and the values a client needs to rebuild it.
///
/// `kind` is the ``RampartErrorKind`` raw value of the error the agent raised, so the client
/// maps it to an exit status without reading the code's or the message's text. It is an optional
/// JSON field (an agent of an older build omits it: the client then assumes
/// ``RampartErrorKind/failure``), and an unknown value from a newer build reads as `failure`, so
/// the header stays within protocol version 1.
struct WireError: Codable, Sendable, Equatable {
    var code: String
    var kind: String?
    var message: String
    var user: UserID?
    var attemptsLeft: Int?
    var peerUID: Int64?
    var expectedUID: Int64?

    /// The wire form of an error raised in the agent.
    init(_ error: any Error, user: UserID?) {
        self.user = user
        kind = ((error as? any RampartError)?.kind ?? .failure).rawValue
        switch error {
        case let locked as LockedError:
            code = "agent.locked"; message = locked.description; self.user = locked.userID
        case let keymaker as KeymakerError:
            message = keymaker.description
            switch keymaker {
            case .wrongPIN(let left): code = "agent.wrongPIN"; attemptsLeft = left
            case .wipedAfterTooManyFailedAttempts: code = "agent.wiped"
            case .pinRequired: code = "agent.pinRequired"
            case .noMainKey: code = "agent.noMainKey"
            default: code = "agent.keymaker.\(keymaker.code)"
            }
        case let agent as AgentError:
            code = agent.code; message = agent.description
            if case .peerRefused(let peer, let expected) = agent { peerUID = peer; expectedUID = expected }
        case let typed as any RampartError:
            code = "agent.keymaker.\(typed.code)"; message = typed.description
        default:
            code = "agent.failure"; message = String(describing: error)
        }
    }

    /// The category the agent sent (``RampartErrorKind/failure`` when absent or unknown).
    var errorKind: RampartErrorKind { kind.flatMap(RampartErrorKind.init(rawValue:)) ?? .failure }

    /// The client-side error.
    var agentError: AgentError {
        switch code {
        case "agent.locked": return .locked(user ?? UserID("unknown"))
        case "agent.wrongPIN": return .wrongPIN(attemptsLeft: attemptsLeft ?? 0)
        case "agent.wiped": return .wiped(user ?? UserID("unknown"))
        case "agent.pinRequired": return .pinRequired
        case "agent.noMainKey": return .noMainKey(user ?? UserID("unknown"))
        case "agent.peerRefused": return .peerRefused(peerUID: peerUID ?? -1, expectedUID: expectedUID ?? -1)
        default:
            if code.hasPrefix("agent.keymaker.") {
                return .keymakerRefused(code: String(code.dropFirst("agent.keymaker.".count)), kind: errorKind, message: message)
            }
            if code.hasPrefix("agent.protocol") { return .protocolViolation(message) }
            return .keymakerRefused(code: code, kind: errorKind, message: message)
        }
    }
}

/// One user's state as the agent sees it: what `rampart status` shows.
///
/// Trust-model row: **device memory (moderate)** — whether the MainKey is in the agent's memory,
/// and for how long more (autolock).
public struct AgentStatus: Codable, Sendable, Equatable {
    public var userID: UserID
    /// Whether a MainKey exists for the user (any protector stored).
    public var hasMainKey: Bool
    /// Whether the MainKey is in the agent's memory.
    public var unlocked: Bool
    /// The MainKey's non-secret fingerprint while unlocked.
    public var keyFingerprint: String?
    /// The stored protectors (`none`, `pin`, …).
    public var activeProtectors: [String]
    /// Consecutive wrong PINs so far, and how many erase the account.
    public var failedAttempts: Int
    public var maxFailedAttempts: Int
    /// The autolock policy (`never`, `background`, or minutes).
    public var autolock: String
    /// Seconds until the timed autolock, while unlocked.
    public var secondsUntilAutolock: Double?
    /// The keychain backend the agent reads.
    public var keychainBackend: String
    /// The agent's process id.
    public var agentProcessID: Int32
    /// Why the stored autolock policy was not trusted at the last unlock (edited, deleted or
    /// foreign: the shortest delay applies), or `nil`. Trust-model row **device memory
    /// (moderate)**: the user learns that someone tampered with the policy.
    public var autolockWarning: String?

    /// The status of a Keymaker of this process (the agent's own, or a command's when no agent runs).
    public init(_ status: KeymakerStatus) {
        userID = status.userID
        hasMainKey = status.hasMainKey
        unlocked = status.unlocked
        keyFingerprint = status.keyFingerprint
        activeProtectors = status.activeProtectors.map(\.rawValue)
        failedAttempts = status.failedAttempts
        maxFailedAttempts = status.maxFailedAttempts
        autolock = status.autolock
        secondsUntilAutolock = status.secondsUntilAutolock
        keychainBackend = status.keychainBackend
        agentProcessID = getpid()
        autolockWarning = status.autolockWarning
    }
}
