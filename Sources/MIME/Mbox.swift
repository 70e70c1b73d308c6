#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

#if canImport(Glibc)
private let sysRead = Glibc.read
private let sysWrite = Glibc.write
#elseif canImport(Musl)
private let sysRead = Musl.read
private let sysWrite = Musl.write
#else
private let sysRead = Darwin.read
private let sysWrite = Darwin.write
#endif

/// One entry of an mbox file.
public struct MboxEntry: Sendable, Equatable {
    /// 0-based position in the file.
    public var index: Int
    /// Byte offset of the entry's `From ` line in the file.
    public var offset: UInt64
    /// The `From ` separator line, without its line break.
    public var fromLine: [UInt8]
    /// The RFC 5322 message: the entry without its `From ` line, without the blank line that
    /// separates it from the next entry, and (mboxrd) with `>From `-quoting undone.
    public var messageBytes: [UInt8]
    /// The entry exactly as in the file (From line included): writing every entry's
    /// `originalBytes` in order reproduces the file byte for byte.
    public var originalBytes: [UInt8]

    /// Parses ``messageBytes``.
    public func message(limits: MIMELimits = .default) -> MIMEMessage { MIMEMessage(bytes: messageBytes, limits: limits) }
}

/// mbox flavours (RFC 4155 and common practice).
public enum MboxFormat: Sendable {
    /// `>From ` quoting is reversible: every line matching `>+From ` loses one `>`.
    case mboxrd
    /// Only `>From ` is unquoted to `From ` (lossy: original `>From ` lines cannot be told apart).
    case mboxo
}

/// Reads an mbox file entry by entry in bounded memory: a fixed read buffer plus at most one
/// entry (up to `maxMessageBytes`, default 64 MiB). An entry that is larger is skipped while
/// reading (its bytes are never held) and reported as ``MIMEError/messageTooLarge(entry:offset:limit:)``.
///
/// An entry starts at every line that begins with `From ` (like Python's `mailbox.mbox`), so
/// unquoted `From ` lines inside bodies split messages; writers quote them (``MboxWriter``).
///
/// Trust-model row **inbox (low)**: mail archives are untrusted input; memory stays bounded no
/// matter how the file is shaped.
public final class MboxReader {
    /// The default largest entry that is loaded (64 MiB).
    public static let defaultMaxMessageBytes = 64 << 20
    /// The read buffer size (64 KiB).
    public static let bufferSize = 64 << 10

    let fd: Int32
    let ownsFD: Bool
    let path: String
    /// Entries larger than this are reported, not loaded.
    public let maxMessageBytes: Int
    /// How `>From ` quoting is undone.
    public let format: MboxFormat
    var buf: [UInt8]
    var bufStart = 0, bufEnd = 0
    var eof = false
    var fileOffset: UInt64 = 0  // offset of buf[bufStart]
    var index = 0
    var started = false

    /// Opens `path` for reading.
    public init(path: String, format: MboxFormat = .mboxrd, maxMessageBytes: Int = MboxReader.defaultMaxMessageBytes) throws {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw MIMEError.io(path: path, errno: errno) }
        self.fd = fd; self.ownsFD = true; self.path = path
        self.format = format; self.maxMessageBytes = maxMessageBytes
        self.buf = [UInt8](repeating: 0, count: Self.bufferSize)
    }

    /// Reads from an open file descriptor (not closed by the reader).
    public init(fileDescriptor: Int32, format: MboxFormat = .mboxrd, maxMessageBytes: Int = MboxReader.defaultMaxMessageBytes) {
        self.fd = fileDescriptor; self.ownsFD = false; self.path = "fd \(fileDescriptor)"
        self.format = format; self.maxMessageBytes = maxMessageBytes
        self.buf = [UInt8](repeating: 0, count: Self.bufferSize)
    }

    /// Reads from a `FileHandle` (not closed by the reader; keep the handle alive while reading).
    public convenience init(fileHandle: FileHandle, format: MboxFormat = .mboxrd, maxMessageBytes: Int = MboxReader.defaultMaxMessageBytes) {
        self.init(fileDescriptor: fileHandle.fileDescriptor, format: format, maxMessageBytes: maxMessageBytes)
    }

    deinit { if ownsFD { close(fd) } }

    /// Ensures at least `n` unread bytes are buffered (unless EOF). Compacts the buffer.
    func fill(_ n: Int) throws {
        if bufEnd - bufStart >= n || eof { return }
        if bufStart > 0 {
            let live = bufEnd - bufStart
            if live > 0 { buf.withUnsafeMutableBufferPointer { p in _ = memmove(p.baseAddress!, p.baseAddress! + bufStart, live) } }
            bufEnd = live; bufStart = 0
        }
        while bufEnd - bufStart < n && !eof {
            let got = buf.withUnsafeMutableBufferPointer { p in sysRead(fd, p.baseAddress! + bufEnd, p.count - bufEnd) }
            if got < 0 { if errno == EINTR { continue }; throw MIMEError.io(path: path, errno: errno) }
            if got == 0 { eof = true } else { bufEnd += got }
        }
    }

    @inline(__always) func atFromLine() -> Bool {
        guard bufEnd - bufStart >= 5 else { return false }
        return buf[bufStart] == 0x46 && buf[bufStart + 1] == 0x72 && buf[bufStart + 2] == 0x6F && buf[bufStart + 3] == 0x6D && buf[bufStart + 4] == 0x20
    }

    /// The next entry, `.failure` for an entry over the size limit, `nil` at the end.
    /// Throws ``MIMEError/io(path:errno:)`` on read errors and ``MIMEError/notAnMbox(path:)`` when
    /// the file does not start with a `From ` line.
    public func nextEntry() throws -> Result<MboxEntry, MIMEError>? {
        try fill(5)
        if !started && bufEnd - bufStart >= 3 && buf[bufStart] == 0xEF && buf[bufStart + 1] == 0xBB && buf[bufStart + 2] == 0xBF {
            // A UTF-8 byte-order mark before the first From line (Windows tools write one).
            bufStart += 3
            fileOffset += 3
            try fill(5)
        }
        if bufEnd == bufStart { return nil }
        if !atFromLine() {
            if !started { throw MIMEError.notAnMbox(path: path) }
        }
        started = true
        let entryOffset = fileOffset
        var entry: [UInt8] = []
        var tooLarge = false
        var size = 0
        var first = true
        // Consume lines until the next line that starts with "From " (after the first line).
        while true {
            try fill(5)
            if bufEnd == bufStart { break }
            if !first && atFromLine() { break }
            first = false
            // Copy up to and including the next LF, refilling as needed.
            while true {
                var i = bufStart
                var foundLF = false
                while i < bufEnd { if buf[i] == 0x0A { foundLF = true; i += 1; break }; i += 1 }
                let n = i - bufStart
                size += n
                if !tooLarge {
                    if size > maxMessageBytes { tooLarge = true; entry = [] }
                    else { entry.append(contentsOf: buf[bufStart..<i]) }
                }
                fileOffset += UInt64(n)
                bufStart = i
                if foundLF { break }
                try fill(1)
                if bufEnd == bufStart { break }
            }
        }
        let idx = index
        index += 1
        if tooLarge { return .failure(.messageTooLarge(entry: idx, offset: entryOffset, limit: maxMessageBytes)) }
        return .success(Self.makeEntry(index: idx, offset: entryOffset, original: entry, format: format))
    }

    /// Splits an entry's original bytes into From line and unquoted message bytes.
    static func makeEntry(index: Int, offset: UInt64, original: [UInt8], format: MboxFormat) -> MboxEntry {
        var lf = original.firstIndex(of: 0x0A) ?? original.count
        var fromEnd = lf
        if fromEnd > 0 && original[fromEnd - 1] == 0x0D { fromEnd -= 1 }
        let fromLine = Array(original[0..<fromEnd])
        if lf < original.count { lf += 1 }
        var end = original.count
        // Drop the separating blank line: the entry ends with "\n\n" (or "\r\n\r\n").
        if end - lf >= 2 && original[end - 1] == 0x0A {
            var e = end - 1
            if e > lf && original[e - 1] == 0x0D { e -= 1 }
            if e > lf && original[e - 1] == 0x0A { end = e }
        }
        var msg: [UInt8] = []
        msg.reserveCapacity(end - lf)
        var i = lf
        while i < end {
            // At a line start: unquote ">+From " (mboxrd) or ">From " (mboxo).
            var j = i
            while j < end && original[j] == UInt8(ascii: ">") { j += 1 }
            let gt = j - i
            if gt > 0 && (format == .mboxrd || gt == 1) && end - j >= 5 && original[j..<j + 5].elementsEqual("From ".utf8) {
                i += 1
            }
            var k = i
            while k < end && original[k] != 0x0A { k += 1 }
            if k < end { k += 1 }
            msg.append(contentsOf: original[i..<k])
            i = k
        }
        return MboxEntry(index: index, offset: offset, fromLine: fromLine, messageBytes: msg, originalBytes: original)
    }
}

extension MboxReader {
    /// Calls `body` for every entry in order (entries over the size limit as `.failure`).
    public func forEach(_ body: (Result<MboxEntry, MIMEError>) throws -> Void) throws {
        while let e = try nextEntry() { try body(e) }
    }
}

/// Writes mbox files (mboxrd quoting for new messages).
public final class MboxWriter {
    let fd: Int32
    let ownsFD: Bool
    let path: String

    /// Creates or appends to `path`.
    public init(path: String, append: Bool = false) throws {
        let fd = open(path, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0o600)
        guard fd >= 0 else { throw MIMEError.io(path: path, errno: errno) }
        self.fd = fd; self.ownsFD = true; self.path = path
    }

    /// Writes to an open descriptor (not closed by the writer).
    public init(fileDescriptor: Int32) { fd = fileDescriptor; ownsFD = false; path = "fd \(fileDescriptor)" }

    deinit { if ownsFD { close(fd) } }

    func writeAll(_ bytes: [UInt8]) throws {
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBufferPointer { p in sysWrite(fd, p.baseAddress! + off, p.count - off) }
            if n < 0 { if errno == EINTR { continue }; throw MIMEError.io(path: path, errno: errno) }
            off += n
        }
    }

    /// Writes an entry exactly as it was read (for byte-for-byte copies).
    public func write(original entry: MboxEntry) throws { try writeAll(entry.originalBytes) }

    /// The mboxrd-quoted entry for a message: `From sender date` line, every line matching
    /// `>*From ` gets one more `>`, a final line break, then a blank separator line.
    public static func entryBytes(message: [UInt8], sender: String = "MAILER-DAEMON", date: Date = Date(timeIntervalSince1970: 0)) -> [UInt8] {
        var out = Array("From \(sender) \(asctime(date))\n".utf8)
        out.reserveCapacity(message.count + 100)
        var i = 0
        while i < message.count {
            var j = i
            while j < message.count && message[j] == UInt8(ascii: ">") { j += 1 }
            if message.count - j >= 5 && message[j..<j + 5].elementsEqual("From ".utf8) { out.append(UInt8(ascii: ">")) }
            var k = i
            while k < message.count && message[k] != 0x0A { k += 1 }
            if k < message.count { k += 1 }
            out.append(contentsOf: message[i..<k])
            i = k
        }
        if out.last != 0x0A { out.append(0x0A) }
        out.append(0x0A)
        return out
    }

    /// Writes a new message (mboxrd quoting).
    public func write(message: [UInt8], sender: String = "MAILER-DAEMON", date: Date = Date(timeIntervalSince1970: 0)) throws {
        try writeAll(Self.entryBytes(message: message, sender: sender, date: date))
    }

    static func asctime(_ date: Date) -> String {
        // "Thu Jan  1 00:00:00 1970"
        let r = MailDate.rfc5322(date)  // "Thu, 01 Jan 1970 00:00:00 +0000"
        let p = r.split(separator: " ")
        let day = Int(p[1])!
        return "\(p[0].dropLast()) \(p[2]) \(day < 10 ? " " : "")\(day) \(p[4]) \(p[3])"
    }
}

/// Lists the messages of a Maildir (`cur/` then `new/`, each sorted by file name; `tmp/` and
/// dot files are ignored).
public struct MaildirReader: Sendable {
    /// The Maildir folder (holding `cur/`, `new/`, `tmp/`).
    public let root: String

    /// A reader for the Maildir at `path`.
    public init(path: String) { root = path }

    /// The message file paths in a stable order.
    public func messagePaths() throws -> [String] {
        var out: [String] = []
        for sub in ["cur", "new"] {
            let dir = (root as NSString).appendingPathComponent(sub)
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDir), isDir.boolValue else { continue }
            let names: [String]
            do { names = try FileManager.default.contentsOfDirectory(atPath: dir) } catch { throw MIMEError.io(path: dir, errno: EACCES) }
            for n in names.sorted() where !n.hasPrefix(".") { out.append((dir as NSString).appendingPathComponent(n)) }
        }
        return out
    }

    /// Reads and parses every message (each at most `maxMessageBytes`).
    public func messages(maxMessageBytes: Int = MboxReader.defaultMaxMessageBytes) throws -> [(path: String, message: Result<MIMEMessage, MIMEError>)] {
        try messagePaths().map { p in
            do { return (p, .success(try EMLReader.read(path: p, maxMessageBytes: maxMessageBytes))) }
            catch let e as MIMEError { return (p, .failure(e)) }
        }
    }
}

/// Reads one `.eml` file (one RFC 5322 message).
public enum EMLReader {
    /// Reads the bytes of `path`; files larger than `maxMessageBytes` are refused with
    /// ``MIMEError/messageTooLarge(entry:offset:limit:)``.
    public static func readBytes(path: String, maxMessageBytes: Int = MboxReader.defaultMaxMessageBytes) throws -> [UInt8] {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw MIMEError.io(path: path, errno: errno) }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = chunk.withUnsafeMutableBufferPointer { sysRead(fd, $0.baseAddress!, $0.count) }
            if n < 0 { if errno == EINTR { continue }; throw MIMEError.io(path: path, errno: errno) }
            if n == 0 { break }
            if out.count + n > maxMessageBytes { throw MIMEError.messageTooLarge(entry: 0, offset: 0, limit: maxMessageBytes) }
            out.append(contentsOf: chunk[0..<n])
        }
        return out
    }

    /// Reads and parses `path`.
    public static func read(path: String, maxMessageBytes: Int = MboxReader.defaultMaxMessageBytes, limits: MIMELimits = .default) throws -> MIMEMessage {
        MIMEMessage(bytes: try readBytes(path: path, maxMessageBytes: maxMessageBytes), limits: limits)
    }
}
