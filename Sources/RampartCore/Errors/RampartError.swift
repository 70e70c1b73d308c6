/// Common shape of Rampart's errors: every failure is a typed value with a message a person can
/// act on (`description`), and a stable machine-readable code for the CLI's JSON output and exit
/// codes.
public protocol RampartError: Error, CustomStringConvertible {
    /// A stable identifier such as `keychain.notFound` or `keymaker.wrongPIN`.
    var code: String { get }
}

extension LockedError: RampartError {
    public var code: String { "locked" }
}

extension SecretError: RampartError {
    public var code: String { "secret.wiped" }
}

extension MainKeyError: RampartError {
    public var code: String { "mainKey.invalidLength" }
}

extension InvalidUserID: RampartError {
    public var code: String { "userID.invalid" }
}
