import Foundation
import RampartServer
import RampartServerTestSupport
import RampartTestSupport
import Testing

/// `rampart account change-password` as a user runs it: SRP proof of the old password, a new salt
/// and verifier on the server, the account's other sessions ended, this one kept.
@Suite("rampart account change-password (SRP)")
struct ChangePasswordEndToEndTests {
    @Test func theNewPasswordLogsInTheOldOneNoLongerAndOtherSessionsEnd() async throws {
        let world = try EndToEndWorld()
        let server = try await world.startServer()
        defer { server.stopInBackground() }
        let info = server.infoFile.path
        #expect(try await world.login(DemoAccounts.demo, user: "first", serverInfo: info).status == 0)
        #expect(try await world.login(DemoAccounts.demo, user: "second", serverInfo: info).status == 0)

        // A wrong current password changes nothing.
        let wrong = try await world.rampart(["account", "change-password", "--user", "second", "--password-stdin"],
                                      stdin: "not the password\nnew login password\n")
        #expect(wrong.status != 0)
        #expect(wrong.stderr.contains("Wrong username or password"), "\(wrong.stderr)")

        let changed = try await world.rampart(["account", "change-password", "--user", "second", "--password-stdin"],
                                        stdin: "\(DemoAccounts.demo.loginPassword)\nnew login password\n")
        #expect(changed.status == 0, "\(changed.stderr)")
        #expect(changed.stdout.contains("1 other session(s) ended"), "\(changed.stdout)")

        // This session goes on; the other one was ended by the server.
        #expect(try await world.rampart(["sync", "--user", "second"]).status == 0)
        #expect(try await world.rampart(["sync", "--user", "first"]).status == 9)
        // Only the new password logs in now.
        var renamed = DemoAccounts.demo
        #expect(try await world.login(renamed, user: "third", serverInfo: info).status != 0)
        renamed.loginPassword = "new login password"
        #expect(try await world.login(renamed, user: "fourth", serverInfo: info).status == 0)
    }
}
