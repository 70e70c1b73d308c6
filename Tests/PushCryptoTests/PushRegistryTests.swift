import Foundation
@testable import PushCrypto
import RampartCore
import Testing

@Suite("Push registry (backend)")
struct PushRegistryTests {
    let registry = PushRegistry()
    let fixture = PushFixture()

    @Test func registrationForCurrentSessionIsAccepted() throws {
        registry.startSession("s1", for: fixture.user)
        let registration = try fixture.keyring.subscribe(sessionID: session("s1"))
        try registry.register(registration, for: fixture.user)
        #expect(registry.registration(for: fixture.user) == registration)
        // A retry of the same record is accepted.
        try registry.register(registration, for: fixture.user)
    }

    @Test func registrationForOldSessionIsRefused() throws {
        registry.startSession("s1", for: fixture.user)
        let old = try fixture.keyring.subscribe(sessionID: session("s1"))
        registry.startSession("s2", for: fixture.user)
        #expect(throws: PushRegistryError.staleSession(given: "s1", current: "s2")) { try registry.register(old, for: fixture.user) }
        #expect(registry.registration(for: fixture.user) == nil)
    }

    @Test func reusedPublicKeyIsRefusedAcrossSessionsAndUsers() throws {
        registry.startSession("s1", for: fixture.user)
        let first = try fixture.keyring.subscribe(sessionID: session("s1"))
        try registry.register(first, for: fixture.user)
        registry.startSession("s2", for: fixture.user)
        var reused = first
        reused.sessionId = "s2"
        #expect(throws: PushRegistryError.publicKeyReused) { try registry.register(reused, for: fixture.user) }
        registry.startSession("t1", for: "user-2")
        reused.sessionId = "t1"
        #expect(throws: PushRegistryError.publicKeyReused) { try registry.register(reused, for: "user-2") }
        // A persisted registry keeps refusing it.
        let restarted = PushRegistry(seenPublicKeyFingerprints: registry.seenPublicKeyFingerprints)
        restarted.startSession("s3", for: fixture.user)
        reused.sessionId = "s3"
        #expect(throws: PushRegistryError.publicKeyReused) { try restarted.register(reused, for: fixture.user) }
    }

    @Test func rotatedKeyForCurrentSessionIsAccepted() throws {
        registry.startSession("s1", for: fixture.user)
        try registry.register(try fixture.keyring.subscribe(sessionID: session("s1")), for: fixture.user)
        let rotated = try fixture.keyring.rotate(sessionID: session("s1"))
        try registry.register(rotated, for: fixture.user)
        #expect(registry.registration(for: fixture.user) == rotated)
    }

    @Test func registrationAfterLogoutIsRefused() throws {
        registry.startSession("s1", for: fixture.user)
        let registration = try fixture.keyring.subscribe(sessionID: session("s1"))
        try registry.register(registration, for: fixture.user)
        registry.endSession(for: fixture.user)
        #expect(registry.registration(for: fixture.user) == nil)
        #expect(throws: PushRegistryError.noSession(fixture.user)) { try registry.register(registration, for: fixture.user) }
    }

    @Test func malformedRegistrationIsRefused() throws {
        registry.startSession("s1", for: fixture.user)
        var registration = try fixture.keyring.subscribe(sessionID: session("s1"))
        registration.publicKey = Base64URL.encode([0x04] + [UInt8](repeating: 0xFF, count: 64))
        #expect(throws: PushRegistryError.invalidRegistration(.invalidRegistration("publicKey is not a point on P-256"))) {
            try registry.register(registration, for: fixture.user)
        }
        registration = try fixture.keyring.subscribe(sessionID: session("s1"))
        registration.authSecret = "c2hvcnQ"
        #expect(throws: PushRegistryError.invalidRegistration(.invalidRegistration("authSecret is not 16 bytes in base64url"))) {
            try registry.register(registration, for: fixture.user)
        }
    }
}
