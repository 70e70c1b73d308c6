#if canImport(CLibSecret)
import Foundation
import Keychain
import RampartCore
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

    func rampart() throws -> URL {
        try #require(RampartExecutable.url, "build the rampart executable first (swift build), or set RAMPART_BIN")
    }

    @Test func itemsCarryTheRampartSchemaAttributes() throws {
        try requireService()
        let group = KeychainAccessGroup("t\(UUID().uuidString.prefix(8).lowercased()).shared")
        let keychain = SecretServiceKeychain()
        defer { try? keychain.deleteAll(accessGroup: group) }
        let id = KeychainItemID(service: "rampart.user.u1", account: "push", accessGroup: group)
        try keychain.add(bytes("push private key"), for: id, accessibility: .afterFirstUnlockThisDeviceOnly)

        // Another Secret Service client (libsecret's secret-tool) finds it by our attributes.
        let lookup = try ChildProcess(URL(fileURLWithPath: "/usr/bin/secret-tool"),
                                      ["lookup", "xdg:schema", SecretServiceKeychain.schemaName,
                                       "rampart.group", group.name, "rampart.service", id.service, "rampart.account", id.account,
                                       "rampart.accessibility", "afterFirstUnlockThisDeviceOnly"],
                                      outputFile: folder.child("lookup"))
        #expect(try lookup.run() == 0, "\(lookup.errorText)")
        #expect(lookup.lines == ["push private key"])
        // A value stored by another client under our schema reads back through the backend.
        let other = KeychainItemID(service: "stored-elsewhere", account: "a", accessGroup: group)
        let store = try ChildProcess(URL(fileURLWithPath: "/usr/bin/secret-tool"),
                                     ["store", "--label=test", "xdg:schema", SecretServiceKeychain.schemaName,
                                      "rampart.group", group.name, "rampart.service", other.service, "rampart.account", other.account,
                                      "rampart.accessibility", "afterFirstUnlock"],
                                     outputFile: folder.child("store"))
        #expect(try store.run(input: Array("from secret-tool".utf8)) == 0, "\(store.errorText)")
        #expect(try contents(keychain.read(other)) == Array("from secret-tool".utf8))
        #expect(try keychain.accessibility(of: other) == .afterFirstUnlock)
        #expect(try keychain.itemIDs(accessGroup: group) == [id, other].sorted { $0.service < $1.service })
    }

    @Test func withoutASessionBusTheBackendIsUnavailable() throws {
        let child = try ChildProcess(try rampart(), ["keychain", "list", "--backend", "secret-service"],
                                     outputFile: folder.child("list"),
                                     environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(folder.child("no-bus").path)"])
        #expect(try child.run() == 1)
        #expect(child.errorText.contains("[keychain.backendUnavailable]"), "\(child.errorText)")
    }

    @Test func aLockedCollectionIsAccessDenied() throws {
        try requireService()
        // A service of its own, so locking it does not disturb the other tests.
        let state = folder.child("locked-service")
        let script = packageRoot.appendingPathComponent("scripts/services/secret-service.sh").path
        let start = try ChildProcess(URL(fileURLWithPath: "/bin/bash"),
                                     ["-c", closeInheritedDescriptors + "source \"$0\" >&2 && printf '%s' \"$DBUS_SESSION_BUS_ADDRESS\"", script],
                                     outputFile: folder.child("start"), environment: ["RAMPART_SECRET_SERVICE_DIR": state.path])
        try #require(try start.run() == 0, "\(start.errorText)")
        let address = try #require(start.lines.first.map(String.init))
        defer {
            let stop = try? ChildProcess(URL(fileURLWithPath: "/bin/bash"), [script, "stop", state.path], outputFile: folder.child("stop"))
            _ = try? stop?.run()
        }
        let environment = ["DBUS_SESSION_BUS_ADDRESS": address]
        func put(_ account: String) throws -> ChildProcess {
            let child = try ChildProcess(try rampart(), ["keychain", "put", "--backend", "secret-service", "--service", "s", "--account", account],
                                         outputFile: folder.child("put-\(account)-\(UUID().uuidString)"), environment: environment)
            try child.run(input: Array("value".utf8))
            return child
        }
        let first = try put("a")
        #expect(first.process.terminationStatus == 0, "\(first.errorText)")

        let lock = try ChildProcess(URL(fileURLWithPath: "/usr/bin/dbus-send"),
                                    ["--session", "--dest=org.freedesktop.secrets", "--print-reply", "/org/freedesktop/secrets",
                                     "org.freedesktop.Secret.Service.Lock", "array:objpath:/org/freedesktop/secrets/collection/login"],
                                    outputFile: folder.child("lock"), environment: environment)
        #expect(try lock.run() == 0, "\(lock.errorText)")
        for account in ["a", "b"] {
            let refused = try put(account)
            #expect(refused.process.terminationStatus == 1)
            #expect(refused.errorText.contains("[keychain.accessDenied]"), "\(refused.errorText)")
        }
    }
}
#endif
