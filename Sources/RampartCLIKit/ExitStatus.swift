import RampartClient
import RampartCore

/// The documented exit statuses of the command-line tools (the runtime's typed errors carry a
/// ``RampartErrorKind``; this is where a command line turns it into a number): one map, from an error's typed
/// category (``RampartErrorKind``), never from its text.
public enum ExitStatus {
    public static let success: Int32 = 0
    public static let failure: Int32 = 1
    public static let badInput: Int32 = 2
    public static let locked: Int32 = 3
    public static let wrongPIN: Int32 = 4
    public static let wiped: Int32 = 5
    public static let notFound: Int32 = 6
    public static let tampered: Int32 = 7
    public static let pinMismatch: Int32 = 8
    public static let sessionExpired: Int32 = 9
    public static let agentUnavailable: Int32 = 10
    /// A correspondent's directory key is not proven by the server's key transparency log
    /// (`send` refuses; `account audit` found a key the user did not make).
    public static let keyNotInLog: Int32 = 11

    /// The status of a category.
    public static func code(for kind: RampartErrorKind) -> Int32 {
        switch kind {
        case .failure: failure
        case .badInput: badInput
        case .locked: locked
        case .wrongPIN: wrongPIN
        case .wiped: wiped
        case .notFound: notFound
        case .tampered: tampered
        case .pinMismatch: pinMismatch
        case .sessionExpired: sessionExpired
        case .agentUnavailable: agentUnavailable
        }
    }

    /// The status of a thrown error: its ``RampartError/kind``; any other error is a failure.
    public static func code(for error: any Error) -> Int32 {
        if error is KeyTransparencyFailure { return keyNotInLog }
        guard let typed = error as? any RampartError else { return failure }
        return code(for: typed.kind)
    }

    /// The table `--help` prints: every status with its name.
    public static let helpText = """
    Exit codes:
      0   success
      1   general failure (message on stderr)
      2   bad usage or bad input
      3   locked: unlock first
      4   wrong PIN (attempts left on stderr)
      5   data wiped after too many wrong PINs
      6   not found (no key, no item)
      7   tampered or corrupt data
      8   certificate pin mismatch
      9   session expired: log in again
      10  the agent is unavailable (not running, cannot start, refused)
      11  a key is not proven by the server's key transparency log (send refused; audit alarm)
    """
}
