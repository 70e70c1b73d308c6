import MailListener

/// One unit the framer hands the session: a whole command, or what to answer instead.
public enum IMAPFrame: Sendable, Equatable {
    /// One complete command: its lines (CRLF between them) with every literal inline, exactly as
    /// ``IMAPCommandParser`` reads it.
    case command([UInt8])
    /// A synchronizing literal (`{n}`) was announced and fits the limits: send the client a
    /// continuation request (`+ …`) so it sends the literal.
    case continuationRequest
    /// The command broke a limit; answer with a tagged `BAD`/`NO` (untagged when no tag could be
    /// read). The connection stays usable: the framer skipped exactly the rejected command.
    case rejected(tag: String?, IMAPFramingError)
    /// The connection cannot be kept in step with the client (a non-synchronizing literal too
    /// large even to skip): answer with an untagged `BYE` and close.
    case fatal(IMAPFramingError)
}

/// Why the framer refused a command. Trust-model row **inbox (low)**: client input is hostile.
public enum IMAPFramingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A line longer than ``IMAPLimits/maxLineLength``.
    case lineTooLong(limit: Int)
    /// A literal larger than ``IMAPLimits/maxLiteralSize`` (`size` is nil when it does not even fit 64 bits).
    case literalTooLarge(size: UInt64?, limit: Int)
    /// A command whose lines and literals together exceed ``IMAPLimits/maxCommandSize``.
    case commandTooLarge(limit: Int)

    /// A sentence for the tagged response.
    public var description: String {
        switch self {
        case .lineTooLong(let limit): "Command line too long (limit \(limit) bytes); the line was skipped"
        case .literalTooLarge(let size, let limit):
            "Literal of \(size.map(String.init) ?? "more than 2^64") bytes is larger than the limit of \(limit) bytes"
        case .commandTooLarge(let limit): "Command too large (limit \(limit) bytes with its literals)"
        }
    }
}

/// Splits the bytes a client sends into commands: lines ending in CRLF (a bare LF is accepted),
/// with synchronizing (`{n}`) and non-synchronizing (`{n+}`, RFC 7888 LITERAL+) literals read
/// inline, every size bounded by ``IMAPLimits``.
///
/// Pure value type (no NIO), so the tests and the fuzz target drive it directly; the server runs it
/// inside a NIO `ByteToMessageDecoder`. Memory is bounded: a too-long line or a rejected literal is
/// skipped as it arrives, never buffered. After a complete `STARTTLS` command, bytes the client
/// pipelined behind it are dropped (they would otherwise be read as if they came over TLS:
/// the STARTTLS command-injection class, CVE-2011-0411). Trust-model rows **inbox (low)** and
/// **transport (low)**.
public struct IMAPCommandFramer: Sendable {
    private enum Mode: Sendable, Equatable { case line, literal(Int), skipLine, closed }

    /// The bounds in force.
    public let limits: IMAPLimits
    private var pending: [UInt8] = []
    private var command: [UInt8] = []
    private var tag: String?
    private var mode: Mode = .line
    private var failure: IMAPFramingError?
    private var sawFirstLine = false

    /// Creates a framer with `limits`.
    public init(limits: IMAPLimits = .default) { self.limits = limits }

    /// Whether the framer gave up on the connection (after a ``IMAPFrame/fatal(_:)``).
    public var isClosed: Bool { mode == .closed }

    /// Feeds bytes as they arrive and returns the frames they complete, in order.
    public mutating func feed<Bytes: Collection>(_ bytes: Bytes) -> [IMAPFrame] where Bytes.Element == UInt8 {
        guard mode != .closed else { return [] }
        pending.append(contentsOf: bytes)
        var frames: [IMAPFrame] = []
        var i = 0
        scan: while i < pending.count {
            switch mode {
            case .closed:
                i = pending.count
            case .literal(let remaining):
                let n = min(remaining, pending.count - i)
                if failure == nil { command.append(contentsOf: pending[i..<(i + n)]) }
                i += n
                mode = remaining == n ? .line : .literal(remaining - n)
            case .skipLine:
                if let lf = pending[i...].firstIndex(of: 0x0A) {
                    i = lf + 1
                    mode = .line
                    frames.append(finishCommand())
                } else {
                    i = pending.count
                }
            case .line:
                switch ClientLine.scan(pending, from: i, maxLength: limits.maxLineLength) {
                case .tooLong(let end):
                    noteTag(pending[i..<min(pending.count, i + 128)])
                    fail(.lineTooLong(limit: limits.maxLineLength))
                    if let end { i = end + 1; frames.append(finishCommand()) } else { i = pending.count; mode = .skipLine }
                case .incomplete:
                    break scan
                case .line(let line, let next):
                    i = next
                    if let frame = takeLine(line) {
                        frames.append(frame)
                        if case .fatal = frame { mode = .closed; i = pending.count; break scan }
                        if case .command(let bytes) = frame, Self.isStartTLS(bytes) { i = pending.count; break scan }
                    }
                }
            }
        }
        pending.removeFirst(min(i, pending.count))
        return frames
    }

    private mutating func fail(_ error: IMAPFramingError) {
        if failure == nil { failure = error }
        command = []
    }

    private mutating func noteTag<S: Collection>(_ firstLine: S) where S.Element == UInt8 {
        guard !sawFirstLine else { return }
        sawFirstLine = true
        let head = firstLine.prefix { $0 != 0x20 }
        tag = IMAPCommandParser.isValidTag(Array(head)) ? String(decoding: head, as: UTF8.self) : nil
    }

    /// One line (CRLF removed): appended to the command; returns a frame when the line completes
    /// the command or needs an answer.
    private mutating func takeLine(_ line: [UInt8]) -> IMAPFrame? {
        noteTag(line)
        if failure == nil {
            command.append(contentsOf: line)
            if command.count > limits.maxCommandSize { fail(.commandTooLarge(limit: limits.maxCommandSize)) }
        }
        guard let literal = Self.literalMarker(line) else { return finishCommand() }
        let fits = literal.size.map { $0 <= UInt64(limits.maxLiteralSize) } ?? false
        let size = literal.size.map { Int(clamping: $0) } ?? Int.max
        if literal.synchronizing {
            // The client waits for "+": refusing costs nothing, it sends no literal.
            if failure == nil, !fits { fail(.literalTooLarge(size: literal.size, limit: limits.maxLiteralSize)) }
            if failure == nil, command.count + 2 + size > limits.maxCommandSize { fail(.commandTooLarge(limit: limits.maxCommandSize)) }
            if failure != nil { return finishCommand() }
            command += [0x0D, 0x0A]
            mode = size == 0 ? .line : .literal(size)
            return .continuationRequest
        }
        // LITERAL+: the bytes are on their way; skip them to stay in step, or give up.
        if failure == nil, !fits { fail(.literalTooLarge(size: literal.size, limit: limits.maxLiteralSize)) }
        if failure == nil, command.count + 2 + size > limits.maxCommandSize { fail(.commandTooLarge(limit: limits.maxCommandSize)) }
        if let failure, literal.size.map({ $0 > UInt64(limits.maxDiscardedLiteralSize) }) ?? true {
            reset()
            return .fatal(failure)
        }
        if failure == nil { command += [0x0D, 0x0A] }
        mode = size == 0 ? .line : .literal(size)
        return nil
    }

    private mutating func finishCommand() -> IMAPFrame {
        defer { reset() }
        if let failure { return .rejected(tag: tag, failure) }
        return .command(command)
    }

    private mutating func reset() {
        command = []; tag = nil; failure = nil; sawFirstLine = false
        if mode != .closed { mode = .line }
    }

    /// `{123}` or `{123+}` at the end of a line: the size (nil when it has more than 19 digits)
    /// and whether the client waits for a continuation request.
    static func literalMarker(_ line: [UInt8]) -> (size: UInt64?, synchronizing: Bool)? {
        guard line.last == UInt8(ascii: "}"), let open = line.lastIndex(of: UInt8(ascii: "{")) else { return nil }
        var digits = line[(open + 1)..<(line.count - 1)]
        var synchronizing = true
        if digits.last == UInt8(ascii: "+") { synchronizing = false; digits = digits.dropLast() }
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        guard digits.count <= 19 else { return (nil, synchronizing) }
        return (UInt64(String(decoding: digits, as: UTF8.self)), synchronizing)
    }

    static func isStartTLS(_ command: [UInt8]) -> Bool {
        guard let space = command.firstIndex(of: 0x20) else { return false }
        return String(decoding: command[(space + 1)...], as: UTF8.self).uppercased() == "STARTTLS"
    }
}
