import Foundation
import RampartServer
import RampartServerTestSupport
import RampartTestSupport
import Testing

/// `rampart account delete` and `rampart server users …` as a user and an operator run them,
/// against `rampart server start` in a child process: a wrong password deletes nothing; the
/// right one leaves no row of the account in any table and nothing of it on the device; a
/// disabled account cannot log in and its session ends at once; enable and delete by the operator.
@Suite("rampart account delete / server users, end to end against the embedded server", .serialized)
struct AccountDeletionEndToEndTests {
    /// Every table that holds rows of an account, and the column naming it.
    static let tables = [("users", "id"), ("addresses", "userId"), ("sessions", "userId"), ("labels", "userId"), ("messages", "userId"),
                         ("messageOriginals", "userId"), ("attachments", "userId"), ("events", "userId"), ("pushSubscriptions", "userId"),
                         ("driveVolumes", "userId"), ("driveNodes", "userId"), ("driveBlocks", "userId"), ("srpVerifiers", "userId"),
                         ("recoveryCopies", "userId"), ("passwordResets", "userId"), ("invitations", "usedBy")]

    @Test func deletingTheAccountLeavesNothingOfItOnTheServerOrTheDevice() async throws {
        let (world, server, info) = try await EndToEndWorld.withServer(["--no-demo", "--open-signup"])
        defer { world.close(server) }
        for (user, password) in [("ann", "ann pw 1"), ("bob", "bob pw 1")] {
            #expect(try await world.rampart(["signup", "--user", user, "--server-info", info, "--username", user, "--password-stdin"],
                                      stdin: "\(password)\n").status == 0)
        }
        #expect(try await world.rampart(["send", "--user", "bob", "--to", "ann@rampart.test", "--subject", "For Ann"], stdin: "<p>Hi</p>").status == 0)
        #expect(try await world.rampart(["send", "--user", "ann", "--to", "bob@rampart.test", "--subject", "For Bob"], stdin: "<p>Hi</p>").status == 0)
        #expect(try await world.rampart(["sync", "--user", "ann"]).status == 0)
        let annID = try await Self.sqlite(server, "SELECT id FROM users WHERE username = 'ann';").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(annID.hasPrefix("u"))
        let before = try await Self.rowsOf(annID, server)
        #expect(before["users"] == 1 && before["messages", default: 0] >= 2 && before["recoveryCopies"] == 1 && before["sessions"] == 1, "\(before)")

        // A wrong password: refused, nothing deleted anywhere.
        let wrong = try await world.rampart(["account", "delete", "--user", "ann", "--yes", "--password-stdin"], stdin: "not ann's\n")
        #expect(wrong.status == 1 && wrong.stderr.contains("Wrong username or password"), "\(wrong.stderr)")
        await #expect(try Self.rowsOf(annID, server) == before)
        #expect(try await world.rampart(["sync", "--user", "ann"]).status == 0)
        // A confirmation that does not match: nothing deleted.
        let unconfirmed = try await world.rampart(["account", "delete", "--user", "ann", "--password-stdin"], stdin: "ann pw 1\n")
        #expect(unconfirmed.status == 2, "\(unconfirmed.stderr)")

        let annSessions = try await Self.sqlite(server, "SELECT id FROM sessions WHERE userId = '\(annID)';").split(separator: "\n").map(String.init)
        let push = server.dataDirectory.appendingPathComponent("push")
        #expect(!annSessions.isEmpty && annSessions.allSatisfy { FileManager.default.fileExists(atPath: push.appendingPathComponent($0).path) })
        let deleted = try await world.rampart(["account", "delete", "--user", "ann", "--yes", "--password-stdin"], stdin: "ann pw 1\n")
        #expect(deleted.status == 0 && deleted.stdout.contains("Account ann deleted on the server"), "\(deleted.stderr)")
        let after = try await Self.rowsOf(annID, server)
        #expect(after.values.allSatisfy { $0 == 0 }, "rows of the deleted account remain: \(after)")
        // Its sessions' push inboxes are gone from the server's folder too (the only files per session).
        #expect(annSessions.allSatisfy { !FileManager.default.fileExists(atPath: push.appendingPathComponent($0).path) })
        // Bob's account is untouched; Ann's name is free again and no login finds her.
        #expect(try await world.rampart(["sync", "--user", "bob"]).status == 0)
        #expect(try await world.rampart(["login", "--user", "ann2", "--server-info", info, "--username", "ann", "--password-stdin",
                                   "--mailbox-password-stdin"], stdin: "ann pw 1\nann pw 1\n").status == 1)
        // Nothing of Ann on the device: no file named for her, no keychain item, status says so.
        let left = Self.files(under: world.home).filter { $0.split(separator: "/").contains { $0 == "ann" || $0.hasPrefix("ann.") } }
        #expect(left.isEmpty, "\(left)")
        let stored = TemporaryHome.allBytes(under: world.home)
        #expect(stored.range(of: Data("ann pw 1".utf8)) == nil)
    }

    @Test func theOperatorDisablesEnablesListsAndDeletesAccounts() async throws {
        let (world, server, info) = try await EndToEndWorld.withServer(["--no-demo", "--open-signup"])
        defer { world.close(server) }
        let data = server.dataDirectory.path
        #expect(try await world.rampart(["signup", "--user", "cyd", "--server-info", info, "--username", "cyd", "--password-stdin"],
                                  stdin: "cyd pw\n").status == 0)
        let listed = try await world.rampart(["server", "users", "list", "--data", data])
        #expect(listed.status == 0 && listed.stdout.contains("cyd  cyd@rampart.test") && listed.stdout.contains("sessions 1")
                && listed.stdout.contains("recovery copy yes") && !listed.stdout.contains("DISABLED"), "\(listed.stdout)")
        let disabled = try await world.rampart(["server", "users", "disable", "cyd", "--data", data])
        #expect(disabled.status == 0 && disabled.stdout.contains("1 session(s) ended"), "\(disabled.stdout) \(disabled.stderr)")
        let inboxes = ((try? FileManager.default.contentsOfDirectory(atPath: server.dataDirectory.appendingPathComponent("push").path)) ?? []).filter { $0.hasPrefix("s") }
        #expect(inboxes.isEmpty, "the disabled account's push inboxes remain: \(inboxes)")
        #expect(try await world.rampart(["server", "users", "list", "--data", data]).stdout.contains("DISABLED"))
        // Its token stopped working at once; a login is refused with the reason.
        #expect(try await world.rampart(["sync", "--user", "cyd"]).status != 0)
        let login = try await world.rampart(["login", "--user", "cyd2", "--server-info", info, "--username", "cyd", "--password-stdin",
                                       "--mailbox-password-stdin"], stdin: "cyd pw\ncyd pw\n")
        #expect(login.status == 1 && login.stderr.contains("disabled by the server's operator"), "\(login.stderr)")
        #expect(try await world.rampart(["server", "users", "enable", "cyd", "--data", data]).status == 0)
        #expect(try await world.rampart(["login", "--user", "cyd2", "--server-info", info, "--username", "cyd", "--password-stdin",
                                   "--mailbox-password-stdin"], stdin: "cyd pw\ncyd pw\n").status == 0)
        #expect(try await world.rampart(["server", "users", "disable", "nobody", "--data", data]).status == 6)
        #expect(try await world.rampart(["server", "users", "delete", "--data", data]).status == 2)
        #expect(try await world.rampart(["server", "users", "delete", "cyd", "--data", data]).status == 0)
        await #expect(try Self.sqlite(server, "SELECT COUNT(*) FROM users;").trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        #expect(try await world.rampart(["sync", "--user", "cyd2"]).status != 0)
    }

    // MARK: Helpers

    static func sqlite(_ server: ServerProcess, _ sql: String) async throws -> String {
        let result = try await CLITool(path: URL(fileURLWithPath: "/usr/bin/sqlite3"))
            .run(["-readonly", server.dataDirectory.appendingPathComponent("backend.sqlite").path, sql])
        try #require(result.status == 0, "sqlite3: \(result.stderr)")
        return result.stdout
    }

    /// Rows naming `userID`, per table.
    static func rowsOf(_ userID: String, _ server: ServerProcess) async throws -> [String: Int] {
        let sql = tables.map { "SELECT '\($0.0)', COUNT(*) FROM \($0.0) WHERE \($0.1) = '\(userID)';" }.joined()
        let counts = try await sqlite(server, sql)
        return Dictionary(uniqueKeysWithValues: counts.split(separator: "\n").map { line in
            let parts = line.split(separator: "|")
            return (String(parts[0]), Int(parts[1]) ?? -1)
        })
    }

    static func files(under url: URL) -> [String] {
        guard let walker = FileManager.default.enumerator(at: url, includingPropertiesForKeys: nil) else { return [] }
        return walker.compactMap { ($0 as? URL)?.path.replacingOccurrences(of: url.path, with: "") }
    }
}
