import CLibCrypto
import RampartCore

/// An OpenSSL `BIGNUM` owned by Swift: cleared (`BN_clear_free`) when released.
///
/// Secret values (the ephemeral secrets `a`/`b`, the password hash `x`, exponents made from them,
/// the premaster secret `S`) are marked ``markSecret()`` (`BN_FLG_CONSTTIME`), and every
/// exponentiation goes through `BN_mod_exp_mont_consttime`. Encodings are little-endian, as
/// Proton's SRP uses them.
final class BigNumber {
    let pointer: OpaquePointer

    init() throws {
        guard let pointer = BN_new() else { throw SRPError.library("BN_new failed (out of memory)") }
        self.pointer = pointer
    }

    /// The number whose little-endian encoding is `bytes` (any length; trailing zero bytes, i.e.
    /// dropped leading zeros of the big-endian value, do not matter).
    convenience init(littleEndian bytes: [UInt8], secret: Bool = false) throws {
        try self.init()
        if secret { markSecret() }
        let result = bytes.withUnsafeBufferPointer { BN_lebin2bn($0.baseAddress, Int32($0.count), pointer) }
        guard result != nil else { throw SRPError.library("BN_lebin2bn failed") }
    }

    convenience init(secret: SecretBytes) throws {
        try self.init()
        markSecret()
        let result = try secret.withUnsafeBytes { bytes in
            BN_lebin2bn(bytes.bindMemory(to: UInt8.self).baseAddress, Int32(bytes.count), pointer)
        }
        guard result != nil else { throw SRPError.library("BN_lebin2bn failed") }
    }

    convenience init(word: UInt) throws {
        try self.init()
        guard BN_set_word(pointer, word) == 1 else { throw SRPError.library("BN_set_word failed") }
    }

    deinit { BN_clear_free(pointer) }

    /// `self − 1` (for the exponent modulus N − 1).
    func subtractingOne() throws -> BigNumber {
        let result = try BigNumber()
        guard BN_copy(result.pointer, pointer) != nil, BN_sub_word(result.pointer, 1) == 1 else {
            throw SRPError.library("BN_sub_word failed")
        }
        return result
    }

    /// Marks the number secret: OpenSSL then takes its constant-time paths for it.
    func markSecret() { BN_set_flags(pointer, BN_FLG_CONSTTIME) }

    var isZero: Bool { BN_is_zero(pointer) == 1 }
    var bitCount: Int { Int(BN_num_bits(pointer)) }
    var byteCount: Int { (bitCount + 7) / 8 }

    /// -1, 0, 1 as `self` is less than, equal to or greater than `other` (both non-negative).
    func compare(_ other: BigNumber) -> Int32 { BN_ucmp(pointer, other.pointer) }

    /// Little-endian, zero-padded to `width` bytes. - Throws if the number does not fit.
    func littleEndian(width: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: width)
        let written = out.withUnsafeMutableBufferPointer { BN_bn2lebinpad(pointer, $0.baseAddress, Int32(width)) }
        guard written == Int32(width) else { throw SRPError.library("a number does not fit in \(width) bytes") }
        return out
    }

    /// Little-endian without the high zero bytes (Python's `long_to_bytes`: zero is empty).
    func minimalLittleEndian() throws -> [UInt8] { try littleEndian(width: byteCount) }

    /// The encoding in `variant`, for a group of `width` bytes.
    func encoded(_ variant: SRPEncoding, width: Int) throws -> [UInt8] {
        switch variant {
        case .padded: return try littleEndian(width: width)
        case .minimal: return try minimalLittleEndian()
        }
    }
}

/// A `BN_CTX` for one computation.
final class BigNumberContext {
    let pointer: OpaquePointer
    init() throws {
        guard let pointer = BN_CTX_secure_new() ?? BN_CTX_new() else { throw SRPError.library("BN_CTX_new failed") }
        self.pointer = pointer
    }
    deinit { BN_CTX_free(pointer) }

    /// `base^exponent mod modulus` in constant time (Montgomery, fixed window); `base` is reduced first.
    func modExp(_ base: BigNumber, _ exponent: BigNumber, _ modulus: BigNumber) throws -> BigNumber {
        let reduced = try mod(base, modulus)
        exponent.markSecret()
        return try secretResult("BN_mod_exp_mont_consttime") {
            BN_mod_exp_mont_consttime($0.pointer, reduced.pointer, exponent.pointer, modulus.pointer, pointer, nil)
        }
    }

    /// `value mod modulus`, non-negative.
    func mod(_ value: BigNumber, _ modulus: BigNumber) throws -> BigNumber {
        try secretResult("BN_nnmod") { BN_nnmod($0.pointer, value.pointer, modulus.pointer, pointer) }
    }

    func modMul(_ a: BigNumber, _ b: BigNumber, _ modulus: BigNumber) throws -> BigNumber {
        try secretResult("BN_mod_mul") { BN_mod_mul($0.pointer, a.pointer, b.pointer, modulus.pointer, pointer) }
    }

    func modAdd(_ a: BigNumber, _ b: BigNumber, _ modulus: BigNumber) throws -> BigNumber {
        try secretResult("BN_mod_add") { BN_mod_add($0.pointer, a.pointer, b.pointer, modulus.pointer, pointer) }
    }

    func modSub(_ a: BigNumber, _ b: BigNumber, _ modulus: BigNumber) throws -> BigNumber {
        try secretResult("BN_mod_sub") { BN_mod_sub($0.pointer, a.pointer, b.pointer, modulus.pointer, pointer) }
    }

    /// A new number, flagged secret (constant-time paths), that `operation` (the libcrypto call
    /// `name`, which returns 1 on success) writes its result into.
    private func secretResult(_ name: String, _ operation: (BigNumber) -> Int32) throws -> BigNumber {
        let result = try BigNumber()
        result.markSecret()
        guard operation(result) == 1 else { throw SRPError.library("\(name) failed") }
        return result
    }
}
