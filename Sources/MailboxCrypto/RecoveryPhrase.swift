import Crypto
import _CryptoExtras
import Foundation
import OpenPGP
import RampartCore

/// Why a recovery phrase was refused.
///
/// Trust-model row **the user's private and public keys (critical)**, which the phrase opens: a
/// phrase typed wrong is told apart from a phrase that is well formed but not the account's, and
/// neither yields key material.
public enum RecoveryPhraseError: DescribedRampartError, Equatable {
    /// The phrase does not have ``RecoveryPhrase/wordCount`` words.
    case wordCount(Int)
    /// The word at this position (1-based) is not in the BIP-0039 English list.
    case unknownWord(position: Int)
    /// Every word is in the list, but the phrase's checksum does not match: a word is wrong or
    /// two are swapped.
    case checksumMismatch
    /// The phrase is well formed but does not open this recovery copy (another account's
    /// phrase, or one replaced since).
    case wrongPhrase
    /// The recovery copy or its parameters are damaged (the text says which).
    case malformedCopy(String)

    public var info: RampartErrorInfo {
        switch self {
        case .wordCount(let count):
            RampartErrorInfo(code: "recovery.wordCount", kind: .badInput,
                             message: "A recovery phrase has \(RecoveryPhrase.wordCount) words; this one has \(count).")
        case .unknownWord(let position):
            RampartErrorInfo(code: "recovery.unknownWord", kind: .badInput,
                             message: "Word \(position) of the recovery phrase is not a recovery-phrase word: check its spelling.")
        case .checksumMismatch:
            RampartErrorInfo(code: "recovery.checksum", kind: .badInput,
                             message: "The recovery phrase's checksum does not match: a word is wrong, or two are in the wrong order.")
        case .wrongPhrase:
            RampartErrorInfo(code: "recovery.wrongPhrase", kind: .failure,
                             message: "This recovery phrase does not open the account's recovery copy (it may have been replaced).")
        case .malformedCopy(let what):
            RampartErrorInfo(code: "recovery.malformedCopy", kind: .tampered,
                             message: "The account's recovery copy is damaged: \(what).")
        }
    }
}

/// A recovery phrase: 128 random bits shown to the user once as 12 words of the BIP-0039 English
/// list, the last word carrying a 4-bit checksum (SHA-256 of the bits), so a mistyped or swapped
/// word is caught before anything is tried.
///
/// Trust-model rows **the user's private and public keys (critical)** and **mailbox password
/// (critical)**, whose place the phrase takes: it is the one secret that opens the account's key
/// after a forgotten password; it lives in `SecretBytes` (zeroized on release),
/// is never stored on the device or sent, and reaches the server only as the key of a
/// memory-hard KDF (``RecoveryKeyCopy``). Words and checksum are BIP-0039's, so any BIP-0039
/// tool (Trezor's `mnemonic` package is the test's peer) accepts the phrase as valid.
public struct RecoveryPhrase: Sendable {
    /// Words in a phrase (128 bits of entropy and a 4-bit checksum, 11 bits a word).
    public static let wordCount = 12
    /// Bytes of entropy behind a phrase.
    public static let entropyCount = 16

    /// The 128 random bits.
    let entropy: SecretBytes

    /// A new phrase from the system's random number generator.
    public static func generate() -> RecoveryPhrase {
        RecoveryPhrase(checkedEntropy: SecretBytes(randomCount: entropyCount))
    }

    private init(checkedEntropy: SecretBytes) { entropy = checkedEntropy }

    /// The phrase of these 16 bytes of entropy (BIP-0039's test vectors are given this way).
    /// - Throws: ``RecoveryPhraseError/malformedCopy(_:)`` when `entropy` is not 16 bytes.
    public init(entropy: SecretBytes) throws {
        guard try entropy.withUnsafeBytes({ $0.count }) == Self.entropyCount else {
            throw RecoveryPhraseError.malformedCopy("recovery entropy must be \(Self.entropyCount) bytes")
        }
        self.init(checkedEntropy: entropy)
    }

    /// Reads a phrase as the user typed it: words separated by any white space, in any case.
    /// - Throws: ``RecoveryPhraseError/wordCount(_:)``, ``RecoveryPhraseError/unknownWord(position:)``,
    ///   ``RecoveryPhraseError/checksumMismatch``.
    public init(phrase: SecretBytes) throws {
        var indices: [Int] = []
        defer { for i in indices.indices { indices[i] = 0 } }
        try phrase.withUnsafeBytes { bytes in
            var word: [UInt8] = []
            defer { for i in word.indices { word[i] = 0 } }
            var count = 0
            func finish() throws {
                guard !word.isEmpty else { return }
                count += 1
                if count <= Self.wordCount {
                    guard let index = Self.index[word] else { throw RecoveryPhraseError.unknownWord(position: count) }
                    indices.append(index)
                }
                for i in word.indices { word[i] = 0 }
                word.removeAll(keepingCapacity: true)
            }
            for byte in bytes {
                switch byte {
                case 0x20, 0x09, 0x0A, 0x0D: try finish()
                case 0x41...0x5A: word.append(byte + 0x20)
                default: word.append(byte)
                }
            }
            try finish()
            guard count == Self.wordCount else { throw RecoveryPhraseError.wordCount(count) }
        }
        // 12 × 11 bits: 128 bits of entropy, then the 4-bit checksum.
        var bits = [UInt8](repeating: 0, count: 17)
        defer { for i in bits.indices { bits[i] = 0 } }
        for (n, index) in indices.enumerated() {
            for b in 0..<11 where index & (1 << (10 - b)) != 0 {
                let position = n * 11 + b
                bits[position / 8] |= UInt8(0x80 >> (position % 8))
            }
        }
        let entropy = SecretBytes(copying: bits[0..<Self.entropyCount])
        guard bits[16] & 0xF0 == Self.checksum(entropy) else { throw RecoveryPhraseError.checksumMismatch }
        self.init(checkedEntropy: entropy)
    }

    /// The phrase as text (12 words separated by single spaces), for showing it once or writing
    /// it to the file the user named.
    public func text() -> SecretBytes {
        let words = self.indices().map { Self.words[$0] }
        var joined = Array(words.joined(separator: " ").utf8)
        return SecretBytes(consuming: &joined)
    }

    /// The word indices (0..<2048) of the phrase.
    func indices() -> [Int] {
        let bytes = (try? entropy.withUnsafeBytes { Array($0) }) ?? []
        var bits = bytes + [Self.checksum(entropy)]
        defer { for i in bits.indices { bits[i] = 0 } }
        return (0..<Self.wordCount).map { n in
            (0..<11).reduce(0) { value, b in
                let position = n * 11 + b
                return value << 1 | Int(bits[position / 8] >> (7 - position % 8) & 1)
            }
        }
    }

    /// The first 4 bits of SHA-256(entropy), in the high half of a byte.
    static func checksum(_ entropy: SecretBytes) -> UInt8 {
        let digest = (try? entropy.withUnsafeBytes { SHA256.hash(data: $0) }).map { Array($0) } ?? [0]
        return digest[0] & 0xF0
    }

    /// The BIP-0039 English list, in order.
    static let words: [String] = BIP39EnglishWordList.source.split(separator: "\n").map(String.init)
    /// Each word's index, by its bytes.
    static let index: [[UInt8]: Int] = Dictionary(uniqueKeysWithValues: words.enumerated().map { (Array($1.utf8), $0) })

    /// A key derived from the phrase with scrypt (memory-hard): N = 2^`logN`, r = 8, p = 1,
    /// 32 bytes, over the phrase's 16 bytes of entropy. What locks ``RecoveryKeyCopy``.
    func derivedKey(salt: [UInt8], logN: UInt8) throws -> SecretBytes {
        try entropy.withUnsafeBytes { bits in
            let key = try KDF.Scrypt.deriveKey(from: bits, salt: salt, outputByteCount: 32,
                                               rounds: 1 << Int(logN), blockSize: 8, parallelism: 1)
            return key.withUnsafeBytes { SecretBytes(copying: $0) }
        }
    }
}

/// A copy of the account's private key that the recovery phrase opens, for the server to keep:
/// the OpenPGP key locked (RNP's S2K, AES-256) with a passphrase that is a 256-bit key derived
/// from the phrase by scrypt (N = 2^17, r = 8, p = 1: 128 MiB and about half a second per guess
/// here, on top of the phrase's 128 random bits).
///
/// Trust-model row **the user's private and public keys (critical)**: the server holds the locked copy, the scrypt salt and cost, never the phrase
/// or the key it derives; with the phrase, `rampart account recover` opens the key, sets a new
/// password and locks the key again, so old mail still opens.
public struct RecoveryKeyCopy: Sendable, Equatable, Codable {
    /// scrypt's cost of new copies (N = 2^17).
    public static let defaultLogN: UInt8 = 17
    /// The lowest cost a copy may carry (N = 2^15, the PIN's floor): a server cannot hand out a
    /// copy that is cheaper to guess.
    public static let minimumLogN: UInt8 = 15
    /// The length of the scrypt salt.
    public static let saltCount = 16

    /// The armored OpenPGP private key, locked.
    public var lockedKey: String
    /// The scrypt salt.
    public var salt: [UInt8]
    /// scrypt's N = 2^logN.
    public var logN: UInt8

    public init(lockedKey: String, salt: [UInt8], logN: UInt8) {
        self.lockedKey = lockedKey
        self.salt = salt
        self.logN = logN
    }

    /// Locks a copy of `key` under `phrase`, with a fresh salt.
    public static func make(key: PGPPrivateKey, phrase: RecoveryPhrase, logN: UInt8 = defaultLogN) throws -> RecoveryKeyCopy {
        guard logN >= minimumLogN else { throw RecoveryPhraseError.malformedCopy("scrypt cost 2^\(logN) is below the floor 2^\(minimumLogN)") }
        let salt = try SecretBytes(randomCount: saltCount).withUnsafeBytes { Array($0) }
        let passphrase = try Self.passphrase(phrase: phrase, salt: salt, logN: logN)
        defer { passphrase.wipe() }
        return RecoveryKeyCopy(lockedKey: try key.locked(passphrase: passphrase), salt: salt, logN: logN)
    }

    /// Opens the copy with `phrase`.
    /// - Throws: ``RecoveryPhraseError/wrongPhrase``, ``RecoveryPhraseError/malformedCopy(_:)``.
    public func unlock(with phrase: RecoveryPhrase) throws -> PGPPrivateKey {
        guard salt.count == Self.saltCount else { throw RecoveryPhraseError.malformedCopy("salt of \(salt.count) bytes") }
        guard (Self.minimumLogN...24).contains(logN) else { throw RecoveryPhraseError.malformedCopy("scrypt cost 2^\(logN)") }
        return try MailboxKey.unlockKey(lockedKey, passphrase: try Self.passphrase(phrase: phrase, salt: salt, logN: logN),
                                        wrong: RecoveryPhraseError.wrongPhrase) { RecoveryPhraseError.malformedCopy("locked key (\($0))") }
    }

    /// The OpenPGP passphrase: the derived key as 64 lower-case hex digits.
    static func passphrase(phrase: RecoveryPhrase, salt: [UInt8], logN: UInt8) throws -> SecretBytes {
        let key = try phrase.derivedKey(salt: salt, logN: logN)
        defer { key.wipe() }
        return try key.withUnsafeBytes { bytes in
            var hex = [UInt8]()
            hex.reserveCapacity(bytes.count * 2)
            let digits = Array("0123456789abcdef".utf8)
            for byte in bytes { hex.append(digits[Int(byte >> 4)]); hex.append(digits[Int(byte & 0x0F)]) }
            return SecretBytes(consuming: &hex)
        }
    }
}
