import Foundation
import Keychain
import RampartCore
import Testing

@Suite("In-memory keychain contract")
struct InMemoryKeychainTests {
    let id = KeychainItemID(service: "s", account: "a", accessGroup: .app)

    @Test func addReadUpdateDeleteFollowTheContract() throws {
        let keychain = InMemoryKeychain()
        #expect(throws: KeychainError.notFound(id)) { try keychain.read(id) }
        try keychain.add(SecretBytes(copying: [1, 2]), for: id, accessibility: .default)
        #expect(throws: KeychainError.duplicate(id)) {
            try keychain.add(SecretBytes(copying: [3]), for: id, accessibility: .default)
        }
        #expect(try keychain.read(id) == SecretBytes(copying: [1, 2]))
        try keychain.update(SecretBytes(copying: [7]), for: id)
        #expect(try keychain.read(id) == SecretBytes(copying: [7]))
        #expect(keychain.accessibility(of: id) == .afterFirstUnlockThisDeviceOnly)
        try keychain.delete(id)
        #expect(throws: KeychainError.notFound(id)) { try keychain.delete(id) }
        #expect(throws: KeychainError.notFound(id)) { try keychain.update(SecretBytes(copying: [1]), for: id) }
    }

    @Test func accessGroupsAreIsolated() throws {
        let keychain = InMemoryKeychain()
        let shared = KeychainItemID(service: "s", account: "a", accessGroup: .shared)
        try keychain.add(SecretBytes(copying: [1]), for: id, accessibility: .default)
        #expect(throws: KeychainError.notFound(shared)) { try keychain.read(shared) }
        try keychain.deleteAll(accessGroup: .shared)
        #expect(try keychain.itemIDs(accessGroup: .app) == [id])
        try keychain.deleteAll(accessGroup: .app)
        #expect(try keychain.itemIDs(accessGroup: .app).isEmpty)
    }

    @Test func userWipeRemovesOnlyThatUsersItems() throws {
        let keychain = InMemoryKeychain()
        let mine = KeychainItemID.user("u1", "mainkey")
        let minePush = KeychainItemID.user("u1", "push", accessGroup: .shared)
        let theirs = KeychainItemID.user("u2", "mainkey")
        for item in [mine, minePush, theirs] { try keychain.set(SecretBytes(copying: [1]), for: item) }
        try KeychainUserWipe(keychain: keychain).wipe(user: "u1")
        #expect(try keychain.readIfPresent(mine) == nil)
        #expect(try keychain.readIfPresent(minePush) == nil)
        #expect(try keychain.readIfPresent(theirs) != nil)
    }
}
