import Crypto
import Foundation
import Keychain
import RampartCore
import Testing
@testable import Keymaker

/// The dependencies a Keymaker declares, assembled by hand (the DI pattern: the type sees only
/// `HasKeychain & HasClock & HasWipeRegistry`).
struct KeymakerDependencies: Keymaker.Dependencies {
    var keychain: any Keychain = InMemoryKeychain()
    var clock: any RampartClock = ManualClock()
    var wipeRegistry = WipeRegistry()
}

/// Fast but never-below-floor PIN protector for tests (N = 2^15, the floor).
let floorPIN = PINProtector(strength: .fixed(logN: 15))

func makeKeymaker(_ deps: KeymakerDependencies = KeymakerDependencies(), user: UserID = "u1",
                  maxFailedAttempts: Int = 10, autolock: AutolockPolicy = .never) -> Keymaker {
    Keymaker(userID: user, dependencies: deps, configuration: .init(
        maxFailedAttempts: maxFailedAttempts, protectors: [NoneProtector(), floorPIN], autolock: autolock))
}

/// A keymaker on `clock` (the autolock tests move it by hand).
func makeKeymaker(clock: ManualClock, autolock: AutolockPolicy) -> Keymaker {
    var deps = KeymakerDependencies()
    deps.clock = clock
    return makeKeymaker(deps, autolock: autolock)
}

/// A keymaker whose MainKey is protected by the PIN "1234", locked.
func lockedKeymakerWithPIN1234() throws -> (Keymaker, KeymakerDependencies) {
    let deps = KeymakerDependencies()
    let keymaker = makeKeymaker(deps)
    try keymaker.createMainKey()
    try keymaker.activate(.pin, credential: .pin(pin("1234")))
    keymaker.lock()
    return (keymaker, deps)
}

/// A keymaker on a hand-moved clock whose new MainKey is unlocked (the autolock tests).
func unlockedKeymaker(autolock: AutolockPolicy) throws -> (Keymaker, ManualClock) {
    let clock = ManualClock()
    let keymaker = makeKeymaker(clock: clock, autolock: autolock)
    try keymaker.createMainKey()
    return (keymaker, clock)
}

func pin(_ text: String) -> SecretBytes { SecretBytes(copying: Array(text.utf8)) }

func keyBytes(_ key: MainKey) throws -> [UInt8] { try key.withUnsafeKeyBytes { Array($0) } }

/// A Wipeable that records what it was asked to erase (a real component's contract: idempotent).
final class RecordingWipeable: Wipeable, @unchecked Sendable {
    let lock = NSLock()
    var wipedUsers: [UserID] = []
    var wipeName: String { "recording" }
    func wipe(user: UserID) throws { lock.withLock { wipedUsers.append(user) } }
}

@Suite("Keymaker: protectors")
struct KeymakerProtectorTests {
    @Test func createdKeyStartsUnlockedWithTheNoneProtector() throws {
        let keymaker = makeKeymaker()
        #expect(throws: LockedError.self) { try keymaker.currentMainKey() }
        let key = try keymaker.createMainKey()
        #expect(try keymaker.activeProtectors() == [.none])
        #expect(try keymaker.currentMainKey() === key)
        #expect(throws: KeymakerError.mainKeyAlreadyExists) { try keymaker.createMainKey() }
    }

    @Test func pinProtectedKeyUnlocksOnlyWithThePIN() throws {
        let deps = KeymakerDependencies()
        let keymaker = makeKeymaker(deps)
        let original = try keyBytes(keymaker.createMainKey())
        try keymaker.activate(.pin, credential: .pin(pin("2468")))
        #expect(try keymaker.activeProtectors() == [.pin], "activating the PIN removes the clear copy")
        keymaker.lock()
        #expect(throws: LockedError.self) { try keymaker.currentMainKey() }
        #expect(throws: KeymakerError.pinRequired) { try keymaker.unlock(.none) }
        #expect(throws: KeymakerError.wrongPIN(attemptsLeft: 9)) { try keymaker.unlock(.pin(pin("1357"))) }
        try keymaker.unlock(.pin(pin("2468")))
        #expect(try keyBytes(keymaker.currentMainKey()) == original)
        #expect(try keymaker.failedAttempts() == 0, "a right PIN resets the counter")
        // A second process (a fresh Keymaker over the same keychain) gets the same key.
        let other = makeKeymaker(deps)
        try other.unlock(.pin(pin("2468")))
        #expect(try keyBytes(other.currentMainKey()) == original)
    }

    @Test func changingThePINKeepsTheSameMainKey() throws {
        let keymaker = makeKeymaker()
        let original = try keyBytes(keymaker.createMainKey())
        try keymaker.activate(.pin, credential: .pin(pin("1111")))
        try keymaker.changePIN(from: pin("1111"), to: pin("2222"))
        keymaker.lock()
        #expect(throws: KeymakerError.wrongPIN(attemptsLeft: 9)) { try keymaker.unlock(.pin(pin("1111"))) }
        try keymaker.unlock(.pin(pin("2222")))
        #expect(try keyBytes(keymaker.currentMainKey()) == original)
        #expect(throws: KeymakerError.wrongPIN(attemptsLeft: 9)) { try keymaker.changePIN(from: pin("9999"), to: pin("3333")) }
    }

    @Test func disablingProtectionGoesBackToNoneWithoutDataLoss() throws {
        let keymaker = makeKeymaker()
        let original = try keyBytes(keymaker.createMainKey())
        try keymaker.activate(.pin, credential: .pin(pin("1234")))
        try keymaker.disableProtection()
        #expect(try keymaker.activeProtectors() == [.none])
        keymaker.lock()
        try keymaker.unlock()
        #expect(try keyBytes(keymaker.currentMainKey()) == original)
    }

    @Test func theLastProtectorCannotBeRemoved() throws {
        let keymaker = makeKeymaker()
        try keymaker.createMainKey()
        #expect(throws: KeymakerError.cannotRemoveLastProtector) { try keymaker.deactivate(.none) }
        #expect(throws: KeymakerError.protectorNotActive(.pin)) { try keymaker.deactivate(.pin) }
        try keymaker.activate(.pin, credential: .pin(pin("1234")))
        #expect(throws: KeymakerError.protectorAlreadyActive(.pin)) { try keymaker.activate(.pin, credential: .pin(pin("5678"))) }
        #expect(throws: KeymakerError.cannotRemoveLastProtector) { try keymaker.deactivate(.pin) }
    }

    /// The protection the user chose is the only one left: PIN, then none, then PIN again, each
    /// step says what it removed, and whether an unlock needs the PIN follows the choice.
    @Test func activatingAProtectorLeavesOnlyTheChosenOne() throws {
        let keymaker = makeKeymaker()
        let original = try keyBytes(keymaker.createMainKey())
        #expect(try keymaker.unlockNeedsPIN() == false)
        #expect(try keymaker.activate(.pin, credential: .pin(pin("1234"))) == [.none])
        #expect(try keymaker.activeProtectors() == [.pin])
        #expect(try keymaker.unlockNeedsPIN())
        #expect(try keymaker.status().unlockNeedsPIN)
        #expect(try keymaker.activate(.none) == [.pin], "choosing none removes the PIN envelope")
        #expect(try keymaker.activeProtectors() == [.none])
        #expect(try keymaker.unlockNeedsPIN() == false)
        #expect(try keymaker.activate(.pin, credential: .pin(pin("4321"))) == [.none])
        #expect(try keymaker.activeProtectors() == [.pin])
        keymaker.lock()
        #expect(throws: KeymakerError.pinRequired) { try keymaker.unlock(.none) }
        #expect(throws: KeymakerError.wrongPIN(attemptsLeft: 9)) { try keymaker.unlock(.pin(pin("1234"))) }
        try keymaker.unlock(.pin(pin("4321")))
        #expect(try keyBytes(keymaker.currentMainKey()) == original)
    }

    /// The rule "needs a PIN" is one function of the active protectors: any protector that needs
    /// a PIN makes the PIN necessary, whatever weaker one stands beside it.
    @Test func theStrongestActiveProtectorDecidesWhetherThePINIsNeeded() {
        #expect(Keymaker.unlockNeedsPIN(activeProtectors: []) == false)
        #expect(Keymaker.unlockNeedsPIN(activeProtectors: [.none]) == false)
        #expect(Keymaker.unlockNeedsPIN(activeProtectors: [.hardware]) == false)
        #expect(Keymaker.unlockNeedsPIN(activeProtectors: [.pin]))
        #expect(Keymaker.unlockNeedsPIN(activeProtectors: [.hardwarePIN]))
        #expect(Keymaker.unlockNeedsPIN(activeProtectors: [.none, .pin]))
        #expect(Keymaker.unlockNeedsPIN(activeProtectors: [.hardware, .hardwarePIN]))
    }

    @Test func badPINsAreRefusedAndChangeNothing() throws {
        let keymaker = makeKeymaker()
        try keymaker.createMainKey()
        #expect(throws: KeymakerError.emptyPIN) { try keymaker.activate(.pin, credential: .pin(pin(""))) }
        #expect(throws: KeymakerError.pinTooShort(minimum: 4)) { try keymaker.activate(.pin, credential: .pin(pin("123"))) }
        #expect(throws: KeymakerError.pinTooLong(maximum: 128)) {
            try keymaker.activate(.pin, credential: .pin(pin(String(repeating: "1", count: 129))))
        }
        #expect(try keymaker.activeProtectors() == [.none])
        try keymaker.activate(.pin, credential: .pin(pin("1234")))
        keymaker.lock()
        #expect(throws: KeymakerError.pinTooShort(minimum: 4)) { try keymaker.unlock(.pin(pin("12"))) }
        #expect(try keymaker.failedAttempts() == 0, "an invalid PIN is refused before it is counted")
    }

    @Test func protectingNeedsTheKeyUnlocked() throws {
        let keymaker = makeKeymaker()
        try keymaker.createMainKey()
        keymaker.lock()
        #expect(throws: LockedError.self) { try keymaker.activate(.pin, credential: .pin(pin("1234"))) }
        #expect(throws: LockedError.self) { try keymaker.disableProtection() }
    }
}

@Suite("Keymaker: failed attempts and wipe")
struct KeymakerWipeTests {
    @Test func tenWrongPINsWipeEveryLocalItem() throws {
        var deps = KeymakerDependencies()
        let keychain = InMemoryKeychain()
        deps.keychain = keychain
        let store = RecordingWipeable()
        deps.wipeRegistry.register(store)
        let keymaker = makeKeymaker(deps)
        try keymaker.createMainKey()
        try keymaker.activate(.pin, credential: .pin(pin("0000")))
        try keychain.set(SecretBytes(copying: [1]), for: .user("u1", "push.key", accessGroup: .shared))
        try keychain.set(SecretBytes(copying: [2]), for: .user("u2", "mainkey.none"))
        keymaker.lock()
        let events = 0
        for attempt in 1...9 {
            #expect(throws: KeymakerError.wrongPIN(attemptsLeft: 10 - attempt)) { try keymaker.unlock(.pin(pin("9999"))) }
        }
        #expect(try keymaker.failedAttempts() == 9)
        #expect(throws: KeymakerError.wipedAfterTooManyFailedAttempts) { try keymaker.unlock(.pin(pin("9999"))) }
        #expect(store.wipedUsers == ["u1"])
        #expect(try keychain.itemIDs(accessGroup: .app).map(\.service) == ["rampart.user.u2"], "only the other user's item is left")
        #expect(try keychain.itemIDs(accessGroup: .shared).isEmpty)
        #expect(throws: KeymakerError.noMainKey) { try keymaker.unlock(.pin(pin("0000"))) }
        _ = events
    }

    @Test func aRightPINBeforeTheLimitResetsTheCount() throws {
        let keymaker = makeKeymaker(maxFailedAttempts: 3)
        try keymaker.createMainKey()
        try keymaker.activate(.pin, credential: .pin(pin("4321")))
        keymaker.lock()
        for _ in 0..<2 { _ = try? keymaker.unlock(.pin(pin("0000"))) }
        try keymaker.unlock(.pin(pin("4321")))
        keymaker.lock()
        #expect(throws: KeymakerError.wrongPIN(attemptsLeft: 2)) { try keymaker.unlock(.pin(pin("0000"))) }
    }

    @Test func logoutErasesEverythingAndPublishesTheWipe() async throws {
        let deps = KeymakerDependencies()
        let store = RecordingWipeable()
        deps.wipeRegistry.register(store)
        let keymaker = makeKeymaker(deps)
        let events = keymaker.lifecycleEvents()
        let key = try keymaker.createMainKey()
        let derived = try key.derivedKey(for: KeyPurpose("store"))
        let report = keymaker.logout()
        #expect(report.isComplete)
        #expect(report.wiped.contains("recording"))
        #expect(key.isWiped && derived.isWiped)
        #expect(try !keymaker.hasMainKey())
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == .unlocked("u1"))
        #expect(await iterator.next() == .locked("u1", reason: .logout))
        #expect(await iterator.next() == .wiped("u1", reason: .logout))
    }
}

@Suite("Keymaker: envelopes")
struct KeymakerEnvelopeTests {
    func storedEnvelope(_ keychain: any Keychain, _ kind: ProtectorKind, user: UserID = "u1") throws -> Data {
        try keychain.read(Keymaker.envelopeItem(user, kind)).withUnsafeBytes { Data($0) }
    }

    /// Re-serializes after an edit, so only the field under test is wrong (not the checksum).
    func rewrite(_ keychain: any Keychain, _ kind: ProtectorKind, user: UserID = "u1", _ edit: (inout WrappedKeyEnvelope) -> Void) throws {
        var envelope = try WrappedKeyEnvelope.parse(storedEnvelope(keychain, kind, user: user))
        edit(&envelope)
        try keychain.set(SecretBytes(copying: envelope.serialized()), for: Keymaker.envelopeItem(user, kind))
    }

    @Test func aFlippedByteIsReportedAsCorruptNotAsAWrongPIN() throws {
        let (keymaker, deps) = try lockedKeymakerWithPIN1234()
        var bytes = try storedEnvelope(deps.keychain, .pin)
        bytes[bytes.count - 20] ^= 0x01
        try deps.keychain.set(SecretBytes(copying: bytes), for: Keymaker.envelopeItem("u1", .pin))
        #expect(throws: KeymakerError.corruptEnvelope("checksum mismatch (damaged or truncated)")) {
            try keymaker.unlock(.pin(pin("1234")))
        }
        #expect(try keymaker.failedAttempts() == 0)
        try deps.keychain.set(SecretBytes(copying: bytes.prefix(10)), for: Keymaker.envelopeItem("u1", .pin))
        #expect(throws: KeymakerError.self) { try keymaker.unlock(.pin(pin("1234"))) }
    }

    @Test func anUnknownVersionIsRefused() throws {
        let deps = KeymakerDependencies()
        let keymaker = makeKeymaker(deps)
        try keymaker.createMainKey()
        keymaker.lock()
        try rewrite(deps.keychain, .none) { $0.version = 9 }
        #expect(throws: KeymakerError.unsupportedEnvelopeVersion(9)) { try keymaker.unlock() }
    }

    @Test func anotherUsersEnvelopeIsRefused() throws {
        let deps = KeymakerDependencies()
        let alice = makeKeymaker(deps, user: "alice")
        let bob = makeKeymaker(deps, user: "bob")
        try alice.createMainKey()
        try bob.createMainKey()
        bob.lock()
        let aliceEnvelope = try storedEnvelope(deps.keychain, .none, user: "alice")
        try deps.keychain.set(SecretBytes(copying: aliceEnvelope), for: Keymaker.envelopeItem("bob", .none))
        #expect(throws: KeymakerError.envelopeFromAnotherUser) { try bob.unlock() }
    }

    @Test func editingTheHeaderBreaksTheWrappedKey() throws {
        let (keymaker, deps) = try lockedKeymakerWithPIN1234()
        // Same PIN, but the header (associated data) claims another key fingerprint.
        try rewrite(deps.keychain, .pin) { $0.keyFingerprint = "0000000000000000" }
        #expect(throws: KeymakerError.wrongPIN(attemptsLeft: 9)) { try keymaker.unlock(.pin(pin("1234"))) }
        #expect(!keymaker.isUnlocked)
    }

    @Test func weakenedKDFParametersAreRefused() throws {
        let (keymaker, deps) = try lockedKeymakerWithPIN1234()
        try rewrite(deps.keychain, .pin) { envelope in
            var parameters = try! ScryptParameters.decode(envelope.parameters)
            parameters.logN = 10
            envelope.parameters = parameters.encoded
        }
        #expect(throws: KeymakerError.corruptEnvelope("KDF parameters outside the accepted range (N=2^10, r=8, p=1)")) {
            try keymaker.unlock(.pin(pin("1234")))
        }
    }

    @Test func thePINEnvelopeHoldsNoClearKey() throws {
        let deps = KeymakerDependencies()
        let keymaker = makeKeymaker(deps)
        let key = try keyBytes(keymaker.createMainKey())
        try keymaker.activate(.pin, credential: .pin(pin("1234")))
        let stored = try storedEnvelope(deps.keychain, .pin)
        #expect(stored.range(of: Data(key)) == nil)
        #expect(stored.range(of: Data("1234".utf8)) == nil)
    }

    @Test func calibrationNeverGoesBelowTheFloor() {
        let parameters = ScryptParameters.calibrated(target: 0.001)
        #expect(parameters.logN == ScryptParameters.minimumLogN)
        #expect(parameters.r == 8 && parameters.p == 1)
        #expect(parameters.salt.count == 32)
    }
}

@Suite("Keymaker: autolock")
struct KeymakerAutolockTests {
    @Test func timedAutolockLocksAfterIdleTimeAndActivityRestartsTheTimer() throws {
        let clock = ManualClock()
        let keymaker = makeKeymaker(clock: clock, autolock: .afterMinutes(5))
        let key = try keymaker.createMainKey()
        let derived = try key.derivedKey(for: KeyPurpose("cache"))
        clock.advance(by: 240)
        #expect(keymaker.isUnlocked)
        keymaker.userActivity()
        clock.advance(by: 240)
        #expect(keymaker.isUnlocked)
        #expect(keymaker.secondsUntilAutolock == 60)
        clock.advance(by: 61)
        #expect(throws: LockedError.self) { try keymaker.currentMainKey() }
        #expect(key.isWiped && derived.isWiped, "locking zeroizes the key and every derived key")
    }

    @Test func backgroundPolicyLocksOnEnteringBackground() throws {
        let keymaker = makeKeymaker(autolock: .onBackground)
        try keymaker.createMainKey()
        keymaker.willEnterForeground()
        #expect(keymaker.isUnlocked)
        keymaker.didEnterBackground()
        #expect(!keymaker.isUnlocked)
    }

    @Test func timedPolicyAppliesWhenComingBackFromBackground() throws {
        let (keymaker, clock) = try unlockedKeymaker(autolock: .afterMinutes(1))
        keymaker.didEnterBackground()
        #expect(keymaker.isUnlocked, "a timed policy does not lock on background alone")
        clock.advance(by: 120)
        keymaker.willEnterForeground()
        #expect(!keymaker.isUnlocked)
    }

    @Test func settingTheWallClockBackLocksAtOnce() throws {
        let (keymaker, clock) = try unlockedKeymaker(autolock: .afterMinutes(60))
        let events = LockedEvents()
        let token = keymaker.observeLifecycle { events.append($0) }
        clock.advance(by: 10)
        #expect(keymaker.checkAutolock() == nil)
        clock.setWallClock(clock.now.addingTimeInterval(-3600))
        #expect(keymaker.checkAutolock() == .clockTampering)
        #expect(events.all == [.locked("u1", reason: .clockTampering)])
        token.cancel()
    }

    @Test func neverPolicyStaysUnlocked() throws {
        let (keymaker, clock) = try unlockedKeymaker(autolock: .never)
        clock.advance(by: 86_400)
        #expect(keymaker.isUnlocked)
        keymaker.didEnterBackground()
        #expect(keymaker.isUnlocked)
    }

    @Test func onlyTheOfferedDelaysAreAccepted() throws {
        #expect(try AutolockPolicy.after(minutes: 15) == .afterMinutes(15))
        #expect(throws: KeymakerError.invalidAutolockDelay(minutes: 7)) { try AutolockPolicy.after(minutes: 7) }
        #expect(try AutolockPolicy(parsing: "background") == .onBackground)
        let keymaker = makeKeymaker()
        try keymaker.createMainKey()
        try keymaker.setAutolockPolicy(.afterMinutes(2))
        #expect(keymaker.autolockPolicy == .afterMinutes(2))
    }
}

final class LockedEvents: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [KeyLifecycleEvent] = []
    func append(_ event: KeyLifecycleEvent) { lock.withLock { events.append(event) } }
    var all: [KeyLifecycleEvent] { lock.withLock { events } }
}
