import Foundation
import RampartCore
import RampartRuntime
import Testing

/// Trust-model row **device storage (low)** — rollback: logout and the wipe after too many wrong
/// PINs delete the store's rollback anchor, and before the store, so that a wipe cut short never
/// leaves an anchor without its store (the next, empty store would be refused as rolled back).
@Suite struct UserDataWipesTests {
    @Test func theRollbackAnchorIsWipedBeforeTheStore() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-wipes-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: home) }
        let global = GlobalContainer(environment: RampartEnvironment(homeDirectory: home, settings: ["keychain.backend": "memory"]))
        let tokens = UserDataWipes.register(in: global)
        defer { tokens.forEach { $0.cancel() } }
        let names = global.wipeRegistry.registeredNames
        let anchor = try #require(names.firstIndex(of: "store-rollback-anchor"), "\(names)")
        let store = try #require(names.firstIndex(of: "sealed-store"), "\(names)")
        #expect(anchor < store)
    }
}
