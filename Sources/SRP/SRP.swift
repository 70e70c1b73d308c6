import Bcrypt
import Foundation
import RampartCore

/// Proton's password hashing for SRP (auth versions 3 and 4): bcrypt `$2y$10$` over the password
/// with the salt `(salt ‖ "proton")[0..<16]`, then `x = H(bcrypt string ‖ N)` with
/// ``SRPHash/expand(_:)`` (256 bytes, little-endian).
///
/// Trust-model row **server (zero access)**: the server keeps only `v = g^x mod N` and the salt;
/// a stolen verifier costs an attacker one bcrypt (cost 10) and one 2048-bit exponentiation per guess.
public enum SRPPassword {
    /// The auth version Rampart uses and the server announces.
    public static let version = 4
    /// Proton's salt length (the server makes 10 random bytes per account).
    public static let saltCount = 10

    /// `x` for `password` with `salt` (at least 10 bytes; bytes past the 16th are ignored, as
    /// proton-client does) in `group`.
    /// - Throws: ``SRPError/malformed(_:)`` (short salt), ``SRPError/unsupportedVersion(_:)``,
    ///   `BcryptError`.
    public static func hash(password: SecretBytes, salt: [UInt8], group: SRPGroup, version: Int = version) throws -> SecretBytes {
        guard version == 3 || version == 4 else { throw SRPError.unsupportedVersion(version) }
        guard salt.count >= saltCount, salt.count <= 64 else {
            throw SRPError.malformed("the salt has \(salt.count) bytes; it needs 10 to 64")
        }
        guard password.count > 0 else { throw SRPError.malformed("the password is empty") }
        let bcryptSalt = Array((salt + Array("proton".utf8)).prefix(16))
        let hashed = try Bcrypt.hash(password: password, salt: bcryptSalt, cost: 10)
        var input = try hashed.withUnsafeBytes { [UInt8]($0) } + group.modulus
        var x = SRPHash.expand(input)
        input.withUnsafeMutableBytes { SecretBytes.zeroize($0) }
        hashed.wipe()
        return SecretBytes(consuming: &x)
    }

    /// The verifier `v = g^x mod N` (256 bytes, little-endian) the server stores with the salt.
    public static func verifier(password: SecretBytes, salt: [UInt8], group: SRPGroup) throws -> [UInt8] {
        let x = try hash(password: password, salt: salt, group: group)
        defer { x.wipe() }
        return try verifier(x: x, group: group)
    }

    /// `g^x mod N` (256 bytes) for an `x` already derived (``hash(password:salt:group:version:)``),
    /// or made up by a server for the fake verifier of an unknown username.
    public static func verifier(x: SecretBytes, group: SRPGroup) throws -> [UInt8] {
        let (n, g, _) = try group.numbers()
        let context = try BigNumberContext()
        return try context.modExp(g, try BigNumber(secret: x), n).littleEndian(width: SRPGroup.byteCount)
    }

    /// A fresh random 10-byte salt.
    public static func newSalt() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<saltCount).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }
}

/// The client side of one SRP login (Rampart sends and hashes padded numbers, as go-srp does).
///
/// ```swift
/// let client = try SRPClient(group: group, password: password, salt: salt, serverEphemeral: b)
/// send(client.clientEphemeral, client.clientProof)
/// try client.verifyServerProof(serverProof)   // before trusting anything from this login
/// ```
///
/// Trust-model row **transport (network), low trust**: the password never leaves the device, and
/// the server must prove that it knows the verifier (``verifyServerProof(_:)``).
public final class SRPClient: @unchecked Sendable {
    /// `A`, 256 bytes little-endian.
    public let clientEphemeral: [UInt8]
    /// `M1 = H(A ‖ B ‖ S)`, 256 bytes.
    public let clientProof: [UInt8]
    private let expectedServerProof: [UInt8]

    /// Computes `A` and the proofs from the server's `B` (1 to 256 bytes, little-endian).
    /// - Parameters:
    ///   - secretEphemeral: `a` (32 bytes) for known-answer tests; nil draws a random one.
    ///   - group: the modulus and generator (`SRPGroup.rampart` for the embedded server).
    ///   - password: the login password.
    ///   - salt: the account's salt from `/auth/info`.
    ///   - serverEphemeral: `B` from `/auth/info`.
    ///   - version: the auth version (4).
    /// - Throws: ``SRPError/invalidServerEphemeral(_:)`` (`B mod N = 0`, `B ≥ N`, `u = 0`),
    ///   ``SRPError/malformed(_:)``, `BcryptError`.
    public convenience init(group: SRPGroup, password: SecretBytes, salt: [UInt8], serverEphemeral: [UInt8],
                            version: Int = SRPPassword.version, secretEphemeral: SecretBytes? = nil) throws {
        try self.init(group: group, serverEphemeral: serverEphemeral, secretEphemeral: secretEphemeral) {
            try SRPPassword.hash(password: password, salt: salt, group: group, version: version)
        }
    }

    /// The client's side for an `x` already derived (``SRPPassword/hash(password:salt:group:version:)``),
    /// for the fuzz target in `Fuzz/` (SPI `Fuzzing`, not public API): bcrypt (cost 10) is too slow
    /// to run per fuzz input, and every check of `B` is the same as in the public initializer.
    @_spi(Fuzzing)
    public convenience init(group: SRPGroup, x: SecretBytes, serverEphemeral: [UInt8], secretEphemeral: SecretBytes? = nil) throws {
        try self.init(group: group, serverEphemeral: serverEphemeral, secretEphemeral: secretEphemeral) { try x.withUnsafeBytes { SecretBytes(copying: $0) } }
    }

    /// The checks of `B` run before `deriveX` (the password hash), so that a bad `B` costs no bcrypt.
    private init(group: SRPGroup, serverEphemeral: [UInt8], secretEphemeral: SecretBytes?,
                 deriveX: () throws -> SecretBytes) throws {
        let width = SRPGroup.byteCount
        guard (1...width).contains(serverEphemeral.count) else {
            throw SRPError.invalidServerEphemeral("it has \(serverEphemeral.count) bytes (1 to \(width) expected)")
        }
        let (n, g, k) = try group.numbers()
        let context = try BigNumberContext()
        let b = try BigNumber(littleEndian: serverEphemeral)
        guard b.compare(n) < 0 else { throw SRPError.invalidServerEphemeral("B is not less than N") }
        guard !b.isZero else { throw SRPError.invalidServerEphemeral("B mod N = 0") }

        let secret = secretEphemeral ?? SecretBytes(randomCount: 32)
        guard secret.count == 32 else { throw SRPError.malformed("the client's secret ephemeral must be 32 bytes") }
        let a = try BigNumber(secret: secret)
        let bigA = try context.modExp(g, a, n)
        let aBytes = try bigA.littleEndian(width: width)
        let bBytes = try b.littleEndian(width: width)

        let u = try BigNumber(littleEndian: SRPHash.expand([aBytes, bBytes]))
        guard !u.isZero else { throw SRPError.invalidServerEphemeral("u = H(A ‖ B) = 0") }

        let xBytes = try deriveX()
        defer { xBytes.wipe() }
        let x = try BigNumber(secret: xBytes)
        // S = (B − k·g^x)^(a + u·x) mod N; the exponent is reduced mod N − 1 (the group order of Z_N*).
        let v = try context.modExp(g, x, n)
        let base = try context.modSub(b, try context.modMul(k, v, n), n)
        guard !base.isZero else { throw SRPError.invalidServerEphemeral("B = k·v mod N") }
        let order = try n.subtractingOne()
        let exponent = try context.modAdd(a, try context.modMul(u, x, order), order)
        let s = try context.modExp(base, exponent, n)
        var sBytes = try s.littleEndian(width: width)
        defer { sBytes.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }

        clientEphemeral = aBytes
        clientProof = SRPHash.expand([aBytes, bBytes, sBytes])
        expectedServerProof = SRPHash.expand([aBytes, clientProof, sBytes])
    }

    /// Checks the server's proof `M2 = H(A ‖ M1 ‖ S)` in constant time.
    /// - Throws: ``SRPError/serverProofMismatch`` (exit status 8).
    public func verifyServerProof(_ proof: [UInt8]) throws {
        let equal = proof.withUnsafeBytes { lhs in expectedServerProof.withUnsafeBytes { SecretBytes.constantTimeEquals(lhs, $0) } }
        guard equal else { throw SRPError.serverProofMismatch }
    }
}

/// The server side of one SRP login: made at `/auth/info` from the stored verifier, used once at
/// `/auth`.
///
/// Trust-model rows **server (zero access)** (only the verifier is stored) and **transport
/// (network), low trust** (`A` is checked, `M1` compared in constant time, `M2` proves the server).
public final class SRPServer: @unchecked Sendable {
    /// `B = k·v + g^b mod N`, 256 bytes little-endian (what Proton's server sends).
    public let serverEphemeral: [UInt8]
    private let group: SRPGroup
    private let verifier: [UInt8]
    private let secret: SecretBytes

    /// Draws `b` and computes `B` for an account's `verifier` (256 bytes).
    /// - Parameters:
    ///   - secretEphemeral: `b` (32 bytes) for known-answer tests; nil draws a random one.
    ///   - group: the modulus and generator the verifier was made in.
    ///   - verifier: the account's stored `v = g^x mod N`.
    /// - Throws: ``SRPError/malformed(_:)`` for a verifier that is not 256 bytes or is 0 mod N.
    public init(group: SRPGroup, verifier: [UInt8], secretEphemeral: SecretBytes? = nil) throws {
        guard verifier.count == SRPGroup.byteCount else { throw SRPError.malformed("the verifier has \(verifier.count) bytes, not 256") }
        let (n, g, k) = try group.numbers()
        let context = try BigNumberContext()
        let v = try BigNumber(littleEndian: verifier)
        guard v.compare(n) < 0, !v.isZero else { throw SRPError.malformed("the verifier is not in 1..<N") }
        let secret = secretEphemeral ?? SecretBytes(randomCount: 32)
        guard secret.count == 32 else { throw SRPError.malformed("the server's secret ephemeral must be 32 bytes") }
        let b = try BigNumber(secret: secret)
        var bigB = try context.modAdd(try context.modMul(k, v, n), try context.modExp(g, b, n), n)
        if bigB.isZero {
            // k·v + g^b ≡ 0 (mod N) has negligible probability; a fixed b in a test could hit it.
            bigB = try context.modExp(g, b, n)
        }
        self.group = group
        self.verifier = verifier
        self.secret = secret
        self.serverEphemeral = try bigB.littleEndian(width: SRPGroup.byteCount)
    }

    deinit { secret.wipe() }

    /// Checks the client's `A` (1 to 256 bytes, little-endian; high zero bytes may be dropped) and
    /// proof `M1` (256 bytes), and returns the server proof `M2`, in the encoding the client used
    /// (``SRPEncoding``).
    /// - Throws: ``SRPError/invalidClientEphemeral(_:)`` (`A mod N = 0`, `A ≥ N`, wrong length,
    ///   `u = 0`), ``SRPError/malformed(_:)`` (proof length), ``SRPError/wrongProof``.
    public func verify(clientEphemeral: [UInt8], clientProof: [UInt8]) throws -> [UInt8] {
        let width = SRPGroup.byteCount
        guard (1...width).contains(clientEphemeral.count) else {
            throw SRPError.invalidClientEphemeral("it has \(clientEphemeral.count) bytes (1 to \(width) expected)")
        }
        guard clientProof.count == width else { throw SRPError.malformed("the client proof has \(clientProof.count) bytes, not \(width)") }
        let (n, _, _) = try group.numbers()
        let context = try BigNumberContext()
        let a = try BigNumber(littleEndian: clientEphemeral)
        guard a.compare(n) < 0 else { throw SRPError.invalidClientEphemeral("A is not less than N") }
        guard !a.isZero else { throw SRPError.invalidClientEphemeral("A mod N = 0") }
        let bigB = try BigNumber(littleEndian: serverEphemeral)
        let v = try BigNumber(littleEndian: verifier)
        let b = try BigNumber(secret: secret)

        // S = (A · v^u)^b mod N, for u in each encoding (the same u when A and B are full width).
        var uValues: [[UInt8]: BigNumber] = [:]
        var matched: [UInt8]?
        for encoding in SRPEncoding.allCases {
            let aBytes = try a.encoded(encoding, width: width), bBytes = try bigB.encoded(encoding, width: width)
            let uBytes = SRPHash.expand([aBytes, bBytes])
            let s: BigNumber
            if let known = uValues[uBytes] {
                s = known
            } else {
                let u = try BigNumber(littleEndian: uBytes)
                guard !u.isZero else { throw SRPError.invalidClientEphemeral("u = H(A ‖ B) = 0") }
                s = try context.modExp(try context.modMul(a, try context.modExp(v, u, n), n), b, n)
                uValues[uBytes] = s
            }
            var sBytes = try s.encoded(encoding, width: width)
            defer { sBytes.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
            let expected = SRPHash.expand([aBytes, bBytes, sBytes])
            let equal = expected.withUnsafeBytes { lhs in clientProof.withUnsafeBytes { SecretBytes.constantTimeEquals(lhs, $0) } }
            if equal && matched == nil {
                matched = SRPHash.expand([aBytes, clientProof, sBytes])
            }
        }
        guard let proof = matched else { throw SRPError.wrongProof }
        return proof
    }
}
