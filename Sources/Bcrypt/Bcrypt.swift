import CCrypt
import Foundation
import RampartCore

/// Why a bcrypt hash could not be computed.
///
/// Trust-model row **server (zero access)**: bcrypt is the slow, salted first step of every
/// password-derived secret (the SRP verifier's `x`, the mailbox key passphrase), so a stolen
/// verifier or a locked key costs an attacker one bcrypt per guess.
public enum BcryptError: DescribedRampartError, Equatable {
    /// The salt is not 16 bytes, or the cost is outside 4...31 (the reason says which).
    case invalidSalt(String)
    /// libxcrypt's `crypt_r` refused the input (returned a failure token or no hash), or the
    /// password cannot be handed to it (a NUL byte).
    case hashingFailed(String)

    public var info: RampartErrorInfo {
        switch self {
        case .invalidSalt(let reason):
            return RampartErrorInfo(code: "bcrypt.invalidSalt", kind: .badInput,
                                    message: "The bcrypt salt is invalid: \(reason).")
        case .hashingFailed(let reason):
            return RampartErrorInfo(code: "bcrypt.hashingFailed", kind: .failure,
                                    message: "bcrypt hashing failed: \(reason).")
        }
    }
}

/// bcrypt (`$2y$`) through libxcrypt's `crypt_r`, as Proton's clients use it: for SRP's password
/// hashing (version 4) and for the mailbox key passphrase (`computeKeyPassword`).
///
/// There is no bcrypt implementation here: the rounds run in libxcrypt (Debian `libcrypt-dev`).
/// bcrypt uses at most the first 72 bytes of a password (the rest is ignored, as in every bcrypt);
/// a password containing a NUL byte is refused, because `crypt_r` takes a C string and would
/// silently hash only the part before it.
///
/// Trust-model row **server (zero access)**.
public enum Bcrypt {
    /// The number of salt bytes bcrypt takes.
    public static let saltCount = 16
    /// The bytes of a password bcrypt uses; longer passwords are cut here (as bcrypt does).
    public static let maxPasswordBytes = 72

    /// bcrypt `$2y$<cost>$` over `password` (at most 72 bytes used, as bcrypt does) with the 16-byte
    /// `salt`, encoded in bcrypt's own base64 alphabet ("./A-Za-z0-9"). Returns the whole 60-char
    /// hash string "$2y$10$<22 salt chars><31 hash chars>" as SecretBytes (UTF-8).
    ///
    /// - Throws: ``BcryptError/invalidSalt(_:)`` unless `salt` has 16 bytes and `cost` is 4...31;
    ///   ``BcryptError/hashingFailed(_:)`` for a password with a NUL byte or a `crypt_r` failure.
    public static func hash(password: SecretBytes, salt: [UInt8], cost: Int = 10) throws -> SecretBytes {
        guard salt.count == saltCount else {
            throw BcryptError.invalidSalt("it has \(salt.count) bytes, bcrypt takes exactly \(saltCount)")
        }
        guard (4...31).contains(cost) else {
            throw BcryptError.invalidSalt("the cost \(cost) is outside 4...31")
        }
        let costText = cost < 10 ? "0\(cost)" : "\(cost)"
        let setting = "$2y$\(costText)$" + String(bcryptBase64(salt).prefix(22))

        // The password as a NUL-terminated C string in a buffer that is zeroized afterwards.
        let phrase = try password.withUnsafeBytes { bytes -> UnsafeMutableBufferPointer<CChar> in
            if bytes.contains(0) {
                throw BcryptError.hashingFailed("the password contains a NUL byte, which bcrypt cannot take")
            }
            let used = min(bytes.count, maxPasswordBytes)
            let buffer = UnsafeMutableBufferPointer<CChar>.allocate(capacity: used + 1)
            buffer.initialize(repeating: 0)
            for index in 0..<used { buffer[index] = CChar(bitPattern: bytes[index]) }
            return buffer
        }
        let data = UnsafeMutablePointer<crypt_data>.allocate(capacity: 1)
        let dataBytes = UnsafeMutableRawBufferPointer(start: data, count: MemoryLayout<crypt_data>.size)
        dataBytes.initializeMemory(as: UInt8.self, repeating: 0)
        defer {
            SecretBytes.zeroize(UnsafeMutableRawBufferPointer(phrase))
            phrase.deallocate()
            SecretBytes.zeroize(dataBytes)
            data.deallocate()
        }
        guard let output = setting.withCString({ crypt_r(phrase.baseAddress, $0, data) }) else {
            throw BcryptError.hashingFailed("crypt_r returned no hash (errno \(errno))")
        }
        let length = strlen(output)
        // A failure is a token starting with "*" ("*0", "*1"); a good hash is exactly 60 characters.
        guard length == 60, output[0] == CChar(UInt8(ascii: "$")) else {
            throw BcryptError.hashingFailed("crypt_r refused the input (errno \(errno))")
        }
        return SecretBytes(count: length) { buffer in
            buffer.baseAddress!.copyMemory(from: output, byteCount: length)
        }
    }

    /// Proton's mailbox key passphrase (`computeKeyPassword`): bcrypt cost 10 of the mailbox password
    /// with the 16-byte key salt the server hands out, minus the 29-character "$2y$10$<salt>" prefix
    /// (the last 31 characters). This passphrase locks the user's OpenPGP private key.
    ///
    /// Trust-model row **mailbox keys**: the passphrase is derived on the device and never sent.
    public static func mailboxKeyPassphrase(password: SecretBytes, keySalt: [UInt8]) throws -> SecretBytes {
        let full = try hash(password: password, salt: keySalt, cost: 10)
        return try full.withUnsafeBytes { bytes in
            SecretBytes(copying: UnsafeRawBufferPointer(rebasing: bytes[29..<60]))
        }
    }

    /// bcrypt's base64 alphabet encoding of bytes (for the salt part), exposed for SRP.
    ///
    /// The same bit packing as standard base64 (RFC 4648) with the alphabet
    /// "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789" and no padding; 16 bytes
    /// give 22 characters.
    public static func bcryptBase64(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let b0 = UInt32(bytes[index])
            let b1 = index + 1 < bytes.count ? UInt32(bytes[index + 1]) : 0
            let b2 = index + 2 < bytes.count ? UInt32(bytes[index + 2]) : 0
            let group = (b0 << 16) | (b1 << 8) | b2
            let available = min(3, bytes.count - index)
            out.append(alphabet[Int((group >> 18) & 63)])
            out.append(alphabet[Int((group >> 12) & 63)])
            if available > 1 { out.append(alphabet[Int((group >> 6) & 63)]) }
            if available > 2 { out.append(alphabet[Int(group & 63)]) }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let alphabet: [UInt8] = Array("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
}
