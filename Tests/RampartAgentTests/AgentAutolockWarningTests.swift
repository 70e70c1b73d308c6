import Foundation
import Keychain
import Keymaker
import RampartCore
import Testing
@testable import RampartAgent

/// An edited autolock policy shortens the autolock to a minute with a warning; an unlock through
/// the agent must carry that warning to the user (`rampart unlock` prints it).
@Suite("Agent: autolock warning", .serialized)
struct AgentAutolockWarningTests {
    @Test func anEditedAutolockPolicyIsReportedThroughTheAgent() throws {
        let fixture = try AgentFixture()
        let user = UserID("u1")
        _ = try fixture.createUser(user, pin: "4821", autolock: .afterMinutes(1))
        // The attacker with the disk rewrites the policy item with a longer delay.
        try fixture.global.keychain.set(SecretBytes(copying: Array("60".utf8)), for: .user(user, "autolock.policy"))
        let status = try fixture.client.unlock(user: user, credential: AgentFixture.pin("4821"))
        #expect(status.unlocked)
        #expect(status.autolock != "60")
        let warning = try #require(status.autolockWarning, "the unlock reports the untrusted policy")
        #expect(!warning.isEmpty)
    }
}
