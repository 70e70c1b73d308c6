import Foundation
import RampartAPI
import RampartCore
import Testing
@testable import RampartClient

/// Integers a hostile server (or a tampered store) controls must be checked before any
/// arithmetic or allocation: a typed error, never a trap.
@Suite("Hostile lengths and counts (client)")
struct HostileLengthTests {
    static func record() -> SessionRecord {
        SessionRecord(serverUserID: "u1", username: "demo", displayName: "Demo", addresses: ["demo@rampart.test"],
                      endpoint: ServerEndpoint(url: URL(string: "https://127.0.0.1:4430")!, pins: []), sessionID: "s-1",
                      accessToken: "a", refreshToken: "r", accessTokenExpiry: 0)
    }

    /// `expiresIn` at its extremes: `Int.max` overflowed the expiry (a trap at login).
    @Test(arguments: [Int.max, Int.min, -1, Int(SessionRecord.maximumTokenLifetime) + 1, Int(Int32.max) * 4])
    func anOutOfRangeTokenLifetimeIsATypedError(expiresIn: Int) throws {
        var record = Self.record()
        let tokens = SessionTokens(sessionId: "s-2", accessToken: "a2", refreshToken: "r2", expiresIn: expiresIn)
        do {
            try record.update(tokens, now: Date(timeIntervalSince1970: 1_900_000_000))
            Issue.record("expiresIn \(expiresIn) was accepted")
        } catch let error as ClientError {
            #expect(error.kind == .tampered, "\(error)")
        }
        #expect(record.sessionID == "s-1", "nothing was taken from the refused answer")
    }

    @Test(arguments: [0, 3600, Int(SessionRecord.maximumTokenLifetime)])
    func aTokenLifetimeInRangeIsTaken(expiresIn: Int) throws {
        var record = Self.record()
        try record.update(SessionTokens(sessionId: "s-2", accessToken: "a2", refreshToken: "r2", expiresIn: expiresIn),
                          now: Date(timeIntervalSince1970: 1_900_000_000))
        #expect(record.accessTokenExpiry == 1_900_000_000 + Int64(expiresIn))
    }

    /// A stored expiry at its extremes gives a lifetime in range, without overflow.
    @Test(arguments: [Int64.min, Int64.max, 0, -1])
    func aStoredExpiryAtItsExtremesDoesNotTrap(expiry: Int64) {
        var record = Self.record()
        record.accessTokenExpiry = expiry
        let left = record.tokens.expiresIn
        #expect(left >= 0 && Int64(left) <= SessionRecord.maximumTokenLifetime)
    }
}
