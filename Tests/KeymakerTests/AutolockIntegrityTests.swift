import Foundation
import Keychain
import RampartCore
import Testing
@testable import Keymaker

/// The enforced autolock policy is a keychain item: someone who can write the keychain folder
/// (the disk, a backup restored with changes) must not be able to lengthen it.
@Suite("Keymaker: autolock policy integrity")
struct AutolockIntegrityTests {
    /// A file keychain in a fresh private folder, removed at the end of the test.
    final class KeychainFolder {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-autolock-\(UUID().uuidString)")
        var keychain: FileKeychain { FileKeychain(directory: url) }
        deinit { try? FileManager.default.removeItem(at: url) }
    }

    /// A Keymaker as a new process would make it: fresh state, read from the keychain folder.
    static func keymaker(_ folder: KeychainFolder, clock: ManualClock) -> Keymaker {
        var deps = KeymakerDependencies()
        deps.keychain = folder.keychain
        deps.clock = clock
        return Keymaker(userID: "u1", dependencies: deps,
                        configuration: .init(protectors: [NoneProtector(), floorPIN], autolock: .afterMinutes(5)))
    }

    static func setUpWithOneMinute(_ folder: KeychainFolder, clock: ManualClock) throws {
        let keymaker = keymaker(folder, clock: clock)
        try keymaker.createMainKey()
        try keymaker.activate(.pin, credential: .pin(pin("1234")))
        try keymaker.setAutolockPolicy(.afterMinutes(1))
        keymaker.lock()
    }

    @Test func theChosenPolicyHoldsInTheNextProcess() throws {
        let folder = KeychainFolder(), clock = ManualClock()
        try Self.setUpWithOneMinute(folder, clock: clock)
        let next = Self.keymaker(folder, clock: clock)
        try next.unlock(.pin(pin("1234")))
        #expect(next.autolockPolicy == .afterMinutes(1))
        #expect(next.autolockWarning == nil)
    }

    @Test func aPolicyEditedOnDiskIsNotHonoured() throws {
        let folder = KeychainFolder(), clock = ManualClock()
        try Self.setUpWithOneMinute(folder, clock: clock)
        // The attacker rewrites the item with a longer delay (the keychain folder's own key is
        // on the same disk, so the file keychain's encryption does not stop this).
        try folder.keychain.set(SecretBytes(copying: Array("60".utf8)), for: Keymaker.autolockItem("u1"))

        let next = Self.keymaker(folder, clock: clock)
        try next.unlock(.pin(pin("1234")))
        #expect(next.autolockPolicy != .afterMinutes(60))
        clock.advance(by: 61)
        #expect(next.checkAutolock() == .autolockTimeout, "the edited delay must not keep the key in memory past a minute")
        #expect(next.autolockWarning == .authenticationFailed)
        #expect(try next.status().autolockWarning != nil)
    }

    @Test func aDeletedPolicyFallsBackToTheShortestDelay() throws {
        let folder = KeychainFolder(), clock = ManualClock()
        try Self.setUpWithOneMinute(folder, clock: clock)
        try folder.keychain.delete(Keymaker.autolockItem("u1"))
        let next = Self.keymaker(folder, clock: clock)
        try next.unlock(.pin(pin("1234")))
        clock.advance(by: 61)
        #expect(next.checkAutolock() == .autolockTimeout, "deleting the item must not bring back the longer default")
        #expect(next.autolockWarning == .missing)
    }

    @Test func theAuthenticatedValueOfAnotherAccountIsRefused() throws {
        let folder = KeychainFolder(), other = KeychainFolder(), clock = ManualClock()
        try Self.setUpWithOneMinute(folder, clock: clock)
        let stranger = Self.keymaker(other, clock: clock)
        try stranger.createMainKey()
        try stranger.setAutolockPolicy(.never)
        try folder.keychain.set(try other.keychain.read(Keymaker.autolockItem("u1")), for: Keymaker.autolockItem("u1"))
        let next = Self.keymaker(folder, clock: clock)
        try next.unlock(.pin(pin("1234")))
        #expect(next.autolockPolicy == .afterMinutes(1))
        #expect(next.autolockWarning == .authenticationFailed)
    }

    @Test func settingThePolicyNeedsTheUnlockedMainKey() throws {
        let folder = KeychainFolder(), clock = ManualClock()
        try Self.setUpWithOneMinute(folder, clock: clock)
        let locked = Self.keymaker(folder, clock: clock)
        #expect(throws: LockedError.self) { try locked.setAutolockPolicy(.never) }
    }
}
