// Fuzz target: MIME messages (RFC 5322 headers, MIME structure, transfer encodings, charsets,
// encoded words, addresses, dates).
//
// Oracle: MIMEFuzzing.check (the MIME module's own entry point): the summary JSON round-trips;
// a message rebuilt from the parsed fields with MessageBuilder parses back to the same subject,
// addresses, bodies and attachment bytes. Plus every accessor runs without a crash.
import FuzzSupport
import MIME

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMIME(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Fuzz.bytes(data, size)
    let message = MIMEMessage(bytes: bytes)
    _ = (message.cc, message.bcc, message.replyTo, message.date, message.messageID, message.problems.count)
    MIMEFuzzing.check(bytes)
    return 0
}

/// The process entry point (see `Fuzz.main`).
@_cdecl("fuzz_mime_main")
public func fuzzMIMEMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Fuzz.main(argc, argv, fuzzMIME)
}
