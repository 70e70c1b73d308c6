import Foundation
import Keychain
import Keymaker
@testable import RampartClient
import RampartCore
import RampartTestSupport
import SealedStore
import Testing

/// The sealed store's rollback anchor as the app keeps it: an item of the user's file keychain,
/// with the real Keymaker, store and keychain.
///
/// Trust-model row **device storage (low)** — rollback of the database: an older copy of the
/// database alone is refused; put back together with the anchor item (the keychain folder of the
/// same copy) it is not, as documented; an item that cannot be read or does not authenticate is
/// replaced, so a new login or a new key is never refused forever.
@Suite("Store rollback anchor in the keychain")
struct KeychainStoreRollbackAnchorTests {
    func anchor(_ home: TestHome) -> KeychainStoreRollbackAnchor {
        KeychainStoreRollbackAnchor(keychain: home.global.keychain, userID: home.user.userID)
    }

    func itemFile(_ home: TestHome) -> URL {
        FileKeychain(directory: home.url.appendingPathComponent("keychain", isDirectory: true))
            .itemFile(KeychainStoreRollbackAnchor.item(home.user.userID))
    }

    func storeFolder(_ home: TestHome) -> URL {
        StoreFiles(environment: home.global.environment).directory(for: home.user.userID)
    }

    /// Opens the user's store through the client account (as every command does), runs `body`, closes it.
    func withStore(_ home: TestHome, _ body: (SealedStore) throws -> Void) throws {
        let account = home.account
        defer { account.close() }
        try body(try account.store())
    }

    func epoch(_ record: Data?) -> Int64? {
        guard let record, record.count == 40 else { return nil }
        return record.prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
    }

    func message(_ number: Int) -> MailMessage {
        MailMessage(id: "m\(number)", conversationID: "c\(number)", time: Int64(number), size: 10, labelIDs: ["inbox"],
                    subject: "Subject \(number)", sender: MailAddress(address: "bob@example.org"),
                    recipients: [MailAddress(address: "alice@example.org")], body: "Body \(number)")
    }

    func replaceFolder(_ folder: URL, with copy: URL) throws {
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.copyItem(at: copy, to: folder)
    }

    @Test func theFirstOpenCreatesTheItemThisDeviceOnlyAndEveryCommitAdvancesIt() throws {
        let home = try TestHome()
        try home.user.keymaker.createMainKey()
        #expect(home.user.storeRollbackAnchor is KeychainStoreRollbackAnchor)
        #expect(try anchor(home).load() == nil)

        try withStore(home) { _ in }
        let first = try anchor(home).load()
        #expect(epoch(first) != nil)
        try withStore(home) { store in try store.mail.insert(message: message(1)) }
        let second = try #require(epoch(try anchor(home).load()))
        #expect(second > epoch(first)!)

        // This device only: the same folder read with another machine identity is refused.
        let otherIdentity = home.url.appendingPathComponent("other-machine-id")
        try Data("another machine\n".utf8).write(to: otherIdentity)
        let elsewhere = FileKeychain(directory: home.url.appendingPathComponent("keychain", isDirectory: true),
                                     machineIdentity: MachineIdentity(sources: [otherIdentity]))
        #expect(throws: KeychainError.boundToAnotherDevice(KeychainStoreRollbackAnchor.item(home.user.userID))) {
            try elsewhere.read(KeychainStoreRollbackAnchor.item(home.user.userID))
        }
    }

    @Test func anOlderDatabaseAloneIsRefusedAndWithItsAnchorItemItIsNot() throws {
        let home = try TestHome()
        try home.user.keymaker.createMainKey()
        try withStore(home) { store in try store.mail.insert(message: message(1)) }
        let olderDatabase = home.url.appendingPathComponent("older-store", isDirectory: true)
        try FileManager.default.copyItem(at: storeFolder(home), to: olderDatabase)
        let olderItem = try Data(contentsOf: itemFile(home))

        try withStore(home) { store in
            _ = try store.mail.deleteMessage(id: "m1")
            try store.mail.insert(message: message(2))
        }
        try replaceFolder(storeFolder(home), with: olderDatabase)
        do {
            try withStore(home) { _ in }
            Issue.record("an older copy of the database was opened")
        } catch let error as SealedStoreError {
            #expect(error == .tampered(table: "store_state", column: "*", primaryKey: "1", reason: .rolledBack))
            #expect(error.kind == .tampered)
            #expect(error.description.contains("Log out and in again"))
        }
        // Refused again at the next attempt: the refusal does not lower the anchor.
        #expect(throws: SealedStoreError.self) { try withStore(home) { _ in } }
        // A deleted store folder is a fresh store at epoch 0: older than the anchor, refused too.
        try FileManager.default.removeItem(at: storeFolder(home))
        #expect(throws: SealedStoreError.tampered(table: "store_state", column: "*", primaryKey: "1", reason: .rolledBack)) {
            try withStore(home) { _ in }
        }
        try replaceFolder(storeFolder(home), with: olderDatabase)

        // The same older copy with the anchor item of that time (the keychain folder restored
        // with it): consistent in itself, not detected without a counter outside the disk.
        try olderItem.write(to: itemFile(home))
        try withStore(home) { store throws in
            #expect(try store.mail.message(id: "m1").id == "m1")
            #expect(throws: SealedStoreError.self) { try store.mail.message(id: "m2") }
        }
    }

    @Test func aCorruptItemIsReportedThenReplacedAndAForeignRecordIsNotTrusted() throws {
        let home = try TestHome()
        try home.user.keymaker.createMainKey()
        try withStore(home) { store in try store.mail.insert(message: message(1)) }

        // Corrupt: the keychain's typed error on load; the store replaces it at the next open.
        try Data(repeating: 0x5A, count: 64).write(to: itemFile(home))
        do {
            _ = try anchor(home).load()
            Issue.record("a corrupt anchor item was read")
        } catch let error as KeychainError {
            guard case .corruptItem = error else { Issue.record("unexpected \(error)"); return }
            #expect(error.kind == .tampered)
        }
        try withStore(home) { store throws in #expect(try store.mail.message(id: "m1").id == "m1") }
        let replaced = try #require(epoch(try anchor(home).load()))

        // A record made under another key (an earlier login) does not authenticate: replaced.
        let foreign = Data(repeating: 0x7F, count: 8) + Data(repeating: 0x01, count: 32)
        try anchor(home).save(foreign)
        try withStore(home) { store in try store.mail.insert(message: message(2)) }
        let now = try #require(epoch(try anchor(home).load()))
        #expect(now > replaced && now != epoch(foreign))
    }

    @Test func logoutDeletesTheItemEvenCorruptAndTheNextLoginsStoreOpens() throws {
        let home = try TestHome()
        let wipe = home.global.wipeRegistry.register(KeychainStoreRollbackAnchorWipe(keychain: home.global.keychain))
        defer { wipe.cancel() }
        try home.user.keymaker.createMainKey()
        try withStore(home) { store in
            for number in 1...3 { try store.mail.insert(message: message(number)) }
        }
        let oldRecord = try #require(try anchor(home).load())
        // An unreadable item is not matched by the keychain's per-user deletion (its address is
        // inside the part that does not parse); the anchor's own wipe removes it by address.
        try Data(repeating: 0x5A, count: 64).write(to: itemFile(home))
        let report = home.user.keymaker.logout()
        #expect(report.isComplete, "\(report.failures)")
        #expect(report.wiped.contains("store-rollback-anchor"))
        #expect(!FileManager.default.fileExists(atPath: itemFile(home).path))
        #expect(!FileManager.default.fileExists(atPath: storeFolder(home).path))

        // The next login: a new key and an empty store, even with the old account's record left
        // behind (a wipe cut short) — it does not authenticate under the new key.
        try home.user.keymaker.createMainKey()
        try anchor(home).save(oldRecord)
        try withStore(home) { store throws in #expect(try store.mail.messages(label: "inbox", limit: 10).isEmpty) }
        #expect(try anchor(home).load() != oldRecord)
    }
}
