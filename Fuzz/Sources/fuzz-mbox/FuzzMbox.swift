// Fuzz target: mbox streams (MboxReader over a file descriptor, with a small size limit so that
// the over-limit path runs too) and the writer's quoting.
//
// Oracles: entries tile the input (each entry starts where the previous one ended, and the last
// ends at the end of the input); an entry's original bytes are the input's bytes at its offset;
// writing an entry's message with MboxWriter's mboxrd quoting and reading it back gives the
// same message bytes (plus a final line break when it had none).
import FuzzSupport
import Foundation
import MIME

let target = "mbox"
let limit = 2048

/// Reads `bytes` as an mbox through a pipe (the reader's file-descriptor path).
func entries(of bytes: [UInt8], maxMessageBytes: Int) -> [Result<MboxEntry, MIMEError>]? {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { return nil }
    // Inputs are at most a few KiB (libFuzzer's -max_len), well under a pipe's buffer.
    let chunk = bytes.prefix(60_000)
    let written = chunk.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
    close(fds[1])
    guard written == chunk.count else { close(fds[0]); return nil }
    let reader = MboxReader(fileDescriptor: fds[0], maxMessageBytes: maxMessageBytes)
    defer { close(fds[0]) }
    var out: [Result<MboxEntry, MIMEError>] = []
    do {
        try reader.forEach { out.append($0) }
    } catch {
        return nil
    }
    return out
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMbox(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(Fuzz.bytes(data, size).prefix(60_000))
    guard let list = entries(of: bytes, maxMessageBytes: limit) else { return 0 }
    var offset: UInt64 = 0
    for (index, item) in list.enumerated() {
        switch item {
        case .success(let entry):
            Fuzz.check(entry.index == index, target, "entry \(index) has index \(entry.index)")
            Fuzz.check(entry.offset == offset, target, "entry \(index) starts at \(entry.offset), expected \(offset)")
            let end = Int(offset) + entry.originalBytes.count
            Fuzz.check(end <= bytes.count && Array(bytes[Int(offset)..<end]) == entry.originalBytes, target,
                       "entry \(index)'s original bytes are not the input's")
            offset = UInt64(end)
            // Round trip through the writer's quoting.
            let message = entry.messageBytes
            let written = MboxWriter.entryBytes(message: message)
            if let back = entries(of: written, maxMessageBytes: Int.max), back.count == 1, case .success(let again) = back[0] {
                let expected = message.last == 0x0A ? message : message + [0x0A]
                Fuzz.check(again.messageBytes == expected, target,
                           "writer/reader round trip changed the message\n in=\(String(decoding: message, as: UTF8.self).debugDescription)\n out=\(String(decoding: again.messageBytes, as: UTF8.self).debugDescription)")
            } else {
                Fuzz.violation(target, "the writer's entry for message \(index) does not read back as one entry")
            }
            _ = entry.message().summary
        case .failure(let error):
            guard case .messageTooLarge(_, let at, _) = error else {
                Fuzz.violation(target, "unexpected entry error \(error)")
            }
            Fuzz.check(at == offset, target, "over-limit entry \(index) at \(at), expected \(offset)")
            // Its size is unknown here; the next entry's offset tells.
            if index + 1 < list.count {
                switch list[index + 1] {
                case .success(let next): offset = next.offset
                case .failure(.messageTooLarge(_, let nextAt, _)): offset = nextAt
                default: break
                }
                Fuzz.check(offset > at, target, "entries do not advance")
            } else {
                offset = UInt64(bytes.count)
            }
        }
    }
    if !list.isEmpty {
        Fuzz.check(offset == UInt64(bytes.count), target, "entries end at \(offset), the input at \(bytes.count)")
    }
    return 0
}

/// The process entry point (see `Fuzz.main`).
@_cdecl("fuzz_mbox_main")
public func fuzzMboxMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Fuzz.main(argc, argv, fuzzMbox)
}
