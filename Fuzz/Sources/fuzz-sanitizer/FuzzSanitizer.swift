// Fuzz target: the mail HTML sanitizer (MailSanitizer) end to end.
//
// Oracles: sanitize(sanitize(x)) == sanitize(x); the output, parsed again as the innerHTML of the
// wrapper <div>, serializes to itself and holds no script-capable element, no event-handler
// attribute, no javascript:/vbscript: URL, no data: URL outside images and fonts, no remote
// resource while remote content is blocked, no dangerous CSS (SafetyOracle).
import FuzzSupport
import MailSafety
import RampartTestSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSanitizer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var reader = FuzzReader(Fuzz.bytes(data, size))
    let options = FuzzInput.sanitizerOptions(reader.byte())
    let body = reader.rest()
    // The bytes API (UTF-8 validation and its error), then the text.
    _ = try? MailSanitizer(options: options).sanitize(bytes: body)
    SanitizerRun.check(fuzzText(body), options: options, target: "sanitizer")
    return 0
}

/// The process entry point (see `Fuzz.main`).
@_cdecl("fuzz_sanitizer_main")
public func fuzzSanitizerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Fuzz.main(argc, argv, fuzzSanitizer)
}
