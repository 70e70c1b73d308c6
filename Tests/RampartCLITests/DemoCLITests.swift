import Foundation
import RampartTestSupport
import Testing

/// `rampart demo`, the main job the README starts with, run end to end as a user would: it must
/// finish, read Alice's OpenPGP mail with a verified signature, and leave nothing of the user.
@Suite("rampart demo (CLI)")
struct DemoCLITests {
    @Test func theDemoRunsEndToEndWithAVerifiedOpenPGPSignatureAndLeavesNothingBehind() async throws {
        let home = try TemporaryHome("demo")
        let run = try await CLITool.rampart.run(["demo", "--home", home.url.appendingPathComponent("demo-home").path])
        #expect(run.status == 0, "\(run.stderr)")
        let dinner = run.stdout.split(separator: "\n").first { $0.contains("read Alice's \"Dinner on Friday?\"") }
        #expect(dinner?.contains("Signature: verified ") == true, "\(run.stdout)")
        #expect(run.stdout.contains("Left of the user on this device: no files; keychain items: 0; has MainKey: false"), "\(run.stdout)")
        #expect(run.stdout.contains("Blocked: "), "the newsletter's remote content is blocked")
    }
}
