import Foundation
import RampartTestSupport
import Testing

/// `rampart-dev key …` (the key lab on a throwaway home) driven as a script would: `--home`,
/// `--pin-stdin`, exit codes.
let rampartDev = CLITool.rampartDev

/// The PIN key derivation made cheap enough for tests (`RAMPART_PIN_KDF_LOGN`).
let fastPINDerivation = ["RAMPART_PIN_KDF_LOGN": "15"]

/// A temporary home in which `rampart-dev key init` has created a MainKey (no protector yet).
func keyLabHome(_ label: String) async throws -> TemporaryHome {
    let home = try TemporaryHome(label)
    let run = try await rampartDev.run(["--home", home.path, "key", "init"])
    try #require(run.status == 0, "\(run.stderr)")
    return home
}

@Suite("rampart-dev key (CLI)")
struct KeyCLITests {
    @Test func keyLifecycleWorksFromScriptsWithDocumentedExitCodes() async throws {
        let home = try await keyLabHome("cli")
        var run = try await rampartDev.run(["--home", home.path, "key", "init"])
        #expect(run.status == 2, "a second init is refused as bad usage")
        run = try await rampartDev.run(["--home", home.path, "key", "protect", "--pin-stdin"], stdin: "12\n", environment: fastPINDerivation)
        #expect(run.status == 2)
        #expect(run.stderr.contains("too short"))
        run = try await rampartDev.run(["--home", home.path, "key", "protect", "--pin-stdin"], stdin: "482913\n", environment: fastPINDerivation)
        #expect(run.status == 0, "\(run.stderr)")
        run = try await rampartDev.run(["--home", home.path, "key", "unlock", "--pin-stdin"], stdin: "000000\n")
        #expect(run.status == 4)
        #expect(run.stderr.contains("9 attempts left"))
        run = try await rampartDev.run(["--home", home.path, "key", "unlock", "--pin-stdin"], stdin: "482913\n")
        #expect(run.status == 0, "\(run.stderr)")
        run = try await rampartDev.run(["--home", home.path, "key", "status", "--json"])
        #expect(run.status == 0)
        let status = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        #expect(status?["activeProtectors"] as? [String] == ["pin"])
        #expect(status?["failedAttempts"] as? Int == 0)
        #expect(status?["keychainBackend"] as? String == "file")
        run = try await rampartDev.run(["--home", home.path, "key", "protect", "--none"], stdin: "482913\n")
        #expect(run.status == 0, "\(run.stderr)")
        run = try await rampartDev.run(["--home", home.path, "key", "unlock"])
        #expect(run.status == 0, "\(run.stderr)")
        run = try await rampartDev.run(["--home", home.path, "key", "wipe", "--yes"])
        #expect(run.status == 0)
        run = try await rampartDev.run(["--home", home.path, "key", "unlock"])
        #expect(run.status == 6)
    }

    @Test func aHomeFolderOthersCanReadIsRefused() async throws {
        let home = try TemporaryHome("cli")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: home.path)
        let run = try await rampartDev.run(["--home", home.path, "key", "init"])
        #expect(run.status != 0)
        #expect(run.stderr.contains("chmod go-rwx"))
    }
}
