import Bcrypt
import Foundation
import RampartCore
@testable import SRP
import Testing

/// Rampart's SRP against proton-client's `proton.srp` (run at test time through
/// scripts/srp/srp_reference.py): the password hash, the verifier, `A`, both proofs, and the
/// encodings with dropped high zero bytes that proton-client sends.
struct SRPAgainstProtonClient {
    let group = SRPGroup.rampart

    static let passwords = ["hello", "pässwörd 🔑 with spaces", String(repeating: "long-password-", count: 8)]

    @Test("x = H(bcrypt ‖ N) and the verifier match proton-client's hash_password version 4 and compute_v")
    func passwordHashAndVerifier() throws {
        guard ProtonReference.available() else { return }
        let salts = [[UInt8](repeating: 0, count: 10), Array(1...10), SRPPassword.newSalt()]
        var requests: [[String: String]] = []
        for (password, salt) in zip(Self.passwords, salts) {
            let common = ["modulus": group.modulusBase64, "password": password, "salt": base64(salt)]
            requests.append(common.merging(["op": "hash"]) { $1 })
            requests.append(common.merging(["op": "verifier"]) { $1 })
        }
        let answers = try ProtonReference.run(requests)
        for (index, (password, salt)) in zip(Self.passwords, salts).enumerated() {
            let secret = SecretBytes(copying: Array(password.utf8))
            let x = try SRPPassword.hash(password: secret, salt: salt, group: group)
            #expect(try x.withUnsafeBytes { [UInt8]($0) } == unbase64(answers[2 * index]["x"]))
            let verifier = try SRPPassword.verifier(password: secret, salt: salt, group: group)
            #expect(verifier == padded(unbase64(answers[2 * index + 1]["verifier"])))
        }
    }

    @Test("with the same secret a, A and M1 equal proton-client's, and the server's M2 is the one it expects")
    func clientAndServerKnownAnswers() throws {
        guard ProtonReference.available() else { return }
        let salt = Array(20..<30).map(UInt8.init)
        let password = "correct horse battery staple"
        let verifier = try SRPPassword.verifier(password: SecretBytes(copying: Array(password.utf8)), salt: salt, group: group)
        var cases: [(a: [UInt8], server: SRPServer)] = []
        for seed in 0..<4 {
            let a = fullWidthSecret(seed: seed)
            let server = try SRPServer(group: group, verifier: verifier, secretEphemeral: SecretBytes(copying: fixedSecret(seed: 100 + seed)))
            cases.append((a, server))
        }
        let answers = try ProtonReference.run(cases.map { testCase in
            ["op": "client", "modulus": group.modulusBase64, "password": password, "salt": base64(salt),
             "B": base64(testCase.server.serverEphemeral), "a": base64(testCase.a)]
        })
        for (testCase, answer) in zip(cases, answers) {
            let client = try SRPClient(group: group, password: SecretBytes(copying: Array(password.utf8)), salt: salt,
                                       serverEphemeral: testCase.server.serverEphemeral, secretEphemeral: SecretBytes(copying: testCase.a))
            #expect(client.clientEphemeral == padded(unbase64(answer["A"])))
            #expect(client.clientProof == unbase64(answer["M1"]))
            // proton-client's own message, as it sends it, is accepted and answered with the proof it expects.
            let serverProof = try testCase.server.verify(clientEphemeral: unbase64(answer["A"]), clientProof: unbase64(answer["M1"]))
            #expect(serverProof == unbase64(answer["M2"]))
            try client.verifyServerProof(serverProof)
        }
    }

    @Test("A with a high zero byte (sent and hashed without it by proton-client) and S with one are accepted")
    func droppedLeadingZeros() throws {
        guard ProtonReference.available() else { return }
        let salt: [UInt8] = Array(repeating: 7, count: 10)
        let password = "zero-byte hunt"
        let secret = SecretBytes(copying: Array(password.utf8))
        let verifier = try SRPPassword.verifier(password: secret, salt: salt, group: group)
        let x = try SRPPassword.hash(password: secret, salt: salt, group: group)
        let (n, g, k) = try group.numbers()
        let context = try BigNumberContext()

        // 1. a whose A = g^a mod N has a zero top byte (about 1 in 200 candidates).
        var shortA: [UInt8]?
        for seed in 0..<20_000 where shortA == nil {
            let a = fixedSecret(seed: 1_000 + seed)
            let bigA = try context.modExp(g, try BigNumber(littleEndian: a), n)
            if bigA.byteCount < SRPGroup.byteCount { shortA = a }
        }
        // 2. b (with a full-width A) whose premaster S has a zero top byte.
        let a = fullWidthSecret(seed: 9)
        let bigA = try context.modExp(g, try BigNumber(littleEndian: a), n)
        let v = try BigNumber(littleEndian: verifier)
        var shortS: [UInt8]?
        for seed in 0..<20_000 where shortS == nil {
            let b = fixedSecret(seed: 50_000 + seed)
            let server = try SRPServer(group: group, verifier: verifier, secretEphemeral: SecretBytes(copying: b))
            let bigB = try BigNumber(littleEndian: server.serverEphemeral)
            guard bigB.byteCount == SRPGroup.byteCount else { continue }
            let u = try BigNumber(littleEndian: SRPHash.expand([try bigA.littleEndian(width: 256), server.serverEphemeral]))
            let s = try context.modExp(try context.modMul(bigA, try context.modExp(v, u, n), n), try BigNumber(littleEndian: b), n)
            if s.byteCount < SRPGroup.byteCount { shortS = b }
        }
        _ = (k, x)
        let shortASecret = try #require(shortA, "no a with a short A in 20,000 candidates")
        let shortSSecret = try #require(shortS, "no b with a short S in 20,000 candidates")

        let serverForA = try SRPServer(group: group, verifier: verifier, secretEphemeral: SecretBytes(copying: fixedSecret(seed: 7)))
        let serverForS = try SRPServer(group: group, verifier: verifier, secretEphemeral: SecretBytes(copying: shortSSecret))
        let answers = try ProtonReference.run([
            ["op": "client", "modulus": group.modulusBase64, "password": password, "salt": base64(salt),
             "B": base64(serverForA.serverEphemeral), "a": base64(shortASecret)],
            ["op": "client", "modulus": group.modulusBase64, "password": password, "salt": base64(salt),
             "B": base64(serverForS.serverEphemeral), "a": base64(a)],
        ])
        // proton-client sends the short A with 255 bytes.
        #expect(unbase64(answers[0]["A"]).count < SRPGroup.byteCount)
        #expect(try serverForA.verify(clientEphemeral: unbase64(answers[0]["A"]), clientProof: unbase64(answers[0]["M1"]))
                == unbase64(answers[0]["M2"]))
        #expect(try serverForS.verify(clientEphemeral: unbase64(answers[1]["A"]), clientProof: unbase64(answers[1]["M1"]))
                == unbase64(answers[1]["M2"]))

        // Rampart's own (padded) client logs in to the same two servers as well.
        for (clientSecret, server) in [(shortASecret, serverForA), (a, serverForS)] {
            let client = try SRPClient(group: group, password: secret, salt: salt, serverEphemeral: server.serverEphemeral,
                                       secretEphemeral: SecretBytes(copying: clientSecret))
            // The padded proof differs from proton-client's minimal one here, and both are accepted.
            try client.verifyServerProof(try server.verify(clientEphemeral: client.clientEphemeral, clientProof: client.clientProof))
        }
    }

    /// 32 deterministic bytes (for reproducible known answers).
    func fixedSecret(seed: Int) -> [UInt8] {
        SRPHash.expand(Array("rampart srp test \(seed)".utf8)).prefix(32).map { $0 }
    }

    /// A secret a whose A is full width (most are), for the plain known answers.
    func fullWidthSecret(seed: Int) -> [UInt8] {
        var candidate = seed
        while true {
            let a = fixedSecret(seed: candidate)
            if let n = try? group.numbers().n, let context = try? BigNumberContext(),
               let bigA = try? context.modExp(try BigNumber(word: 2), try BigNumber(littleEndian: a), n),
               bigA.byteCount == SRPGroup.byteCount {
                return a
            }
            candidate += 10_000
        }
    }
}

/// What the server and the client refuse, without Python.
struct SRPRefusals {
    let group = SRPGroup.rampart
    let salt: [UInt8] = Array(repeating: 3, count: 10)

    func server() throws -> SRPServer {
        let verifier = try SRPPassword.verifier(password: SecretBytes(copying: Array("pw".utf8)), salt: salt, group: group)
        return try SRPServer(group: group, verifier: verifier)
    }

    @Test("the server refuses A = 0, N, 2N, empty, over-long A and proofs of the wrong length")
    func badClientValues() throws {
        let server = try server()
        let proof = [UInt8](repeating: 1, count: 256)
        let n = group.modulus
        // 2N, little-endian: 257 bytes.
        var twoN = [UInt8](repeating: 0, count: 257)
        var carry: UInt16 = 0
        for index in 0..<256 { let sum = UInt16(n[index]) * 2 + carry; twoN[index] = UInt8(sum & 0xFF); carry = sum >> 8 }
        twoN[256] = UInt8(carry)
        for bad in [[0], [UInt8](repeating: 0, count: 256), n, twoN, [], [UInt8](repeating: 0xFF, count: 256), [UInt8](repeating: 1, count: 300)] {
            #expect(throws: SRPError.self) { _ = try server.verify(clientEphemeral: bad, clientProof: proof) }
            do { _ = try server.verify(clientEphemeral: bad, clientProof: proof) } catch let error as SRPError {
                guard case .invalidClientEphemeral = error else { Issue.record("A of \(bad.count) bytes: \(error)"); continue }
                #expect(error.kind == .badInput)
            }
        }
        for count in [0, 32, 255, 257] {
            #expect(throws: SRPError.self) { _ = try server.verify(clientEphemeral: [5], clientProof: [UInt8](repeating: 1, count: count)) }
        }
        #expect(throws: SRPError.wrongProof) { _ = try server.verify(clientEphemeral: [5], clientProof: proof) }
    }

    @Test("a wrong password gives wrongProof; a server without the verifier cannot prove itself (pinMismatch)")
    func wrongPasswordAndFakeServer() throws {
        let server = try server()
        let wrong = try SRPClient(group: group, password: SecretBytes(copying: Array("not pw".utf8)), salt: salt,
                                  serverEphemeral: server.serverEphemeral)
        #expect(throws: SRPError.wrongProof) { _ = try server.verify(clientEphemeral: wrong.clientEphemeral, clientProof: wrong.clientProof) }

        // A phishing server that made up a verifier (it never had the real one).
        let fakeVerifier = try SRPPassword.verifier(password: SecretBytes(copying: Array("guess".utf8)), salt: salt, group: group)
        let phishing = try SRPServer(group: group, verifier: fakeVerifier)
        let client = try SRPClient(group: group, password: SecretBytes(copying: Array("pw".utf8)), salt: salt,
                                   serverEphemeral: phishing.serverEphemeral)
        #expect(throws: SRPError.wrongProof) { _ = try phishing.verify(clientEphemeral: client.clientEphemeral, clientProof: client.clientProof) }
        #expect(throws: SRPError.serverProofMismatch) { try client.verifyServerProof([UInt8](repeating: 0, count: 256)) }
        #expect(SRPError.serverProofMismatch.kind == .pinMismatch)

        // The honest login works (the control for the two refusals above).
        let good = try SRPClient(group: group, password: SecretBytes(copying: Array("pw".utf8)), salt: salt, serverEphemeral: server.serverEphemeral)
        try good.verifyServerProof(try server.verify(clientEphemeral: good.clientEphemeral, clientProof: good.clientProof))
    }

    @Test("the client refuses B = 0, B = N, an over-long B, a short salt and odd modulus shapes")
    func badServerValues() throws {
        let password = SecretBytes(copying: Array("pw".utf8))
        for bad in [[0], [UInt8](repeating: 0, count: 256), group.modulus, [UInt8](repeating: 1, count: 257), []] {
            #expect(throws: SRPError.self) { _ = try SRPClient(group: group, password: password, salt: salt, serverEphemeral: bad) }
        }
        #expect(throws: SRPError.self) { _ = try SRPClient(group: group, password: password, salt: [1, 2, 3], serverEphemeral: [9]) }
        var even = group.modulus; even[0] &= 0xFE
        var short = group.modulus; short[255] = 0x7F
        for modulus in [even, short, Array(group.modulus.prefix(128)), group.modulus + [1]] {
            #expect(throws: SRPError.self) { _ = try SRPGroup(modulus: modulus) }
        }
        #expect(SRPError.invalidModulus("x").kind == .pinMismatch)
    }
}
