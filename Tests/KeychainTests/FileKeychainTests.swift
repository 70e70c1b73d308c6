import Foundation
import Keychain
import RampartCore
import Testing

/// Properties of the file backend beyond the shared contract: private permissions, tamper
/// detection, device binding.
@Suite("File keychain")
struct FileKeychainTests {
    let folder = TemporaryFolder()
    var root: URL { folder.child("keychain") }

    func keychain(machine: String = "machine-a") throws -> FileKeychain {
        FileKeychain(directory: root, machineIdentity: try folder.machine(machine))
    }

    /// A keychain holding "v" as s/a.
    func keychainHoldingV() throws -> (FileKeychain, KeychainItemID) {
        let keychain = try keychain()
        let id = KeychainItemID(service: "s", account: "a")
        try keychain.add(bytes("v"), for: id, accessibility: .default)
        return (keychain, id)
    }

    /// A keychain holding "a secret value" as svc/acct with `accessibility`, the item's file and
    /// the file's bytes (for tests that damage the file).
    func storedSecret(_ accessibility: KeychainAccessibility) throws -> (FileKeychain, KeychainItemID, URL, Data) {
        let keychain = try keychain()
        let id = KeychainItemID(service: "svc", account: "acct")
        try keychain.add(bytes("a secret value"), for: id, accessibility: accessibility)
        let file = keychain.itemFile(id)
        return (keychain, id, file, try Data(contentsOf: file))
    }

    /// Expects `body` to throw ``KeychainError/corruptItem(_:reason:)`` (naming `id`, when given).
    func expectCorruptItem(_ id: KeychainItemID? = nil, sourceLocation: SourceLocation = #_sourceLocation,
                           _ body: () throws -> some Any) {
        #expect(sourceLocation: sourceLocation) {
            try body()
        } throws: { error in
            guard case KeychainError.corruptItem(let reported, _) = error else { return false }
            return id == nil || reported == id
        }
    }

    // MARK: Permissions

    @Test func createdFoldersAndFilesArePrivate() throws {
        let (keychain, id) = try keychainHoldingV()
        #expect(fileMode(root) == 0o700)
        #expect(fileMode(keychain.groupDirectory(.app)) == 0o700)
        #expect(fileMode(keychain.itemFile(id)) == 0o600)
        #expect(fileMode(keychain.groupDirectory(.app).appendingPathComponent("keychain.salt")) == 0o600)
        #expect(fileMode(keychain.groupDirectory(.app).appendingPathComponent(".lock")) == 0o600)
    }

    @Test func keychainFolderWithLoosePermissionsIsRefused() throws {
        let (keychain, id) = try keychainHoldingV()
        for (folder, mode) in [(root, 0o755), (keychain.groupDirectory(.app), 0o750), (root, 0o701)] {
            chmod(folder.path, mode_t(mode))
            let expected = KeychainError.permissionsTooOpen(path: folder.path, mode: String(mode, radix: 8))
            #expect(throws: expected) { try keychain.read(id) }
            #expect(throws: expected) { try keychain.add(bytes("w"), for: KeychainItemID(service: "s", account: "b"), accessibility: .default) }
            #expect(throws: expected) { try keychain.itemIDs(accessGroup: .app) }
            chmod(folder.path, 0o700)
        }
        #expect(try contents(keychain.read(id)) == Array("v".utf8))
    }

    @Test func itemFileWithLoosePermissionsIsRefused() throws {
        let (keychain, id) = try keychainHoldingV()
        chmod(keychain.itemFile(id).path, 0o644)
        #expect(throws: KeychainError.permissionsTooOpen(path: keychain.itemFile(id).path, mode: "644")) { try keychain.read(id) }
    }

    @Test func symbolicLinkInPlaceOfAnItemIsRefused() throws {
        let (keychain, id) = try keychainHoldingV()
        let elsewhere = folder.child("elsewhere.item")
        try FileManager.default.moveItem(at: keychain.itemFile(id), to: elsewhere)
        try FileManager.default.createSymbolicLink(at: keychain.itemFile(id), withDestinationURL: elsewhere)
        #expect {
            try keychain.read(id)
        } throws: { error in
            guard case KeychainError.storageFailure = error else { return false }
            return true
        }
    }

    // MARK: Tamper detection

    @Test(arguments: [KeychainAccessibility.afterFirstUnlockThisDeviceOnly, .afterFirstUnlock])
    func everyTruncationIsReportedAsCorrupt(_ accessibility: KeychainAccessibility) throws {
        let (keychain, id, file, original) = try storedSecret(accessibility)
        for length in 0..<original.count {
            try original.prefix(length).write(to: file)
            chmod(file.path, 0o600)
            #expect(throws: KeychainError.self) { try keychain.read(id) }
            expectCorruptItem(id) { try keychain.read(id) }
        }
        try original.write(to: file)
        #expect(try contents(keychain.read(id)) == Array("a secret value".utf8))
    }

    @Test(arguments: [KeychainAccessibility.afterFirstUnlockThisDeviceOnly, .afterFirstUnlock])
    func everyBitFlipIsDetected(_ accessibility: KeychainAccessibility) throws {
        let (keychain, id, file, original) = try storedSecret(accessibility)
        var corrupt = 0, foreign = 0
        for offset in 0..<original.count {
            for bit in 0..<8 {
                var flipped = original
                flipped[offset] ^= UInt8(1 << bit)
                try flipped.write(to: file)
                do {
                    _ = try keychain.read(id)
                    Issue.record("flipping bit \(bit) of byte \(offset) went unnoticed")
                } catch KeychainError.corruptItem {
                    corrupt += 1
                } catch KeychainError.boundToAnotherDevice {
                    // Only the device check value (bytes 24..<40) may make an item look foreign.
                    #expect((24..<40).contains(offset) && accessibility.isThisDeviceOnly, "byte \(offset)")
                    foreign += 1
                }
            }
        }
        #expect(corrupt + foreign == original.count * 8)
    }

    @Test func swappedItemFilesAreDetected() throws {
        let keychain = try keychain()
        let a = KeychainItemID(service: "svc", account: "a"), b = KeychainItemID(service: "svc", account: "b")
        try keychain.add(bytes("value a"), for: a, accessibility: .default)
        try keychain.add(bytes("value b"), for: b, accessibility: .default)
        try FileManager.default.removeItem(at: keychain.itemFile(b))
        try FileManager.default.copyItem(at: keychain.itemFile(a), to: keychain.itemFile(b))
        expectCorruptItem(b) { try keychain.read(b) }
    }

    @Test func itemsFromAnotherKeychainFolderAreRejected() throws {
        let keychain = try keychain()
        let other = FileKeychain(directory: folder.child("other"), machineIdentity: try folder.machine("machine-a"))
        let id = KeychainItemID(service: "svc", account: "a")
        try keychain.add(bytes("mine"), for: id, accessibility: .afterFirstUnlock)
        try other.add(bytes("theirs"), for: id, accessibility: .afterFirstUnlock)
        try FileManager.default.removeItem(at: keychain.itemFile(id))
        try FileManager.default.copyItem(at: other.itemFile(id), to: keychain.itemFile(id))
        expectCorruptItem { try keychain.read(id) }
    }

    // MARK: Device binding

    @Test func copiedFolderOnAnotherMachineRefusesDeviceOnlyItems() throws {
        let original = try keychain(machine: "machine-a")
        let deviceOnly = KeychainItemID(service: "svc", account: "mainkey")
        let portable = KeychainItemID(service: "svc", account: "setting", accessGroup: .shared)
        try original.add(bytes("device secret"), for: deviceOnly, accessibility: .afterFirstUnlockThisDeviceOnly)
        try original.add(bytes("portable"), for: portable, accessibility: .afterFirstUnlock)

        let copy = folder.child("restored-backup")
        try FileManager.default.copyItem(at: root, to: copy)
        // The same machine reads its backup back.
        let sameMachine = FileKeychain(directory: copy, machineIdentity: try folder.machine("machine-a"))
        #expect(try contents(sameMachine.read(deviceOnly)) == Array("device secret".utf8))

        let otherMachine = FileKeychain(directory: copy, machineIdentity: try folder.machine("machine-b"))
        #expect(throws: KeychainError.boundToAnotherDevice(deviceOnly)) { try otherMachine.read(deviceOnly) }
        #expect(try contents(otherMachine.read(portable)) == Array("portable".utf8))
        // The addresses stay visible, so the stale items can still be listed and wiped.
        #expect(try otherMachine.itemIDs(accessGroup: .app) == [deviceOnly])
        // A new login on the other machine overwrites the stale item, now bound to it.
        try otherMachine.set(bytes("new device secret"), for: deviceOnly)
        #expect(try contents(otherMachine.read(deviceOnly)) == Array("new device secret".utf8))
        #expect(throws: KeychainError.boundToAnotherDevice(deviceOnly)) { try sameMachine.read(deviceOnly) }
    }

    /// The limit of the device binding, shown: the machine-id is not a secret, so a copy of the
    /// folder together with the machine-id file opens the this-device-only items on any machine.
    @Test func aCopyTogetherWithTheMachineIDOpensAnywhere() throws {
        let original = try keychain(machine: "machine-a")
        let deviceOnly = KeychainItemID(service: "svc", account: "mainkey")
        try original.add(bytes("device secret"), for: deviceOnly, accessibility: .afterFirstUnlockThisDeviceOnly)
        let copy = folder.child("full-disk-image")
        try FileManager.default.copyItem(at: root, to: copy)
        // The attacker's machine, given the copied /etc/machine-id (same bytes, another path).
        let stolenID = folder.child("stolen-machine-id")
        try FileManager.default.copyItem(at: try #require(original.machineIdentity.sources.first), to: stolenID)
        let attacker = FileKeychain(directory: copy, machineIdentity: MachineIdentity(sources: [stolenID]))
        #expect(try contents(attacker.read(deviceOnly)) == Array("device secret".utf8))
    }

    @Test func machineIdentityFallsBackToTheSecondSource() throws {
        let id = KeychainItemID(service: "svc", account: "a")
        let identityFile = folder.child("dbus-machine-id")
        try Data("3d1219c7c4c5404aaa1f6d2a48adfda4\n".utf8).write(to: identityFile)
        let writer = FileKeychain(directory: root, machineIdentity: MachineIdentity(sources: [identityFile]))
        try writer.add(bytes("v"), for: id, accessibility: .default)
        let reader = FileKeychain(directory: root, machineIdentity: MachineIdentity(sources: [folder.child("absent"), identityFile]))
        #expect(try contents(reader.read(id)) == Array("v".utf8))
    }

    @Test func withoutMachineIdentityDeviceOnlyItemsAreRefusedAndPortableOnesWork() throws {
        let keychain = FileKeychain(directory: root, machineIdentity: MachineIdentity(sources: [folder.child("absent")]))
        #expect {
            try keychain.add(bytes("v"), for: KeychainItemID(service: "s", account: "d"), accessibility: .whenUnlockedThisDeviceOnly)
        } throws: { error in
            guard case KeychainError.backendUnavailable = error else { return false }
            return true
        }
        let portable = KeychainItemID(service: "s", account: "p")
        try keychain.add(bytes("v"), for: portable, accessibility: .whenUnlocked)
        #expect(try contents(keychain.read(portable)) == Array("v".utf8))
    }

    // MARK: Layout

    @Test func eachAccessGroupLivesInItsOwnFolder() throws {
        let keychain = try keychain()
        let push = KeychainItemID.user("u1", "push", accessGroup: .shared)
        let main = KeychainItemID.user("u1", "mainkey", accessGroup: .app)
        try keychain.add(bytes("push key"), for: push, accessibility: .default)
        try keychain.add(bytes("main key"), for: main, accessibility: .default)
        #expect(keychain.itemFile(push).deletingLastPathComponent().lastPathComponent == "rampart.shared")
        // A process given only the shared group's folder (here: a root holding nothing else)
        // reads the push key and sees no app item.
        let pushRoot = folder.child("push-process")
        try FileManager.default.createDirectory(at: pushRoot, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try FileManager.default.copyItem(at: keychain.groupDirectory(.shared), to: pushRoot.appendingPathComponent("rampart.shared"))
        let pushProcess = FileKeychain(directory: pushRoot, machineIdentity: try folder.machine("machine-a"))
        #expect(try contents(pushProcess.read(push)) == Array("push key".utf8))
        #expect(throws: KeychainError.notFound(main)) { try pushProcess.read(main) }
    }

    @Test func staleTemporaryFilesAreRemovedByTheNextWriter() throws {
        let (keychain, id) = try keychainHoldingV()
        let stale = keychain.groupDirectory(.app).appendingPathComponent(".\(keychain.itemFile(id).lastPathComponent).DEAD.tmp")
        try Data("half a write".utf8).write(to: stale)
        try keychain.update(bytes("w"), for: id)
        #expect(!FileManager.default.fileExists(atPath: stale.path))
        #expect(try contents(keychain.read(id)) == Array("w".utf8))
    }

    @Test func damagedSaltFileIsReportedAsCorrupt() throws {
        let (keychain, id) = try keychainHoldingV()
        let salt = keychain.groupDirectory(.app).appendingPathComponent("keychain.salt")
        try Data("RKCS".utf8).write(to: salt)
        expectCorruptItem { try keychain.read(id) }
    }

    @Test func factoryChoosesTheBackendFromSettings() throws {
        let home = folder.child("home")
        let file = KeychainBackend.keychain(for: RampartEnvironment(homeDirectory: home))
        #expect((file as? FileKeychain)?.directory.path == home.appendingPathComponent("keychain").path)
        let memory = KeychainBackend.keychain(for: RampartEnvironment(homeDirectory: home, settings: ["keychain.backend": "memory"]))
        #expect(memory is InMemoryKeychain)
        #if canImport(CLibSecret)
        let secretService = KeychainBackend.keychain(for: RampartEnvironment(homeDirectory: home, settings: ["keychain.backend": "secret-service"]))
        #expect(secretService.backendName == "secret-service")
        #endif
        let unknown = KeychainBackend.keychain(for: RampartEnvironment(homeDirectory: home, settings: ["keychain.backend": "plaintext"]))
        #expect {
            try unknown.read(KeychainItemID(service: "s", account: "a"))
        } throws: { error in
            guard case KeychainError.backendUnavailable(let why) = error else { return false }
            return why.contains("plaintext")
        }
        let container = GlobalContainer(environment: RampartEnvironment(homeDirectory: home, settings: ["keychain.backend": "memory"]))
        #expect(container.keychain as AnyObject === container.keychain as AnyObject)
        #expect(container.keychain.backendName == "memory")
    }
}
