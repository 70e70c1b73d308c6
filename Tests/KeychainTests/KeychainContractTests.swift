import Foundation
import Keychain
import RampartCore
import Testing

/// A backend under the shared contract, with a fresh, isolated keychain per test.
struct ContractBackend: CustomTestStringConvertible, Sendable {
    let name: String
    let make: @Sendable () throws -> ContractKeychain

    var testDescription: String { name }

    /// Every backend that runs here. The Secret Service is left out (with the reason printed)
    /// only when it cannot start and CI did not promise it.
    static var all: [ContractBackend] {
        var backends = [
            ContractBackend(name: "memory") { ContractKeychain(keychain: InMemoryKeychain(), groups: .standard) },
            ContractBackend(name: "file") {
                let folder = TemporaryFolder()
                let keychain = FileKeychain(directory: folder.child("keychain"), machineIdentity: try folder.machine("contract-machine"))
                return ContractKeychain(keychain: keychain, groups: .standard, keepAlive: folder)
            },
        ]
        #if canImport(CLibSecret)
        if SecretServiceAvailability.shouldRun {
            backends.append(ContractBackend(name: "secret-service") {
                if let reason = SecretServiceAvailability.unavailableReason {
                    throw KeychainError.backendUnavailable("CI promised a Secret Service (RAMPART_SECRET_SERVICE=1) but: \(reason)")
                }
                // The Secret Service is shared by every test: unique groups keep tests apart.
                return ContractKeychain(keychain: SecretServiceKeychain(), groups: .unique())
            })
        }
        #endif
        return backends
    }
}

/// The two access groups a contract test uses.
struct ContractGroups: Sendable {
    let app: KeychainAccessGroup
    let shared: KeychainAccessGroup
    static let standard = ContractGroups(app: .app, shared: .shared)
    static func unique() -> ContractGroups {
        let tag = UUID().uuidString.prefix(8).lowercased()
        return ContractGroups(app: KeychainAccessGroup("t\(tag).app"), shared: KeychainAccessGroup("t\(tag).shared"))
    }
}

/// A keychain under test, cleaned when released.
final class ContractKeychain: @unchecked Sendable {
    let keychain: any Keychain
    let groups: ContractGroups
    private let keepAlive: AnyObject?

    init(keychain: any Keychain, groups: ContractGroups, keepAlive: AnyObject? = nil) {
        self.keychain = keychain
        self.groups = groups
        self.keepAlive = keepAlive
    }

    deinit {
        try? keychain.deleteAll(accessGroup: groups.app)
        try? keychain.deleteAll(accessGroup: groups.shared)
    }

    func id(_ service: String, _ account: String, shared: Bool = false) -> KeychainItemID {
        KeychainItemID(service: service, account: account, accessGroup: shared ? groups.shared : groups.app)
    }

    /// The stored value of `id`, as text.
    func value(_ id: KeychainItemID) throws -> String {
        String(decoding: try contents(keychain.read(id)), as: UTF8.self)
    }

    /// The accessibility recorded by the backend (each persistent backend can tell).
    func accessibility(of id: KeychainItemID) throws -> KeychainAccessibility? {
        switch keychain {
        case let memory as InMemoryKeychain: return memory.accessibility(of: id)
        case let file as FileKeychain: return try file.accessibility(of: id)
        default:
            #if canImport(CLibSecret)
            if let secretService = keychain as? SecretServiceKeychain { return try secretService.accessibility(of: id) }
            #endif
            return nil
        }
    }
}

/// The contract every ``Keychain`` backend obeys (see the `Keychain` protocol's documentation),
/// run against the in-memory, file and Secret Service backends alike.
@Suite("Keychain contract (every backend)")
struct KeychainContractTests {
    @Test("an added item reads back byte for byte", arguments: ContractBackend.all)
    func addedItemReadsBackExactly(_ backend: ContractBackend) throws {
        let subject = try backend.make()
        let values: [[UInt8]] = [
            [],
            [0],
            Array("hunter2".utf8),
            (0..<256).map { UInt8($0) },
            (0..<KeychainLimits.maximumValueSize).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) },
        ]
        for (index, value) in values.enumerated() {
            let id = subject.id("svc", "value-\(index)")
            try subject.keychain.add(SecretBytes(copying: value), for: id, accessibility: .default)
            #expect(try contents(subject.keychain.read(id)) == value, "value \(index) of \(value.count) bytes")
        }
    }

    @Test("adding an existing item throws duplicate and keeps the old value", arguments: ContractBackend.all)
    func addingAnExistingItemIsADuplicate(_ backend: ContractBackend) throws {
        let subject = try backend.make()
        let id = subject.id("svc", "acct")
        try subject.keychain.add(bytes("first"), for: id, accessibility: .default)
        #expect(throws: KeychainError.duplicate(id)) {
            try subject.keychain.add(bytes("second"), for: id, accessibility: .afterFirstUnlock)
        }
        #expect(try subject.value(id) == "first")
    }

    @Test("reading, updating or deleting a missing item throws notFound", arguments: ContractBackend.all)
    func missingItemsAreNotFound(_ backend: ContractBackend) throws {
        let subject = try backend.make()
        let id = subject.id("svc", "missing")
        #expect(throws: KeychainError.notFound(id)) { try subject.keychain.read(id) }
        #expect(throws: KeychainError.notFound(id)) { try subject.keychain.update(bytes("x"), for: id) }
        #expect(throws: KeychainError.notFound(id)) { try subject.keychain.delete(id) }
        #expect(try subject.keychain.readIfPresent(id) == nil)
        #expect(try subject.keychain.deleteIfPresent(id) == false)
    }

    @Test("update replaces the value and keeps the accessibility", arguments: ContractBackend.all)
    func updateKeepsAccessibility(_ backend: ContractBackend) throws {
        let subject = try backend.make()
        for accessibility in KeychainAccessibility.allCases {
            let id = subject.id("svc", accessibility.rawValue)
            try subject.keychain.add(bytes("old"), for: id, accessibility: accessibility)
            try subject.keychain.update(bytes("new value"), for: id)
            #expect(try subject.value(id) == "new value")
            #expect(try subject.accessibility(of: id) == accessibility)
        }
        #expect(try subject.keychain.itemIDs(accessGroup: subject.groups.app).count == KeychainAccessibility.allCases.count)
    }

    @Test("set adds, then updates", arguments: ContractBackend.all)
    func setAddsThenUpdates(_ backend: ContractBackend) throws {
        let subject = try backend.make()
        let id = subject.id("svc", "set")
        try subject.keychain.set(bytes("one"), for: id)
        try subject.keychain.set(bytes("two"), for: id)
        #expect(try subject.value(id) == "two")
        #expect(try subject.accessibility(of: id) == .default)
    }

    @Test("delete removes only that item", arguments: ContractBackend.all)
    func deleteRemovesOnlyThatItem(_ backend: ContractBackend) throws {
        let subject = try backend.make()
        let a = subject.id("svc", "a"), b = subject.id("svc", "b")
        try subject.keychain.add(bytes("a"), for: a, accessibility: .default)
        try subject.keychain.add(bytes("b"), for: b, accessibility: .default)
        try subject.keychain.delete(a)
        #expect(try subject.keychain.readIfPresent(a) == nil)
        #expect(try subject.value(b) == "b")
        // Deleted means gone: it can be added again.
        try subject.keychain.add(bytes("a2"), for: a, accessibility: .default)
        #expect(try subject.value(a) == "a2")
    }

    @Test("items of one access group are invisible to another", arguments: ContractBackend.all)
    func accessGroupsAreIsolated(_ backend: ContractBackend) throws {
        let subject = try backend.make()
        let inApp = subject.id("svc", "acct")
        let inShared = subject.id("svc", "acct", shared: true)
        try subject.keychain.add(bytes("app"), for: inApp, accessibility: .default)
        #expect(throws: KeychainError.notFound(inShared)) { try subject.keychain.read(inShared) }
        try subject.keychain.add(bytes("shared"), for: inShared, accessibility: .default)
        #expect(try subject.value(inApp) == "app")
        #expect(try subject.value(inShared) == "shared")
        try subject.keychain.deleteAll(accessGroup: subject.groups.shared)
        #expect(try subject.keychain.itemIDs(accessGroup: subject.groups.shared).isEmpty)
        #expect(try subject.keychain.itemIDs(accessGroup: subject.groups.app) == [inApp])
    }

    @Test("deleteAll(service:) removes that service in that group only", arguments: ContractBackend.all)
    func deleteAllServiceIsScoped(_ backend: ContractBackend) throws {
        let subject = try backend.make()
        let doomed = [subject.id("user.1", "a"), subject.id("user.1", "b")]
        let kept = [subject.id("user.2", "a"), subject.id("user.1", "a", shared: true)]
        for id in doomed + kept { try subject.keychain.add(bytes(id.description), for: id, accessibility: .default) }
        try subject.keychain.deleteAll(service: "user.1", accessGroup: subject.groups.app)
        for id in doomed { #expect(try subject.keychain.readIfPresent(id) == nil) }
        for id in kept { #expect(try contents(subject.keychain.read(id)) == Array(id.description.utf8)) }
        // Nothing left to match is not an error.
        try subject.keychain.deleteAll(service: "user.1", accessGroup: subject.groups.app)
        try subject.keychain.deleteAll(service: "never-used", accessGroup: subject.groups.app)
    }

    @Test("itemIDs lists addresses sorted by service then account", arguments: ContractBackend.all)
    func itemIDsAreSorted(_ backend: ContractBackend) throws {
        let subject = try backend.make()
        #expect(try subject.keychain.itemIDs(accessGroup: subject.groups.app).isEmpty)
        let ids = [subject.id("b", "2"), subject.id("a", "z"), subject.id("b", "1"), subject.id("a", "a")]
        for id in ids { try subject.keychain.add(bytes("v"), for: id, accessibility: .afterFirstUnlock) }
        #expect(try subject.keychain.itemIDs(accessGroup: subject.groups.app)
                == [subject.id("a", "a"), subject.id("a", "z"), subject.id("b", "1"), subject.id("b", "2")])
    }

    @Test("unusual service and account names are stored as given", arguments: ContractBackend.all)
    func unusualNamesRoundTrip(_ backend: ContractBackend) throws {
        let subject = try backend.make()
        let names = [("../..", "/etc/passwd"), ("ünïcødé ✓", "账户"), ("with space", "a:b;c=d"), ("x", String(repeating: "k", count: 1000))]
        for (service, account) in names {
            let id = subject.id(service, account)
            try subject.keychain.add(bytes("\(service)|\(account)"), for: id, accessibility: .default)
        }
        for (service, account) in names {
            #expect(try contents(subject.keychain.read(subject.id(service, account))) == Array("\(service)|\(account)".utf8))
        }
        #expect(try Set(subject.keychain.itemIDs(accessGroup: subject.groups.app)) == Set(names.map { subject.id($0.0, $0.1) }))
    }

    @Test("values above the limit are refused with itemTooLarge", arguments: ContractBackend.all)
    func oversizedValuesAreRefused(_ backend: ContractBackend) throws {
        let subject = try backend.make()
        let id = subject.id("svc", "big")
        let big = SecretBytes(count: KeychainLimits.maximumValueSize + 1) { _ in }
        #expect(throws: KeychainError.itemTooLarge(id, size: big.count, limit: KeychainLimits.maximumValueSize)) {
            try subject.keychain.add(big, for: id, accessibility: .default)
        }
        try subject.keychain.add(bytes("small"), for: id, accessibility: .default)
        #expect(throws: KeychainError.itemTooLarge(id, size: big.count, limit: KeychainLimits.maximumValueSize)) {
            try subject.keychain.update(big, for: id)
        }
        #expect(try subject.value(id) == "small")
    }

    @Test("a user wipe removes that user's items in every group, and no one else's", arguments: ContractBackend.all)
    func userWipeIsScopedToTheUser(_ backend: ContractBackend) throws {
        let subject = try backend.make()
        let groups = [subject.groups.app, subject.groups.shared]
        let mine = KeychainItemID.user("u1", "mainkey", accessGroup: subject.groups.app)
        let minePush = KeychainItemID.user("u1", "push", accessGroup: subject.groups.shared)
        let theirs = KeychainItemID.user("u2", "mainkey", accessGroup: subject.groups.app)
        for id in [mine, minePush, theirs] { try subject.keychain.set(bytes("k"), for: id) }
        try KeychainUserWipe(keychain: subject.keychain, accessGroups: groups).wipe(user: "u1")
        #expect(try subject.keychain.readIfPresent(mine) == nil)
        #expect(try subject.keychain.readIfPresent(minePush) == nil)
        #expect(try subject.keychain.readIfPresent(theirs) != nil)
    }

    @Test("values written from several threads are all kept", arguments: ContractBackend.all)
    func concurrentWritersInOneProcessLoseNothing(_ backend: ContractBackend) throws {
        let subject = try backend.make()
        let keychain = subject.keychain
        let ids = (0..<32).map { subject.id("threads", "item-\($0)") }
        DispatchQueue.concurrentPerform(iterations: ids.count) { index in
            try? keychain.add(bytes("value-\(index)"), for: ids[index], accessibility: .default)
        }
        for (index, id) in ids.enumerated() {
            #expect(try contents(keychain.read(id)) == Array("value-\(index)".utf8))
        }
    }
}
