import RampartCore

/// Errors of PGP/MIME composing and reading (RFC 3156). OpenPGP failures underneath
/// (`OpenPGP/OpenPGPError`: a modified ciphertext, no key to decrypt with, …) are thrown as they
/// are; these cases are about the MIME structure around them.
///
/// Trust-model row **inbox (low)**: a message that says it is PGP/MIME but is not built as
/// RFC 3156 requires is refused as tampered (exit 7) rather than shown half-protected.
public enum PGPMIMEError: Error, Equatable, Sendable, DescribedRampartError {
    /// A `multipart/encrypted` or `multipart/signed` PGP/MIME message (or an inline PGP block)
    /// whose structure is broken: wrong number of parts, wrong part types, no `Version: 1`, an
    /// empty ciphertext or signature, an armour block that does not end.
    case malformed(String)
    /// What was given to compose cannot be sent as PGP/MIME (no recipient, no message, 8-bit
    /// header fields that a signature would not survive).
    case invalidInput(String)

    /// The code, category (the CLI's exit status) and message of each case.
    public var info: RampartErrorInfo {
        switch self {
        case .malformed(let detail):
            RampartErrorInfo(code: "pgpmime.malformed", kind: .tampered,
                             message: "The PGP/MIME message is malformed (\(detail)); it was not opened. Ask the sender to send it again.")
        case .invalidInput(let detail):
            RampartErrorInfo(code: "pgpmime.invalidInput", kind: .badInput,
                             message: "The message cannot be sent as PGP/MIME: \(detail).")
        }
    }
}
