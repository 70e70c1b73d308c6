import Foundation
import HTML5
import MailSafety

/// The sanitizer's oracles (the options a fuzz input picks are `FuzzInput.sanitizerOptions(_:)`,
/// RampartTestSupport, shared with the tests that replay kept inputs).
public enum SanitizerRun {
    static func reparse(_ html: String) -> DocumentFragment {
        var options = HTML5ParserOptions(scripting: false)
        options.recordParseErrors = false
        options.maxInputBytes = Int.max
        return (try? HTML5Parser.parseFragment(html, context: Element(localName: "div"), options: options).root) ?? DocumentFragment()
    }

    /// Sanitizes `html` and checks: the output is well-formed UTF-8 with the right ASCII flag (the
    /// serializer makes it without a second validation), idempotence (sanitize(sanitize(x)) ==
    /// sanitize(x)), the output reparses (as the innerHTML of the wrapper <div>) to a tree that
    /// serializes to the same text, and the safety oracle on that reparsed tree.
    public static func check(_ html: String, options: SanitizerOptions, target: String) {
        let sanitizer = MailSanitizer(options: options)
        let first: SanitizedMessage
        do { first = try sanitizer.sanitize(html) } catch { return }
        Fuzz.checkWellFormed(first.html, target, "the sanitized output")
        let tree = reparse(first.html)
        Fuzz.check(tree.innerHTML == first.html, target,
                   "the output does not reparse to itself\n out=\(first.html.debugDescription)\n reparsed=\(tree.innerHTML.debugDescription)")
        var served: (prefix: String, keys: Set<String>)?
        if case .served(let prefix) = options.embeddedImages { served = (prefix, Set(options.attachments.keys)) }
        SafetyOracle(target: target, remoteBlocked: !options.remote.allowsRemote, served: served).check(tree)
        let second: SanitizedMessage
        do { second = try sanitizer.sanitize(first.html) } catch {
            Fuzz.violation(target, "sanitizing the output failed: \(error)")
        }
        Fuzz.check(second.html == first.html, target,
                   "not idempotent\n in=\(html.debugDescription)\n once=\(first.html.debugDescription)\n twice=\(second.html.debugDescription)")
    }
}
