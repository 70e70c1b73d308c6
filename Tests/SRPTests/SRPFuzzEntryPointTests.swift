import Foundation
import RampartCore
@_spi(Fuzzing) import SRP
import Testing

/// The fuzz target's way into the client (`@_spi(Fuzzing)`: an x derived once, since bcrypt at
/// cost 10 is too slow per fuzz input) must be the public client without the password hash: the
/// same A and M1, the same refusals of B.
@Suite struct SRPFuzzEntryPointTests {
    static let group = SRPGroup.rampart
    static let salt = Array("fuzz-salt!".utf8)
    static let password = SecretBytes(copying: Array("correct horse battery".utf8))
    static let a = SecretBytes(copying: [UInt8](repeating: 7, count: 32))

    @Test func clientFromXIsThePublicClient() throws {
        let x = try SRPPassword.hash(password: Self.password, salt: Self.salt, group: Self.group)
        let server = try SRPServer(group: Self.group, verifier: try SRPPassword.verifier(x: x, group: Self.group),
                                   secretEphemeral: SecretBytes(copying: [UInt8](repeating: 9, count: 32)))
        let viaPassword = try SRPClient(group: Self.group, password: Self.password, salt: Self.salt,
                                        serverEphemeral: server.serverEphemeral, secretEphemeral: Self.a)
        let viaX = try SRPClient(group: Self.group, x: x, serverEphemeral: server.serverEphemeral, secretEphemeral: Self.a)
        #expect(viaX.clientEphemeral == viaPassword.clientEphemeral)
        #expect(viaX.clientProof == viaPassword.clientProof)
        let m2 = try server.verify(clientEphemeral: viaX.clientEphemeral, clientProof: viaX.clientProof)
        try viaX.verifyServerProof(m2)
        try viaPassword.verifyServerProof(m2)
    }

    @Test(arguments: [
        SRPGroup.rampart.modulus,                              // B = N ≡ 0
        [UInt8](repeating: 0, count: 256),                     // B = 0
        SRPGroup.rampart.modulus + [0],                        // N with a high zero byte: 257 bytes
        [UInt8](repeating: 0xFF, count: 256),                  // above N
        [],
    ])
    func badServerEphemeralsAreRefusedBothWays(_ b: [UInt8]) throws {
        let x = SecretBytes(copying: [UInt8](repeating: 1, count: 256))
        // The public initializer refuses B before it runs bcrypt, with the same error.
        var viaX: SRPError?
        var viaPassword: SRPError?
        do { _ = try SRPClient(group: Self.group, x: x, serverEphemeral: b, secretEphemeral: Self.a) } catch let e as SRPError { viaX = e }
        do {
            _ = try SRPClient(group: Self.group, password: Self.password, salt: Self.salt, serverEphemeral: b, secretEphemeral: Self.a)
        } catch let e as SRPError { viaPassword = e }
        #expect(viaX != nil && viaX == viaPassword)
        if case .invalidServerEphemeral? = viaX {} else { Issue.record("B refused with \(String(describing: viaX)), not invalidServerEphemeral") }
    }
}
