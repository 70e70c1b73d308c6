// Fuzz target: the IMAP command framer and parser (what a mail program sends the bridge; trust-model
// row inbox (low): hostile input).
//
// Oracles: the same bytes framed in one piece and in pieces of the size the first byte picks give the
// same frames, up to a STARTTLS command (bytes that arrived behind it in the same read are dropped,
// so from there on the framing depends on the reads: in one piece nothing follows it); no command
// frame is larger than the command bound; nothing follows a fatal frame; every command frame parses
// to a command or a typed parse error.
import FuzzSupport
import IMAPServer

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIMAP(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Fuzz.bytes(data, size)
    guard let first = bytes.first else { return 0 }
    let input = Array(bytes.dropFirst())
    // Small bounds, so that the fuzzer reaches them.
    let limits = IMAPLimits(maxLineLength: 1024, maxLiteralSize: 2048, maxCommandSize: 4096, maxDiscardedLiteralSize: 8192)
    var whole = IMAPCommandFramer(limits: limits)
    let expected = whole.feed(input)
    var pieces = IMAPCommandFramer(limits: limits)
    var got: [IMAPFrame] = []
    let step = Int(first % 16) + 1
    var index = 0
    while index < input.count {
        got += pieces.feed(input[index..<min(input.count, index + step)])
        index += step
    }
    if let tls = expected.firstIndex(where: isStartTLS) {
        precondition(tls == expected.count - 1, "a frame framed from bytes that arrived behind STARTTLS")
        precondition(Array(got.prefix(tls + 1)) == expected, "framing up to STARTTLS depends on how the bytes arrive")
    } else {
        precondition(got == expected, "framing depends on how the bytes arrive")
    }
    for (position, frame) in expected.enumerated() {
        switch frame {
        case .command(let command):
            precondition(command.count <= limits.maxCommandSize, "a command over the bound: \(command.count)")
            _ = try? IMAPCommandParser.parse(command)
        case .fatal:
            precondition(position == expected.count - 1, "a frame after a fatal one")
        case .continuationRequest, .rejected:
            break
        }
    }
    return 0
}

/// Whether a frame is a `<tag> STARTTLS` command.
func isStartTLS(_ frame: IMAPFrame) -> Bool {
    guard case .command(let bytes) = frame, let space = bytes.firstIndex(of: 0x20) else { return false }
    return String(decoding: bytes[(space + 1)...], as: UTF8.self).uppercased() == "STARTTLS"
}

/// The process entry point (see `Fuzz.main`).
@_cdecl("fuzz_imap_main")
public func fuzzIMAPMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Fuzz.main(argc, argv, fuzzIMAP)
}
