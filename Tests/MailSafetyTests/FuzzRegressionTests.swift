import Foundation
import HTML5
import Testing
@testable import MailSafety

/// Inputs the sanitizer and CSS fuzz targets found (`Fuzz/`, docs/fuzzing.md), kept byte for
/// byte in Resources/fuzz/, with the oracle that failed: sanitize(sanitize(x)) == sanitize(x).
@Suite("Sanitizer: fuzz regressions")
struct SanitizerFuzzRegressionTests {
    static func fixture(_ name: String) throws -> String {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: "html", subdirectory: "Resources/fuzz"))
        return String(decoding: try Data(contentsOf: url), as: UTF8.self)
    }

    static func expectIdempotent(_ html: String, remote: RemoteContentPolicy) throws -> String {
        let sanitizer = MailSanitizer(options: SanitizerOptions(remote: remote))
        let once = try sanitizer.sanitize(html).html
        let twice = try sanitizer.sanitize(once).html
        #expect(twice == once)
        return once
    }

    /// `href="https://ex<noframes ?utm_source=news…"`: stripping the tracking parameter left
    /// "https://ex<noframes " with a trailing space, which the second pass cleaned away.
    @Test(arguments: [RemoteContentPolicy.block, .allowAll])
    func trackingParameterStripLeavesNoTrailingSpace(remote: RemoteContentPolicy) throws {
        let out = try Self.expectIdempotent(try Self.fixture("tracking-parameters-trailing-space"), remote: remote)
        #expect(out.contains("href=\"https://ex<noframes\""))
        // The smallest form of it.
        let small = try Self.expectIdempotent("<a href=\"https://x.example/a ?utm_source=news\">l</a>", remote: remote)
        #expect(small.contains("href=\"https://x.example/a\""))
    }
}
