import Foundation
import OpenPGP
import RampartAPI
import RampartServer
import RampartServerTestSupport
import RampartTestSupport
import Testing

/// Account recovery as a user runs it, against `rampart server start` in a child process: the
/// recovery phrase made at `rampart signup` (shown once, or written 0600 to a file), `rampart
/// account recover` with it (old mail still opens, every session ends), its refusals (mistyped
/// phrase with the checksum message, another account's phrase, an unknown name: the same answer),
/// `rampart account recovery-phrase --regenerate` (the old phrase stops working), and the
/// operator's `rampart server reset-password` + `rampart account reset` (new keys: old mail stays
/// unreadable; a used, wrong or expired token is refused). Nothing typed reaches the server's folder.
@Suite("rampart account recover / reset, end to end against the embedded server", .serialized)
struct RecoveryEndToEndTests {
    @Test func thePhraseFromSignUpRecoversTheAccountAndItsOldMail() async throws {
        let (world, server, info) = try await EndToEndWorld.withServer(["--no-demo", "--open-signup"])
        defer { world.close(server) }
        // Ann: two passwords, her phrase written to a file; Bob: one password, his phrase shown.
        let phraseFile = world.folder.child("ann-phrase.txt")
        let ann = try await world.rampart(["signup", "--user", "ann", "--server-info", info, "--username", "ann", "--two-password",
                                     "--password-stdin", "--mailbox-password-stdin", "--recovery-phrase-file", phraseFile.path],
                                    stdin: "ann login pw 1\nann mailbox pw 1\n")
        #expect(ann.status == 0, "\(ann.stderr)")
        #expect(!ann.stdout.contains("Recovery phrase:") && ann.stdout.contains("Recovery phrase written to \(phraseFile.path) (0600)"))
        let attributes = try FileManager.default.attributesOfItem(atPath: phraseFile.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let annPhrase = try String(contentsOf: phraseFile, encoding: .utf8)
        #expect(annPhrase.hasSuffix("\n") && annPhrase.split(separator: "\n").count == 1)
        let annWords = annPhrase.trimmingCharacters(in: .newlines)
        #expect(annWords.split(separator: " ").count == 12)
        let bob = try await world.rampart(["signup", "--user", "bob", "--server-info", info, "--username", "bob", "--password-stdin"],
                                    stdin: "bob pw 1\n")
        #expect(bob.status == 0, "\(bob.stderr)")
        let bobWords = try #require(bob.lines.first { $0.hasPrefix("Recovery phrase: ") }).dropFirst("Recovery phrase: ".count)
        #expect(bobWords.split(separator: " ").count == 12 && bob.stdout.contains("shown only this once"))
        if let python = ProjectPython.executable {
            let check = try await CLITool(path: URL(fileURLWithPath: python)).run(
                ["-c", "import sys\nfrom mnemonic import Mnemonic\nm = Mnemonic('english')\nprint(all(m.check(l.strip()) for l in sys.stdin))"],
                stdin: "\(annWords)\n\(bobWords)\n")
            #expect(check.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "True", "\(check.stdout) \(check.stderr)")
        } else {
            #expect(ProcessInfo.processInfo.environment["CI"] == nil, "no Python with mnemonic under CI")
        }
        // Mail to Ann before she forgets her passwords.
        #expect(try await world.rampart(["send", "--user", "bob", "--to", "ann@rampart.test", "--subject", "Before recovery"],
                                  stdin: "<p>Old mail for Ann</p>").status == 0)

        func recover(_ user: String, _ name: String, _ phrase: String, _ passwords: String, two: Bool = false) async throws -> CLIResult {
            try await world.rampart(["account", "recover", "--user", user, "--server-info", info, "--username", name, "--phrase-stdin", "--password-stdin"]
                              + (two ? ["--two-password", "--mailbox-password-stdin"] : []), stdin: "\(phrase)\n\(passwords)")
        }
        // A mistyped phrase: the checksum says so, nothing is sent (exit 2).
        var typo = annWords.split(separator: " ").map(String.init)
        typo.swapAt(0, 1)
        if typo[0] == typo[1] { typo[0] = typo[0] == "abandon" ? "ability" : "abandon" }
        let mistyped = try await recover("ann2", "ann", typo.joined(separator: " "), "new\n")
        #expect(mistyped.status == 2 || mistyped.stderr.contains("does not open"), "\(mistyped.stderr)")
        let unknownWord = try await recover("ann2", "ann", (["notaword"] + typo.dropFirst()).joined(separator: " "), "new\n")
        #expect(unknownWord.status == 2 && unknownWord.stderr.contains("Word 1"), "\(unknownWord.stderr)")
        // Another account's phrase, and an unknown name: one and the same refusal (exit 1).
        let other = try await recover("ann2", "ann", String(bobWords), "new\n")
        #expect(other.status == 1 && other.stderr.contains("does not open a recovery copy of this account"), "\(other.stderr)")
        let nobody = try await recover("ann2", "nobody", annWords, "new\n")
        #expect(nobody.status == 1 && nobody.stderr == other.stderr, "\(nobody.stderr)")

        // The right phrase on a new device: new passwords, every session ended, old mail opens.
        let recovered = try await recover("ann2", "ANN", annWords, "ann login pw 2\nann mailbox pw 2\n", two: true)
        #expect(recovered.status == 0, "\(recovered.stderr)")
        #expect(recovered.stdout.contains("Account recovered") && recovered.stdout.contains("1 session(s) ended"), "\(recovered.stdout)")
        #expect(recovered.stdout.contains("Logged in as ann (ann@rampart.test)"))
        let oldDevice = try await world.rampart(["sync", "--user", "ann"])
        #expect(oldDevice.status != 0, "the session of Ann's first device was not ended: \(oldDevice.stdout)")
        #expect(try await world.rampart(["sync", "--user", "ann2"]).status == 0)
        let listing = try await world.rampart(["list", "--user", "ann2"])
        let id = try #require(messageID(in: listing.stdout, subject: "Before recovery"), "\(listing.stdout)")
        let read = try await world.rampart(["read", "--user", "ann2", id])
        #expect(read.status == 0 && read.stdout.contains("Old mail for Ann") && read.stdout.contains("Signature: verified"), "\(read.stdout)")
        // The old passwords no longer log in; the new ones do.
        let oldLogin = try await world.rampart(["login", "--user", "ann3", "--server-info", info, "--username", "ann", "--password-stdin",
                                          "--mailbox-password-stdin"], stdin: "ann login pw 1\nann mailbox pw 1\n")
        #expect(oldLogin.status != 0)
        #expect(try await world.rampart(["login", "--user", "ann3", "--server-info", info, "--username", "ann", "--password-stdin",
                                   "--mailbox-password-stdin"], stdin: "ann login pw 2\nann mailbox pw 2\n").status == 0)

        // A new phrase: the old one stops working, the new one recovers (one password now).
        let newFile = world.folder.child("ann-phrase-2.txt")
        let regenerated = try await world.rampart(["account", "recovery-phrase", "--user", "ann2", "--regenerate", "--recovery-phrase-file", newFile.path])
        #expect(regenerated.status == 0 && regenerated.stdout.contains("old phrase no longer opens"), "\(regenerated.stderr)")
        let newWords = try String(contentsOf: newFile, encoding: .utf8).trimmingCharacters(in: .newlines)
        #expect(newWords != annWords)
        let noRegenerate = try await world.rampart(["account", "recovery-phrase", "--user", "ann2"])
        #expect(noRegenerate.status == 2 && noRegenerate.stderr.contains("--regenerate"))
        await #expect(try recover("ann4", "ann", annWords, "x\n").stderr.contains("does not open a recovery copy"))
        let again = try await recover("ann4", "ann", newWords, "ann one pw 3\n")
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try await world.rampart(["sync", "--user", "ann4"]).status == 0)
        #expect(try await world.rampart(["read", "--user", "ann4", id]).stdout.contains("Old mail for Ann"))

        // Nothing the users typed, no phrase, reached the server's folder.
        let stored = TemporaryHome.allBytes(under: server.dataDirectory)
        for secret in ["ann login pw 1", "ann mailbox pw 1", "ann login pw 2", "ann mailbox pw 2", "ann one pw 3", "bob pw 1",
                       annWords, newWords, String(bobWords), "Old mail for Ann"] {
            #expect(stored.range(of: Data(secret.utf8)) == nil, "\(secret) is in the server's data folder")
        }
    }

    @Test func theOperatorsResetTokenGivesNewKeysAndOldMailStaysUnreadable() async throws {
        let (world, server, info) = try await EndToEndWorld.withServer(["--no-demo", "--open-signup"])
        defer { world.close(server) }
        #expect(try await world.rampart(["signup", "--user", "cat", "--server-info", info, "--username", "cat", "--password-stdin"],
                                  stdin: "cat pw 1\n").status == 0)
        #expect(try await world.rampart(["signup", "--user", "dan", "--server-info", info, "--username", "dan", "--password-stdin"],
                                  stdin: "dan pw 1\n").status == 0)
        #expect(try await world.rampart(["send", "--user", "dan", "--to", "cat@rampart.test", "--subject", "Sealed to the old key"],
                                  stdin: "<p>Lost with the key</p>").status == 0)
        let made = try await world.rampart(["server", "reset-password", "cat", "--data", server.dataDirectory.path])
        #expect(made.status == 0 && made.stderr.contains("old mail will stay unreadable"), "\(made.stderr)")
        let token = try #require(made.lines.last)
        #expect(made.lines.count == 1 && token.hasPrefix("rmr-") && token.count == 36)
        #expect(try await world.rampart(["server", "reset-password", "nobody", "--data", server.dataDirectory.path]).status == 6)

        func reset(_ user: String, _ name: String, _ token: String, _ password: String) async throws -> CLIResult {
            try await world.rampart(["account", "reset", "--user", user, "--server-info", info, "--username", name, "--token", token,
                               "--password-stdin"], stdin: "\(password)\n")
        }
        // A wrong token, another account's token, an expired token: refused, nothing changed.
        await #expect(try reset("cat2", "cat", "rmr-00000000000000000000000000000000", "x").stderr.contains("reset token is unknown"))
        await #expect(try reset("cat2", "dan", token, "x").stderr.contains("reset token is unknown"))
        let expired = try EmbeddedServer.createPasswordReset(dataDirectory: server.dataDirectory, username: "cat", lifetime: 60,
                                                             now: Date().addingTimeInterval(-3600))
        await #expect(try reset("cat2", "cat", expired, "x").status == 1)
        #expect(try await world.rampart(["sync", "--user", "cat"]).status == 0, "a refused reset ended a session")

        let done = try await reset("cat2", "cat", token, "cat pw 2")
        #expect(done.status == 0, "\(done.stderr)")
        #expect(done.stdout.contains("NEW keys: mail sealed to the old key can no longer be read"), "\(done.stdout)")
        #expect(done.stdout.contains("Recovery phrase: "))
        let used = try await reset("cat3", "cat", token, "cat pw 3")
        #expect(used.status == 1 && used.stderr.contains("already used"), "\(used.stderr)")
        // The old mail does not open with the new key (sync skips it and says so); new mail does.
        let synced = try await world.rampart(["sync", "--user", "cat2"])
        #expect(synced.status == 0 && synced.stderr.contains("sealed to the key an account reset replaced"), "\(synced.stderr)")
        // A sender who never pinned Cat's key, Eve, gets the new key at first use.
        #expect(try await world.rampart(["signup", "--user", "eve", "--server-info", info, "--username", "eve", "--password-stdin"],
                                  stdin: "eve pw 1\n").status == 0)
        #expect(try await world.rampart(["send", "--user", "eve", "--to", "cat@rampart.test", "--subject", "After the reset"],
                                  stdin: "<p>New key</p>").status == 0)
        #expect(try await world.rampart(["sync", "--user", "cat2"]).status == 0)
        let listing = try await world.rampart(["list", "--user", "cat2"])
        #expect(!listing.stdout.contains("Sealed to the old key"), "\(listing.stdout)")
        let id = try #require(messageID(in: listing.stdout, subject: "After the reset"), "\(listing.stdout)")
        #expect(try await world.rampart(["read", "--user", "cat2", id]).stdout.contains("New key"))

        // Dan pinned Cat's old key: his send stops with the key change (trust on first use), and
        // nothing is sent until he pins the new key with the fingerprint Cat gives him.
        let catKey = try await PGPPublicKey(armored: try world.rampart(["account", "public-key", "--armor", "--user", "cat2"]).stdout)
        let oldPin = try await #require(try world.rampart(["contacts", "list", "--user", "dan"]).lines.first { $0.hasPrefix("cat@rampart.test") })
        let oldFingerprint = String(oldPin.split(separator: " ")[1])
        #expect(oldFingerprint != catKey.fingerprint.hex)
        let stopped = try await world.rampart(["send", "--user", "dan", "--to", "cat@rampart.test", "--subject", "To the new key"], stdin: "<p>Hi again</p>")
        #expect(stopped.status == 1 && stopped.stderr.contains("The key of cat@rampart.test has changed: this device pinned \(oldFingerprint)"),
                "\(stopped.stderr)")
        #expect(stopped.stderr.contains("the server now offers \(catKey.fingerprint.hex)") && stopped.stderr.contains("may have reset their account")
                && stopped.stderr.contains("Nothing was sent") && stopped.stderr.contains("rampart contacts accept-key cat@rampart.test"))
        let wrongFingerprint = try await world.rampart(["contacts", "accept-key", "cat@rampart.test", "--fingerprint", oldFingerprint, "--user", "dan"])
        #expect(wrongFingerprint.status == 2 && wrongFingerprint.stderr.contains("nothing was pinned"), "\(wrongFingerprint.stderr)")
        let spaced = catKey.fingerprint.hex.lowercased().enumerated().map { $0.offset % 4 == 3 ? "\($0.element) " : "\($0.element)" }.joined()
        let accepted = try await world.rampart(["contacts", "accept-key", "cat@rampart.test", "--fingerprint", spaced, "--user", "dan"])
        #expect(accepted.status == 0 && accepted.stdout.contains("Pinned cat@rampart.test  \(catKey.fingerprint.hex)"), "\(accepted.stderr)")
        #expect(try await world.rampart(["send", "--user", "dan", "--to", "cat@rampart.test", "--subject", "To the new key"], stdin: "<p>Hi again</p>").status == 0)
        #expect(try await world.rampart(["sync", "--user", "cat2"]).status == 0)
        let newID = try #require(messageID(in: try await world.rampart(["list", "--user", "cat2"]).stdout, subject: "To the new key"))
        let newMail = try await world.rampart(["read", "--user", "cat2", newID])
        #expect(newMail.stdout.contains("Hi again") && newMail.stdout.contains("Signature: verified"), "\(newMail.stdout)")
        let stored = TemporaryHome.allBytes(under: server.dataDirectory)
        for secret in ["cat pw 1", "cat pw 2", token] {
            #expect(stored.range(of: Data(secret.utf8)) == nil, "\(secret) is in the server's data folder")
        }
    }
}
