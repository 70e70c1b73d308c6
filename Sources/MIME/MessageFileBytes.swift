import Foundation

/// What Windows tools and some mail programs put around a message or mbox file, undone before
/// parsing: a UTF-8 byte-order mark (Notepad, PowerShell's `Out-File -Encoding utf8`, .NET's
/// `StreamWriter`), a whole file in UTF-16 with its byte-order mark (Notepad's "Unicode"), and a
/// DOS end-of-file mark (0x1A) after the last line.
///
/// Trust-model row **inbox (low)**: files a user imports come from anywhere. Without this, a file
/// that starts with a byte-order mark was refused ("byte 0: no header fields", "not an mbox
/// file"); Python's `email` reads it without an error but loses every header (the first line no
/// longer looks like one), so the differential reference strips the mark the same way.
public enum MessageFileBytes {
    /// The UTF-8 byte-order mark, EF BB BF.
    public static let utf8ByteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// What the parser reads: `bytes` without a leading UTF-8 byte-order mark, a UTF-16 file
    /// (byte-order mark FF FE or FE FF, even length, valid UTF-16) re-encoded as UTF-8, and
    /// without one trailing 0x1A. Anything else is returned unchanged.
    public static func normalized(_ bytes: [UInt8]) -> [UInt8] {
        var out = bytes
        if out.starts(with: utf8ByteOrderMark) {
            out.removeFirst(3)
        } else if out.count >= 2, out.count % 2 == 0, (out[0] == 0xFF && out[1] == 0xFE) || (out[0] == 0xFE && out[1] == 0xFF),
                  let text = String(data: Data(out), encoding: out[0] == 0xFF ? .utf16LittleEndian : .utf16BigEndian) {
            // Foundation keeps the mark as U+FEFF at the start: drop it with the rest of the conversion.
            out = Array(text.utf8)
            if out.starts(with: utf8ByteOrderMark) { out.removeFirst(3) }
        }
        if out.last == 0x1A { out.removeLast() }
        return out
    }
}
