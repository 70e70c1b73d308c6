import Crypto
import Foundation
import Keychain
@_spi(TestVectors) @testable import PushCrypto
import RampartCore
import Testing

@Suite("Push key lifecycle")
struct KeyringTests {
    let fixture = PushFixture()

    @Test func subscriptionStoresKeysInSharedGroupAfterFirstUnlockThisDeviceOnly() throws {
        try fixture.keyring.subscribe(sessionID: session("s1"))
        let shared = try fixture.keychain.itemIDs(accessGroup: .shared)
        #expect(shared.count == 1)
        #expect(shared.allSatisfy { $0.service == KeychainItemID.userService(fixture.user) && $0.account.hasPrefix("push.key.s1.") })
        #expect(try fixture.keychain.itemIDs(accessGroup: .app).isEmpty)
        #expect(fixture.keychain.accessibility(of: shared[0]) == .afterFirstUnlockThisDeviceOnly)
    }

    @Test func registrationRecordCarriesUncompressedKeyAndAuthSecretInBase64URL() throws {
        let registration = try fixture.keyring.subscribe(sessionID: session("s1"))
        #expect(registration.sessionId == "s1")
        let key = try #require(Base64URL.decode(registration.publicKey))
        #expect(key.count == 65 && key[0] == 0x04)
        #expect(!registration.publicKey.contains("=") && !registration.publicKey.contains("+") && !registration.publicKey.contains("/"))
        #expect(Base64URL.decode(registration.authSecret)?.count == 16)
        let json = try registration.jsonString()
        let decoded = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String]
        #expect(decoded.map { Set($0.keys) } == ["sessionId", "publicKey", "authSecret"])
        #expect(try fixture.keyring.currentRegistration(sessionID: session("s1")) == registration)
    }

    @Test func everyLoginGetsANewKeyPairAndAuthSecret() throws {
        var keys = Set<String>(), secrets = Set<String>()
        for index in 0..<5 {
            let registration = try fixture.keyring.subscribe(sessionID: session("s\(index)"))
            keys.insert(registration.publicKey)
            secrets.insert(registration.authSecret)
        }
        #expect(keys.count == 5 && secrets.count == 5)
    }

    @Test func logoutDeletesEveryPushKeyAndLedger() throws {
        let registration = try fixture.keyring.subscribe(sessionID: session("s1"))
        _ = try fixture.receiver(session("s1")).decrypt(WebPushSender.encrypt(fixture.notification(), to: registration))
        try fixture.keyring.rotate(sessionID: session("s1"))
        let unrelated = KeychainItemID.user(fixture.user, "mainkey.wrapped", accessGroup: .app)
        try fixture.keychain.add(SecretBytes(randomCount: 32), for: unrelated, accessibility: .default)
        #expect(try fixture.keychain.itemIDs(accessGroup: .shared).count == 3)
        try fixture.keyring.logout()
        #expect(try fixture.keychain.itemIDs(accessGroup: .shared).isEmpty)
        #expect(try fixture.keychain.itemIDs(accessGroup: .app) == [unrelated])
    }

    @Test func payloadToPreviousSessionKeyCannotBeDecryptedAfterLogout() throws {
        let old = try fixture.keyring.subscribe(sessionID: session("s1"))
        let body = try WebPushSender.encrypt(fixture.notification(), to: old)
        try fixture.keyring.logout()
        expectPushError(.noPushKeys(session: "s1")) { _ = try fixture.receiver(session("s1")).decrypt(body) }
        // Logging in again gives a new key; the old payload still does not open.
        try fixture.keyring.subscribe(sessionID: session("s2"))
        expectPushError(.authenticationFailed) { _ = try fixture.receiver(session("s2")).decrypt(body) }
    }

    @Test func previousSessionKeysOpenPushesWithinGracePeriod() throws {
        let old = try fixture.keyring.subscribe(sessionID: session("s1"))
        fixture.clock.advance(by: 3600)
        try fixture.keyring.subscribe(sessionID: session("s2"))
        let body = try WebPushSender.encrypt(fixture.notification(), to: old)
        #expect(try fixture.receiver(session("s2")).decrypt(body) == fixture.notification())
    }

    @Test func atMostEightPreviousKeyPairsAreKept() throws {
        var registrations: [PushRegistration] = []
        for index in 0..<12 {
            registrations.append(try fixture.keyring.subscribe(sessionID: session("s\(index)")))
            fixture.clock.advance(by: 1)
        }
        let pairs = try fixture.keyring.keyPairs()
        #expect(pairs.count == 9)
        #expect(pairs.first?.sessionID == session("s11"))
        #expect(try fixture.keychain.itemIDs(accessGroup: .shared).count == 9)
        let oldest = try WebPushSender.encrypt(fixture.notification(), to: registrations[2])
        expectPushError(.authenticationFailed) { _ = try fixture.receiver(session("s11")).decrypt(oldest) }
        let kept = try WebPushSender.encrypt(fixture.notification(), to: registrations[3])
        #expect(try fixture.receiver(session("s11")).decrypt(kept) == fixture.notification())
    }

    @Test func previousKeyPairsExpireAfterGracePeriodByInjectedClock() throws {
        let fixture = PushFixture(policy: .init(maximumPreviousKeys: 8, gracePeriod: 600))
        let old = try fixture.keyring.subscribe(sessionID: session("s1"))
        fixture.clock.advance(by: 300)
        try fixture.keyring.subscribe(sessionID: session("s2"))
        #expect(try fixture.keyring.keyPairs().count == 2)
        // The grace period runs from the replacement (at 300 s), not from the pair's creation.
        fixture.clock.advance(by: 599)
        #expect(try fixture.keyring.keyPairs().count == 2)
        fixture.clock.advance(by: 2)
        #expect(try fixture.keyring.keyPairs().count == 1)
        let body = try WebPushSender.encrypt(fixture.notification(), to: old)
        expectPushError(.authenticationFailed) { _ = try fixture.receiver(session("s2")).decrypt(body) }
        // The newest pair is kept however old it is.
        fixture.clock.advance(by: 100_000)
        #expect(try fixture.keyring.keyPairs().count == 1)
    }

    /// A forged push (200 bytes: a well-formed header, then noise) is refused and changes
    /// nothing, however many arrive and however much time passes; a real push to the registered
    /// key (from pywebpush when the venv is there) still opens afterwards.
    @Test func forgedPushesAreRefusedWithoutRotatingAndLaterPushesStillOpen() async throws {
        let registration = try fixture.keyring.subscribe(sessionID: session("s1"))
        let receiver = fixture.receiver(session("s1"))
        var random = SystemRandomNumberGenerator()
        let noise = (0..<200).map { _ in UInt8.random(in: 0...255, using: &random) }
        #expect(throws: PushCryptoError.self) { _ = try receiver.decrypt(noise) }
        for _ in 0..<12 {
            fixture.clock.advance(by: 3600)
            let forger = P256.KeyAgreement.PrivateKey().publicKey.x963Representation
            var forged = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) } + [0, 0, 0x10, 0x00, 65] + Array(forger)
            forged += (forged.count..<200).map { _ in UInt8.random(in: 0...255, using: &random) }
            #expect(forged.count == 200)
            expectPushError(.authenticationFailed) { _ = try receiver.decrypt(forged) }
        }
        #expect(try fixture.keyring.keyPairs().count == 1, "a forged push rotates nothing")
        #expect(try fixture.keyring.currentRegistration(sessionID: session("s1")) == registration)
        let json = try fixture.notification().encodedJSON().withUnsafeBytes { Array($0) }
        let body = PythonPeer.executable != nil
            ? try await PythonPeer.run(["pywebpush-encrypt", registration.publicKey, registration.authSecret], input: json)
            : try WebPushSender.encrypt(fixture.notification(), to: registration)
        #expect(try receiver.decrypt(body) == fixture.notification())
    }

    /// Keys rotate on schedule only: not before the interval, then once; a rotation the server
    /// refused is discarded so the registered pair stays the newest.
    @Test func keysRotateOnScheduleAndARefusedRotationIsDiscarded() throws {
        let first = try fixture.keyring.subscribe(sessionID: session("s1"))
        fixture.clock.advance(by: fixture.keyring.policy.rotationInterval - 1)
        #expect(try fixture.keyring.rotateIfDue(sessionID: session("s1")) == nil)
        fixture.clock.advance(by: 2)
        let rotated = try #require(try fixture.keyring.rotateIfDue(sessionID: session("s1")))
        #expect(rotated.publicKey != first.publicKey)
        #expect(try fixture.keyring.currentRegistration(sessionID: session("s1")) == rotated)
        #expect(try fixture.keyring.rotateIfDue(sessionID: session("s1")) == nil)
        // The week-old pair the server still encrypts to opens pushes in flight.
        let inFlight = try WebPushSender.encrypt(fixture.notification(), to: first)
        #expect(try fixture.receiver(session("s1")).decrypt(inFlight) == fixture.notification())
        #expect(try fixture.keyring.discard(rotated))
        #expect(try fixture.keyring.currentRegistration(sessionID: session("s1")) == first)
        let receiver = fixture.receiver(session("s1"))
        #expect(try receiver.decrypt(WebPushSender.encrypt(fixture.notification(), to: first)) == fixture.notification())
    }

    @Test func pushProcessNeedsOnlyTheSharedGroup() throws {
        let registration = try fixture.keyring.subscribe(sessionID: session("s1"))
        let body = try WebPushSender.encrypt(fixture.notification(), to: registration)
        // The push process: shared group only, no MainKey anywhere.
        let sharedOnly = AccessGroupLimitedKeychain(fixture.keychain, allowedGroups: [.shared])
        let user = try PushKeyring.user(ofSession: session("s1"), in: sharedOnly)
        #expect(user == fixture.user)
        let keyring = PushKeyring(keychain: sharedOnly, clock: fixture.clock, userID: user)
        #expect(try PushReceiver(keyring: keyring, sessionID: session("s1")).decrypt(body) == fixture.notification())
    }

    @Test func processWithOnlyTheAppGroupCannotOpenPushes() throws {
        let registration = try fixture.keyring.subscribe(sessionID: session("s1"))
        let body = try WebPushSender.encrypt(fixture.notification(), to: registration)
        let appOnly = AccessGroupLimitedKeychain(fixture.keychain, allowedGroups: [.app])
        #expect(throws: KeychainError.accessDenied("this process is not entitled to the access group rampart.shared")) {
            _ = try PushKeyring.user(ofSession: session("s1"), in: appOnly)
        }
        let keyring = PushKeyring(keychain: appOnly, clock: fixture.clock, userID: fixture.user)
        #expect(throws: KeychainError.self) { _ = try PushReceiver(keyring: keyring, sessionID: session("s1")).decrypt(body) }
    }

    @Test func corruptKeyItemIsReportedNotCrashed() throws {
        try fixture.keyring.subscribe(sessionID: session("s1"))
        let id = try #require(try fixture.keychain.itemIDs(accessGroup: .shared).first)
        try fixture.keychain.update(SecretBytes(randomCount: 10), for: id)
        #expect(throws: PushCryptoError.self) { _ = try fixture.keyring.keyPairs() }
    }

    @Test func invalidSessionIDsAreRefused() {
        for bad in ["", "../etc", "a b", String(repeating: "x", count: 129)] {
            #expect(throws: PushCryptoError.invalidSessionID(bad)) { _ = try PushSessionID(bad) }
        }
    }
}
