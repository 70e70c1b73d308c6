import Foundation
import GRDB
import Keymaker
import RampartCore
import Testing
@testable import SealedStore

@Suite struct FilesAndWipeTests {
    func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as! NSNumber).intValue & 0o777
    }

    @Test func databaseIsPrivateWALWithSecureDelete() throws {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(message: sampleMessage(1))
        let user = fixture.session.userID
        #expect(try mode(fixture.files.root.path) == 0o700)
        #expect(try mode(fixture.files.directory(for: user).path) == 0o700)
        let existing = fixture.files.databaseFiles(for: user).filter { FileManager.default.fileExists(atPath: $0.path) }
        #expect(existing.map(\.lastPathComponent).contains("store.sqlite-wal"))
        for file in existing { #expect(try mode(file.path) == 0o600, "\(file.lastPathComponent)") }
        let pragmas = try fixture.store.currentPool!.read { db in
            (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA secure_delete"))
        }
        #expect(pragmas.0 == "wal")
        #expect(pragmas.1 == 1)
        #if os(Linux)
        let tag = fixture.files.directory(for: user).appendingPathComponent("CACHEDIR.TAG")
        #expect(try String(contentsOf: tag, encoding: .utf8).hasPrefix("Signature: 8a477f597d28d172789f06886806bc55"))
        #endif
    }

    @Test func openFolderWithLaxPermissionsIsRefused() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-lax-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let session = MainKeySession(userID: "dave")
        session.unlock(with: .generate())
        #expect(throws: SealedStoreError.self) { try SealedStore(files: StoreFiles(root: root), keys: session) }
    }

    @Test func wipeRemovesDatabaseWALAndSHMAndClosesTheStore() throws {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(messages: (0..<10).map { sampleMessage($0) })
        let user = fixture.session.userID
        let registry = WipeRegistry()
        let registration = registry.register(SealedStoreWipe(files: fixture.files))
        defer { registration.cancel() }
        let report = registry.wipeAll(user: user)
        #expect(report.isComplete)
        #expect(report.wiped == ["sealed-store"])
        for file in fixture.files.databaseFiles(for: user) { #expect(!FileManager.default.fileExists(atPath: file.path)) }
        #expect(!FileManager.default.fileExists(atPath: fixture.files.directory(for: user).path))
        #expect(!fixture.store.isOpen)
        #expect(throws: SealedStoreError.closed(user)) { try fixture.store.mail.message(id: "msg-1") }
        // Idempotent.
        #expect(registry.wipeAll(user: user).isComplete)
    }

    @Test func wipeOfOneUserLeavesOthersIntact() throws {
        let alice = try StoreFixture(user: "alice")
        let bobSession = MainKeySession(userID: "bob")
        bobSession.unlock(with: .generate())
        let bob = try SealedStore(files: alice.files, keys: bobSession)
        defer { bob.close() }
        try bob.mail.insert(message: sampleMessage(1))
        try alice.store.mail.insert(message: sampleMessage(1))
        try SealedStoreWipe(files: alice.files).wipe(user: "alice")
        #expect(try bob.mail.message(id: "msg-1") == sampleMessage(1))
    }

    @Test func wipeEventFromTheKeymakerClosesTheStore() throws {
        let fixture = try StoreFixture()
        fixture.session.publishWipe(reason: .tooManyFailedAttempts)
        #expect(!fixture.store.isOpen)
    }
}

@Suite struct DependencyInjectionTests {
    @Test func userContainerOpensOneStoreAndRegistersItsWipe() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-di-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: home) }
        let global = GlobalContainer(environment: RampartEnvironment(homeDirectory: home))
        let container = UserContainer(userID: "erin", global: global)
        try container.keymaker.createMainKey()
        let store = try container.sealedStore
        #expect(try container.sealedStore === store)
        try store.mail.insert(message: sampleMessage(1))
        #expect(global.wipeRegistry.registeredNames.contains("sealed-store"))
        #expect(global.wipeRegistry.wipeAll(user: "erin").isComplete)
        #expect(!store.isOpen)
        #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("stores/erin").path))
    }

    @Test func containerRefusesToOpenTheStoreWhileTheKeymakerIsLocked() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-di-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: home) }
        let container = UserContainer(userID: "frank", global: GlobalContainer(environment: RampartEnvironment(homeDirectory: home)))
        try container.keymaker.createMainKey()
        container.keymaker.lock(reason: .userRequest)
        expectLocked { try container.sealedStore }
        try container.keymaker.unlock()
        #expect(try container.sealedStore.isOpen)
    }
}
