import Foundation
import Testing
@testable import RampartCore

@Suite("SecretBytes and MainKey")
struct SecretBytesTests {
    @Test func descriptionNeverShowsTheBytes() throws {
        let secret = SecretBytes(copying: Array("hunter2-hunter2".utf8))
        var dumped = ""
        dump(secret, to: &dumped)
        for text in [String(describing: secret), "\(secret)", String(reflecting: secret), dumped] {
            #expect(!text.contains("hunter2"))
            #expect(text.contains("redacted"))
        }
        let key = MainKey.generate()
        let hex = try key.withUnsafeKeyBytes { $0.map { String(format: "%02x", $0) }.joined() }
        var keyDump = ""
        dump(key, to: &keyDump)
        #expect(!"\(key)".contains(hex))
        #expect(!keyDump.contains(hex))
    }

    @Test func wipeZeroizesAndBlocksAccess() throws {
        let secret = SecretBytes(copying: [1, 2, 3, 4])
        #expect(try secret.withUnsafeBytes { Array($0) } == [1, 2, 3, 4])
        secret.wipe()
        #expect(secret.wiped)
        #expect(throws: SecretError.wiped) { try secret.withUnsafeBytes { Array($0) } }
    }

    @Test func equalityComparesContentAndLength() {
        let a = SecretBytes(copying: [1, 2, 3])
        #expect(a == SecretBytes(copying: [1, 2, 3]))
        #expect(a != SecretBytes(copying: [1, 2, 4]))
        #expect(a != SecretBytes(copying: [1, 2]))
        let wiped = SecretBytes(copying: [1, 2, 3])
        wiped.wipe()
        #expect(a != wiped)
    }

    @Test func consumingInitZeroizesTheSourceArray() throws {
        var source: [UInt8] = [9, 9, 9]
        let secret = SecretBytes(consuming: &source)
        #expect(source.isEmpty)
        #expect(try secret.withUnsafeBytes { Array($0) } == [9, 9, 9])
    }

    @Test func randomSecretsDiffer() {
        #expect(SecretBytes(randomCount: 32) != SecretBytes(randomCount: 32))
    }

    @Test func derivedKeysArePerPurposeAndStable() throws {
        let key = MainKey.generate()
        let a1 = try key.derivedKey(for: KeyPurpose("store.columns", context: "u1"))
        let a2 = try key.derivedKey(for: KeyPurpose("store.columns", context: "u1"))
        let b = try key.derivedKey(for: KeyPurpose("store.columns", context: "u2"))
        let c = try key.derivedKey(for: KeyPurpose("store.column", context: "su1"))
        let bytes = { (k: DerivedKey) in try k.withUnsafeBytes { Array($0) } }
        #expect(try bytes(a1) == bytes(a2))
        #expect(try bytes(a1) != bytes(b))
        #expect(try bytes(a1) != bytes(c))
        let otherMain = MainKey.generate()
        #expect(try bytes(a1) != bytes(otherMain.derivedKey(for: KeyPurpose("store.columns", context: "u1"))))
    }

    @Test func wipingTheMainKeyWipesEveryDerivedKey() throws {
        let key = MainKey.generate()
        let derived = try key.derivedKey(for: KeyPurpose("x"))
        key.wipe()
        #expect(derived.isWiped)
        #expect(throws: SecretError.wiped) { try derived.withUnsafeBytes { _ in () } }
        #expect(throws: SecretError.wiped) { try key.derivedKey(for: KeyPurpose("y")) }
    }

    @Test func adoptingRejectsWrongLength() {
        #expect(throws: MainKeyError.invalidLength(16)) { try MainKey(adopting: SecretBytes(randomCount: 16)) }
    }
}

@Suite("MainKeySession")
struct MainKeySessionTests {
    @Test func lockWipesTheKeyBeforeObserversRun() throws {
        let session = MainKeySession(userID: "u1")
        #expect(throws: LockedError.self) { try session.currentMainKey() }
        let key = MainKey.generate()
        session.unlock(with: key)
        let seenWiped = LockedBox(false)
        let token = session.observeLifecycle { event in
            if case .locked = event { seenWiped.value = key.isWiped }
        }
        session.lock(reason: .userRequest)
        #expect(seenWiped.value)
        #expect(!session.isUnlocked)
        #expect(throws: LockedError.self) { try session.currentMainKey() }
        token.cancel()
    }

    @Test func lifecycleEventsAreStreamed() async throws {
        let session = MainKeySession(userID: "u1")
        let stream = session.lifecycleEvents()
        session.unlock(with: .generate())
        session.lock(reason: .autolockTimeout)
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() == .unlocked("u1"))
        #expect(await iterator.next() == .locked("u1", reason: .autolockTimeout))
    }
}

@Suite("Containers")
struct ContainerTests {
    final class Counter: @unchecked Sendable { var made = 0 }

    @Test func instancesAreLazyAndCached() {
        let global = GlobalContainer(environment: RampartEnvironment(homeDirectory: URL(fileURLWithPath: "/tmp/none")))
        let key = DependencyKey<NSObject>("thing")
        let counter = Counter()
        let first = global.resolve(key) { counter.made += 1; return NSObject() }
        let second = global.resolve(key) { counter.made += 1; return NSObject() }
        #expect(first === second)
        #expect(counter.made == 1)
        #expect(global.wipeRegistry === global.wipeRegistry)
        let user = UserContainer(userID: "u1", global: global)
        #expect(user.wipeRegistry === global.wipeRegistry)
    }
}

final class LockedBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T
    init(_ value: T) { stored = value }
    var value: T {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
