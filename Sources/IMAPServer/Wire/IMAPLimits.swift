/// The bounds every IMAP connection is held to.
///
/// Trust-model row **inbox (low)**: everything a client sends is hostile input, so every line,
/// literal and command has a size limit, and a client that exceeds one gets a tagged `BAD`/`NO`
/// (or an untagged `BYE` when the connection cannot be resynchronized) while the server's memory
/// stays bounded by these numbers.
public struct IMAPLimits: Sendable, Equatable {
    /// Longest command line (the text between two literals, or up to CRLF), in bytes. Default 64 KiB.
    public var maxLineLength: Int
    /// Largest literal accepted (an `APPEND`ed message, a long search string). Default 32 MiB.
    public var maxLiteralSize: Int
    /// Largest whole command: its lines and literals together. Default 40 MiB.
    public var maxCommandSize: Int
    /// Largest rejected non-synchronizing literal the server reads and throws away to stay in
    /// step with the client; a larger one ends the connection with `BYE`. Default 64 MiB.
    public var maxDiscardedLiteralSize: Int
    /// Most messages one FETCH, STORE, COPY or SEARCH may name. Default 1,000,000.
    public var maxMessagesPerCommand: Int
    /// Most message bytes one SEARCH may read (keys on headers and text read the messages, one
    /// at a time; flags, dates, sizes and UIDs read none). A search that would read more ends with
    /// `NO [LIMIT]` saying how to narrow it. Default 1 GiB.
    public var maxSearchBytes: Int

    /// The default bounds (64 KiB lines, 32 MiB literals, 40 MiB commands).
    public static let `default` = IMAPLimits()

    /// Creates bounds; every value is clamped to at least 1 KiB (lines) or 0 (the rest).
    public init(maxLineLength: Int = 65_536, maxLiteralSize: Int = 32 << 20, maxCommandSize: Int = 40 << 20,
                maxDiscardedLiteralSize: Int = 64 << 20, maxMessagesPerCommand: Int = 1_000_000, maxSearchBytes: Int = 1 << 30) {
        self.maxLineLength = max(1024, maxLineLength)
        self.maxLiteralSize = max(0, maxLiteralSize)
        self.maxCommandSize = max(self.maxLineLength, maxCommandSize)
        self.maxDiscardedLiteralSize = max(0, maxDiscardedLiteralSize)
        self.maxMessagesPerCommand = max(1, maxMessagesPerCommand)
        self.maxSearchBytes = max(0, maxSearchBytes)
    }
}
