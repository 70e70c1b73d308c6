import RampartCore

/// Why an OpenPGP operation failed.
///
/// Every case maps to a `RampartErrorKind` (the CLI's exit status): a message or signature that
/// was modified, truncated, not addressed to us or too large is `RampartErrorKind/tampered`
/// (exit 7) — it is refused, never partly shown.
///
/// Trust-model rows: **inbox (low)** (a hostile message is refused whole) and **the user's private
/// and public keys (critical)** (a wrong passphrase never yields key material).
public enum OpenPGPError: Error, Equatable, Sendable, DescribedRampartError {
    /// Armour garbage, truncated or invalid packets, a message of the wrong shape.
    case malformed(String)
    /// The integrity check (SEIPD's MDC, or an AEAD tag) failed, or the message has no integrity
    /// protection at all: the ciphertext was modified. Nothing was released.
    case integrityCheckFailed
    /// The message is not encrypted to any key we were given (or its session key cannot be
    /// recovered with them).
    case noDecryptionKey
    /// A locked private key did not unlock with this passphrase.
    case wrongPassphrase
    /// The output (e.g. a compressed message that inflates) is larger than the limit.
    case limitExceeded(String)
    /// Something this module does not do, e.g. encrypting to a key without an encryption subkey.
    case unsupported(String)
    /// Any other RNP failure, with RNP's message.
    case library(String)

    /// The code, category (the CLI's exit status) and message of each case.
    public var info: RampartErrorInfo {
        switch self {
        case .malformed(let why):
            RampartErrorInfo(code: "openpgp.malformed", kind: .tampered,
                             message: "The OpenPGP data is malformed and was refused: \(why)")
        case .integrityCheckFailed:
            RampartErrorInfo(code: "openpgp.integrityCheckFailed", kind: .tampered,
                             message: "The encrypted message failed its integrity check (it was modified or is incomplete); nothing of it was shown.")
        case .noDecryptionKey:
            RampartErrorInfo(code: "openpgp.noDecryptionKey", kind: .tampered,
                             message: "The message is not encrypted to any of your keys, so it cannot be decrypted.")
        case .wrongPassphrase:
            RampartErrorInfo(code: "openpgp.wrongPassphrase", kind: .failure,
                             message: "The private key did not unlock with this passphrase.")
        case .limitExceeded(let why):
            RampartErrorInfo(code: "openpgp.limitExceeded", kind: .tampered,
                             message: "The OpenPGP data was refused because it is too large: \(why)")
        case .unsupported(let why):
            RampartErrorInfo(code: "openpgp.unsupported", kind: .badInput, message: "Not supported: \(why)")
        case .library(let why):
            RampartErrorInfo(code: "openpgp.library", kind: .failure, message: "The OpenPGP library (RNP) failed: \(why)")
        }
    }
}
