/// What ``ClientLine/scan(_:from:maxLength:)`` found at a position of a client's bytes.
///
/// The line step both mail framers share (no NIO): lines end in LF with an optional CR before it,
/// and a line longer than the limit is never buffered whole. Trust-model row **inbox (low)**.
public enum ClientLine: Equatable, Sendable {
    /// A complete line without its line end; the next line starts at `next`.
    case line([UInt8], next: Int)
    /// The line is longer than the limit. `end` is the index of its LF, nil when it has not come
    /// yet (the caller skips until it does).
    case tooLong(end: Int?)
    /// No line end yet, and the bytes so far fit the limit: wait for more.
    case incomplete

    /// Reads the line that starts at `start` of `bytes`, at most `maxLength` bytes before its LF.
    public static func scan(_ bytes: [UInt8], from start: Int, maxLength: Int) -> ClientLine {
        let end = bytes[start...].firstIndex(of: 0x0A)
        if (end ?? bytes.count) - start > maxLength { return .tooLong(end: end) }
        guard let lf = end else { return .incomplete }
        var lineEnd = lf
        if lineEnd > start, bytes[lineEnd - 1] == 0x0D { lineEnd -= 1 }
        return .line(Array(bytes[start..<lineEnd]), next: lf + 1)
    }
}
