import Foundation
import Keymaker
import RampartCore
import Testing
@testable import RampartAgent

/// Records the users the agent's lock hook was called for.
final class LockWitness: @unchecked Sendable {
    private let lock = NSLock()
    private var users: [UserID] = []
    func record(_ user: UserID) { lock.withLock { users.append(user) } }
    var calls: [UserID] { lock.withLock { users } }
}

/// The agent runs its lock hook (the runtime erases the user's cleartext previews there) on an
/// explicit lock and on autolock, with no request from any client for the latter.
@Suite("Agent: lock hook", .serialized)
struct AgentLockHookTests {
    @Test func theLockHookRunsOnLockAndOnAutolock() async throws {
        let clock = ManualClock()
        let witness = LockWitness()
        let fixture = try AgentFixture(clock: clock, onLock: { witness.record($0) })
        let user: UserID = "dora"
        _ = try fixture.createUser(user, pin: "8642", autolock: .afterMinutes(1))
        try fixture.client.unlock(user: user, credential: AgentFixture.pin("8642"))
        #expect(witness.calls.isEmpty)
        try fixture.client.lock(user: user)
        #expect(witness.calls == [user], "an explicit lock runs the hook")

        try fixture.client.unlock(user: user, credential: AgentFixture.pin("8642"))
        clock.advance(by: 61)
        var waited = 0
        while witness.calls.count < 2, waited < 300 {
            try await Task.sleep(for: .milliseconds(100))
            waited += 1
        }
        #expect(witness.calls == [user, user], "autolock runs the hook too")
    }
}
