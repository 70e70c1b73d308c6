import Crypto
import _CryptoExtras
import Foundation
import RampartCore

/// How the server keeps a login password: scrypt (N = 2^15, r = 8, p = 1) over the password with
/// a random 16-byte salt per account; only the salt, the parameters and the 32-byte output are
/// stored, and a candidate is compared in constant time.
///
/// Trust-model row **access token / username** (high): a stolen server database gives no login
/// password without an offline guessing attack that costs 32 MiB and ~0.1 s per guess. The
/// mailbox password never reaches the server at all (see ``MailboxKeyPair``).
struct LoginPasswordHash: Sendable, Equatable {
    static let logN: UInt8 = 15
    let salt: Data
    let logN: UInt8
    let hash: Data

    /// Hashes `password` with a fresh salt.
    static func make(password: SecretBytes) throws -> LoginPasswordHash {
        let salt = Data(SymmetricKey(size: .bits128).withUnsafeBytes { Array($0) })
        return LoginPasswordHash(salt: salt, logN: logN, hash: try derive(password: password, salt: salt, logN: logN))
    }

    /// Whether `password` is the one this hash was made from (constant-time comparison).
    func verify(_ password: SecretBytes) throws -> Bool {
        let candidate = try Self.derive(password: password, salt: salt, logN: logN)
        guard candidate.count == hash.count else { return false }
        return candidate.withUnsafeBytes { a in hash.withUnsafeBytes { b in SecretBytes.constantTimeEquals(a, b) } }
    }

    static func derive(password: SecretBytes, salt: Data, logN: UInt8) throws -> Data {
        let key = try password.withUnsafeBytes { bytes in
            try KDF.Scrypt.deriveKey(from: bytes, salt: salt, outputByteCount: 32, rounds: 1 << Int(logN), blockSize: 8, parallelism: 1)
        }
        return key.withUnsafeBytes { Data($0) }
    }

    /// Spends the same work as a real check, for an unknown username (no timing oracle).
    static func burnEquivalentWork(_ password: SecretBytes) {
        _ = try? derive(password: password, salt: Data(repeating: 0x5A, count: 16), logN: logN)
    }
}
