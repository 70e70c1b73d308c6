import Foundation
import RampartServerTestSupport
import RampartTestSupport
import Testing

/// `rampart account address add|list|remove` and `send --from` as a user runs them, against
/// `rampart server start` in a child process: a second address with a key of its own receives
/// mail and sends it (the reader verifies the signature with that address's key), an address of
/// another domain and a sender address that is not the user's are refused with exit 2 and a
/// sentence, and a removed address gets no more mail while the mail it received still opens.
@Suite("rampart account address, end to end against the embedded server", .serialized)
struct AddressEndToEndTests {
    @Test func aSecondAddressHasItsOwnKeyReceivesAndSendsAndStopsWhenRemoved() async throws {
        let (world, server, info) = try await EndToEndWorld.withServer(["--no-demo", "--open-signup"])
        defer { world.close(server) }
        for name in ["ann", "bob"] {
            #expect(try await world.rampart(["signup", "--user", name, "--server-info", info, "--username", name, "--password-stdin"],
                                      stdin: "\(name) pw\n").status == 0)
        }
        let added = try await world.rampart(["account", "address", "add", "bob.work@rampart.test", "--user", "bob"])
        #expect(added.status == 0 && added.stdout.contains("Addresses: bob@rampart.test, bob.work@rampart.test"), "\(added.stderr)")
        let listed = try await world.rampart(["account", "address", "list", "--json", "--user", "bob"])
        #expect(listed.stdout.contains("bob.work@rampart.test") && listed.stdout.contains("bob@rampart.test"), "\(listed.stdout)")
        let elsewhere = try await world.rampart(["account", "address", "add", "bob@example.org", "--user", "bob"])
        #expect(elsewhere.status == 2 && elsewhere.stderr.contains("not in this server's domain (rampart.test)"), "\(elsewhere.stderr)")
        let notMine = try await world.rampart(["send", "--user", "bob", "--from", "ann@rampart.test", "--to", "ann@rampart.test", "--subject", "x"],
                                        stdin: "<p>x</p>")
        #expect(notMine.status == 2 && notMine.stderr.contains("ann@rampart.test is not one of your addresses"), "\(notMine.stderr)")

        // Mail to the new address reaches Bob; Bob answers from it, signed with its key.
        #expect(try await world.rampart(["send", "--user", "ann", "--to", "bob.work@rampart.test", "--subject", "For work"], stdin: "<p>Work</p>").status == 0)
        #expect(try await world.rampart(["send", "--user", "bob", "--from", "bob.work@rampart.test", "--to", "ann@rampart.test", "--subject", "Noted"],
                                  stdin: "<p>Noted</p>").status == 0)
        #expect(try await world.rampart(["sync", "--user", "bob"]).status == 0)
        let workID = try #require(messageID(in: try await world.rampart(["list", "--user", "bob"]).stdout, subject: "For work"))
        #expect(try await world.rampart(["read", "--user", "bob", workID]).stdout.contains("Work"))
        #expect(try await world.rampart(["sync", "--user", "ann"]).status == 0)
        let notedID = try #require(messageID(in: try await world.rampart(["list", "--user", "ann"]).stdout, subject: "Noted"))
        let noted = try await world.rampart(["read", "--user", "ann", notedID])
        #expect(noted.stdout.contains("bob.work@rampart.test") && noted.stdout.contains("Signature: verified"), "\(noted.stdout)")

        // Removed: no more mail to it, the primary address stays, old mail still opens.
        let primary = try await world.rampart(["account", "address", "remove", "bob@rampart.test", "--user", "bob"])
        #expect(primary.status != 0 && primary.stderr.contains("primary address"), "\(primary.stderr)")
        #expect(try await world.rampart(["account", "address", "remove", "bob.work@rampart.test", "--user", "bob"]).status == 0)
        let bounced = try await world.rampart(["send", "--user", "ann", "--to", "bob.work@rampart.test", "--subject", "Gone"], stdin: "<p>?</p>")
        #expect(bounced.status != 0 && bounced.stderr.contains("bob.work@rampart.test"), "\(bounced.stderr)")
        #expect(try await world.rampart(["account", "address", "list", "--user", "bob"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "bob@rampart.test")
        #expect(try await world.rampart(["read", "--user", "bob", workID]).stdout.contains("Work"))
    }
}
