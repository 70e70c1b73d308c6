// Fuzz target: the SMTP submission framer (what a mail program sends the bridge; trust-model row
// inbox (low): hostile input).
//
// Oracles: the same bytes framed in one piece and in pieces of the size the first byte picks give the
// same frames (a DATA line is accepted the moment it is framed, as the session does), up to a STARTTLS
// line (bytes pipelined behind it in the same read are dropped, so from there on the framing depends
// on the reads: in one piece nothing follows it); no line frame is longer than the line bound and no
// message frame larger than the message bound.
import Foundation
import FuzzSupport
import SMTPServer

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSMTP(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Fuzz.bytes(data, size)
    guard let first = bytes.first else { return 0 }
    let input = Array(bytes.dropFirst())
    let limits = SMTPLimits(maxLineLength: 512, maxMessageSize: 4096)
    func frames(step: Int) -> [SMTPFrame] {
        var framer = SMTPInputFramer(limits: limits)
        var out: [SMTPFrame] = []
        var index = 0
        while index < input.count {
            out += framer.feed(input[index..<min(input.count, index + step)])
            while framer.isWaitingForDataDecision { out += framer.decideData(accepted: true) }
            index += step
        }
        return out
    }
    let expected = frames(step: max(1, input.count))
    let got = frames(step: Int(first % 16) + 1)
    let isStartTLS: (SMTPFrame) -> Bool = { frame in
        guard case .line(let line) = frame else { return false }
        // The framer's own test: the first nine bytes, upper-cased and trimmed.
        return String(decoding: line.prefix(9), as: UTF8.self).uppercased().trimmingCharacters(in: .whitespaces) == "STARTTLS"
    }
    if let tls = expected.firstIndex(where: isStartTLS) {
        precondition(tls == expected.count - 1, "a frame framed from bytes that arrived behind STARTTLS")
        precondition(Array(got.prefix(tls + 1)) == expected, "framing up to STARTTLS depends on how the bytes arrive")
    } else {
        precondition(got == expected, "framing depends on how the bytes arrive")
    }
    for frame in expected {
        switch frame {
        case .line(let line): precondition(line.count <= limits.maxLineLength, "a line over the bound: \(line.count)")
        case .message(let message): precondition(message.count <= limits.maxMessageSize, "a message over the bound: \(message.count)")
        default: break
        }
    }
    return 0
}

/// The process entry point (see `Fuzz.main`).
@_cdecl("fuzz_smtp_main")
public func fuzzSMTPMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Fuzz.main(argc, argv, fuzzSMTP)
}
