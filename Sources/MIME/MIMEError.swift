/// Errors of the MIME library. Parsing never throws for malformed mail (it records a
/// ``MIMEProblem`` instead); these errors are for I/O, limits of the streaming readers and
/// invalid input to the builder.
///
/// Trust-model row **inbox (low)**: incoming mail is hostile input; every failure says where it
/// happened (byte offset, part path or mbox entry) so a person can act on it.
public enum MIMEError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A file could not be opened or read.
    case io(path: String, errno: Int32)
    /// An mbox entry is larger than the reader's `maxMessageBytes`; it was skipped, not loaded.
    case messageTooLarge(entry: Int, offset: UInt64, limit: Int)
    /// The data does not start like an mbox file (`From ` line expected at offset 0).
    case notAnMbox(path: String)
    /// A builder input is invalid (e.g. a header value with a line break, an address without `@`).
    case invalidBuilderInput(field: String, reason: String)

    /// A message saying what failed and where.
    public var description: String {
        switch self {
        case let .io(path, errno):
            return "MIME: cannot read \(path) (errno \(errno)); check that the file exists and is readable"
        case let .messageTooLarge(entry, offset, limit):
            return "MIME: mbox entry \(entry) at byte offset \(offset) is larger than the limit of \(limit) bytes; it was skipped (raise maxMessageBytes to read it)"
        case let .notAnMbox(path):
            return "MIME: \(path) is not an mbox file (it must start with a \"From \" line)"
        case let .invalidBuilderInput(field, reason):
            return "MIME: cannot build the message: \(field): \(reason)"
        }
    }
}

/// Something in a message that could not be parsed or decoded as declared. The affected data
/// is kept (as raw bytes or as a best-effort decoding) and the problem is recorded here.
public struct MIMEProblem: Equatable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: String, Sendable, Equatable {
        case missingHeaderBodySeparator, invalidHeaderLine, tooManyHeaders, headerLineTooLong
        case noBoundary, startBoundaryNotFound, closeBoundaryNotFound
        case tooDeep, tooManyParts
        case badBase64, badQuotedPrintable, unknownTransferEncoding
        case unknownCharset
    }
    /// The kind of problem.
    public let kind: Kind
    /// The part path (`[]` is the message itself, `[1, 0]` the first child of the second child).
    public let partPath: [Int]
    /// Byte offset in the parsed input where the affected data starts.
    public let offset: Int
    /// A human-readable explanation.
    public let detail: String

    /// Creates a problem record.
    public init(kind: Kind, partPath: [Int], offset: Int, detail: String) {
        self.kind = kind; self.partPath = partPath; self.offset = offset; self.detail = detail
    }

    /// A message saying what failed and where.
    public var description: String {
        let path = partPath.isEmpty ? "message" : "part " + partPath.map(String.init).joined(separator: ".")
        return "\(path) at byte \(offset): \(kind.rawValue): \(detail)"
    }
}

/// Bounds the parser enforces on hostile input. Exceeding one never crashes: the rest of the
/// affected data is kept as raw bytes and a ``MIMEProblem`` is recorded.
public struct MIMELimits: Sendable, Equatable {
    /// Maximum nesting depth of multiparts and attached messages (default 64).
    public var maxDepth: Int = 64
    /// Maximum header fields per part (default 1000); further header lines are dropped.
    public var maxHeaderCount: Int = 1000
    /// Maximum length in bytes of one unfolded header field (default 64 KiB); longer values are
    /// truncated.
    public var maxHeaderLength: Int = 65_536
    /// Maximum number of parts in one message (default 10,000); later parts stay raw bytes.
    public var maxParts: Int = 10_000

    /// The default bounds.
    public static let `default` = MIMELimits()

    /// Creates bounds (defaults: depth 64, 1000 fields, 64 KiB per field, 10,000 parts).
    public init(maxDepth: Int = 64, maxHeaderCount: Int = 1000, maxHeaderLength: Int = 65_536, maxParts: Int = 10_000) {
        self.maxDepth = maxDepth; self.maxHeaderCount = maxHeaderCount
        self.maxHeaderLength = maxHeaderLength; self.maxParts = maxParts
    }
}
