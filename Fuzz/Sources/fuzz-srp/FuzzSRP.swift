// Fuzz target: the SRP messages Rampart reads, on both sides of a login.
//
// The first byte picks the entry point; the rest is the input:
//   0  the client reads an `/auth/info` answer (JSON, as the server sends it): the modulus as a
//      cleartext-signed message checked against the pinned modulus key (the fixed key below),
//      version, salt, server ephemeral, session (`SRPLoginFuzzing.challenge`); an accepted
//      answer's B then goes to `SRPClient`
//   1  the same answer built here: a signed modulus (by the modulus key, by another key, or the
//      modulus key signing something that is not a modulus) edited as the input says
//      (FuzzSupport.Mutations), with the input's B, salt, version and session
//   2  `SRPClient` with the input's server ephemeral B (raw, or N, 0, N ± d, kN shapes)
//   3  `SRPServer.verify` on an honest exchange (from an input-chosen secret) whose A and/or M1
//      are edited, or replaced by A ≡ 0 (mod N)
//   4  `SRPClient.verifyServerProof` with the honest M2 edited; `SRPClient` with the honest B
//      edited, its proof then checked by the honest server
//   5  the server's reading of a `POST /auth` or `POST /v1/account/password` body (JSON)
//      (`SRPAuthorityFuzzing`), the decoded A and M1 then checked by an honest server
//   6  an honest `POST /auth` body, edited as JSON text, read by the server and verified
//   7  `SRPPassword.hash`'s checks (version, salt length; an empty password, so no bcrypt runs),
//      `SRPGroup(modulus:)`, `SRPServer(verifier:)`
//
// Oracles beyond "no crash, no hang, bounded memory": every failure is a typed Rampart error
// (SRPError, ServerError, ClientError), never a trap; a B or A that is 0 mod N (0, N), not below
// N, empty or longer than 256 bytes is refused; a modulus is accepted only when the pinned key
// signed it (and it is the one it signed); a proof other than the honest one is never accepted,
// and the honest one always is (by the server: M1 with A, also with A's high zero bytes dropped;
// by the client: M2); a client given an edited B never produces a proof the honest server accepts.
//
// Bcrypt (cost 10) is too slow to run per input: x is derived once at start-up and the client
// is made through its `@_spi(Fuzzing)` initializer that takes x (every check of B is the same).
// The modulus key is fuzz-openpgp's throwaway key (Fuzz/make-seeds.py signs seeds with it).
import Crypto
import Foundation
import FuzzSupport
import OpenPGP
import RampartAPI
import RampartCore
@_spi(Fuzzing) import RampartClient
@_spi(Fuzzing) import RampartServer
@_spi(Fuzzing) import SRP

let target = "srp"


/// Everything made once per process.
struct Fixture {
    let group = SRPGroup.rampart
    let modulusKey: PGPPrivateKey
    let otherKey: PGPPrivateKey
    /// The modulus signed by the modulus key, by another key, and the modulus key signing a
    /// text that is not a valid modulus (255 bytes).
    let signedTexts: [String]
    let x: SecretBytes
    let verifier: [UInt8]
    let clientSecret: SecretBytes

    init() {
        do {
            modulusKey = try PGPPrivateKey.unlock(armored: fuzzKeyArmored, passphrase: SecretBytes(copying: Array("fuzz".utf8)))
            otherKey = try PGPPrivateKey.generate(name: "Other Signer", address: "other@fuzz.invalid")
            let shortModulus = Data(group.modulus.prefix(255)).base64EncodedString()
            signedTexts = [
                try OpenPGP.cleartextSign(group.modulusBase64, with: modulusKey),
                try OpenPGP.cleartextSign(group.modulusBase64, with: otherKey),
                try OpenPGP.cleartextSign(shortModulus, with: modulusKey),
            ]
            // One bcrypt for the whole run.
            x = try SRPPassword.hash(password: SecretBytes(copying: Array("correct horse battery".utf8)),
                                     salt: Array("fuzz-salt!".utf8), group: group)
            verifier = try SRPPassword.verifier(x: x, group: group)
            clientSecret = SecretBytes(copying: Array(SHA256.hash(data: Array("client".utf8))))
        } catch {
            Fuzz.violation(target, "the fixture cannot be made: \(error)")
        }
    }
}

nonisolated(unsafe) let fixture = Fixture()

/// An honest login: the server (secret b), the client (secret a) and their messages.
struct Exchange {
    let server: SRPServer
    let client: SRPClient
    let b: [UInt8]
    let a: [UInt8]
    let m1: [UInt8]
    let m2: [UInt8]
}

/// Honest exchanges by the input's secret byte (made once each: three 2048-bit exponentiations).
nonisolated(unsafe) var exchanges: [UInt8: Exchange] = [:]

func exchange(_ secret: UInt8) -> Exchange {
    if let known = exchanges[secret] { return known }
    do {
        let bSecret = SecretBytes(copying: Array(SHA256.hash(data: Array("server".utf8) + [secret])))
        let aSecret = SecretBytes(copying: Array(SHA256.hash(data: Array("client".utf8) + [secret])))
        let server = try SRPServer(group: fixture.group, verifier: fixture.verifier, secretEphemeral: bSecret)
        let client = try SRPClient(group: fixture.group, x: fixture.x, serverEphemeral: server.serverEphemeral, secretEphemeral: aSecret)
        let m2 = try server.verify(clientEphemeral: client.clientEphemeral, clientProof: client.clientProof)
        try client.verifyServerProof(m2)
        let made = Exchange(server: server, client: client, b: server.serverEphemeral, a: client.clientEphemeral,
                            m1: client.clientProof, m2: m2)
        exchanges[secret] = made
        return made
    } catch {
        Fuzz.violation(target, "an honest exchange (secret \(secret)) failed: \(error)")
    }
}

// MARK: Numbers (little-endian, as SRP writes them)

/// `bytes` without high (trailing, little-endian) zero bytes.
func trimmed(_ bytes: [UInt8]) -> ArraySlice<UInt8> {
    var end = bytes.count
    while end > 0 && bytes[end - 1] == 0 { end -= 1 }
    return bytes[..<end]
}

/// -1, 0, 1 as the little-endian numbers `a` and `b` compare.
func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
    let x = trimmed(a), y = trimmed(b)
    if x.count != y.count { return x.count < y.count ? -1 : 1 }
    for i in stride(from: x.count - 1, through: 0, by: -1) where x[i] != y[i] {
        return x[i] < y[i] ? -1 : 1
    }
    return 0
}

/// Whether an ephemeral (A or B) has an acceptable form: 1 to 256 bytes, 0 < value < N.
func isAcceptableEphemeral(_ bytes: [UInt8]) -> Bool {
    (1...SRPGroup.byteCount).contains(bytes.count) && !trimmed(bytes).isEmpty && compare(bytes, fixture.group.modulus) < 0
}

/// `value ± delta` (little-endian, same width; wraps silently, the checks below do not care).
func add(_ value: [UInt8], _ delta: Int, subtract: Bool) -> [UInt8] {
    var out = value
    var carry = delta
    for i in out.indices where carry != 0 {
        let sum = subtract ? Int(out[i]) - (carry & 0xFF) : Int(out[i]) + (carry & 0xFF)
        out[i] = UInt8(truncatingIfNeeded: sum)
        carry = (carry >> 8) + (subtract ? (sum < 0 ? 1 : 0) : (sum > 0xFF ? 1 : 0))
    }
    return out
}

/// An ephemeral shaped by the input: raw bytes, or the special values around 0 and N.
func ephemeral(_ reader: inout FuzzReader) -> [UInt8] {
    let n = fixture.group.modulus
    let shape = reader.byte() % 8
    let delta = Int(reader.byte())
    switch shape {
    case 0: return n                                              // N ≡ 0
    case 1: return [UInt8](repeating: 0, count: reader.uint16() % 257)  // 0, in 0 to 256 bytes
    case 2: return n + [UInt8](repeating: 0, count: Int(reader.byte() % 3))  // N with high zero bytes
    case 3: return add(n, delta, subtract: false)                 // N + d
    case 4: return add(n, delta + 1, subtract: true)              // N − d − 1
    case 5: return [UInt8](repeating: 0xFF, count: 256)           // 2^2048 − 1 > 2N − 1 > N
    default: return reader.take(Int(reader.uint16() % 300))
    }
}

// MARK: Typed failures

/// What a call gave: its value, or the typed error it threw.
enum Outcome<T> {
    case success(T)
    case failure(any RampartError)
}

/// Runs `body`; a thrown error must be one of Rampart's typed errors (`RampartError`).
@inline(__always)
func typed<T>(_ what: String, _ body: () throws -> T) -> Outcome<T> {
    do {
        return .success(try body())
    } catch let error as any RampartError {
        return .failure(error)
    } catch {
        Fuzz.violation(target, "\(what) threw \(type(of: error)) \(error), not a typed Rampart error")
    }
}

/// The client's SRP with the input's B; checks that a B of a bad form is refused.
func runClient(serverEphemeral b: [UInt8], what: String) -> SRPClient? {
    let result = typed(what) { try SRPClient(group: fixture.group, x: fixture.x, serverEphemeral: b, secretEphemeral: fixture.clientSecret) }
    switch result {
    case .success(let client):
        Fuzz.check(isAcceptableEphemeral(b), target, "\(what): a server ephemeral of \(b.count) bytes, not in 1..<N, was accepted")
        Fuzz.check(client.clientEphemeral.count == 256 && client.clientProof.count == 256, target, "\(what): A or M1 not 256 bytes")
        return client
    case .failure(let error):
        Fuzz.check(error is SRPError, target, "\(what): refused with \(type(of: error)), not SRPError")
        if case .invalidServerEphemeral? = error as? SRPError {} else {
            Fuzz.violation(target, "\(what): B refused with \(error), not invalidServerEphemeral")
        }
        return nil
    }
}

/// The honest server of `exchange` checks (A, M1): accepted only when A is the honest A (as a
/// number) and M1 the honest M1; then M2 is the honest one.
func checkServer(_ exchange: Exchange, a: [UInt8], m1: [UInt8], what: String) {
    let result = typed(what) { try exchange.server.verify(clientEphemeral: a, clientProof: m1) }
    let honest = m1 == exchange.m1 && a.count <= 256 && !a.isEmpty && compare(a, exchange.a) == 0
    switch result {
    case .success(let m2):
        Fuzz.check(honest, target, "\(what): the server accepted an A or M1 that is not the honest one (A \(a.count) bytes)")
        Fuzz.check(m2 == exchange.m2, target, "\(what): the server answered another M2 than the honest one")
    case .failure(let error):
        Fuzz.check(error is SRPError, target, "\(what): refused with \(type(of: error)), not SRPError")
        Fuzz.check(!honest, target, "\(what): the server refused the honest A and M1: \(error)")
        // The server checks A's length, then M1's, then A's value.
        if !(1...256).contains(a.count) || (m1.count == 256 && !isAcceptableEphemeral(a)) {
            if case .invalidClientEphemeral? = error as? SRPError {} else {
                Fuzz.violation(target, "\(what): an A not in 1..<N (\(a.count) bytes) was refused with \(error), not invalidClientEphemeral")
            }
        }
    }
}

/// Checks an `/auth/info` answer as the client reads it; `signedBy` says which fixture text the
/// modulus is (edited or not), nil for a raw input.
func checkChallenge(_ info: SRPAuthInfoResponse, signedText: Int?, edited: Bool, what: String) {
    let key = fixture.modulusKey.publicKey
    guard case .success(let challenge) = typed(what, { try SRPLoginFuzzing.challenge(info, key: key) }) else {
        if signedText == 0 && !edited, info.version == 3 || info.version == 4, Data(base64Encoded: info.salt) != nil,
           Data(base64Encoded: info.serverEphemeral) != nil, !info.srpSession.isEmpty, info.srpSession.utf8.count <= 128 {
            Fuzz.violation(target, "\(what): a well-formed answer with the signed modulus was refused")
        }
        return
    }
    // Accepted: the pinned key signed exactly this modulus (checked independently of the client).
    Fuzz.check(signedText != 1 && signedText != 2, target, "\(what): a modulus not signed by the pinned key (text \(signedText ?? -1)) was accepted")
    Fuzz.check(challenge.group.modulus == fixture.group.modulus, target, "\(what): an accepted modulus is not the one the pinned key signed")
    guard case .success(let verified) = typed("verifyCleartext", { try OpenPGP.verifyCleartext(info.modulus, against: [key]) }),
          verified.signature == .verified(key.fingerprint) else {
        Fuzz.violation(target, "\(what): an accepted modulus does not verify against the pinned key")
    }
    Fuzz.check(challenge.version == 3 || challenge.version == 4, target, "\(what): version \(challenge.version) accepted")
    Fuzz.check(!challenge.session.isEmpty && challenge.session.utf8.count <= 128, target, "\(what): a session of \(challenge.session.utf8.count) bytes accepted")
    _ = runClient(serverEphemeral: challenge.serverEphemeral, what: what + " then SRPClient")
}

func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSRP(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var reader = FuzzReader(Fuzz.bytes(data, size))
    let mode = reader.byte() % 8
    switch mode {
    case 0:
        let body = Data(reader.rest())
        guard let info = try? JSONDecoder().decode(SRPAuthInfoResponse.self, from: body) else { return 0 }
        checkChallenge(info, signedText: nil, edited: false, what: "/auth/info answer")
    case 1:
        let choice = Int(reader.byte() % 3)
        let original = Array(fixture.signedTexts[choice].utf8)
        let edited = Mutations.apply(original, &reader)
        let version = Int(Int8(bitPattern: reader.byte()))
        let salt = reader.take(Int(reader.byte() % 80))
        let session = fuzzText(reader.take(Int(reader.byte())))
        let b = ephemeral(&reader)
        let info = SRPAuthInfoResponse(modulus: String(decoding: edited, as: UTF8.self), serverEphemeral: base64(b),
                                       version: version, salt: base64(salt), srpSession: session)
        checkChallenge(info, signedText: choice, edited: edited != original, what: "/auth/info answer (signed text \(choice))")
    case 2:
        _ = runClient(serverEphemeral: ephemeral(&reader), what: "SRPClient(B)")
    case 3:
        let honest = exchange(reader.byte())
        let which = reader.byte() % 4
        var a = honest.a, m1 = honest.m1
        switch which {
        case 0: a = Mutations.apply(a, &reader)
        case 1: m1 = Mutations.apply(m1, &reader)
        case 2: a = Mutations.apply(a, &reader); m1 = Mutations.apply(m1, &reader)
        default: a = ephemeral(&reader)
        }
        checkServer(honest, a: a, m1: m1, what: "SRPServer.verify(edited)")
    case 4:
        let honest = exchange(reader.byte())
        if reader.byte() & 1 == 0 {
            let m2 = Mutations.apply(honest.m2, &reader)
            let accepted = (try? honest.client.verifyServerProof(m2)) != nil
            Fuzz.check(accepted == (m2 == honest.m2), target,
                       "verifyServerProof: \(accepted ? "accepted an edited" : "refused the honest") server proof")
        } else {
            let b = Mutations.apply(honest.b, &reader)
            guard let client = runClient(serverEphemeral: b, what: "SRPClient(edited B)") else { return 0 }
            // Same number (high zero bytes only): the same login. Otherwise the honest server,
            // which sent the original B, must refuse the proof.
            if compare(b, honest.b) != 0 {
                let accepted = (try? honest.server.verify(clientEphemeral: client.clientEphemeral, clientProof: client.clientProof)) != nil
                Fuzz.check(!accepted, target, "a client given an edited B made a proof the honest server accepted")
            }
        }
    case 5:
        let change = reader.byte() & 1 == 1
        let body = Data(reader.rest())
        let honest = exchange(0)
        if change {
            guard case .success(let decoded) = typed("changePasswordBody", { try SRPAuthorityFuzzing.changePasswordBody(body, group: fixture.group) })
            else { return 0 }
            Fuzz.check((10...64).contains(decoded.salt.count), target, "a salt of \(decoded.salt.count) bytes was accepted")
            Fuzz.check(decoded.verifier.count == 256 && isAcceptableEphemeral(decoded.verifier), target, "a verifier not in 1..<N was accepted")
            checkServer(honest, a: decoded.clientEphemeral, m1: decoded.clientProof, what: "change-password body")
        } else {
            guard case .success(let decoded) = typed("authBody", { try SRPAuthorityFuzzing.authBody(body) }) else { return 0 }
            // (Lowercasing may lengthen a name that was at most 256 bytes: "İ" is 2 bytes, "i̇" 3.)
            Fuzz.check(!decoded.username.isEmpty && decoded.username == decoded.username.lowercased(),
                       target, "a username \(decoded.username.debugDescription) was accepted unnormalized")
            Fuzz.check((1...256).contains(decoded.clientEphemeral.count) && decoded.clientProof.count <= 256, target, "an over-long value was accepted")
            checkServer(honest, a: decoded.clientEphemeral, m1: decoded.clientProof, what: "/auth body")
        }
    case 6:
        let honest = exchange(reader.byte())
        let json = try! JSONEncoder().encode(SRPAuthRequest(username: "Alice", clientEphemeral: base64(honest.a),
                                                            clientProof: base64(honest.m1), srpSession: String(repeating: "a", count: 32)))
        let edited = Mutations.apply(Array(json), &reader)
        guard case .success(let decoded) = typed("authBody(edited)", { try SRPAuthorityFuzzing.authBody(Data(edited)) }) else {
            Fuzz.check(edited != Array(json), target, "the honest /auth body was refused")
            return 0
        }
        checkServer(honest, a: decoded.clientEphemeral, m1: decoded.clientProof, what: "edited /auth body")
    default:
        let what = reader.byte() % 3
        switch what {
        case 0:
            let version = Int(Int8(bitPattern: reader.byte()))
            let salt = reader.take(Int(reader.byte() % 80))
            let result = typed("SRPPassword.hash") {
                try SRPPassword.hash(password: SecretBytes(copying: [UInt8]()), salt: salt, group: fixture.group, version: version)
            }
            guard case .failure(let error as SRPError) = result else {
                Fuzz.violation(target, "SRPPassword.hash with an empty password did not throw an SRPError")
            }
            switch error {
            case .unsupportedVersion: Fuzz.check(version != 3 && version != 4, target, "version \(version) refused")
            case .malformed: Fuzz.check(version == 3 || version == 4, target, "version \(version) not refused first")
            default: Fuzz.violation(target, "SRPPassword.hash threw \(error)")
            }
        case 1:
            let modulus = reader.rest()
            if case .success = typed("SRPGroup(modulus:)", { try SRPGroup(modulus: modulus) }) {
                Fuzz.check(modulus.count == 256 && modulus[255] & 0x80 != 0 && modulus[0] & 7 == 7, target, "a modulus of the wrong shape was accepted")
            }
        default:
            let verifier = ephemeral(&reader)
            if case .success = typed("SRPServer(verifier:)", { try SRPServer(group: fixture.group, verifier: verifier) }) {
                Fuzz.check(verifier.count == 256 && isAcceptableEphemeral(verifier), target, "a verifier not 256 bytes in 1..<N was accepted")
            }
        }
    }
    return 0
}

/// The process entry point (see `Fuzz.main`).
@_cdecl("fuzz_srp_main")
public func fuzzSRPMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    _ = fixture
    return Fuzz.main(argc, argv, fuzzSRP)
}
