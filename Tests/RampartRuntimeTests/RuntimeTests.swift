import Foundation
import Keymaker
import RampartAgent
import RampartCLIKit
import RampartCore
import RampartRuntime
import Testing

/// The composition root: one map from typed errors to exit statuses, and an account opened
/// through it with every wipe registered.
@Suite struct RuntimeTests {
    @Test func everyKindHasItsDocumentedStatus() {
        let expected: [RampartErrorKind: Int32] = [
            .failure: 1, .badInput: 2, .locked: 3, .wrongPIN: 4, .wiped: 5, .notFound: 6,
            .tampered: 7, .pinMismatch: 8, .sessionExpired: 9, .agentUnavailable: 10,
        ]
        for kind in RampartErrorKind.allCases {
            #expect(ExitStatus.code(for: kind) == expected[kind], "\(kind)")
            #expect(ExitStatus.helpText.contains("  \(expected[kind]!) "), "help names \(kind)")
        }
    }

    @Test func statusComesFromTheKindNotTheText() {
        #expect(ExitStatus.code(for: KeymakerError.wrongPIN(attemptsLeft: 3)) == 4)
        #expect(ExitStatus.code(for: KeymakerError.wipedAfterTooManyFailedAttempts) == 5)
        #expect(ExitStatus.code(for: LockedError(userID: "u")) == 3)
        // A refusal relayed by the agent keeps the category the agent sent, whatever its code says.
        #expect(ExitStatus.code(for: AgentError.keymakerRefused(code: "keymaker.locked", kind: .tampered, message: "x")) == 7)
        #expect(ExitStatus.code(for: AgentError.notRunning(socketPath: "/s")) == 10)
        #expect(ExitStatus.code(for: RuntimeError.missingStdin("the PIN")) == 2)
        #expect(ExitStatus.code(for: CocoaError(.fileNoSuchFile)) == 1)
    }

    @Test func optionsBuildTheHomeAndRejectABadUser() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-runtime-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: home) }
        let options = RuntimeOptions(home: home.path, user: "alice", keychain: "memory")
        let environment = try options.environment()
        #expect(environment.homeDirectory.path == home.path)
        let mode = try FileManager.default.attributesOfItem(atPath: home.path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o700)
        #expect(try options.userID().rawValue == "alice")
        #expect(throws: RuntimeError.self) { try RuntimeOptions(home: home.path, user: "../x").userID() }
    }

    @Test func accountKeysChangeThePINAndRemoveAProtector() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-runtime-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: home) }
        let options = RuntimeOptions(home: home.path, user: "bob")
        setenv("RAMPART_PIN_KDF_LOGN", "10", 1)
        let keys = try AccountKeys(options)
        // Rollback anchor, sealed store, client files, push keys, file vault, PIN-attempt lock file.
        #expect(keys.global.wipeRegistry.registeredNames == [
            "store-rollback-anchor", "sealed-store", "client-files", "push-keys", "file-vault", "pin-attempt-lock",
        ])
        let fingerprint = try keys.keymaker.createMainKey().fingerprint
        let first = SecretBytes(copying: Array("135790".utf8))
        let second = SecretBytes(copying: Array("246802".utf8))
        try keys.keymaker.activate(.pin, credential: .pin(first))
        keys.keymaker.lock()
        try keys.changePIN(current: { first }, new: { second })
        #expect(throws: KeymakerError.self) { try keys.keymaker.unlock(.pin(first)) }
        try keys.keymaker.unlock(.pin(second))
        #expect(try keys.keymaker.currentMainKey().fingerprint == fingerprint)
        keys.keymaker.lock()
        // The PIN is the last protector: removing it is refused, as a bad input.
        do {
            _ = try keys.removeProtector(.pin) { second }
            Issue.record("removing the last protector succeeded")
        } catch {
            #expect(ExitStatus.code(for: error) == 2)
        }
    }
}
