// Fuzz target: the mail HTML sanitizer (MailSanitizer) end to end.
//
// Oracles: sanitize(sanitize(x)) == sanitize(x); the output, parsed again as the innerHTML of the
// wrapper <div>, serializes to itself and holds no script-capable element, no event-handler
// attribute, no javascript:/vbscript: URL, no data: URL outside images and fonts, no remote
// resource while remote content is blocked, no dangerous CSS (SafetyOracle); and the arena path
// (`sanitize`, on the arena tree) gives exactly the output and report of the class DOM path it
// replaced (`referenceSanitize`), or the same error; and the command's byte entry
// (`sanitize(utf8:)`, the first pass parsed from the bytes) answers as `sanitize(bytes:)`.
import FuzzSupport
@_spi(Reference) import MailSafety
import RampartTestSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSanitizer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var reader = FuzzReader(Fuzz.bytes(data, size))
    let options = FuzzInput.sanitizerOptions(reader.byte())
    let body = reader.rest()
    // The bytes API (UTF-8 validation and its error), and the command's entry (validated once,
    // the first pass parsed from the bytes themselves) against it: the same message or error.
    let sanitizer = MailSanitizer(options: options)
    let viaText = Result<SanitizedMessage, MailSafetyError>(catching: { () throws(MailSafetyError) in try sanitizer.sanitize(bytes: body) })
    let viaBytes = Result<SanitizedMessage, MailSafetyError>(catching: { () throws(MailSafetyError) in try sanitizer.sanitize(utf8: body) })
    Fuzz.check(viaText == viaBytes, "sanitizer", "sanitize(utf8:) differs from sanitize(bytes:): \(viaBytes) / \(viaText)")
    let text = fuzzText(body)
    SanitizerRun.check(text, options: options, target: "sanitizer")
    checkArenaPath(text, options: options)
    return 0
}

/// The arena path against the class DOM path: the same message (HTML byte for byte, report), or
/// the same error.
func checkArenaPath(_ text: String, options: SanitizerOptions) {
    let sanitizer = MailSanitizer(options: options)
    let arena = Result<SanitizedMessage, MailSafetyError>(catching: { () throws(MailSafetyError) in try sanitizer.sanitize(text) })
    let reference = Result<SanitizedMessage, MailSafetyError>(catching: { () throws(MailSafetyError) in try sanitizer.referenceSanitize(text) })
    switch (arena, reference) {
    case (.success(let a), .success(let r)):
        Fuzz.check(Array(a.html.utf8) == Array(r.html.utf8), "sanitizer", "arena path output differs from the class DOM path's:\n\(a.html)\n\(r.html)")
        Fuzz.check(a.report == r.report, "sanitizer", "arena path report differs from the class DOM path's:\n\(a.report)\n\(r.report)")
    case (.failure(let a), .failure(let r)):
        Fuzz.check(a == r, "sanitizer", "arena path error \(a) differs from the class DOM path's \(r)")
    default:
        Fuzz.violation("sanitizer", "only one path failed: \(arena) / \(reference)")
    }
}

/// The process entry point (see `Fuzz.main`).
@_cdecl("fuzz_sanitizer_main")
public func fuzzSanitizerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Fuzz.main(argc, argv, fuzzSanitizer)
}
