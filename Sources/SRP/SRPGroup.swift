import Crypto
import Foundation
import RampartCore

/// How big numbers are written into the SRP hashes.
///
/// Proton's Go client (go-srp) and its web client pad `A`, `B` and `S` to the modulus width;
/// `proton-client` (Python) drops their high zero bytes (`long_to_bytes`). The two agree except
/// when a value happens to start with a zero byte (about one login in 128), so the server checks
/// a proof under both and answers in the encoding that matched. Rampart's own client pads.
public enum SRPEncoding: Sendable, CaseIterable {
    /// Little-endian, zero-padded to the modulus width (256 bytes).
    case padded
    /// Little-endian without high zero bytes.
    case minimal
}

/// An SRP-6a group as Proton uses it: a 2048-bit safe prime `N` (little-endian on the wire),
/// generator g = 2, multiplier `k = H(pad(g) ‖ pad(N))` with ``SRPHash/expand(_:)``.
///
/// Trust-model row **transport (network), low trust**: the client takes the modulus only from an
/// OpenPGP cleartext message signed by the server's pinned modulus key.
public struct SRPGroup: Sendable, Equatable {
    /// The width of every padded number: 256 bytes.
    public static let byteCount = 256
    /// `N`, little-endian, 256 bytes.
    public let modulus: [UInt8]

    /// Checks the shape of a modulus: 256 bytes little-endian, exactly 2048 bits, N ≡ 7 (mod 8)
    /// (so that 2 generates the subgroup of prime order (N−1)/2 of a safe prime, as
    /// `openssl dhparam -2` makes them). Primality is not re-tested here: the modulus is trusted
    /// because its signature comes from the pinned key.
    /// - Throws: ``SRPError/invalidModulus(_:)``.
    public init(modulus: [UInt8]) throws {
        guard modulus.count == Self.byteCount else {
            throw SRPError.invalidModulus("it has \(modulus.count) bytes, not \(Self.byteCount)")
        }
        guard modulus[Self.byteCount - 1] & 0x80 != 0 else { throw SRPError.invalidModulus("it is shorter than 2048 bits") }
        guard modulus[0] & 7 == 7 else { throw SRPError.invalidModulus("it is not 7 mod 8, so g = 2 is not a generator of its prime-order subgroup") }
        self.modulus = modulus
    }

    /// The base64 of ``modulus``, the text the server signs.
    public var modulusBase64: String { Data(modulus).base64EncodedString() }

    /// Rampart's group: a 2048-bit safe prime generated once with `openssl dhparam -2 2048`
    /// (OpenSSL 3.0.19, 2026-11-25) and checked with 40 Miller–Rabin rounds on N and (N−1)/2;
    /// N ≡ 23 (mod 24), 2^((N−1)/2) ≡ 1 (mod N). Big-endian hex:
    /// C7D8A656E05DD5AE…A363FCE827 (the full value is ``modulus``, little-endian).
    public static let rampart: SRPGroup = {
        // Little-endian, base64.
        let text = "J+j8Y6O9rdd88VP7FUXmAgppcp4hjgrzNoKAV9LR++2aSL23f8chWsBpoBtaz9970xTQLUQWfY/QxrH5e/2F3AZb+OQZ8B0UPY1gPfQvLSd5BQa/nYZACFEaBq9iI2ThvN8kc+HlzJWk9/UzNCNZiE1vc7rlvD7VSD/sKmOOqlFTlsO/xbvzptN83iZhzVUzfy61jRA8hBal0KajTeGZbAwiDaWpoU8FLULVOxqJ1wvvE6tvBclmTLEJp6UeDo+eBhrgjViYAzdXjP7GyrlnaosepcvSCCfNl60pS4CQxqljNeazXcunSQrZymB/mtrS83XgpQs9h9qu1V3gVqbYxw=="
        return try! SRPGroup(modulus: [UInt8](Data(base64Encoded: text)!))
    }()

    // MARK: Internal numbers

    func numbers() throws -> (n: BigNumber, g: BigNumber, k: BigNumber) {
        let n = try BigNumber(littleEndian: modulus)
        let g = try BigNumber(word: 2)
        var generator = [UInt8](repeating: 0, count: Self.byteCount)
        generator[0] = 2
        let k = try BigNumber(littleEndian: SRPHash.expand(generator + modulus))
        return (n, g, k)
    }
}

/// Proton's hash for SRP: SHA-512 of the input with a counter byte 0, 1, 2, 3 appended,
/// concatenated (256 bytes), read as a little-endian number where a number is needed.
public enum SRPHash {
    /// `SHA512(data ‖ 0) ‖ SHA512(data ‖ 1) ‖ SHA512(data ‖ 2) ‖ SHA512(data ‖ 3)`.
    public static func expand(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        for counter in UInt8(0)...3 {
            var hasher = SHA512()
            hasher.update(data: data)
            hasher.update(data: [counter])
            out += hasher.finalize()
        }
        return out
    }

    static func expand(_ parts: [[UInt8]]) -> [UInt8] {
        expand(parts.flatMap { $0 })
    }
}
