import Foundation
import RampartTestSupport
import Testing

/// `rampart`'s account verbs that act on the MainKey (change-pin, remove-protector), the shared
/// `--pin-stdin` input, and the split between the user's tool and the developer's.
@Suite("rampart account commands (CLI)")
struct AccountCLITests {
    let rampart = CLITool.rampart.with(environment: ["RAMPART_PIN_KDF_LOGN": "12"])
    let dev = CLITool.rampartDev.with(environment: ["RAMPART_PIN_KDF_LOGN": "12"])

    @Test func changePINAndRemoveProtectorKeepTheMainKeyWithDocumentedExitCodes() async throws {
        let home = try TemporaryHome("account")
        var run = try await rampart.run(["--home", home.path, "change-pin", "--pin-stdin"], stdin: "111111\n222222\n")
        #expect(run.status == 6, "no MainKey yet: not found (\(run.stderr))")
        run = try await dev.run(["--home", home.path, "key", "init"])
        #expect(run.status == 0, "\(run.stderr)")
        run = try await dev.run(["--home", home.path, "key", "protect", "--pin-stdin"], stdin: "482913\n")
        #expect(run.status == 0, "\(run.stderr)")
        run = try await rampart.run(["--home", home.path, "change-pin", "--pin-stdin"], stdin: "000000\n135790\n")
        #expect(run.status == 4, "a wrong current PIN is counted: \(run.stderr)")
        #expect(run.stderr.contains("9 attempts left"))
        run = try await rampart.run(["--home", home.path, "change-pin", "--pin-stdin"], stdin: "482913\n135790\n")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("PIN changed"))
        run = try await dev.run(["--home", home.path, "key", "unlock", "--pin-stdin"], stdin: "482913\n")
        #expect(run.status == 4, "the old PIN no longer opens the key")
        run = try await dev.run(["--home", home.path, "key", "unlock", "--pin-stdin"], stdin: "135790\n")
        #expect(run.status == 0, "\(run.stderr)")
        // The only protector cannot go: bad input, and the key still opens.
        run = try await rampart.run(["--home", home.path, "remove-protector", "pin", "--pin-stdin"], stdin: "135790\n")
        #expect(run.status == 2, "\(run.stderr)")
        run = try await dev.run(["--home", home.path, "key", "unlock", "--pin-stdin"], stdin: "135790\n")
        #expect(run.status == 0, "the refused removal left the PIN protector: \(run.stderr)")
        run = try await rampart.run(["--home", home.path, "remove-protector", "bogus"])
        #expect(run.status != 0)
        #expect(run.stderr.contains("Unknown protector 'bogus'"))
    }

    @Test func theUserToolListsOnlyTheUsersCommands() async throws {
        let user = try await rampart.run(["--help"])
        #expect(user.status == 0)
        for group in ["ACCOUNT SUBCOMMANDS", "MAIL SUBCOMMANDS", "DRIVE SUBCOMMANDS", "AGENT SUBCOMMANDS"] {
            #expect(user.stdout.contains(group), "\(group) in rampart --help")
        }
        for verb in ["change-pin", "remove-protector", "login", "sync", "drive", "unlock"] {
            #expect(user.lines.contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix(verb + " ") }, "\(verb)")
        }
        for lab in ["html5", "sanitize", "bench", "keychain", "transport", "key", "vault", "store", "push"] {
            #expect(!user.lines.contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix(lab + " ") }, "\(lab) is not in rampart --help")
            let gone = try await rampart.run([lab])
            #expect(gone.status != 0, "rampart \(lab) is gone")
        }
        let developer = try await dev.run(["--help"])
        for lab in ["html5", "sanitize", "bench", "keychain", "transport", "key", "vault", "store", "push", "pin"] {
            #expect(developer.lines.contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix(lab + " ") }, "\(lab) in rampart-dev --help")
        }
        #expect(developer.stdout.contains("10  the agent is unavailable"))
    }
}
