import MailListener

/// The bounds every SMTP submission connection is held to.
///
/// Trust-model row **inbox (low)**: everything a client sends is hostile input; every line and
/// every message has a size limit, and memory stays bounded by them.
public struct SMTPLimits: Sendable, Equatable {
    /// Longest command line, CRLF excluded (RFC 5321 §4.5.3.1.4 says 512; AUTH lines are longer). Default 4096.
    public var maxLineLength: Int
    /// Largest message (after dot-unstuffing), advertised with SIZE (RFC 1870). Default 32 MiB.
    public var maxMessageSize: Int
    /// Most recipients per message (RFC 5321 §4.5.3.1.8 asks for at least 100). Default 100.
    public var maxRecipients: Int
    /// Most failed commands before the connection is closed with `421`. Default 20.
    public var maxErrors: Int

    /// The default bounds.
    public static let `default` = SMTPLimits()

    /// Creates bounds.
    public init(maxLineLength: Int = 4096, maxMessageSize: Int = 32 << 20, maxRecipients: Int = 100, maxErrors: Int = 20) {
        self.maxLineLength = max(512, maxLineLength); self.maxMessageSize = max(0, maxMessageSize)
        self.maxRecipients = max(1, maxRecipients); self.maxErrors = max(1, maxErrors)
    }
}

/// One unit the framer hands the session.
public enum SMTPFrame: Sendable, Equatable {
    /// A command line (CRLF removed).
    case line([UInt8])
    /// A line longer than ``SMTPLimits/maxLineLength`` was skipped.
    case lineTooLong
    /// The message after DATA: dot-unstuffed, the final `.` line removed, CRLF line ends kept.
    case message([UInt8])
    /// The message after DATA was larger than ``SMTPLimits/maxMessageSize``; it was read to its end and dropped.
    case messageTooLarge
}

/// Splits what a client sends into command lines and DATA messages, bounded by ``SMTPLimits``.
///
/// A pure value type (no NIO). After a `DATA` line it pauses: the session decides (with
/// ``decideData(accepted:)``) whether the next bytes are a message (it answered `354`) or more
/// commands (it refused DATA), so a pipelining client that sends its message too early is not
/// mistaken for commands nor the other way round. After `STARTTLS`, bytes pipelined behind it
/// are dropped (CVE-2011-0411). Trust-model rows **inbox (low)** and **transport (low)**.
public struct SMTPInputFramer: Sendable {
    private enum Mode: Sendable, Equatable { case line, skipLine, waitingForDataDecision, data }
    /// The bounds in force.
    public let limits: SMTPLimits
    private var pending: [UInt8] = []
    private var mode: Mode = .line
    private var message: [UInt8] = []
    private var messageTooLarge = false
    private var atLineStart = true

    /// Creates a framer.
    public init(limits: SMTPLimits = .default) { self.limits = limits }

    /// Whether the framer waits for ``decideData(accepted:)``.
    public var isWaitingForDataDecision: Bool { mode == .waitingForDataDecision }

    /// Bytes the framer holds unprocessed (bounded by the caller closing a client that sends
    /// much while the framer waits for a decision).
    public var pendingCount: Int { pending.count }

    /// Feeds bytes as they arrive; returns the frames they complete.
    public mutating func feed<Bytes: Collection>(_ bytes: Bytes) -> [SMTPFrame] where Bytes.Element == UInt8 {
        pending.append(contentsOf: bytes)
        return process()
    }

    /// After a `DATA` line: `true` when the session answered `354` (the following bytes are the
    /// message), `false` when it refused DATA (they are commands). Returns the frames then complete.
    public mutating func decideData(accepted: Bool) -> [SMTPFrame] {
        guard mode == .waitingForDataDecision else { return [] }
        mode = accepted ? .data : .line
        message = []; messageTooLarge = false; atLineStart = true
        return process()
    }

    private mutating func process() -> [SMTPFrame] {
        var frames: [SMTPFrame] = []
        var i = 0
        scan: while i < pending.count {
            switch mode {
            case .waitingForDataDecision:
                break scan
            case .skipLine:
                guard let lf = pending[i...].firstIndex(of: 0x0A) else { i = pending.count; break scan }
                i = lf + 1; mode = .line; frames.append(.lineTooLong)
            case .line:
                switch ClientLine.scan(pending, from: i, maxLength: limits.maxLineLength) {
                case .tooLong(let end):
                    if let end { i = end + 1; frames.append(.lineTooLong) } else { i = pending.count; mode = .skipLine }
                case .incomplete:
                    break scan
                case .line(let line, let next):
                    i = next
                    frames.append(.line(line))
                    let word = String(decoding: line.prefix(9), as: UTF8.self).uppercased().trimmingCharacters(in: .whitespaces)
                    if word == "DATA" { mode = .waitingForDataDecision; break scan }
                    if word == "STARTTLS" { i = pending.count; break scan }
                }
            case .data:
                // Line by line; a line is at most maxLineLength·2 buffered, longer lines stream through.
                guard let lf = pending[i...].firstIndex(of: 0x0A) else {
                    // No full line yet: move what we have into the message unless it may be the final dot.
                    let chunk = pending[i...]
                    if chunk.count > 2 || !atLineStart {
                        if atLineStart, chunk.first == UInt8(ascii: ".") { append(chunk.dropFirst()) } else { append(chunk) }
                        atLineStart = false
                        i = pending.count
                    }
                    break scan
                }
                var line = pending[i...lf]
                i = lf + 1
                if atLineStart {
                    if line.elementsEqual([0x2E, 0x0D, 0x0A]) || line.elementsEqual([0x2E, 0x0A]) {
                        frames.append(messageTooLarge ? .messageTooLarge : .message(message))
                        message = []; mode = .line
                        continue scan
                    }
                    if line.first == UInt8(ascii: ".") { line = line.dropFirst() }   // dot-unstuffing, RFC 5321 §4.5.2
                }
                append(line)
                atLineStart = true
            }
        }
        pending.removeFirst(min(i, pending.count))
        return frames
    }

    private mutating func append(_ bytes: ArraySlice<UInt8>) {
        guard !messageTooLarge else { return }
        if message.count + bytes.count > limits.maxMessageSize { messageTooLarge = true; message = []; return }
        message.append(contentsOf: bytes)
    }
}
