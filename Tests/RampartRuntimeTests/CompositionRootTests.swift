import Foundation
import HardwareKeys
import Keychain
import Keymaker
import RampartCore
import RampartRuntime
import SealedStore
import Testing

/// The composition root: every process role gets the same configuration of what keeps the data
/// safe (trust-model rows **keychain (low)**, **secure hardware (high)**, **device storage (low)**).
@Suite struct CompositionRootTests {
    static func home() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("rampart-root-\(UUID().uuidString)")
    }

    /// Every role that unwraps a MainKey has every protector of this machine (the agent once had
    /// no hardware ones); the notification process has none, so it cannot unwrap the MainKey.
    @Test(arguments: ProcessRole.allCases)
    func eachRolesContainerHasEveryProtector(role: ProcessRole) throws {
        let home = Self.home()
        defer { try? FileManager.default.removeItem(at: home) }
        let global = CompositionRoot.global(role: role, environment: RampartEnvironment(
            homeDirectory: home, settings: ["keychain.backend": "memory", "pin.kdf.logN": "10"]))
        #expect(global.processRole == role)
        let user = CompositionRoot.user("carol", in: global)
        let kinds = user.keymaker.configuration.protectors.map(\.kind)
        if role.unwrapsMainKey {
            #expect(kinds == [.none, .pin, .hardware, .hardwarePIN], "\(role): \(kinds)")
        } else {
            #expect(kinds.isEmpty, "\(role): \(kinds)")
        }
        // Every wipe is registered in every role: a wipe started anywhere erases everything.
        #expect(global.wipeRegistry.registeredNames.count == 6, "\(global.wipeRegistry.registeredNames)")
    }

    /// The user container opens the store with its MainKey provider: the Keymaker by default, the
    /// provider the root was given otherwise (the agent's); checked by the compiler, not a cast.
    @Test func theStoreOpensWithTheUsersProviderAndReopensAfterClose() throws {
        let home = Self.home()
        defer { try? FileManager.default.removeItem(at: home) }
        let global = CompositionRoot.global(role: .command, environment: RampartEnvironment(
            homeDirectory: home, settings: ["keychain.backend": "memory", "pin.kdf.logN": "10"]))
        let dave = CompositionRoot.user("dave", in: global)
        #expect(throws: SealedStoreError.self) { _ = try dave.sealedStore }
        try dave.keymaker.createMainKey()
        let store = try dave.sealedStore
        let again = try dave.sealedStore
        #expect(ObjectIdentifier(again) == ObjectIdentifier(store), "one store per container while it is open")
        dave.closeSealedStore()
        #expect(!store.isOpen)
        let reopened = try dave.sealedStore
        #expect(ObjectIdentifier(reopened) != ObjectIdentifier(store))
        #expect(reopened.isOpen)
        #expect(dave.storeRollbackAnchor is KeychainStoreRollbackAnchor)

        // Another provider (as the agent's would be): the store opens with it, not the Keymaker.
        let other = CompositionRoot.user("dave", in: global, keys: dave.keymaker)
        let provider = other.mainKeyProvider as AnyObject
        #expect(ObjectIdentifier(provider) == ObjectIdentifier(dave.keymaker))
        #expect(ObjectIdentifier(other.keymaker) != ObjectIdentifier(dave.keymaker))
        dave.keymaker.lock()
        dave.closeSealedStore()
        #expect(throws: SealedStoreError.self) { _ = try other.sealedStore }
    }

    /// Logout leaves no file whose name is the user's: the PIN-attempt lock file goes too.
    @Test func aWipeRemovesThePINAttemptLockFile() throws {
        let home = Self.home()
        defer { try? FileManager.default.removeItem(at: home) }
        let global = CompositionRoot.global(role: .command, environment: RampartEnvironment(
            homeDirectory: home, settings: ["keychain.backend": "memory", "pin.kdf.logN": "10"]))
        try PrivateFiles.ensurePrivateDirectory(home)
        let erin = CompositionRoot.user("erin", in: global)
        try erin.keymaker.createMainKey()
        try erin.keymaker.activate(.pin, credential: .pin(SecretBytes(copying: Array("482913".utf8))))
        erin.keymaker.lock()
        #expect(throws: KeymakerError.self) { try erin.keymaker.unlock(.pin(SecretBytes(copying: Array("111111".utf8)))) }
        let lockFile = erin.pinAttemptLockFile
        #expect(FileManager.default.fileExists(atPath: lockFile.path), "a PIN attempt holds the lock file")
        let report = erin.keymaker.logout()
        #expect(report.isComplete, "\(report.failures)")
        #expect(!FileManager.default.fileExists(atPath: lockFile.path))
        let names = try FileManager.default.subpathsOfDirectory(atPath: home.path)
        #expect(names.filter { $0.contains("erin") }.isEmpty, "\(names)")
    }
}
