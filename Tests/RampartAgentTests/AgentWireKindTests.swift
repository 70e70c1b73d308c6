import Foundation
import Keymaker
@testable import RampartAgent
import RampartCore
import Testing

/// The agent's wire carries an error's category (`kind`), so the client maps it to an exit
/// status without reading the code's or the message's text; the field is optional, so the
/// protocol stays at version 1.
@Suite("Agent wire: error kind")
struct AgentWireKindTests {
    private func roundTrip(_ error: any Error) throws -> (json: [String: Any], error: AgentError) {
        let data = try JSONEncoder().encode(WireError(error, user: "alice"))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return (json, try JSONDecoder().decode(WireError.self, from: data).agentError)
    }

    @Test func aKeymakerRefusalKeepsItsKindAcrossTheWire() throws {
        let corrupt = try roundTrip(KeymakerError.corruptEnvelope("bad tag"))
        #expect(corrupt.json["kind"] as? String == "tampered")
        #expect(corrupt.error.kind == .tampered)
        if case .keymakerRefused(let code, _, let message) = corrupt.error {
            #expect(code == "keymaker.corruptEnvelope")
            #expect(message == KeymakerError.corruptEnvelope("bad tag").description)
        } else {
            Issue.record("expected keymakerRefused, got \(corrupt.error)")
        }
        #expect(try roundTrip(KeymakerError.pinTooShort(minimum: 6)).error.kind == .badInput)
        #expect(try roundTrip(KeymakerError.hardwareLockedOut("TPM")).error.kind == .wrongPIN)
        #expect(try roundTrip(KeymakerError.wrongPIN(attemptsLeft: 2)).error == .wrongPIN(attemptsLeft: 2))
        #expect(try roundTrip(LockedError(userID: "alice")).error.kind == .locked)
    }

    @Test func aHeaderWithoutKindOrWithAnUnknownKindReadsAsFailure() throws {
        let old = Data(#"{"code":"agent.keymaker.keymaker.corruptEnvelope","message":"m"}"#.utf8)
        #expect(try JSONDecoder().decode(WireError.self, from: old).agentError.kind == .failure)
        let newer = Data(#"{"code":"agent.keymaker.x","kind":"somethingNew","message":"m"}"#.utf8)
        #expect(try JSONDecoder().decode(WireError.self, from: newer).agentError.kind == .failure)
    }
}
