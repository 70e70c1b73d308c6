// Fuzz target: CSS as the sanitizer parses it — the CSS Syntax tokenizer, and declarations,
// values and rules through the sanitizer's style-attribute and <style>-sheet paths.
//
// The input is CSS text; it is placed, escaped, into a style attribute and (when it cannot close
// the element) into a <style> element, and sanitized.
// Oracles: the tokenizer terminates; SanitizerRun's (idempotence, reparse, SafetyOracle, which
// checks every style attribute and sheet of the output token by token: no expression(), no
// script URL, no remote url() while blocked, no @import, no behavior/-moz-binding, no
// position: fixed/absolute/sticky).
import FuzzSupport
import HTML5
import MailSafety
import RampartTestSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCSS(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var reader = FuzzReader(Fuzz.bytes(data, size))
    let options = FuzzInput.sanitizerOptions(reader.byte())
    let css = fuzzText(reader.rest())
    _ = CSSTokenizer.tokenize(css)
    var attribute = ""
    HTMLSerializer.escape(css, attributeMode: true, into: &attribute)
    var html = "<p style=\"" + attribute + "\">x</p>"
    if !css.lowercased().contains("</style") {
        html += "<style>" + css + "</style>"
    }
    SanitizerRun.check(html, options: options, target: "css")
    return 0
}

/// The process entry point (see `Fuzz.main`).
@_cdecl("fuzz_css_main")
public func fuzzCSSMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Fuzz.main(argc, argv, fuzzCSS)
}
