import Foundation
import MailSafety

/// How the sanitizer and CSS fuzz targets (`Fuzz/`, docs/fuzzing.md) read their input, shared
/// with the tests that replay what they found (MailSafetyTests' fuzz regressions), so that a kept
/// input means the same thing in both places.
public enum FuzzInput {
    /// The sanitizer options picked by the first byte of a fuzz input: bit 0 remote content
    /// allowed, bit 1 a `cid:` attachment (`part1@fuzz`, a PNG signature), bit 2 app-scheme
    /// images, else bit 3 images served at a rendering's path (as `rampart web` serves them); the
    /// depth limit is 64.
    public static func sanitizerOptions(_ choice: UInt8) -> SanitizerOptions {
        var options = SanitizerOptions()
        options.remote = choice & 1 == 1 ? .allowAll : .block
        if choice & 2 != 0 {
            options.attachments = ["part1@fuzz": EmbeddedAttachment(mimeType: "image/png", bytes: Data([0x89, 0x50, 0x4E, 0x47]))]
        }
        if choice & 4 != 0 {
            options.embeddedImages = .appScheme("rampart-cid")
        } else if choice & 8 != 0 {
            options.embeddedImages = .served(prefix: "http://127.0.0.1:8080/viewer/fuzz-token/cid/")
        }
        options.limits.maxDepth = 64
        return options
    }
}
