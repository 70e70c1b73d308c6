#if canImport(CLibSecret)
import Foundation
import Keychain
import RampartCore
import RampartTestSupport
import Testing

/// The Secret Service backend against a real gnome-keyring-daemon on a private D-Bus session
/// bus (scripts/services/secret-service.sh): its attribute mapping, as other Secret Service
/// clients see it, and its error mapping.
@Suite("Secret Service keychain", .enabled(if: SecretServiceAvailability.shouldRun))
struct SecretServiceKeychainTests {
    let folder = TemporaryFolder()

    func requireService() throws {
        if let reason = SecretServiceAvailability.unavailableReason {
            Issue.record("CI promised a Secret Service (RAMPART_SECRET_SERVICE=1) but: \(reason)")
            throw KeychainError.backendUnavailable(reason)
        }
    }

    static let secretTool = CLITool(path: URL(fileURLWithPath: "/usr/bin/secret-tool"))

    @Test func itemsCarryTheRampartSchemaAttributes() async throws {
        try requireService()
        let group = KeychainAccessGroup("t\(UUID().uuidString.prefix(8).lowercased()).shared")
        let keychain = SecretServiceKeychain()
        defer { try? keychain.deleteAll(accessGroup: group) }
        let id = KeychainItemID(service: "rampart.user.u1", account: "push", accessGroup: group)
        try keychain.add(bytes("push private key"), for: id, accessibility: .afterFirstUnlockThisDeviceOnly)

        // Another Secret Service client (libsecret's secret-tool) finds it by our attributes.
        let lookup = try await Self.secretTool.run(["lookup", "xdg:schema", SecretServiceKeychain.schemaName,
                                              "rampart.group", group.name, "rampart.service", id.service, "rampart.account", id.account,
                                              "rampart.accessibility", "afterFirstUnlockThisDeviceOnly"])
        #expect(lookup.status == 0, "\(lookup.stderr)")
        #expect(lookup.lines == ["push private key"])
        // A value stored by another client under our schema reads back through the backend.
        let other = KeychainItemID(service: "stored-elsewhere", account: "a", accessGroup: group)
        let store = try await Self.secretTool.run(["store", "--label=test", "xdg:schema", SecretServiceKeychain.schemaName,
                                             "rampart.group", group.name, "rampart.service", other.service, "rampart.account", other.account,
                                             "rampart.accessibility", "afterFirstUnlock"],
                                            stdin: "from secret-tool")
        #expect(store.status == 0, "\(store.stderr)")
        #expect(try contents(keychain.read(other)) == Array("from secret-tool".utf8))
        #expect(try keychain.accessibility(of: other) == .afterFirstUnlock)
        #expect(try keychain.itemIDs(accessGroup: group) == [id, other].sorted { $0.service < $1.service })
    }

    @Test func withoutASessionBusTheBackendIsUnavailable() async throws {
        let list = try await CLITool.rampartDev.run(["keychain", "list", "--backend", "secret-service"],
                                              environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(folder.child("no-bus").path)"])
        #expect(list.status == 1)
        #expect(list.stderr.contains("[keychain.backendUnavailable]"), "\(list.stderr)")
    }

    @Test func aLockedCollectionIsAccessDenied() async throws {
        try requireService()
        // A service of its own, so locking it does not disturb the other tests.
        let state = folder.child("locked-service")
        let script = packageRoot.appendingPathComponent("scripts/services/secret-service.sh").path
        let bash = CLITool(path: URL(fileURLWithPath: "/bin/bash"))
        let start = try await bash.run(["-c", closeInheritedDescriptors + "source \"$0\" >&2 && printf '%s' \"$DBUS_SESSION_BUS_ADDRESS\"", script],
                                 environment: ["RAMPART_SECRET_SERVICE_DIR": state.path])
        try #require(start.status == 0, "\(start.stderr)")
        let address = try #require(start.lines.first)
        defer { _ = try? bash.runBlocking([script, "stop", state.path]) }
        let environment = ["DBUS_SESSION_BUS_ADDRESS": address]
        func put(_ account: String) async throws -> CLIResult {
            try await CLITool.rampartDev.run(["keychain", "put", "--backend", "secret-service", "--service", "s", "--account", account],
                                       stdin: "value", environment: environment)
        }
        let first = try await put("a")
        #expect(first.status == 0, "\(first.stderr)")

        let lock = try await CLITool(path: URL(fileURLWithPath: "/usr/bin/dbus-send"))
            .run(["--session", "--dest=org.freedesktop.secrets", "--print-reply", "/org/freedesktop/secrets",
                  "org.freedesktop.Secret.Service.Lock", "array:objpath:/org/freedesktop/secrets/collection/login"],
                 environment: environment)
        #expect(lock.status == 0, "\(lock.stderr)")
        for account in ["a", "b"] {
            let refused = try await put(account)
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("[keychain.accessDenied]"), "\(refused.stderr)")
        }
    }
}
#endif
