import Foundation
import Keychain
import RampartClient
import RampartCore
import SealedStore
import RampartTestSupport
import Testing
@testable import RampartServer

/// The trust model's row **device storage (low)** — rollback of the database, through the
/// command line: someone with the disk puts back an older copy of the user's database (to hide
/// a message that arrived since) and the next command is exit 7 with no mail shown; the same
/// older copy put back together with the rollback anchor's keychain item of that time is not
/// detected (documented: the file keychain is on the same disk); `rampart logout` then login
/// and sync is the way back.
@Suite("Sealed store rolled back on disk (rampart CLI)", .serialized)
struct StoreRollbackCLITests {
    static let hidden = "Hello from Alice"

    func storeFolder(_ world: EndToEndWorld) -> URL {
        world.home.appendingPathComponent("stores/demo", isDirectory: true)
    }

    func anchorItemFile(_ world: EndToEndWorld) -> URL {
        FileKeychain(directory: world.home.appendingPathComponent("keychain", isDirectory: true))
            .itemFile(KeychainStoreRollbackAnchor.item("demo"))
    }

    /// Replaces the user's store folder (database and its -wal/-shm/-journal, whichever exist)
    /// with `copy`, as an attacker restoring an older image would.
    func putBack(_ copy: URL, in world: EndToEndWorld) throws {
        try FileManager.default.removeItem(at: storeFolder(world))
        try FileManager.default.copyItem(at: copy, to: storeFolder(world))
    }

    @Test func anOlderDatabaseIsExit7AndOnlyTheAnchorItemPutBackWithItHidesTheRollback() async throws {
        let world = try EndToEndWorld()
        let (server, info) = try await world.startServerAndLogIn(DemoAccounts.demo, user: "demo")
        defer { server.stopInBackground() }
        let sync = try await world.rampart(["sync", "--user", "demo"])
        #expect(sync.status == 0, "\(sync.stderr)")
        let inbox = try await world.rampart(["list", "--user", "demo"])
        let planningID = try #require(messageID(in: inbox.stdout, subject: "Quarterly planning notes"))

        // The attacker's copy: the whole store folder, and (for the documented limit) the anchor item.
        let olderStore = world.root.appendingPathComponent("older-store", isDirectory: true)
        try FileManager.default.copyItem(at: storeFolder(world), to: olderStore)
        let copied = try FileManager.default.contentsOfDirectory(atPath: olderStore.path)
        #expect(copied.contains("store.sqlite"), "\(copied)")
        let olderAnchorItem = try Data(contentsOf: anchorItemFile(world))

        // A message arrives and is synced: the store's epoch advances past the copy's.
        #expect(try await world.login(DemoAccounts.alice, user: "alice", serverInfo: info).status == 0)
        let send = try await world.rampart(["send", "--user", "alice", "--to", "demo@rampart.test", "--subject", Self.hidden],
                                     stdin: "Are you free on Friday?\n")
        #expect(send.status == 0, "\(send.stderr)")
        #expect(try await world.rampart(["sync", "--user", "demo"]).stdout.contains("Synced: 1 message stored"))
        #expect(try await world.rampart(["list", "--user", "demo"]).stdout.contains(Self.hidden))

        // The older database alone: refused by every command that opens the store, nothing shown.
        try putBack(olderStore, in: world)
        let listed = try await world.rampart(["list", "--user", "demo"])
        #expect(listed.status == 7, "\(listed.stdout)\(listed.stderr)")
        #expect(listed.stdout.isEmpty, "\(listed.stdout)")
        #expect(listed.stderr.contains("an older copy of the store was put back"), "\(listed.stderr)")
        #expect(listed.stderr.contains("Log out and in again"), "\(listed.stderr)")
        let read = try await world.rampart(["read", planningID, "--user", "demo"])
        #expect(read.status == 7, "\(read.stdout)\(read.stderr)")
        #expect(!read.stdout.contains("Quarterly planning notes"))
        // A sync does not paper over it either (the store does not open).
        #expect(try await world.rampart(["sync", "--user", "demo"]).status == 7)

        // The same older database with the anchor item of that time (the keychain folder
        // restored with it): consistent, not detected — the message is hidden until the next sync.
        try olderAnchorItem.write(to: anchorItemFile(world))
        let hiding = try await world.rampart(["list", "--user", "demo"])
        #expect(hiding.status == 0, "\(hiding.stderr)")
        #expect(hiding.stdout.contains("Quarterly planning notes") && !hiding.stdout.contains(Self.hidden), "\(hiding.stdout)")
        #expect(try await world.rampart(["sync", "--user", "demo"]).status == 0)
        #expect(try await world.rampart(["list", "--user", "demo"]).stdout.contains(Self.hidden))

        // The way back from a detected rollback: log out (it does not open the store), log in, sync.
        try putBack(olderStore, in: world)
        #expect(try await world.rampart(["list", "--user", "demo"]).status == 7)
        let logout = try await world.rampart(["logout", "--user", "demo"])
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(logout.stdout.contains("store-rollback-anchor"), "\(logout.stdout)")
        #expect(!FileManager.default.fileExists(atPath: anchorItemFile(world).path))
        #expect(try await world.login(DemoAccounts.demo, user: "demo", serverInfo: info).status == 0)
        #expect(try await world.rampart(["sync", "--user", "demo"]).status == 0)
        let back = try await world.rampart(["list", "--user", "demo"])
        #expect(back.status == 0, "\(back.stderr)")
        #expect(back.stdout.contains(Self.hidden) && back.stdout.contains("Quarterly planning notes"), "\(back.stdout)")
    }
}
