/// What one case of an error says: its stable ``RampartError/code``, its ``RampartErrorKind`` and
/// the message a person can act on — written together, so a case cannot get a code without a
/// category or a message.
public struct RampartErrorInfo: Sendable, Equatable {
    /// A stable identifier such as `vault.notCached` (see ``RampartError/code``).
    public let code: String
    /// The category that decides the exit status.
    public let kind: RampartErrorKind
    /// The message shown to the person (the error's `description`).
    public let message: String

    public init(code: String, kind: RampartErrorKind, message: String) {
        self.code = code
        self.kind = kind
        self.message = message
    }
}

/// A ``RampartError`` that describes each of its cases in one place, ``info``: its `code`,
/// `kind` and `description` all come from there.
public protocol DescribedRampartError: RampartError {
    /// The code, category and message of this error.
    var info: RampartErrorInfo { get }
}

extension DescribedRampartError {
    public var code: String { info.code }
    public var kind: RampartErrorKind { info.kind }
    public var description: String { info.message }
}
