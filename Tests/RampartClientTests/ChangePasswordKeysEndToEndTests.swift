import Foundation
import MailboxCrypto
import OpenPGP
import RampartAPI
@testable import RampartClient
import RampartCore
import RampartServerTestSupport
import RampartTestSupport
import Testing

/// `rampart account change-password` and the account's keys, against `rampart server start` in a
/// child process: in one-password mode the user key is re-locked under the new password in the
/// same request (old mail still opens with it, the old password opens nothing); a separate
/// mailbox password is left as it is; the server refuses a re-locked key that is not locked or is
/// not the account's, and then changes nothing.
@Suite("rampart account change-password: the keys follow in one-password mode", .serialized)
struct ChangePasswordKeysEndToEndTests {
    @Test func oneAndTwoPasswordAccountsAfterAChange() async throws {
        let (world, server, info) = try await EndToEndWorld.withServer(["--no-demo", "--open-signup"])
        defer { world.close(server) }
        #expect(try await world.rampart(["signup", "--user", "one", "--server-info", info, "--username", "onepass", "--password-stdin"],
                                  stdin: "first pw\n").status == 0)
        #expect(try await world.rampart(["signup", "--user", "two", "--server-info", info, "--username", "twopass", "--two-password",
                                   "--password-stdin", "--mailbox-password-stdin"], stdin: "login pw\nmailbox pw\n").status == 0)
        let sent = try await world.rampart(["send", "--user", "two", "--to", "onepass@rampart.test", "--subject", "Before the change"],
                                     stdin: "<p>Old mail</p>")
        #expect(sent.status == 0, "\(sent.stderr)")

        let one = try await world.rampart(["account", "change-password", "--user", "one", "--password-stdin"], stdin: "first pw\nsecond pw\n")
        #expect(one.status == 0, "\(one.stderr)")
        #expect(one.stdout.contains("the keys are re-locked under it too (one-password mode)"), "\(one.stdout)")
        func login(_ user: String, _ username: String, _ password: String, _ mailbox: String) async throws -> CLIResult {
            try await world.rampart(["login", "--user", user, "--server-info", info, "--username", username, "--password-stdin",
                               "--mailbox-password-stdin"], stdin: "\(password)\n\(mailbox)\n")
        }
        // A fresh device: the new password is both passwords, and the old mail opens.
        let fresh = try await login("one2", "onepass", "second pw", "second pw")
        #expect(fresh.status == 0, "\(fresh.stderr)")
        let read = try await world.syncAndRead(user: "one2", subject: "Before the change")
        #expect(read.status == 0 && read.stdout.contains("Old mail"), "\(read.stdout) \(read.stderr)")
        // The old password neither logs in nor opens the keys.
        #expect(try await login("one3", "onepass", "first pw", "first pw").status != 0)
        let oldMailbox = try await login("one4", "onepass", "second pw", "first pw")
        #expect(oldMailbox.status != 0 && oldMailbox.stderr.lowercased().contains("mailbox password"), "\(oldMailbox.stderr)")

        // Two passwords: the login one changes, the mailbox one stays.
        let two = try await world.rampart(["account", "change-password", "--user", "two", "--password-stdin"], stdin: "login pw\nlogin pw 2\n")
        #expect(two.status == 0, "\(two.stderr)")
        #expect(two.stdout.contains("the separate mailbox password is unchanged"), "\(two.stdout)")
        #expect(try await login("two2", "twopass", "login pw 2", "mailbox pw").status == 0)
        #expect(try await login("two3", "twopass", "login pw 2", "login pw 2").status != 0)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func theServerRefusesAnUnlockedKeyOrAnotherKeyAndChangesNothing() async throws {
        let (world, server, info) = try await EndToEndWorld.withServer(["--no-demo", "--open-signup"])
        defer { world.close(server) }
        #expect(try await world.rampart(["signup", "--user", "one", "--server-info", info, "--username", "onepass", "--password-stdin"],
                                  stdin: "first pw\n").status == 0)
        let refusals = try await onThreadsOfItsOwn {
            try await APIClient(endpoint: ServerEndpoint(serverInfo: server.info)).closing { api -> [String] in
                let old = SecretBytes(copying: Array("first pw".utf8)), new = SecretBytes(copying: Array("second pw".utf8))
                defer { old.wipe(); new.wipe() }
                _ = try await api.login(username: "onepass", password: old)
                let keys: UserKeys = try await api.json(.GET, APIRoute.accountKeys)
                let userKey = try MailboxKey.unlock(locked: keys.privateKey, keySalt: [UInt8](Data(base64Encoded: keys.keySalt)!),
                                                    mailboxPassword: old)
                let clear = String(decoding: try userKey.unprotectedExport().withUnsafeBytes { try OpenPGP.armor(Data($0), as: .secretKey) },
                                   as: UTF8.self)
                let other = try MailboxKey.lock(try PGPPrivateKey.generate(name: "onepass", address: "onepass@rampart.test"),
                                                mailboxPassword: new)
                let salt = Data(repeating: 7, count: MailboxKey.keySaltCount).base64EncodedString()
                var messages: [String] = []
                for bad in [RelockedUserKey(privateKey: clear, keySalt: salt),
                            RelockedUserKey(privateKey: other.locked, keySalt: Data(other.keySalt).base64EncodedString())] {
                    do {
                        _ = try await SRPLogin.changePassword(api: api, username: "onepass", old: old, new: new, endOtherSessions: true,
                                                              userKey: bad)
                        messages.append("accepted")
                    } catch ClientError.http(let status, let body) {
                        messages.append("\(status): \(body?.error.message ?? "")")
                    }
                }
                // Nothing changed: the old password still logs in and opens the same key.
                let again = try await api.login(username: "onepass", password: old)
                let ring = try AccountKeyring.unlock(again.keys, keyPassword: old)
                defer { ring.wipe() }
                #expect(ring.userKey.fingerprint == userKey.fingerprint)
                #expect(again.keys.privateKey == keys.privateKey && again.keys.keySalt == keys.keySalt)
                return messages
            }
        }
        #expect(refusals.count == 2)
        #expect(refusals.first?.hasPrefix("400") == true && refusals.first?.contains("not locked with a passphrase") == true, "\(refusals)")
        #expect(refusals.last?.hasPrefix("400") == true && refusals.last?.contains("it is not the account's key") == true, "\(refusals)")
        // And the CLI's old password still works for both on a fresh device.
        #expect(try await world.rampart(["login", "--user", "one2", "--server-info", info, "--username", "onepass", "--password-stdin",
                                   "--mailbox-password-stdin"], stdin: "first pw\nfirst pw\n").status == 0)
    }
}
