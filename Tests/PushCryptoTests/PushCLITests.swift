import Foundation
import Keychain
@testable import PushCrypto
import RampartCore
import RampartTestSupport
import Testing

/// The push process as a separate program: `rampart-dev push decrypt --home DIR --session ID`.
@Suite("rampart-dev push (separate process)")
struct PushCLITests {
    /// `rampart-dev push …`: the push process's commands live in the developer's tool.
    static func rampartDev(_ arguments: [String], input: [UInt8] = []) async throws -> CLIResult {
        try await CLITool.rampartDev.run(arguments, input: Data(input))
    }

    let folder: TemporaryHome
    var home: URL { folder.url }
    let user: UserID = "user-1"

    init() throws {
        folder = try TemporaryHome("push")
    }

    var keychain: FileKeychain { FileKeychain(directory: home.appendingPathComponent("keychain", isDirectory: true)) }

    /// The app at login: push keys from the CLI, plus an app-group item standing for the
    /// MainKey-protected data (the MainKey itself is never loaded: it stays locked).
    func login(session: String) async throws -> PushRegistration {
        try keychain.add(SecretBytes(randomCount: 48), for: .user(user, "mainkey.pin-wrapped", accessGroup: .app), accessibility: .default)
        let result = try await Self.rampartDev(["push", "subscribe", "--home", home.path, "--user", user.rawValue, "--session", session])
        #expect(result.status == 0, "\(result.stderr)")
        return try JSONDecoder().decode(PushRegistration.self, from: result.output)
    }

    var notification: PushNotification {
        PushNotification(sender: "Alice Example", subject: "Contract / v2", messageId: "m-42", userId: user)
    }

    @Test func pushProcessDecryptsWithSharedGroupOnlyWhileMainKeyIsLocked() async throws {
        let registration = try await login(session: "s1")
        let body = try WebPushSender.encrypt(notification, to: registration)
        let result = try await Self.rampartDev(["push", "decrypt", "--home", home.path, "--session", "s1"], input: body)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try JSONDecoder().decode(PushNotification.self, from: result.output) == notification)
        #expect(result.stdout.contains(#""subject":"Contract / v2""#))
        // The keys are in the shared group's folder, this-device-only.
        let ids = try keychain.itemIDs(accessGroup: .shared)
        #expect(!ids.isEmpty)
        for id in ids { #expect(try keychain.accessibility(of: id) == .afterFirstUnlockThisDeviceOnly) }
    }

    @Test func pushProcessGivenOnlyTheAppGroupFails() async throws {
        let registration = try await login(session: "s1")
        let body = try WebPushSender.encrypt(notification, to: registration)
        let result = try await Self.rampartDev(["push", "decrypt", "--home", home.path, "--session", "s1", "--access-group", "rampart.app"], input: body)
        #expect(result.status == 1)
        #expect(result.output.isEmpty)
        #expect(result.stderr.contains("keychain.accessDenied"))
    }

    @Test func pushProcessRefusesReplayTamperingAndLoggedOutSessions() async throws {
        let registration = try await login(session: "s1")
        let body = try WebPushSender.encrypt(notification, to: registration)
        #expect(try await Self.rampartDev(["push", "decrypt", "--home", home.path, "--session", "s1"], input: body).status == 0)
        let replay = try await Self.rampartDev(["push", "decrypt", "--home", home.path, "--session", "s1"], input: body)
        #expect(replay.status == 7 && replay.stderr.contains("push.replayedSalt") && replay.output.isEmpty)

        var tampered = try WebPushSender.encrypt(notification, to: registration)
        tampered[tampered.count - 20] ^= 0x40
        let forged = try await Self.rampartDev(["push", "decrypt", "--home", home.path, "--session", "s1"], input: tampered)
        #expect(forged.status == 7 && forged.stderr.contains("push.authenticationFailed") && forged.output.isEmpty)

        let oversized = try await Self.rampartDev(["push", "decrypt", "--home", home.path, "--session", "s1"], input: [UInt8](repeating: 7, count: 5000))
        #expect(oversized.status == 7 && oversized.stderr.contains("push.oversized"))

        let late = try WebPushSender.encrypt(notification, to: registration)
        #expect(try await Self.rampartDev(["push", "logout", "--home", home.path, "--user", user.rawValue]).status == 0)
        #expect(try keychain.itemIDs(accessGroup: .shared).isEmpty)
        #expect(try keychain.itemIDs(accessGroup: .app).count == 1)
        let afterLogout = try await Self.rampartDev(["push", "decrypt", "--home", home.path, "--session", "s1"], input: late)
        #expect(afterLogout.status == 6 && afterLogout.stderr.contains("push.noKeys"))
    }

    @Test(.enabled(if: PythonPeer.interopEnabled))
    func pushProcessDecryptsPywebpushPayload() async throws {
        let registration = try await login(session: "s7")
        let json = try notification.encodedJSON().withUnsafeBytes { Array($0) }
        let body = try await PythonPeer.run(["pywebpush-encrypt", registration.publicKey, registration.authSecret], input: json)
        let result = try await Self.rampartDev(["push", "decrypt", "--home", home.path, "--session", "s7"], input: body)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try JSONDecoder().decode(PushNotification.self, from: result.output) == notification)
    }
}
