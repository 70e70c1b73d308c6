import RampartCore

/// Why an SRP step failed.
///
/// Trust-model rows **transport (network), low trust** and **server (zero access)**: every value a
/// peer sends is checked (lengths, `A mod N ≠ 0`, `B mod N ≠ 0`, `u ≠ 0`) before it is used, and a
/// server that cannot prove it knows the verifier is refused like a certificate that does not
/// match its pins (exit status 8).
public enum SRPError: DescribedRampartError, Equatable {
    /// A modulus that is not a 2048-bit safe-prime-shaped number for g = 2 (the client refuses it).
    case invalidModulus(String)
    /// The server's ephemeral `B` is unusable (`B mod N = 0`, too long, `u = 0`): the server is refused.
    case invalidServerEphemeral(String)
    /// The client's ephemeral `A` is unusable (`A mod N = 0`, `A ≥ N`, too long, `u = 0`).
    case invalidClientEphemeral(String)
    /// A proof or salt of the wrong length, or another malformed SRP value.
    case malformed(String)
    /// The client's proof does not match: wrong password (or unknown user).
    case wrongProof
    /// The server's proof does not match: it does not know the verifier (a phishing server or a
    /// person in the middle). Nothing from this login may be trusted.
    case serverProofMismatch
    /// An auth version other than 3 or 4 (bcrypt `$2y$` + expand-hash).
    case unsupportedVersion(Int)
    /// OpenSSL's libcrypto failed (out of memory); its message.
    case library(String)

    public var info: RampartErrorInfo {
        switch self {
        case .invalidModulus(let reason):
            return RampartErrorInfo(code: "srp.invalidModulus", kind: .pinMismatch,
                                    message: "The server's SRP modulus is refused: \(reason).")
        case .invalidServerEphemeral(let reason):
            return RampartErrorInfo(code: "srp.invalidServerEphemeral", kind: .pinMismatch,
                                    message: "The server's SRP ephemeral is refused: \(reason).")
        case .invalidClientEphemeral(let reason):
            return RampartErrorInfo(code: "srp.invalidClientEphemeral", kind: .badInput,
                                    message: "The client's SRP ephemeral is refused: \(reason).")
        case .malformed(let reason):
            return RampartErrorInfo(code: "srp.malformed", kind: .badInput, message: "Malformed SRP value: \(reason).")
        case .wrongProof:
            return RampartErrorInfo(code: "srp.wrongProof", kind: .failure, message: "Wrong username or password.")
        case .serverProofMismatch:
            return RampartErrorInfo(code: "srp.serverProofMismatch", kind: .pinMismatch,
                                    message: "The server could not prove that it knows this account's password verifier; nothing was stored. This is not the real server (or it was tampered with).")
        case .unsupportedVersion(let version):
            return RampartErrorInfo(code: "srp.unsupportedVersion", kind: .badInput,
                                    message: "SRP auth version \(version) is not supported (only 3 and 4).")
        case .library(let reason):
            return RampartErrorInfo(code: "srp.library", kind: .failure, message: "OpenSSL big-number failure: \(reason).")
        }
    }
}
